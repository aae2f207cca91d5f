"""Fault injection: whichever internal stage fails, the traceback is untouched and one line says so."""

from __future__ import annotations

import io
import sys
import traceback

import pytest
import torch
from torch import nn

import explainer
from explainer.diagnose import explain as _explain
from explainer.hook import install as _hook
from explainer.rules import base as _rulebase


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
                raise BlockingIOError("resource temporarily unavailable")
            return super().write(text)

    exc = _shape_error()
    stream = FlakyStream()
    _hook.report(exc, exc.__traceback__, stream)
    assert stream.getvalue().strip().splitlines() == [
        "torch-explainer: internal error, no diagnosis (cannot write the diagnosis: BlockingIOError); "
        "set EXPLAINER_DEBUG=1 for details"]


def test_a_reader_that_went_away_gets_nothing_more():
    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError("reader went away")

    exc = _shape_error()
    _hook.report(exc, exc.__traceback__, ClosedPipe())  # must not raise, and writes no notice


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


SHUTDOWN_SCRIPT = '''
import threading, time
import torch
{install}

class Noisy:
    def __del__(self):
        raise RuntimeError("__del__ at interpreter shutdown")

keep = Noisy()

def late():
    time.sleep(0.3)
    torch.nn.Linear(2, 1)(torch.zeros(1, 3))

threading.Thread(target=late, name="late").start()
torch.nn.Linear(4, 2)(torch.zeros(3, 5))
'''


def test_errors_during_interpreter_shutdown_behave(tmp_path):
    from conftest import ROOT, run_python

    plain_script = tmp_path / "plain.py"
    plain_script.write_text(SHUTDOWN_SCRIPT.format(install=""))
    hooked_script = tmp_path / "hooked.py"
    hooked_script.write_text(SHUTDOWN_SCRIPT.format(install="import explainer\nexplainer.install()"))
    plain = run_python(str(plain_script), env={"PYTHONPATH": str(ROOT)})
    hooked = run_python(str(hooked_script), env={"PYTHONPATH": str(ROOT)})
    assert plain.returncode == hooked.returncode == 1
    assert "Exception in thread late" in hooked.stderr and "Exception ignored in" in hooked.stderr
    assert hooked.stderr.count("torch-explainer [shape.matmul]") == 2
    assert "internal error" not in hooked.stderr
    # Python's own reports are all there, in the same order, unchanged.
    position = 0
    for block in plain.stderr.replace(str(plain_script), str(hooked_script)).split("\n\n"):
        found = hooked.stderr.find(block.strip().splitlines()[0], position) if block.strip() else position
        assert found >= 0, f"missing from the hooked run: {block[:200]!r}"
        position = found


def _probe_cases():
    """For every built-in probe, one rule whose fixture makes it run."""
    from explainer.probes import load_builtin_probes
    from explainer.rules.base import default_rulebase

    cases = {}
    load_builtin_probes()
    for rule in default_rulebase().rules:
        if rule.fixture and rule.pack == "builtin":
            for name in rule.probes:
                cases.setdefault(name, rule)
    return sorted(cases.items())


@pytest.mark.parametrize("probe_name,rule", _probe_cases(), ids=[name for name, _ in _probe_cases()])
def test_each_probe_failing_keeps_the_diagnosis_and_adds_one_line(probe_name, rule, monkeypatch):
    from explainer.probes import PROBES, Probe

    from conftest import raise_fixture

    original = PROBES[probe_name]
    monkeypatch.setitem(PROBES, probe_name, Probe(original.name, _boom, original.provides, original.doc, original.live))
    exc = raise_fixture(rule.fixture)
    stream = io.StringIO()
    _hook.report(exc, exc.__traceback__, stream)
    out = stream.getvalue()
    assert f"[{rule.id}]" in out, f"{probe_name} failing lost the diagnosis of {rule.fixture}"
    assert out.count("torch-explainer: internal error") == 1 and "injected fault" in out
