"""pytest plugin: keep the single-batch overfit check as a fast CI gate.

Loaded automatically once torch-explainer is installed (entry point `pytest11`), or with
`pytest -p explainer.pytest_plugin`:

    def test_model_learns(overfit_one_batch):
        overfit_one_batch(build_model(), (x, y), nn.CrossEntropyLoss())   # fails with the diagnosis

Importing this module costs nothing: torch and the explainer load only when the fixture is used.
"""

from __future__ import annotations

from typing import Any

import pytest


def assert_overfits(model: Any, batch: Any, loss_fn: Any, **options: Any):
    """Run the check; on failure, fail the test with the diagnosis (summary, causes, fixes, curve)."""
    from .diagnose.render import render_text
    from .signals.overfit import overfit_one_batch

    diagnosis = overfit_one_batch(model, batch, loss_fn, **options)
    if not diagnosis.facts["passed"]:
        curve = ", ".join(f"{v:.4g}" for v in diagnosis.facts.get("curve", []))
        pytest.fail(f"the model cannot overfit one batch\n{render_text(diagnosis)}  loss curve: {curve}\n",
                    pytrace=False)
    return diagnosis


@pytest.fixture(name="overfit_one_batch")
def overfit_one_batch_fixture():
    """A callable (model, batch, loss_fn, steps=..., lr=..., tolerance=...) that fails the test unless the loss reaches ~0."""
    return assert_overfits
