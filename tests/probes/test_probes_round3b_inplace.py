"""An activation changed in place inside a module's forward: the culprit is named as the forward names it
(`g`), not only by the caller's variable for the returned tensor. The fixture raises the real torch error."""

from __future__ import annotations

from conftest import assert_names, explain_fixture
from probe_helpers import culprit, has_fix


def test_inplace_in_forward_names_the_forward_variable():
    d = explain_fixture("fixtures/autograd/inplace_forward_output.py")
    assert_names(d, "autograd.inplace_modified", ["g (shape (2, 3))", "`g *= 2` (inplace_forward_output.py:13)"])
    assert d.culprits[0]["name"] == "g"
    assert culprit(d, "gates")["version"] == 1
    assert d.summary.count("`g *= 2`") == 1
    assert has_fix(d, "`g = g + ...` instead of `g += ...`")


def test_inplace_outside_a_forward_keeps_the_live_name():
    d = explain_fixture("fixtures/autograd/inplace_relu.py")
    assert d.rule == "autograd.inplace_modified"
    assert all(c["name"] != "g" for c in d.culprits)
