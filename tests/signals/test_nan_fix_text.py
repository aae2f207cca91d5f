"""The NaN monitor's words: the model itself is called so (not "(root)") with the line that made the NaN, and a
0/0 division gets the division's guard alone (the new user's review, defects 12 and 13). Real short runs."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import explainer

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.filterwarnings("ignore::UserWarning")]


class _LogNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return torch.log(self.fc(x))  # negative outputs: NaN, made in the model's own forward


class _Normalizer(nn.Module):
    def forward(self, x):
        return (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True)


class _NormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = _Normalizer()
        self.body = nn.Linear(8, 1)

    def forward(self, x):
        return self.body(self.norm(x))


def _first_diagnosis(model, batch):
    monitor = explainer.TrainingMonitor(model, optimizer=None)
    try:
        loss = model(batch).mean()
        loss.backward()
        monitor.step(loss)
    finally:
        monitor.close()
    assert monitor.diagnoses, "the run never went non-finite"
    return monitor.diagnoses[0]


def test_the_whole_model_is_named_plainly_with_the_line_that_made_the_nan():
    torch.manual_seed(0)
    d = _first_diagnosis(_LogNet(), torch.randn(32, 8))
    assert d.rule == "signal.nan_located"
    text = " ".join([d.summary, *d.fixes])
    assert "(root)" not in text and "the whole model" in d.summary
    assert "test_nan_fix_text.py:21" in d.summary and "`return torch.log(self.fc(x))`" in d.summary


def test_a_zero_by_zero_division_gets_the_division_guard_only():
    torch.manual_seed(0)
    batch = torch.randn(32, 8)
    batch[3] = 1.0  # a constant row: its std is 0
    d = _first_diagnosis(_NormNet(), batch)
    assert d.rule == "signal.nan_located" and d.facts["module"] == "norm"
    guard = next(fix for fix in d.fixes if fix.startswith("Guard"))
    assert "x / (d + 1e-8)" in guard and "torch.log" not in guard and "torch.exp" not in guard
    assert not any("learning rate" in fix for fix in d.fixes), d.fixes


class _Amplifier(nn.Module):
    def forward(self, x):
        return x * 1e4  # beyond float16's 65504 for any |x| > 6.6


def test_the_float32_fix_calls_the_module_as_the_model_reaches_it():
    # the new user's review: the float16 advice called `1(x.float())` for the second layer of a Sequential
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), _Amplifier()).half()
    d = _first_diagnosis(model, torch.randn(32, 8).half() * 10)
    assert d.rule == "signal.nan_located" and d.facts["output_dtype"] == "float16"
    assert d.facts["module_code"] == "model[1]"
    assert any("out = model[1](x.float())" in fix for fix in d.fixes), d.fixes
