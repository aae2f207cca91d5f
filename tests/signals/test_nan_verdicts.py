"""The NaN and explosion verdicts on the second new user's review cases (defects 3, 5, 10 and 11), each from a real
short run: the place named for layers with no forward of the user's, a NaN made by the loss's forward, huge weights
that overflow (no eps guard for a Linear), gradients large from the first step, and the unstable curve's wording."""

from __future__ import annotations

import re
import runpy

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import explainer
from conftest import ROOT

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.filterwarnings("ignore::UserWarning")]


def _sequential(scale_last: float = 1.0, scale_first: float = 1.0) -> nn.Sequential:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    with torch.no_grad():
        model[2].weight.mul_(scale_last)
        model[0].weight.mul_(scale_first)
        if scale_first != 1.0:
            model[0].bias.zero_()  # the first layer's output stays small: only its gradient is huge
    return model


def _train(model, loss_of=F.cross_entropy, steps=2, batch=32, x_scale=1.0, lr=0.1):
    """The review's loop (nanseq.py): SGD, the monitor's step after backward; the first NaN diagnosis."""
    opt = torch.optim.SGD(model.parameters(), lr)
    mon = explainer.TrainingMonitor(model, optimizer=opt, quiet=True)
    for _ in range(steps):
        x = torch.randn(batch, 8) * x_scale
        y = torch.randint(0, 4, (batch,))
        loss = loss_of(model(x), y)  # the forward call: the line a NaN in nn.Linear is placed at
        opt.zero_grad()
        loss.backward()
        mon.step(loss)
        opt.step()
    mon.close()
    return next(d for d in mon.diagnoses if d.rule in ("signal.nan_located", "signal.non_finite"))


def test_a_nan_in_a_layer_without_a_user_forward_names_the_model_call_not_mon_step():
    # review defect 3 (nanseq.py): the last Linear's weight x3e37; its output overflows at step 1
    d = _train(_sequential(scale_last=3e37))
    assert d.rule == "signal.nan_located" and d.facts["module"] == "2", d.facts
    assert "mon.step" not in d.summary and "op_place" not in d.facts
    assert re.search(r"test_nan_verdicts\.py:\d+ \(`loss = loss_of\(model\(x\), y\)`\)", d.facts["call_place"])
    assert f"in the forward called at {d.facts['call_place']}" in d.summary
    # review defect 5: a Linear has no domain an eps could guard; its operands overflowed
    assert d.facts["op_overflow"] is True and d.facts["weight_absmax"] > 1e30
    assert not any("eps" in fix and fix.startswith("Guard") for fix in d.fixes), d.fixes
    assert any(fix.startswith("No eps guards `linear`") for fix in d.fixes), d.fixes


def test_a_division_by_zero_in_the_loss_is_made_by_the_loss_forward():
    # review defect 5 (train_signals.py nan, div0): the loss is NaN at step 0; its backward is no culprit
    d = _train(_sequential(), loss_of=lambda out, y: F.cross_entropy(out / (out.std(1, keepdim=True) * 0), y))
    assert d.rule == "signal.non_finite" and d.facts["step"] == 0 and d.facts["forward_finite"] is True
    assert "backward_source" not in d.facts and "backward" not in d.summary, d.summary
    assert "the loss's forward made it, after the model" in d.summary
    assert any(fix.startswith("Guard the loss") for fix in d.fixes), d.fixes


def test_huge_weights_whose_outputs_overflow_the_loss_get_the_overflow_verdict():
    # review defect 5 (nanseq.py with x1e38): outputs of ~6e37 make the loss inf at step 0
    d = _train(_sequential(scale_last=1e38))
    # (the mean's sum overflows; its gradient reaching the outputs is finite, and the model's backward overflows too)
    assert d.rule == "signal.non_finite" and d.facts["loss_overflow"] is True, d.facts
    assert "too large for the loss, whose forward overflowed float32" in d.summary, d.summary
    assert "backward pass made it" not in d.summary and d.facts.get("backward_overflow", True) is True
    assert not any(fix.startswith("Guard") for fix in d.fixes), d.fixes


def test_a_linear_whose_backward_overflows_gets_no_eps_guard():
    # a finite loss whose gradient overflows in the first Linear (its weight gradient sums huge values)
    d = _train(_sequential(scale_last=3e37, scale_first=1e-6), batch=256, x_scale=3000.0)
    assert d.rule == "signal.non_finite" and d.facts["what"] == "gradients", d.facts
    assert d.facts["backward_module"] == "0" and d.facts["backward_overflow"] is True
    assert "whose derivative is finite everywhere" in d.summary
    assert not any(fix.startswith("Guard") for fix in d.fixes), d.fixes
    assert any(fix.startswith("No eps guards `linear` in 0") for fix in d.fixes), d.fixes


