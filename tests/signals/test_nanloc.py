"""NaN at its source: the monitor's localisation against labels measured in real small training runs."""

from __future__ import annotations

import runpy
import warnings

import pytest
import torch
from torch import nn

import explainer
from explainer.signals.nanloc import locate

from conftest import ROOT

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def gen():
    return runpy.run_path(str(ROOT / "fixtures" / "nan_injections" / "scenarios.py"), run_name="nan_injections")


@pytest.fixture(scope="module")
def bench():
    return runpy.run_path(str(ROOT / "benchmarks" / "nan_localisation.py"), run_name="nan_bench")


# One scenario of each kind, both placements and both architectures among them: a sample of the benchmark.
SAMPLE = [
    dict(kind="log", arch="mlp", depth=3, position=1, placement="child"),
    dict(kind="sqrt", arch="cnn", depth=2, position=1, placement="inline"),
    dict(kind="div_zero", arch="mlp", depth=3, position=2, placement="inline"),
    dict(kind="fp16_overflow", arch="mlp", depth=2, position=0, placement="child"),
    dict(kind="exp_overflow", arch="cnn", depth=2, position=0, placement="child", optimizer="adam", lr=1e-3),
    dict(kind="nan_input", arch="mlp", depth=2, position=0, placement="child"),
    dict(kind="inf_input", arch="cnn", depth=2, position=0, placement="child"),
    dict(kind="bad_loss", arch="mlp", depth=2, position=0, placement="child"),
    dict(kind="backward_norm", arch="mlp", depth=3, position=1, placement="inline"),
    dict(kind="backward_where_log", arch="cnn", depth=2, position=1, placement="child"),
]


@pytest.mark.parametrize("config", SAMPLE, ids=[c["kind"] for c in SAMPLE])
def test_monitor_localises_each_kind_of_injection(gen, bench, config):
    scenario = gen["Scenario"](seed=3, bad_step=3, steps=5, **config)
    label = gen["measure"](scenario)
    assert label is not None, f"{scenario.name} never went non-finite: the scenario no longer reproduces"
    step, facts, rule = bench["detect"](scenario)
    ok, why = bench["judge"](label, facts, rule)
    assert ok, f"{scenario.name}: measured {label}, monitor said {rule} {facts}: {why}"


def test_labels_agree_with_where_the_injection_was_planted(gen):
    # The labeller measures; the scenario knows where it put the fragile operation: they must agree.
    for placement, expected in (("child", "blocks.1.fragile"), ("inline", "blocks.1")):
        label = gen["measure"](gen["Scenario"](kind="log", depth=3, position=1, placement=placement, bad_step=2,
                                               steps=4))
        assert label == {"step": 2, "stage": "forward", "source": "module", "module": expected}


class MaskedAttention(nn.Module):
    """Causal attention with a -inf mask that softmax absorbs: non-finite inside, finite out."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        scores = q @ k.transpose(-1, -2)
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), -1) @ v


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = MaskedAttention()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, scale):
        h = self.attn(x)
        h = torch.log(h.abs() * scale)  # made here, in the root's own code, not in proj
        return self.proj(h)


def test_a_transient_inf_mask_is_not_blamed_and_inline_code_is():
    model = Model()
    x = torch.randn(2, 5, 8)
    scale = torch.ones(2, 5, 1)
    scale[1] = 0.0
    facts = locate(model, (x,), {"scale": scale})["facts"]
    assert facts["module"] == "model" and facts["whole_model"] and facts["op"] == "log" and facts["source"] == "module"
    assert facts["input_finite"] is True and facts["first_output_module"] == "proj"
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_in_place_operation_is_blamed_on_its_module_not_on_the_data():
    class InPlaceLog(nn.Module):
        def forward(self, x):
            return x.clone().log_()

    model = nn.Sequential(nn.Linear(4, 4), InPlaceLog(), nn.Linear(4, 2))
    with torch.no_grad():
        model[0].weight.fill_(-1.0)
    facts = locate(model, (torch.rand(3, 4) + 0.1,), {})["facts"]
    assert (facts["module"], facts["op"], facts["source"], facts["input_finite"]) == ("1", "log_", "module", True)


def test_backward_only_nan_leaves_gradients_and_state_alone():
    torch.manual_seed(0)
    x = torch.rand(6, 4)
    x[2] = 0.0

    class Length(nn.Module):
        def forward(self, h):
            return h.pow(2).sum(-1, keepdim=True).sqrt()

    net = nn.Sequential(nn.Linear(4, 4, bias=False), Length(), nn.BatchNorm1d(1), nn.Linear(1, 1))
    net(x).sum().backward()
    grads = [p.grad.clone() for p in net.parameters()]
    buffers = [b.clone() for b in net.buffers()]
    facts = locate(net, (x,), {})["facts"]
    assert facts["forward_finite"] is True and facts["backward_module"] == "1"
    assert facts["backward_op"] == "SqrtBackward0" and "module" not in facts
    assert all(torch.equal(a.nan_to_num(), p.grad.nan_to_num()) for a, p in zip(grads, net.parameters()))
    assert all(torch.equal(a, b) for a, b in zip(buffers, net.buffers()))


def test_summary_names_the_op_and_the_data_and_prints_no_values():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    mon = explainer.TrainingMonitor(model, optimizer=optimizer)
    for step in range(4):
        x = torch.full((4, 4), 0.123456)
        if step == 2:
            x[1, 1] = float("nan")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        mon.step(loss)
        optimizer.step()
    mon.close()
    [diagnosis] = mon.diagnoses
    facts = diagnosis.facts
    assert (facts["step"], facts["module"], facts["source"], facts["input_finite"]) == (2, "0", "data", False)
    assert "the data made it" in diagnosis.summary
    assert any("assert torch.isfinite(x).all()" in fix for fix in diagnosis.fixes)
    assert "0.123" not in diagnosis.to_json()


def test_healthy_steps_are_not_hooked():
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    mon = explainer.TrainingMonitor(model)
    for _ in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        mon.step(loss)
    assert mon.diagnoses == []
    assert all(not m._forward_hooks for m in model.modules())
    assert torch.overrides._get_current_function_mode_stack() == []
    mon.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        locate(model, None, None)
