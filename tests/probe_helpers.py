"""Helpers for the shape family's probe tests (tests/probes/test_probes_*.py): explain a fixture, find a culprit or a fix."""

from __future__ import annotations

import explainer

from conftest import raise_fixture


def explain_fixture(name: str):
    diagnosis = explainer.explain(raise_fixture(f"fixtures/shape/{name}.py"))
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def culprit(diagnosis, name: str) -> dict:
    found = {c["name"]: c for c in diagnosis.culprits}
    assert name in found, f"no culprit {name!r} in {sorted(found)}"
    return found[name]


def has_fix(diagnosis, text: str) -> bool:
    return any(text in fix for fix in diagnosis.fixes)
