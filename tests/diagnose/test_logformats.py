"""Logs as people hand them over: compressed, UTF-16 without a byte order mark, written in a cp1252 locale, a saved
notebook, or no text at all (the review of 2026-12-07, defects 7 and 14): each read as the text it holds, or said to be
unreadable, never a clean "no error found" (explainer/diagnose/logfile.py)."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sys

import pytest

from explainer.cli.explain import explain_input
from explainer.cli.main import main
from explainer.diagnose import logfile as _logfile

from conftest import ROOT

LOGS = ROOT / "fixtures" / "logs"
WORKER_LOG = (LOGS / "dataloader_worker.log").read_text(encoding="utf-8")  # a real run's log, a worker's KeyError


def _seen(path) -> list[tuple]:
    return [(d.rule, d.summary, d.location and (d.location.file, d.location.line)) for d in explain_input(str(path))]


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> list[tuple]:
    plain = tmp_path_factory.mktemp("plain") / "train.log"
    plain.write_text(WORKER_LOG, encoding="utf-8")
    found = _seen(plain)
    assert found and found[0][0] == "data.worker_error"
    return found


@pytest.mark.parametrize("module", [gzip, bz2, lzma])
def test_a_compressed_log_is_read_decompressed(tmp_path, expected, module):
    """`explainer explain run.log.gz` said "no error found" (the review's pl_run_plain.log.gz)."""
    path = tmp_path / "train.log.z"  # (known by its content, not its name)
    path.write_bytes(module.compress(WORKER_LOG.encode()))
    assert _seen(path) == expected


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_a_wide_log_without_a_byte_order_mark_is_read_as_such(tmp_path, monkeypatch, expected, codec):
    """The review's pl_run_utf16_nobom.log: every other byte a NUL, read as UTF-8 it held no error; piped in too."""
    path = tmp_path / "train.log"
    path.write_bytes(WORKER_LOG.replace("\n", "\r\n").encode(codec))
    assert _seen(path) == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(path.read_bytes())), "utf-8"))
    assert _seen("-") == expected


@pytest.mark.parametrize("grep", [False, True])
def test_a_log_written_in_a_cp1252_locale_keeps_its_paths(tmp_path, monkeypatch, grep):
    """Its bytes that are not UTF-8 were U+FFFD: "at /home/andr\\ufffd/projets/r\\ufffdseau/pl_log_run.py:23"."""
    if grep:  # (the large-log path: grep's blocks, decoded where they hold a trigger)
        monkeypatch.setattr(_logfile, "GREP_MIN_BYTES", 0)
    path = tmp_path / "train.log"
    path.write_bytes(WORKER_LOG.replace("/work/main/fixtures/data/", "/home/andré/réseau/").encode("cp1252"))
    assert (_logfile.skippable_blocks(str(path)) is not None) == (grep and _logfile.grep_command() is not None)
    [found] = explain_input(str(path))
    assert found.location.file == "/home/andré/réseau/worker_keyerror.py"


def test_a_saved_notebook_is_read_as_the_text_of_its_outputs():
    """A notebook Jupyter ran and saved (nbconvert --execute): the error output's traceback, colours taken off, gives the
    cell's place as the same traceback pasted does; the line numbers of that text are none of the file's."""
    notebook = LOGS / "notebook_matmul.ipynb"
    [found] = explain_input(str(notebook))
    assert (found.rule, found.location.file, found.location.line, found.location.code) == \
        ("shape.matmul", "Cell In[2]", 2, "model(x)")
    assert "input_line" not in found.facts
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    assert "\x1b" not in _logfile.notebook_text(cells) and "Cell In[2], line 2" in _logfile.notebook_text(cells)


def _explain(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["explain", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_file_that_is_no_text_log_is_said_so_in_text_and_json(tmp_path, capsys):
    """A checkpoint passed by mistake was "no error found", exit 0; with --format json nothing was printed."""
    import torch

    checkpoint = tmp_path / "model.pt"
    torch.save({"w": torch.zeros(2)}, checkpoint)
    status, out, err = _explain(capsys, str(checkpoint))
    assert (status, out) == (2, "")
    assert f"cannot read {checkpoint}: not a text log (zip data: a torch.save checkpoint?)" in err
    status, out, _ = _explain(capsys, "--format", "json", str(checkpoint))
    assert status == 2
    assert json.loads(out) == {"input": str(checkpoint), "found": 0,
                               "unreadable": "not a text log (zip data: a torch.save checkpoint?)"}


def test_a_cut_compressed_log_is_said_so_and_json_answers_for_every_input(tmp_path, capsys):
    cut = tmp_path / "run.log.gz"
    cut.write_bytes(gzip.compress(WORKER_LOG.encode())[:600])
    quiet = tmp_path / "quiet.log"
    quiet.write_text("epoch 1 loss 0.5\n", encoding="utf-8")
    status, out, err = _explain(capsys, "--format", "json", str(cut), str(quiet))
    assert status == 2 and "gzip data cut short or damaged" in err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(line["input"], line["found"], "unreadable" in line) for line in lines] == \
        [(str(cut), 0, True), (str(quiet), 0, False)]
