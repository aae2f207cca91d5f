"""Shape probes: torch.cat / torch.stack. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_cat_lists_the_tensors_and_the_disagreeing_dimension():
    d = explain_fixture("cat_sizes")
    assert d.rule == "shape.cat_sizes"
    assert culprit(d, "image_features")["shape"] == [32, 128]
    assert culprit(d, "text_features")["shape"] == [16, 64]
    assert (d.facts["cat_dim"], d.facts["mismatch_dim"]) == (1, 0)
    assert d.facts["mismatch_name"] == "text_features"


def test_stack_lists_the_entries_and_suggests_padding():
    d = explain_fixture("stack_sizes")
    assert d.rule == "shape.stack_sizes"
    assert culprit(d, "sequences[0]")["shape"] == [3]
    assert culprit(d, "sequences[1]")["shape"] == [4]
    assert d.facts["mismatch_dim"] == 0
    assert has_fix(d, "pad_sequence(sequences, batch_first=True)")


def test_cat_of_tensors_with_different_ranks_names_both():
    d = explain_fixture("cat_rank")
    assert d.rule == "shape.cat_sizes"
    assert culprit(d, "scores")["shape"] == [32, 1, 1]
    assert "(got 2 and 3)" in d.summary and "scores (32, 1, 1)" in d.summary
    assert has_fix(d, ".squeeze(...)") and not has_fix(d, "U-Net")
