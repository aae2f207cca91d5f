"""Anomaly mode's NaN from a backward function: the op's output and the live input it read are named.
The fixtures raise the real torch error."""

from __future__ import annotations

from conftest import assert_names, explain_fixture
from probe_helpers import culprit


def test_nan_backward_names_the_leaf_input_of_log():
    d = explain_fixture("fixtures/autograd/anomaly_nan_log.py")
    assert_names(d, "numerics.anomaly_nan", ["log_probs is its output and probs its input"])
    assert culprit(d, "probs")["requires_grad"] is True
    assert culprit(d, "log_probs")["grad_fn"] == "LogBackward0"
