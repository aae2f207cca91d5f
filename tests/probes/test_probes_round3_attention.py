"""Attention key_padding_mask layouts: its batch size and its number of dimensions, by the user's names.
Each fixture raises the real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_key_padding_mask_batch_names_the_mask_and_the_input():
    d = explain_fixture("fixtures/shape/key_padding_mask_batch.py")
    assert d.rule == "shape.key_padding_mask_layout"
    assert (d.facts["expected_batch"], d.facts["got_batch"]) == (3, 6)
    assert culprit(d, "pad_mask")["shape"] == [6, 3]
    assert culprit(d, "src")["shape"] == [3, 6, 16]
    assert has_fix(d, "`pad_mask = pad_mask.transpose(0, 1)`")


def test_key_padding_mask_rank_names_the_mask():
    d = explain_fixture("fixtures/shape/key_padding_mask_rank.py")
    assert d.rule == "shape.key_padding_mask_layout"
    assert culprit(d, "padding")["shape"] == [3, 6, 1]
    assert "key_padding_mask padding has 3 dimensions" in d.summary
    assert has_fix(d, "`padding.squeeze(-1)`")


def test_key_padding_mask_length_stays_with_the_attention_mask_rule():
    d = explain_fixture("fixtures/shape/attention_key_padding_mask.py")
    assert d.rule == "shape.attention_mask"
    assert "mask_name" in d.facts
