"""Shape probes: element-wise operations whose operands do not broadcast. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_broadcast_names_both_operands_and_their_own_dimension():
    d = explain_fixture("broadcast")
    assert d.rule == "shape.broadcast"
    assert culprit(d, "scores")["shape"] == [4, 3]
    assert culprit(d, "totals")["shape"] == [4]
    # The message's dimension 1 is dimension 1 of scores but dimension 0 of totals.
    assert (d.facts["dim"], d.facts["a_dim"], d.facts["b_dim"]) == (1, 1, 0)
    assert has_fix(d, "totals.unsqueeze(-1)` -> (4, 1)")
    assert "scores / totals" in d.summary


def test_inplace_broadcast_names_both_operands_and_the_out_of_place_fix():
    d = explain_fixture("inplace_broadcast")
    assert d.rule == "shape.inplace_broadcast"
    assert culprit(d, "image")["shape"] == [1, 28, 28] and culprit(d, "mean")["shape"] == [3, 1, 1]
    assert "[3, 28, 28]" in d.summary and "image.sub_(mean)" in d.summary
    assert has_fix(d, "`image = image - mean`")
