"""Shape diagnoses from the message alone (pasted text, no live objects): the rule and a working value.
The live probes are tested per family in tests/probes/test_probes_*.py."""

from __future__ import annotations

import pytest

import explainer

from probe_helpers import has_fix


@pytest.mark.parametrize("message, rule, words", [
    ("RuntimeError: Given groups=1, weight of size [64, 3, 3, 3], expected input[1, 1, 256, 256] to have 3 "
     "channels, but got 1 channels instead", "shape.conv_channels", ["[64, 3, 3, 3]", "expects 3", "has 1"]),
    ("RuntimeError: The size of tensor a (16) must match the size of tensor b (48) at non-singleton dimension 1",
     "shape.broadcast", ["16", "48", "dimension 1"]),
    ("RuntimeError: shape '[-1, 400]' is invalid for input of size 384", "shape.view_size",
     ["[-1, 400]", "384 elements", "must divide 384"]),
    ("RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with "
     "shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([10, 256]).",
     "shape.state_dict_size", ["fc.weight", "[10, 512]", "[10, 256]"]),
])
def test_text_only_messages_fall_back_to_message_templates(message, rule, words):
    d = explainer.explain_text(message)
    assert d.rule == rule
    for word in words:
        assert word in d.summary, f"{word!r} not in {d.summary!r}"
    assert not d.culprits


@pytest.mark.parametrize("message, fix", [
    ("RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [2, 1280] but got: [2, 640].",
     "shape (2, 1280, N)"),
    ("RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [16, 40] but got: [8, 40].",
     "both operands need 16 matrices"),
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)",
     "the layer is `nn.Linear(512, 10)`"),
    ("RuntimeError: The expanded size of the tensor (64) must match the existing size (96) at non-singleton "
     "dimension 1.  Target sizes: [96, 64].  Tensor sizes: [96]", "Reshape the tensor to (96, 1)"),
    ("RuntimeError: Given normalized_shape=[1280], expected input with shape [*, 1280], but got input of "
     "size[1, 257, 1664]", "the layer is `nn.LayerNorm(1664)`"),
    ("RuntimeError: running_mean should contain 256 elements not 512", "`nn.BatchNorm2d(256)`"),
    ("RuntimeError: Expected hidden[0] size (1, 32, 256), got [1, 8, 256]", "`torch.zeros(1, 32, 256)`"),
    ("RuntimeError: Given input size: (2048x1x1). Calculated output size: (2048x-5x-5). Output size is too small",
     "use kernel_size=1 there"),
])
def test_text_only_diagnoses_carry_a_working_value(message, fix):
    d = explainer.explain_text(message)
    assert d.rule is not None and d.rule.startswith("shape."), d.summary
    assert has_fix(d, fix), d.fixes
