"""TrainingMonitor on real training loops: NaN localisation, gradient signals, curve patterns, logging."""

from __future__ import annotations

import json
import runpy

import pytest
import torch
from torch import nn

import explainer
from explainer.cli.main import main as cli_main
from explainer.signals.nanloc import locate

from conftest import ROOT


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def generator():
    return runpy.run_path(str(ROOT / "fixtures" / "curves" / "generate.py"), run_name="curves_generator")


class LogScale(nn.Module):
    """Log-scales positive count features: NaN for a negative count."""

    def forward(self, x):
        return torch.log(x)


class RowNormalize(nn.Module):
    """Turns counts into frequencies: 0/0 for an all-zero row."""

    def forward(self, x):
        return x / x.sum(-1, keepdim=True)


class Magnitude(nn.Module):
    """Appends each row's length: finite at 0, but its gradient there is not."""

    def forward(self, h):
        return torch.cat([h, h.pow(2).sum(-1, keepdim=True).sqrt()], -1)


class Encoder(nn.Module):
    def __init__(self, prep: nn.Module):
        super().__init__()
        self.prep = prep
        self.fc = nn.Linear(4, 16, bias=False)
        self.mag = Magnitude()
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.mag(self.fc(self.prep(x))))


class Net(nn.Module):
    def __init__(self, prep: nn.Module):
        super().__init__()
        self.encoder = Encoder(prep)
        self.norm = nn.BatchNorm1d(17)
        self.head = nn.Linear(17, 1)

    def forward(self, x):
        return self.head(self.norm(self.encoder(x)))


def run_counts(model, bad_step, corrupt, steps=20, **monitor_kwargs):
    """Regression on positive count features; at bad_step one sample is corrupted by corrupt(x)."""
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    mon = explainer.TrainingMonitor(model, optimizer=optimizer, **monitor_kwargs)
    for step in range(steps):
        x = torch.rand(8, 4) + 0.5
        if step == bad_step:
            corrupt(x)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        mon.step(loss)
        optimizer.step()
    mon.close()
    return mon


def set_negative(x):
    x[3, 2] = -1.0


def set_zero_row(x):
    x[5] = 0.0


@pytest.mark.parametrize("prep, corrupt, value", [
    (nn.Identity(), None, None),
])
def test_identity_prep_trains_without_diagnoses(prep, corrupt, value):
    mon = run_counts(Net(prep), bad_step=-1, corrupt=corrupt)
    assert [d.rule for d in mon.diagnoses] == []
    assert len(mon.losses) == 20 and all(loss == loss for loss in mon.losses)


@pytest.mark.parametrize("prep, corrupt, module", [
    (LogScale(), set_negative, "encoder.prep"),
    (nn.Sequential(nn.Identity(), RowNormalize()), set_zero_row, "encoder.prep.1"),
])
def test_nan_is_located_in_the_module_that_made_it(prep, corrupt, module):
    seen = []
    mon = run_counts(Net(prep), bad_step=7, corrupt=corrupt, on_diagnosis=seen.append)
    assert [d.rule for d in mon.diagnoses] == ["signal.nan_located"]
    assert seen == mon.diagnoses
    facts = mon.diagnoses[0].facts
    assert facts["step"] == 7 and facts["module"] == module
    assert facts["input_finite"] is True and facts["input_dtype"] == "float32"
    assert facts["value"] == "nan" and facts["what"] == "loss and gradients"
    diagnosis = mon.diagnoses[0]
    assert f"the first module whose output is not finite is {module}" in diagnosis.summary
    assert any("eps" in fix and module in fix for fix in diagnosis.fixes)
    assert diagnosis.culprits[0]["name"] == module
    json.loads(diagnosis.to_json())


def test_gradient_only_nan_names_the_parameter_nearest_the_output():
    # sqrt(0) is finite in the forward; its gradient (0 * inf) is NaN for everything upstream.
    mon = run_counts(Net(nn.Identity()), bad_step=4, corrupt=set_zero_row)
    [diagnosis] = mon.diagnoses
    assert diagnosis.rule == "signal.non_finite"
    facts = diagnosis.facts
    assert facts["step"] == 4 and facts["what"] == "gradients" and facts["forward_finite"] is True
    assert facts["grad_param"] == "encoder.fc.weight" and facts["grad_module"] == "encoder.fc"
    assert "backward pass made it" in diagnosis.summary


