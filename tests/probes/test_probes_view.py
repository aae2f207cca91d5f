"""Shape probes: view / reshape / expand and dimension arguments. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_view_size_counts_elements_and_suggests_flatten():
    d = explain_fixture("view_size")
    assert d.rule == "shape.view_size"
    assert culprit(d, "x")["shape"] == [8, 16, 5, 5]
    assert (d.facts["numel"], d.facts["requested_numel"]) == (3200, 2048)
    assert has_fix(d, "x.flatten(1)` -> (8, 400)")
    assert has_fix(d, "nn.Linear(400, ...)")
    assert has_fix(d, "x.view(8, 400)")


def test_view_stride_finds_the_transpose_that_broke_contiguity():
    d = explain_fixture("view_stride")
    assert d.rule == "shape.view_stride"
    assert culprit(d, "y")["shape"] == [2, 5, 4, 8]
    assert d.facts["input_stride"] == "(160, 8, 40, 1)"
    assert d.facts["made_by"] == "transpose"
    assert "y = y.transpose(1, 2)" in d.facts["made_at"]
    assert has_fix(d, "y.reshape(B, T, C)") and has_fix(d, "y.contiguous().view(B, T, C)")


def test_dim_out_of_range_gives_the_rank_and_the_last_dim():
    d = explain_fixture("dim_out_of_range")
    assert d.rule == "shape.dim_out_of_range"
    assert culprit(d, "logits")["shape"] == [32, 10]
    assert (d.facts["tensor_rank"], d.facts["dim"]) == (2, 2)
    assert has_fix(d, "`dim=1`")


def test_expand_mask_lines_up_the_missing_dimension():
    d = explain_fixture("expand_mask")
    assert d.rule == "shape.expand_size"
    assert culprit(d, "mask")["shape"] == [8, 1, 10]
    assert d.facts["dim"] == 1 and d.facts["aligned_shape"] == "(8, 1, 1, 10)"
    assert has_fix(d, "`mask.view(8, 1, 1, 10).expand(8, 4, 10, 10)`")
