"""OneCycleLR stepped past its total_steps: the scheduler and the step-count variables that sized it.
The fixture raises the real torch error."""

from __future__ import annotations

from conftest import assert_names, explain_fixture, explain_paste
from probe_helpers import culprit, has_fix


def test_onecycle_overstep_names_the_scheduler_and_steps_per_epoch():
    d = explain_fixture("fixtures/other/onecycle_too_many_steps.py")
    assert_names(d, "other.scheduler_total_steps_exceeded", ["`scheduler` was built for 4 steps",
                                                             "`steps_per_epoch` = 2", "step 5"])
    assert culprit(d, "scheduler")["type"] == "OneCycleLR"
    assert culprit(d, "steps_per_epoch")["repr"] == "2"
    assert "step" not in {c["name"] for c in d.culprits}  # the loop counter is not what sized it
    assert has_fix(d, "steps_per_epoch=len(loader)")


def test_pasted_overstep_reads_the_counts():
    d = explain_paste("ValueError: Tried to step 31 times. The specified number of total steps is 30")
    assert_names(d, "other.scheduler_total_steps_exceeded", ["built for 30 steps", "step 31"])