def test_deferred_detection_reports_the_exact_step():
    model = Net(LogScale())
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    mon = explainer.TrainingMonitor(model, optimizer=optimizer, check_every=10)
    mon._figures.eager = False  # what an accelerator does: read the figures every 10 steps only
    for step in range(20):
        x = torch.rand(8, 4) + 0.5
        if step == 13:
            set_negative(x)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        mon.step(loss)
        optimizer.step()
    [diagnosis] = mon.diagnoses
    assert diagnosis.facts["step"] == 13 and diagnosis.facts["detected_at_step"] == 19
    # By step 19 the update after step 13 has written NaN into the weights: said, not hidden.
    assert diagnosis.facts["nonfinite_param_count"] > 0
    assert "check_every=1" in diagnosis.summary


def test_the_recheck_leaves_buffers_and_random_state_alone():
    model = Net(LogScale()).train()
    x = torch.rand(8, 4) - 0.5
    before = [b.clone() for b in model.buffers()]
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    found = locate(model, (x,), {})
    assert found["facts"]["module"] == "encoder.prep"
    assert torch.equal(torch.rand(3), expected)
    assert all(torch.equal(a, b) for a, b in zip(before, model.buffers()))
    assert not any(m._forward_hooks for m in model.modules())


def regression_loop(model, steps, optimizer=None, targets=None, **monitor_kwargs):
    g = torch.Generator().manual_seed(0)
    x_all = torch.randn(512, 32, generator=g)
    y_all = targets(x_all) if targets else x_all[:, :4].argmax(1)
    mon = explainer.TrainingMonitor(model, optimizer=optimizer, **monitor_kwargs)
    for _ in range(steps):
        index = torch.randint(0, 512, (32,), generator=g)
        loss = nn.functional.cross_entropy(model(x_all[index]), y_all[index])
        if optimizer:
            optimizer.zero_grad()
        else:
            model.zero_grad()
        loss.backward()
        mon.step(loss)
        if optimizer:
            optimizer.step()
        else:
            with torch.no_grad():
                for p in model.parameters():
                    p -= 1e-5 * p.grad
    mon.check()
    return mon


def test_exploding_gradients_at_a_bad_batch():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    mon = explainer.TrainingMonitor(model, optimizer=optimizer, check_every=20)
    g = torch.Generator().manual_seed(0)
    for step in range(60):
        x = torch.randn(16, 8, generator=g)
        y = x[:, :1] * 2
        if step == 45:
            y = y + 1e4  # one batch with a label far out of range
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        mon.step(loss)
        optimizer.step()
    mon.check()
    exploding = [d for d in mon.diagnoses if d.rule == "signal.exploding_gradients"]
    assert len(exploding) == 1
    facts = exploding[0].facts
    assert facts["step"] == 45 and facts["jump_orders"] >= 2
    assert facts["largest_group"] == "2" and facts["largest_type"] == "Linear"
    assert any("clip_grad_norm_" in fix for fix in exploding[0].fixes)


def test_finite_gradients_whose_float32_norm_overflows_are_an_explosion_not_a_nan():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    mon = explainer.TrainingMonitor(model, optimizer=optimizer)
    g = torch.Generator().manual_seed(0)
    for step in range(31):
        x = torch.randn(16, 8, generator=g)
        loss = nn.functional.mse_loss(model(x), x[:, :1] * 2) * (1e22 if step == 30 else 1.0)
        optimizer.zero_grad()
        loss.backward()
        mon.step(loss)
        if step < 30:
            optimizer.step()
    grads = [p.grad for p in model.parameters()]
    assert all(bool(torch.isfinite(g).all()) for g in grads)
    assert not torch.isfinite(torch.stack(torch._foreach_norm(grads))).all()  # what makes this case
    assert [d.rule for d in mon.diagnoses] == ["signal.exploding_gradients"], [d.rule for d in mon.diagnoses]
    facts = mon.diagnoses[0].facts
    assert facts["step"] == 30 and 1e19 < mon.grad_norms[-1] < float("inf")


