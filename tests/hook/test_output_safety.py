"""What the JSON output may repeat of an error (never the values of the user's tensors), and what an unknown
$EXPLAINER_FORMAT does (text, said in one line; never a traceback or an 'internal error')."""

from __future__ import annotations

import io
import json
import sys
import threading

import pytest
import torch

import explainer
from explainer.cli.main import main
from explainer.hook import install as _hook

from conftest import raise_fixture


@pytest.fixture(autouse=True)
def _restore_hooks():
    saved = sys.excepthook, threading.excepthook
    yield
    explainer.uninstall()
    sys.excepthook, threading.excepthook = saved


def _salaries_error() -> ValueError:
    """A user's own check that prints its tensor into the message (the review's s29_valerr.py)."""
    salaries = torch.tensor([51234.5, 98765.25, 12345.75])
    try:
        raise ValueError(f"unexpected scale in batch: {salaries}")
    except ValueError as exc:
        return exc


def _hook_json(exc: BaseException) -> dict:
    stream = io.StringIO()
    _hook.report(exc, exc.__traceback__, stream, fmt="json")
    [line] = stream.getvalue().splitlines()
    return json.loads(line)


def test_json_names_an_unexplained_error_by_its_type_only_as_the_text_does():
    exc = _salaries_error()
    assert "51234.5000" in str(exc)  # (the message does hold the values)
    record = _hook_json(exc)
    assert record["rule"] is None and record["error"] == "ValueError"
    assert "51234" not in json.dumps(record)


def test_json_cuts_the_tensor_values_torch_prints_into_its_own_message_and_writes_shapes_as_the_text_does():
    exc = raise_fixture("fixtures/numerics/distribution_nan_loc.py")
    assert "tensor([nan])" in str(exc)
    record = _hook_json(exc)
    assert record["rule"] == "numerics.distribution_invalid"
    assert record["error"].startswith("ValueError: Expected parameter loc (Tensor of shape (1,)) of distribution Normal(")
    assert record["error"].endswith("but found invalid values:\ntensor(...)") and "[nan]" not in record["error"]
    assert record["facts"]["shape"] == "(1,)"  # not '1,': as the summary and the culprits write it
    assert "(shape (1,))" in record["summary"]


def test_explain_json_of_a_pasted_message_cuts_the_tensor_values_too(tmp_path, capsys):
    paste = tmp_path / "error.txt"
    paste.write_text(str(raise_fixture("fixtures/numerics/distribution_nan_loc.py")).join(("ValueError: ", "\n")))
    assert main(["explain", "--format", "json", str(paste)]) == 0
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record["rule"] == "numerics.distribution_invalid" and record["error"].endswith("values:\ntensor(...)")
    assert record["facts"]["shape"] == "(1,)"


def test_an_unknown_explainer_format_is_text_with_one_line_saying_so(monkeypatch, capsys):
    monkeypatch.setenv("EXPLAINER_FORMAT", "yaml")
    explainer.install()
    exc = raise_fixture("fixtures/numerics/distribution_nan_loc.py")
    sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert "torch-explainer [numerics.distribution_invalid]" in err and "internal error" not in err
    assert err.count("EXPLAINER_FORMAT") == 1
    assert "torch-explainer: EXPLAINER_FORMAT='yaml' is not a format (text or json, any case): the text format is " \
           "used\n" in err


def test_explainer_format_is_read_in_any_case(monkeypatch, capsys):
    monkeypatch.setenv("EXPLAINER_FORMAT", "JSON")
    explainer.install()
    exc = raise_fixture("fixtures/numerics/distribution_nan_loc.py")
    sys.excepthook(type(exc), exc, exc.__traceback__)
    last = capsys.readouterr().err.rstrip("\n").splitlines()[-1]
    assert json.loads(last)["rule"] == "numerics.distribution_invalid"


def test_explain_with_an_unknown_explainer_format_prints_text_and_says_so_on_stderr(tmp_path, monkeypatch, capsys):
    paste = tmp_path / "error.txt"
    paste.write_text("RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)\n")
    monkeypatch.setenv("EXPLAINER_FORMAT", "yaml")
    assert main(["explain", str(paste)]) == 0
    captured = capsys.readouterr()
    assert "[shape.matmul]" in captured.out
    assert captured.err == ("torch-explainer: EXPLAINER_FORMAT='yaml' is not a format (text or json, any case): the "
                            "text format is used\n")
    monkeypatch.setenv("EXPLAINER_FORMAT", "Json")
    assert main(["explain", str(paste)]) == 0
    assert json.loads(capsys.readouterr().out)["rule"] == "shape.matmul"
