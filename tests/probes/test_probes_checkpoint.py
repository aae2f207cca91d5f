"""Shape probes: load_state_dict size mismatches. Each fixture raises a real torch error."""

from __future__ import annotations

import explainer

from probe_helpers import culprit, explain_fixture, has_fix


def test_state_dict_size_summarises_every_mismatched_key():
    d = explain_fixture("state_dict_size")
    assert d.rule == "shape.state_dict_size"
    assert d.facts["mismatch_count"] == 3
    for key in ("body.weight", "body.bias", "fc.weight"):
        assert key in d.summary
    weight = culprit(d, "model.fc.weight")
    assert weight["shape"] == [10, 256] and weight["checkpoint_shape"] == [10, 512]
    assert has_fix(d, "model.body = nn.Linear(784, 512); model.fc = nn.Linear(512, 10)")


def test_state_dict_size_wins_over_missing_keys_in_a_mixed_message():
    message = ("RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"head.bias\". "
               "\n\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from checkpoint, "
               "the shape in current model is torch.Size([10, 256]).")
    assert explainer.explain_text(message).rule == "shape.state_dict_size"