def test_vanishing_gradients_in_a_deep_sigmoid_stack():
    torch.manual_seed(0)
    layers = []
    for _ in range(12):
        layers += [nn.Linear(32, 32), nn.Sigmoid()]
    model = nn.Sequential(*layers, nn.Linear(32, 4))
    mon = regression_loop(model, 250, torch.optim.SGD(model.parameters(), lr=0.1))
    assert [d.rule for d in mon.diagnoses] == ["signal.vanishing_gradients"]
    facts = mon.diagnoses[0].facts
    assert facts["early_group"] == "0" and facts["late_group"] == "24"
    assert facts["orders"] > 3
    # Not a low learning rate: the last layer's gradient is a normal size.
    assert facts["late_grad_rms"] > 1e-2


@pytest.mark.parametrize("with_optimizer", [True, False])
def test_learning_rate_too_low_from_the_parameter_change(with_optimizer):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-5) if with_optimizer else None
    mon = regression_loop(model, 250, optimizer)
    assert [d.rule for d in mon.diagnoses] == ["signal.lr_too_low"]
    facts = mon.diagnoses[0].facts
    assert facts["update_ratio"] < 1e-4 and facts["grad_ratio"] > 1e-3
    if with_optimizer:
        assert facts["lr"] == 1e-5 and facts["suggested_lr"] >= 1e-3
        assert f"Raise the learning rate to about {facts['suggested_lr']}" in mon.diagnoses[0].fixes[0]
    else:
        assert "suggested_lr" not in facts


def test_stuck_for_no_gradient_reason_is_plain_underfitting():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 4))
    nn.init.zeros_(model[0].weight)  # start at chance level: the loss has nowhere to go
    nn.init.zeros_(model[0].bias)
    g = torch.Generator().manual_seed(1)
    noise = torch.randint(0, 4, (512,), generator=g)  # labels with no relation to the inputs
    mon = regression_loop(model, 250, torch.optim.SGD(model.parameters(), lr=0.05), targets=lambda x: noise)
    assert [d.rule for d in mon.diagnoses] == ["signal.underfitting"]
    assert mon.diagnoses[0].facts["update_ratio"] >= 1e-4
    assert "neither vanishing gradients nor a too-low learning rate" in mon.diagnoses[0].summary


@pytest.mark.parametrize("regime, rules", [
    ("healthy", []),
    ("overfitting", ["signal.overfitting"]),
    ("unstable", ["signal.unstable"]),
])
def test_curve_patterns_from_the_monitor(generator, regime, rules):
    monitors = []
    generator["train"](regime, watch=lambda model, opt: monitors.append(
        explainer.TrainingMonitor(model, optimizer=opt)) or monitors[-1])
    [mon] = monitors
    mon.check()
    found = [d.rule for d in mon.diagnoses]
    assert set(rules) <= set(found) if rules else found == [], found
    assert mon.curve().facts["curve"] == regime


