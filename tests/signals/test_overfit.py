"""Single-batch overfit check: a healthy model passes; deliberately broken ones fail with the named cause."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest
import torch
from torch import nn

import explainer
from explainer.cli.main import main as cli_main

from conftest import ROOT


pytestmark = pytest.mark.usefixtures("one_thread")


def batch(n=64, features=8, classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    return x, x[:, :classes].argmax(1)


def mlp(hidden=64):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, 4))


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 3), nn.ReLU())
        self.head = nn.Linear(3, 4)

    def forward(self, x):
        return self.head(self.encoder(x).detach())


class IgnoresInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.zeros_like(x))  # the bug: the wrong variable


def test_healthy_model_passes_and_is_left_unchanged():
    model = mlp()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(3)
    expected = torch.rand(2)
    torch.manual_seed(3)
    diagnosis = explainer.overfit_one_batch(model, batch(), nn.CrossEntropyLoss())
    assert diagnosis.rule == "signal.overfit_passed" and diagnosis.facts["passed"] is True
    assert diagnosis.facts["final_loss"] <= 0.05 < diagnosis.facts["initial_loss"]
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert torch.equal(torch.rand(2), expected)  # the caller's random stream is untouched
    json.loads(diagnosis.to_json())


def test_nll_loss_on_raw_scores_is_unbounded():
    diagnosis = explainer.overfit_one_batch(mlp(), batch(), nn.NLLLoss())
    assert diagnosis.facts["passed"] is False
    assert diagnosis.facts["causes"][0] == "loss_unbounded"
    assert diagnosis.facts["final_loss"] < 0
    assert "unbounded below" in diagnosis.summary
    assert any("log_softmax" in fix for fix in diagnosis.fixes)


def test_softmax_before_cross_entropy():
    model = nn.Sequential(mlp(), nn.Softmax(dim=1))
    diagnosis = explainer.overfit_one_batch(model, batch(), nn.CrossEntropyLoss())
    assert diagnosis.facts["passed"] is False
    assert diagnosis.facts["causes"][0] == "probabilities_to_cross_entropy"
    assert any("Remove the final softmax" in fix for fix in diagnosis.fixes)


def test_mse_between_broadcasting_shapes():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    x, _ = batch()
    with pytest.warns(UserWarning, match="target size"):
        diagnosis = explainer.overfit_one_batch(model, (x, x[:, 0]), nn.MSELoss())
    facts = diagnosis.facts
    assert facts["passed"] is False and facts["causes"][0] == "shape_mismatch"
    assert (facts["output_shape"], facts["target_shape"]) == ("(64, 1)", "(64,)")
    assert "output (64, 1) and target (64,) differ in shape" in diagnosis.summary


def test_shuffled_labels_do_no_better_than_a_constant():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 2, generator=g)
    y = (x[:, 0] > 0).long()

    def small():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))

    assert explainer.overfit_one_batch(small(), (x, y), nn.CrossEntropyLoss(), steps=300).facts["passed"]
    shuffled = y[torch.randperm(256, generator=g)]
    diagnosis = explainer.overfit_one_batch(small(), (x, shuffled), nn.CrossEntropyLoss(), steps=300)
    assert diagnosis.facts["passed"] is False
    assert diagnosis.facts["causes"] == ["no_better_than_constant"]
    assert "shuffled or misaligned labels" in diagnosis.summary


def test_frozen_parameters_are_named():
    model = nn.Sequential(nn.Linear(8, 3), nn.ReLU(), nn.Linear(3, 4))
    model[0].requires_grad_(False)
    diagnosis = explainer.overfit_one_batch(model, batch(), nn.CrossEntropyLoss())
    assert diagnosis.facts["passed"] is False
    assert diagnosis.facts["frozen_params"] == ["0.weight", "0.bias"]
    assert "frozen (requires_grad=False): 0.weight, 0.bias" in diagnosis.summary


def test_detached_branch_gets_no_gradient():
    diagnosis = explainer.overfit_one_batch(Detached(), batch(), nn.CrossEntropyLoss())
    assert diagnosis.facts["passed"] is False
    assert diagnosis.facts["no_grad_params"] == ["encoder.0.weight", "encoder.0.bias"]
    assert "no gradient reaches 2 trainable parameter(s): encoder.0.weight, encoder.0.bias" in diagnosis.summary


def test_forward_that_ignores_its_input():
    diagnosis = explainer.overfit_one_batch(IgnoresInput(), batch(), nn.CrossEntropyLoss())
    assert diagnosis.facts["passed"] is False
    assert "input_ignored" in diagnosis.facts["causes"]
    assert diagnosis.facts["zero_grad_params"] == ["fc.weight"]


def test_fully_detached_output():
    model = mlp()
    model.requires_grad_(False)
    diagnosis = explainer.overfit_one_batch(model, batch(), nn.CrossEntropyLoss())
    assert diagnosis.facts["causes"][0] == "no_trainable"


CASES = textwrap.dedent('''
    import torch
    from torch import nn

    def data():
        g = torch.Generator().manual_seed(0)
        x = torch.randn(64, 8, generator=g)
        return x, x[:, :4].argmax(1)

    def healthy():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4)), data(), nn.CrossEntropyLoss()

    def frozen():
        model = nn.Sequential(nn.Linear(8, 3), nn.ReLU(), nn.Linear(3, 4))
        model[0].requires_grad_(False)
        return model, data(), nn.CrossEntropyLoss()
''')


@pytest.fixture
def cases_module(tmp_path, monkeypatch):
    (tmp_path / "overfit_cases.py").write_text(CASES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "overfit_cases"
    sys.modules.pop("overfit_cases", None)


def test_cli_exit_status_and_json(cases_module, capsys):
    assert cli_main(["overfit", "--format", "json", f"{cases_module}:healthy"]) == 0
    assert json.loads(capsys.readouterr().out)["facts"]["passed"] is True
    assert cli_main(["overfit", f"{cases_module}:frozen"]) == 1
    assert "[signal.overfit_failed]" in capsys.readouterr().out
    assert cli_main(["overfit", f"{cases_module}:missing"]) == 2
    assert "cannot load" in capsys.readouterr().err


def test_pytest_fixture_gives_a_readable_failure(tmp_path):
    (tmp_path / "overfit_cases.py").write_text(CASES)
    (tmp_path / "test_gate.py").write_text(textwrap.dedent('''
        import overfit_cases

        def test_healthy(overfit_one_batch):
            overfit_one_batch(*overfit_cases.healthy())

        def test_frozen(overfit_one_batch):
            overfit_one_batch(*overfit_cases.frozen())
    '''))
    import subprocess

    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "explainer.pytest_plugin", "-p", "no:cacheprovider",
                             "test_gate.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 1 passed" in out
    assert "the model cannot overfit one batch" in out and "[signal.overfit_failed]" in out
    assert "frozen (requires_grad=False): 0.weight, 0.bias" in out
    assert "Traceback" not in out
