"""Element-wise operands that are not plain variables (`a.unsqueeze(0)`, `b * 16`) named by their variables.
The fixture raises the real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit


def test_broadcast_names_the_variables_behind_a_method_call_and_a_scaled_operand():
    d = explain_fixture("fixtures/shape/broadcast_scaled_operand.py")
    assert d.rule == "shape.broadcast"
    assert (d.facts["a_name"], d.facts["b_name"]) == ("anchors.unsqueeze(0)", "deltas * 16")
    assert (d.facts["a_shape"], d.facts["b_shape"]) == ("(1, 1728, 4)", "(2, 576, 4)")
    assert culprit(d, "anchors")["shape"] == [1728, 4]
    assert culprit(d, "deltas")["shape"] == [2, 576, 4]
    assert (d.facts["a_dim"], d.facts["b_dim"]) == (1, 1)