def test_log_file_is_read_by_explainer_curves(generator, tmp_path, capsys):
    for name in ("train.csv", "train.jsonl"):
        path = tmp_path / name
        monitors = []
        generator["train"]("overfitting", watch=lambda model, opt: monitors.append(
            explainer.TrainingMonitor(model, log_path=path)) or monitors[-1])
        monitors[0].close()
        assert cli_main(["curves", "--format", "json", str(path)]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["facts"]["curve"] == "overfitting"
        assert data["facts"]["train_points"] == 400


def test_close_removes_the_input_hook():
    model = nn.Linear(2, 1)
    mon = explainer.TrainingMonitor(model)
    assert model._forward_pre_hooks
    mon.close()
    assert not model._forward_pre_hooks


def test_benchmark_script_runs_with_tiny_settings(capsys):
    bench = runpy.run_path(str(ROOT / "benchmarks" / "monitor_overhead.py"), run_name="benchmark")
    assert bench["main"](["--tiny", "--steps", "2", "--repeats", "1", "--warmup", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "ms" in line]
    assert [row.split("|")[1].strip() for row in rows] == ["mlp", "cnn", "transformer", "resnet18", "gpt"]


@pytest.fixture(scope="module")
def gradient_scenarios():
    return runpy.run_path(str(ROOT / "fixtures" / "gradients" / "generate.py"), run_name="gradients_generator")


def _watched(gradient_scenarios, scenario):
    monitors = []
    measured = gradient_scenarios["train"](scenario, watch=lambda model, opt: monitors.append(
        explainer.TrainingMonitor(model, optimizer=opt)) or monitors[-1])
    return measured, monitors[0]


@pytest.mark.parametrize("act", ["sigmoid", "tanh"])
def test_vanishing_verdict_by_step_20_in_a_run_shorter_than_check_every(gradient_scenarios, act):
    scenario = gradient_scenarios["Scenario"](name="t", family="mlp", depth=12, width=32, act=act, init="small",
                                              init_std=0.05, opt="sgd", lr=0.01, steps=25)
    measured, mon = _watched(gradient_scenarios, scenario)
    assert measured.label == "vanishing"  # measured by the generator's own per-layer loop
    [diagnosis] = [d for d in mon.diagnoses if d.rule == "signal.vanishing_gradients"]
    facts = diagnosis.facts
    assert facts["step"] == 19 and facts["early_group"] == "body.0" and facts["orders"] >= 3
    assert "body.0.weight" in facts["vanishing_params"]
    assert "gradient vanishes toward the input" in diagnosis.summary
    text = " ".join(diagnosis.fixes)
    assert "kaiming_normal_" in text and "xavier_normal_" in text and "LayerNorm" in text
    assert "clipping does not help" in text


@pytest.mark.parametrize("intent, kwargs", [
    ("healthy", dict(act="relu", init="kaiming", norm=True, opt="adam", lr=1e-3)),
    ("low_lr", dict(act="relu", init="kaiming", opt="sgd", lr=1e-6)),
    ("small_even", dict(act="relu", init="kaiming", norm=True, residual=True, opt="adam", lr=1e-3, loss_scale=1e-6)),
])
def test_no_gradient_verdict_when_gradients_are_even(gradient_scenarios, intent, kwargs):
    scenario = gradient_scenarios["Scenario"](name="t", family="mlp", depth=12, width=32, intent=intent, steps=25,
                                              **kwargs)
    measured, mon = _watched(gradient_scenarios, scenario)
    assert measured.label == intent
    assert [d.rule for d in mon.diagnoses if "gradients" in d.rule] == []


def test_exploding_said_before_the_nan_with_the_norm_history(gradient_scenarios):
    scenario = gradient_scenarios["Scenario"](name="t", family="cnn", depth=6, width=8, init="kaiming", opt="sgd",
                                              lr=2.0, seed=1, intent="exploding")
    measured, mon = _watched(gradient_scenarios, scenario)
    assert measured.label == "exploding"
    first = mon.diagnoses[0]
    assert first.rule == "signal.exploding_gradients", [d.rule for d in mon.diagnoses]
    assert measured.nonfinite_step is None or first.facts["step"] < measured.nonfinite_step
    assert first.facts["jump_orders"] >= 2 and "since_step" in first.facts and "norm_history" in first.facts
    assert any("clip_grad_norm_" in fix and str(first.facts["clip_to"]) in fix for fix in first.fixes)


def test_nan_after_a_one_step_explosion_says_the_gradients_exploded(gradient_scenarios):
    scenario = gradient_scenarios["Scenario"](name="t", family="mlp", depth=10, width=48, act="relu", init="kaiming",
                                              opt="sgd", lr=2.0, seed=9, target_scale=10.0, intent="exploding")
    measured, mon = _watched(gradient_scenarios, scenario)
    assert measured.label == "exploding"
    said = [d for d in mon.diagnoses if d.rule == "signal.exploding_gradients" or d.facts.get("exploded_first")]
    assert said, [d.rule for d in mon.diagnoses]
    assert "exploded" in said[0].summary or said[0].rule == "signal.exploding_gradients"


def test_gradient_benchmark_runs_on_a_sample(capsys):
    bench = runpy.run_path(str(ROOT / "benchmarks" / "gradient_signals.py"), run_name="benchmark")
    assert bench["main"](["--split", "heldout", "--limit", "3"]) == 0
    assert "| vanishing |" in capsys.readouterr().out
