"""An error no rule explains: every way in says so naming its type and place, never its message, which can hold
tensor values or private data (Python printed it just above)."""

from __future__ import annotations

import io
import subprocess
import sys
import traceback

import torch

import explainer
from conftest import ROOT
from explainer.hook import install as _hook

SECRET = torch.tensor([0.1234, 5.6789])
VALUES = ("0.1234", "5.6789")


def _unmatched_error() -> ValueError:
    try:
        raise ValueError(f"bad weights {SECRET}")  # the line the diagnosis names
    except ValueError as exc:
        return exc


RAISED_AT = f"{__file__}:{_unmatched_error.__code__.co_firstlineno + 2}"


def test_hook_names_the_type_and_place_not_the_message():
    exc = _unmatched_error()
    assert all(value in str(exc) for value in VALUES)
    stream = io.StringIO()
    _hook.report(exc, exc.__traceback__, stream)
    assert stream.getvalue() == f"torch-explainer: no known pytorch failure matches this error (ValueError at {RAISED_AT}).\n"


def test_json_summary_does_not_repeat_the_message():
    exc = _unmatched_error()
    stream = io.StringIO()
    _hook.report(exc, exc.__traceback__, stream, fmt="json")
    assert '"summary": "No rule in the knowledge base matches this error."' in stream.getvalue()


def test_explain_cli_names_only_the_type_of_a_pasted_unmatched_error(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("".join(traceback.format_exception(_unmatched_error())))
    done = subprocess.run([sys.executable, "-m", "explainer", "explain", str(log)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"no known pytorch failure matches this error (ValueError at {RAISED_AT})." in done.stdout, done.stdout
    assert not any(value in done.stdout + done.stderr for value in VALUES), done.stdout


def test_ipython_extension_names_the_type_not_the_message(capsys):
    from IPython.testing.globalipapp import get_ipython, start_ipython

    shell = start_ipython() or get_ipython()  # (the first call starts it; later ones return None)
    shell.run_line_magic("load_ext", "explainer")
    try:
        shell.run_cell("import torch\nsecret = torch.tensor([0.1234, 5.6789])\nraise ValueError(f'bad {secret}')")
    finally:
        shell.run_line_magic("unload_ext", "explainer")
    out, ours = capsys.readouterr()
    assert "ValueError: bad tensor([0.1234, 5.6789])" in out, out  # IPython's own traceback
    assert ours.startswith("torch-explainer: no known pytorch failure matches this error (ValueError at "), ours
    assert not any(value in ours for value in VALUES), ours


def test_a_syntax_error_is_named_by_its_type():
    # Python prints a SyntaxError's place and source line before its type: the type is still what the line names.
    try:
        eval("1 +")  # a config string parsed at run time
    except SyntaxError as exc:
        diagnosis = explainer.explain(exc)
    assert str(diagnosis).startswith("torch-explainer: no known pytorch failure matches this error (SyntaxError at ")
    assert diagnosis.to_dict()["error"] == "SyntaxError"
