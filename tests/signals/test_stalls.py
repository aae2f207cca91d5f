"""Stalls the learning rate does not explain (fixtures/gradients/stalls.py: real small training runs): the
optimizer holds other weights or lr 0, dead ReLU layers, gradients that accumulate without zero_grad; and the
embedding table that is not a vanishing gradient."""

from __future__ import annotations

import runpy

import pytest
import torch
from torch import nn

import explainer
from explainer.diagnose.explain import diagnose_signal
from explainer.signals.stalls import model_activations

from conftest import ROOT


@pytest.fixture(scope="module")
def stalls():
    return runpy.run_path(str(ROOT / "fixtures" / "gradients" / "stalls.py"), run_name="stalls_fixture")


def watched(stalls, kind, opt="adam", lr=1e-3, seed=0):
    monitors = []

    def watch(model, optimizer):
        monitors.append(explainer.TrainingMonitor(model, optimizer=optimizer, quiet=True))
        return monitors[-1]

    measured = stalls["train"](stalls["Stall"](kind, kind, opt, lr, seed), watch)
    return measured, monitors[0].diagnoses


def no_learning_rate_advice(diagnoses):
    return not any("Raise the learning rate" in fix or "lr_too_low" in d.rule for d in diagnoses for fix in d.fixes)


def test_optimizer_holding_a_copy_of_the_model_is_not_a_low_learning_rate(stalls):
    measured, diagnoses = watched(stalls, "wrong_params")
    assert measured["label"] == "not_updated"
    assert [d.rule for d in diagnoses] == ["signal.weights_not_updated"]
    facts = diagnoses[0].facts
    assert facts["case"] == "not_held" and facts["trained_count"] == 6
    assert "0.weight" in facts["missing_params"]
    assert "holds none of the model's 6 parameters" in diagnoses[0].summary
    assert no_learning_rate_advice(diagnoses)


def test_learning_rate_zero_is_said_as_such(stalls):
    measured, diagnoses = watched(stalls, "lr0", lr=0.0)
    assert measured["label"] == "not_updated"
    assert [d.rule for d in diagnoses] == ["signal.weights_not_updated"]
    assert diagnoses[0].facts["case"] == "lr_zero" and "lr=0" in diagnoses[0].summary
    assert no_learning_rate_advice(diagnoses)


@pytest.mark.parametrize("kind, dead", [("dead_first", "`0` (Linear)"), ("dead_all", "`0` (Linear), `2` (Linear)")])
def test_dead_relu_layers_are_named_not_dropped(stalls, kind, dead):
    measured, diagnoses = watched(stalls, kind)
    assert measured["label"] == "dead"
    assert [d.rule for d in diagnoses] == ["signal.dead_layers"]
    facts = diagnoses[0].facts
    assert facts["dead_layers"] == dead
    assert facts["live_group"] not in facts["dead_layers"]  # never a layer against itself
    assert "0.weight" in facts["zero_params"]
    assert no_learning_rate_advice(diagnoses)


@pytest.mark.parametrize("opt, lr", [("sgd", 0.05), ("adam", 1e-3)])
def test_missing_zero_grad_is_told_apart_from_a_learning_rate_too_high(stalls, opt, lr):
    measured, diagnoses = watched(stalls, "no_zero_grad", opt, lr)
    assert measured["label"] == "accumulating"
    rules = [d.rule for d in diagnoses]
    assert rules == ["signal.grad_accumulation"], rules
    assert "zero_grad()" in diagnoses[0].fixes[0]
    assert diagnoses[0].facts["accum_growth"] >= 10


def test_embedding_rows_no_batch_touched_are_not_a_vanishing_gradient(stalls):
    measured, diagnoses = watched(stalls, "embedding")
    assert measured["label"] == "healthy"
    assert "signal.vanishing_gradients" not in [d.rule for d in diagnoses]


def test_vanishing_fixes_fit_the_model_activations():
    facts = {"early_group": "0", "early_type": "Linear", "early_grad_rms": 1e-7, "late_group": "4",
             "late_type": "Linear", "late_grad_rms": 1e-2, "grad_ratio": 1e-5, "orders": 5.0, "step": 19,
             "steps_measured": 20, "vanishing_count": 1, "weight_layers": 3, "vanishing_layers": "0",
             "vanishing_params": "0.weight", "recurrent": False}
    relu = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
    sigmoid = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.Linear(4, 4))
    relu_fixes = diagnose_signal("signal.vanishing_gradients", {**facts, **model_activations(dict(relu.named_modules()))}).fixes
    sigmoid_fixes = diagnose_signal("signal.vanishing_gradients",
                                    {**facts, **model_activations(dict(sigmoid.named_modules()))}).fixes
    assert not any("Use ReLU-family" in fix for fix in relu_fixes)
    assert any("Use ReLU-family activations (ReLU, GELU, LeakyReLU) instead of Sigmoid" in fix for fix in sigmoid_fixes)


def test_healthy_runs_raise_no_stall_verdict(stalls):
    for opt, lr in (("adam", 1e-3), ("sgd", 0.05)):
        measured, diagnoses = watched(stalls, "healthy", opt, lr, seed=1)
        assert measured["label"] == "healthy"
        assert not {d.rule for d in diagnoses} & stalls["ALARMS"], [d.rule for d in diagnoses]
        del measured
    torch.manual_seed(0)