EXPLODING_RELU_RNN = runpy.run_path(str(ROOT / "fixtures" / "gradients" / "generate.py"),
                                run_name="gradients_generator")["ExplodingReluRNN"]


@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_large_from_the_first_step_have_no_healthy_baseline(seed):
    torch.manual_seed(seed)
    model = EXPLODING_RELU_RNN()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    mon = explainer.TrainingMonitor(model, optimizer=opt, quiet=True)
    g = torch.Generator().manual_seed(3000 + seed)
    x_all = torch.randint(0, 20, (256, 12), generator=g)
    for _ in range(4):
        idx = torch.randint(0, 256, (32,), generator=g)
        loss = F.cross_entropy(model(x_all[idx]), x_all[idx, 0] % 4)
        opt.zero_grad()
        loss.backward()
        mon.step(loss)
        opt.step()
    mon.close()
    first_norm = mon.grad_norms[0]
    assert first_norm > mon.max_grad_norm  # measured: the gradient is already large at step 0
    explosion = next(d for d in mon.diagnoses if d.rule == "signal.exploding_gradients")
    text = " ".join([explosion.summary, *explosion.fixes])
    assert "healthy median" not in text and "healthy steps' norm" not in text, text
    assert "median_grad_norm" not in explosion.facts and explosion.facts["clip_to"] == 1.0
    assert "from the start" in explosion.summary and "max_norm=1.0" in " ".join(explosion.fixes)
    nan = [d for d in mon.diagnoses if d.facts.get("exploded_first")]
    for d in nan:  # the NaN that follows says the same, with the same clipping value
        assert "healthy median" not in d.summary and "from the start" in d.summary
        assert re.findall(r"max_norm=([\d.e+-]+)", " ".join(d.fixes)) == ["1.0"], d.fixes


def _lr_high_adam(seed: int) -> explainer.Diagnosis:
    """The review's lr_high_adam run (train_signals.py lrhigh): a ReLU MLP under Adam(lr=3.0), 50 steps."""
    g = torch.Generator().manual_seed(1000 + seed)
    x = torch.randn(512, 32, generator=g)
    y = (x @ torch.randn(32, 4, generator=g)).argmax(1)
    torch.manual_seed(seed)
    layers, width = [], 32
    for _ in range(3):
        layers += [nn.Linear(width, 64), nn.ReLU()]
        width = 64
    model = nn.Sequential(*layers, nn.Linear(64, 4))
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=3.0)
    mon = explainer.TrainingMonitor(model, optimizer=opt, quiet=True)
    batches = torch.Generator().manual_seed(seed)
    for _ in range(50):
        idx = torch.randint(0, 512, (32,), generator=batches)
        opt.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        mon.step(loss)
        opt.step()
    mon.close()
    return next(d for d in mon.diagnoses if d.rule == "signal.unstable")


@pytest.mark.parametrize("seed", [0, 1])
def test_an_unstable_curve_that_ended_above_its_start_reads_as_a_rise_from_its_start(seed):
    # review defect 11 (lr_high_adam seed 0): "climbed back 0.0% to 1.996" where the loss rose from 1.378
    d = _lr_high_adam(seed)
    facts = d.facts
    assert "climbed back 0.0%" not in d.summary and "rise_from_best_pct" not in facts, d.summary
    assert facts["final_loss"] > facts["start_loss"] and facts["rise_from_start_x"] > 1.3
    assert f"from {facts['start_loss']} to {facts['final_loss']}" in d.summary


def test_a_curve_that_diverged_by_orders_of_magnitude_says_how_many_times_its_best():
    # review defect 11 (curves_run.py 3.0, read back as `explainer curves` reads its log): "climbed back 5442981.1%"
    torch.manual_seed(0)
    x = torch.randn(512, 32)
    y = (x @ torch.randn(32, 4)).argmax(1)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=3.0)
    mon = explainer.TrainingMonitor(model, optimizer=opt, quiet=True)
    for step in range(400):
        idx = torch.randint(0, 512, (32,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        mon.step(loss)
        opt.step()
        if step % 40 == 0:
            with torch.no_grad():
                mon.validation(F.cross_entropy(model(x[:128]), y[:128]))
    d = mon.curve()
    mon.close()
    facts = d.facts
    assert d.rule == "signal.unstable" and facts["rise_from_best_x"] >= 10, (d.summary, facts)
    assert "%" not in d.summary and f"{facts['rise_from_best_x']}x its best" in d.summary
