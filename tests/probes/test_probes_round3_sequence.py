"""Sequence lengths: CTC loss's input and target lengths, pack_padded_sequence's lengths. Each fixture raises
the real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_ctc_lengths_per_frame_names_them_and_the_batch_size():
    d = explain_fixture("fixtures/shape/ctc_lengths_size.py")
    assert d.rule == "shape.ctc_lengths"
    assert (d.facts["frames"], d.facts["batch_size"]) == (20, 4)
    assert d.culprits[0]["name"] == "input_lengths" and d.culprits[0]["shape"] == [20]
    assert "it holds one entry per frame" in d.summary
    assert has_fix(d, "`input_lengths = torch.full((4,), 20, dtype=torch.long)`")


def test_ctc_input_lengths_past_the_frames_names_the_lengths_through_the_module():
    d = explain_fixture("fixtures/shape/ctc_input_lengths_too_long.py")
    assert d.rule == "shape.ctc_lengths"
    assert culprit(d, "feature_lengths")["shape"] == [2]
    assert "feature_lengths (input_lengths) claims up to 20 frames" in d.summary
    assert has_fix(d, "`input_lengths.clamp(max=10)`")


def test_packed_lengths_on_the_accelerator_names_them():
    d = explain_fixture("fixtures/device/packed_lengths_device.py")
    assert d.rule == "device.packed_lengths_device"
    assert d.category == "device"
    assert culprit(d, "lengths")["device"] == "meta"
    assert has_fix(d, "`pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)`")


def test_packed_lengths_with_two_dimensions_is_a_shape_error():
    d = explain_fixture("fixtures/shape/packed_lengths_2d.py")
    assert d.rule == "shape.packed_lengths_layout"
    assert culprit(d, "lengths")["shape"] == [1, 3]
    assert has_fix(d, "`pack_padded_sequence(x, lengths.flatten(), ...)`")
