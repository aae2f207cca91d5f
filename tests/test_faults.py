"""Fault injection: whichever internal stage fails, the traceback is untouched and one line says so."""

from __future__ import annotations

import io
import sys
import traceback

import pytest
import torch
from torch import nn

import explainer
from explainer import _explain, _hook, _rulebase


def _shape_error() -> RuntimeError:
    fc = nn.Linear(6, 2)
    try:
        fc(torch.ones(3, 4))
    except RuntimeError as exc:
        return exc
    raise AssertionError("no error")


def _boom(*args, **kwargs):
    raise OSError("injected fault")


STAGES = {
    "rule loading": (_explain, "default_rulebase"),
    "matching": (_rulebase.RuleBase, "match"),
    "live inspection": (_explain, "walk_traceback"),
    "rendering": (_hook, "render"),
    "format choice": (_hook, "choose_format"),
}


@pytest.fixture
def hooked():
    saved = sys.excepthook
    explainer.install()
    yield
    explainer.uninstall()
    sys.excepthook = saved


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_failing_leaves_traceback_and_adds_one_line(stage, monkeypatch, capsys, hooked):
    owner, name = STAGES[stage]
    monkeypatch.setattr(owner, name, _boom)
    exc = _shape_error()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    expected = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert err.startswith(expected), f"traceback changed when {stage} failed"
    rest = err[len(expected):]
    assert rest.count("\n") == 1, f"{stage}: expected exactly one line, got {rest!r}"
    assert rest.startswith("torch-explainer: internal error") and "injected fault" in rest


def test_writing_output_fails_once_then_one_line():
    class FlakyStream(io.StringIO):
        calls = 0

        def write(self, text):
            FlakyStream.calls += 1
            if FlakyStream.calls == 1:
                raise BrokenPipeError("reader went away")
            return super().write(text)

    exc = _shape_error()
    stream = FlakyStream()
    _hook.report(exc, exc.__traceback__, stream)
    assert stream.getvalue().strip().splitlines() == [
        "torch-explainer: internal error, no diagnosis (cannot write the diagnosis: BrokenPipeError); "
        "set EXPLAINER_DEBUG=1 for details"]


def test_writing_output_always_failing_is_silent():
    class DeadStream:
        def write(self, text):
            raise OSError("closed")

        def flush(self):
            raise OSError("closed")

    exc = _shape_error()
    _hook.report(exc, exc.__traceback__, DeadStream())  # must not raise


def test_no_stderr_at_all_is_harmless():
    exc = _shape_error()
    _hook.report(exc, exc.__traceback__, None)


def test_debug_mode_shows_the_explainers_own_traceback(monkeypatch):
    monkeypatch.setenv("EXPLAINER_DEBUG", "1")
    monkeypatch.setattr(_hook, "render", _boom)
    exc = _shape_error()
    stream = io.StringIO()
    _hook.report(exc, exc.__traceback__, stream)
    out = stream.getvalue()
    assert out.startswith("torch-explainer: internal error") and "Traceback (most recent call last)" in out


def test_exception_with_hostile_str_does_not_break_the_hook():
    class Hostile(Exception):
        def __str__(self):
            raise RuntimeError("str exploded")

    try:
        raise Hostile()
    except Hostile as exc:
        stream = io.StringIO()
        _hook.report(exc, exc.__traceback__, stream)
    assert stream.getvalue().count("\n") == 1
