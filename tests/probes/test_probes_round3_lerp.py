"""torch.lerp / lerp_ across dtypes (an EMA across precisions). The fixture raises the real torch error."""

from __future__ import annotations

import torch

import explainer
from conftest import explain_fixture, raised
from probe_helpers import culprit, has_fix


def test_lerp_half_end_names_both_parameters():
    d = explain_fixture("fixtures/dtype/lerp_half_end.py")
    assert d.rule == "dtype.lerp_dtype"
    assert (d.facts["operand"], d.facts["got_dtype"]) == ("end", "c10::Half")
    assert culprit(d, "t_param")["dtype"] == "float32"
    assert culprit(d, "s_param")["dtype"] == "float16"
    assert "the start tensor is float but `end` is Half" in d.summary
    assert has_fix(d, "`ema.lerp_(param.to(ema.dtype), 1 - decay)`")


def test_lerp_weight_of_another_dtype():
    start = torch.zeros(3)
    weight = torch.ones(3, dtype=torch.float64)
    d = explainer.explain(raised(lambda: torch.lerp(start, start, weight)))
    assert d.rule == "dtype.lerp_dtype"
    assert d.facts["operand"] == "weight"
    assert has_fix(d, "`torch.tensor(w, dtype=start.dtype)`")
