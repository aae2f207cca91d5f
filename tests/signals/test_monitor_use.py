"""TrainingMonitor as a new user meets it: a run that diverges at SGD(lr=50) (what the NaN diagnosis blames, the
advice it merges, what it prints by default), the monitor after close(), and its log file."""

from __future__ import annotations

import csv
import json
import re

import pytest
import torch
from torch import nn

import explainer
from explainer.cli.main import main as cli_main

pytestmark = pytest.mark.usefixtures("one_thread")


def diverge(steps: int = 30, **options) -> tuple[explainer.TrainingMonitor, dict]:
    """A 3-layer MLP regressing a sum under MSE at SGD(lr=50): finite outputs of about 1e29 at step 2, whose square
    overflows the loss. Returns the closed monitor and what the step's own gradients measured (the ground truth)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=50.0)
    x = torch.randn(256, 10)
    y = x.sum(1, keepdim=True)
    mon = explainer.TrainingMonitor(model, optimizer=opt, **options)
    truth: dict = {}
    for step in range(steps):
        idx = torch.randint(0, 256, (32,))
        pred = model(x[idx])
        pred.retain_grad()
        loss = nn.functional.mse_loss(pred, y[idx])
        opt.zero_grad()
        loss.backward()
        if "step" not in truth and not torch.isfinite(loss):
            truth.update(step=step, output_finite=bool(torch.isfinite(pred).all()),
                         output_grad_finite=bool(torch.isfinite(pred.grad).all()),
                         params_finite=[bool(torch.isfinite(p.grad).all()) for p in model.parameters()])
        mon.step(loss)
        opt.step()
        if step % 20 == 0:
            with torch.no_grad():
                mon.validation(nn.functional.mse_loss(model(x), y))
    mon.close()
    return mon, truth


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("diverge") / "train.csv"
    found: list = []
    mon, truth = diverge(log_path=path, on_diagnosis=found.append)
    return mon, truth, found, path


def _nan(mon):
    return next(d for d in mon.diagnoses if d.rule in ("signal.non_finite", "signal.nan_located"))


def test_an_overflowing_model_backward_is_not_blamed_on_the_loss(run):
    mon, truth, _, _ = run
    # What the step itself measured: finite outputs and a finite gradient at them; the loss overflowed, and the
    # model's own backward made its parameters' gradients non-finite (not all: the last bias stays finite).
    assert truth["step"] == 2 and truth["output_finite"] and truth["output_grad_finite"], truth
    assert not all(truth["params_finite"]) and any(truth["params_finite"]), truth
    d = _nan(mon)
    assert d.facts["step"] == 2 and d.facts["forward_finite"] is True
    assert d.facts["loss_overflow"] is True and d.facts["output_absmax"] > 1e20
    assert d.facts["backward_source"] == "overflow" and d.facts["backward_module"] == "4", d.facts
    assert "the loss's backward made it" not in d.summary and "Guard the loss" not in " ".join(d.fixes)
    assert "loss, whose forward overflowed float32" in d.summary and "model's own backward overflowed" in d.summary


def test_a_non_finite_gradient_made_by_the_loss_is_still_blamed_on_the_loss():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    mon = explainer.TrainingMonitor(model, check_every=1, quiet=True)
    pred = model(torch.randn(16, 4))
    pred.retain_grad()
    loss = (pred - pred.detach()).pow(2).sum().sqrt()  # sqrt at exactly 0: finite, its derivative is not
    loss.backward()
    assert torch.isfinite(loss) and not torch.isfinite(pred.grad).all()
    mon.step(loss)
    d = _nan(mon)
    assert d.facts["what"] == "gradients" and d.facts["backward_source"] == "loss", d.facts
    assert "loss_overflow" not in d.facts and "the loss's backward made it" in d.summary


def test_advice_is_merged_and_never_recommends_the_monitor_to_its_user(run):
    mon, _, _, _ = run
    d = _nan(mon)
    fixes = " ".join(d.fixes)
    assert sum("Lower the learning rate" in f for f in d.fixes) == 1, d.fixes
    clips = re.findall(r"max_norm=([\d.e+-]+)", fixes)
    assert clips == [str(d.facts["exploded_clip_to"])], d.fixes
    assert "TrainingMonitor" not in fixes and "explainer curves" not in fixes
    assert "TrainingMonitor" not in " ".join(mon.curve().fixes)


def test_explainer_curves_on_the_monitors_log_does_not_recommend_the_monitor(run, tmp_path, capsys):
    _, _, _, path = run
    assert cli_main(["curves", "--format", "json", str(path)]) == 0
    from_monitor = json.loads(capsys.readouterr().out)
    plain = tmp_path / "plain.csv"  # the same losses without the monitor's grad_norm column
    with open(path, newline="") as src, open(plain, "w", newline="") as dst:
        writer = csv.writer(dst)
        for row in csv.reader(src):
            writer.writerow(row[:3])
    assert cli_main(["curves", "--format", "json", str(plain)]) == 0
    from_other = json.loads(capsys.readouterr().out)
    assert from_monitor["rule"] == from_other["rule"] == "signal.non_finite"
    assert "TrainingMonitor" not in " ".join(from_monitor["fixes"])
    assert "TrainingMonitor" in " ".join(from_other["fixes"])


def test_large_ratios_read_in_exponent_form_and_stay_numbers_in_json(run):
    mon, _, _, _ = run
    curve = mon.curve()
    assert re.search(r"grown \d\.\d+e\+08x", curve.summary), curve.summary
    assert "00000.0" not in curve.summary and "00000.0" not in _nan(mon).summary
    assert isinstance(json.loads(curve.to_json())["facts"]["growth_before"], float)


def test_the_log_never_goes_back_in_steps(run):
    _, _, _, path = run
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    steps = [int(r["step"]) for r in rows]
    assert steps == sorted(steps)
    assert [int(r["step"]) for r in rows if r["val_loss"]] == [0, 20]


def test_nothing_after_close_raises(run):
    mon, _, _, path = run
    logged = path.read_text()
    assert mon.curve().rule == "signal.non_finite"
    mon.step(torch.tensor(1.0))
    mon.validation(1.0)
    mon.check()
    mon.close()
    assert mon.curve().rule == "signal.non_finite" and path.read_text() == logged


def test_by_default_each_diagnosis_is_printed_once_to_stderr_as_text(capsys):
    mon, _ = diverge(steps=5)
    err = capsys.readouterr().err
    assert [d.rule for d in mon.diagnoses] == ["signal.exploding_gradients", "signal.non_finite"]
    for d in mon.diagnoses:
        text = str(d)
        assert text.startswith(f"torch-explainer [{d.rule}] {d.title}\n") and d.summary in text
        assert err.count(text.splitlines()[0]) == 1 and text.splitlines()[1] in err
    assert "Diagnosis(" not in err


@pytest.mark.parametrize("options", [{"quiet": True}, {"on_diagnosis": lambda d: None}])
def test_quiet_or_a_callback_prints_nothing(capsys, options):
    mon, _ = diverge(steps=5, **options)
    assert len(mon.diagnoses) == 2 and capsys.readouterr().err == ""
