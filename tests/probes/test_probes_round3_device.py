"""A tensor on the odd device that was taken from another one (`negatives = bank[idx]`): the source is named.
The fixture raises the real torch error (meta stands in for cuda)."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_device_mismatch_names_the_tensor_an_odd_local_was_taken_from():
    d = explain_fixture("fixtures/device/indexed_cpu_bank.py")
    assert d.rule == "device.mismatch"
    assert d.facts["odd_name"] == "negatives"
    assert culprit(d, "bank")["device"] == "cpu"
    assert "negatives is taken from bank, which is on cpu and was never moved to meta" in d.summary
    assert has_fix(d, "Move `bank` to meta where it is made: `bank = bank.to(device)`")
