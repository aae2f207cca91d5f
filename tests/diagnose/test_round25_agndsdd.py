"""Round-25 wordings for autograd, numerics, dtype, shape, data and distributed in test and CI logs: assert_close's
report under pytest's `E   ` prefix and under GitHub Actions' timestamps (its blank lines, and the failing item printed
last by newer torch), pytest's short summary cutting a message short with "..." (no_grad_fn, an in-place
modification), torch.load behind a `map_location=` call. Each corpus message (verbatim from the opened rounds) is
claimed by the right rule with its values named; assert_close's report is explained live; near misses stay out."""

from __future__ import annotations

import io
import logging
import traceback

import pytest
import torch

import explainer
from explainer.cli.explain import explain_stream

from conftest import PYTEST_TERMINALS, assert_names, corpus_message, explain_paste, logged_records, raised, run_python

CORPUS_CASES = [
    # pytest's "E       " prefix, a blank "E" line inside the report, the item after another blank line
    ("r25_b.yaml#23", "numerics.assert_close_mismatch", ["705 of 1024", "0.00146484375", "(1, 0, 54)", "item [0]"]),
    # GitHub Actions' timestamps on every line, the blank line a bare timestamp; the test's name from its header
    ("r25_b.yaml#24", "numerics.assert_close_mismatch", ["test_float8_scale_fast_accum_xpu", "128 of 256", "(8, 0)"]),
    ("r25_b.yaml#22", "numerics.assert_close_mismatch", ["test_rms_norm_bwd_dx", "1 of 2048", "(29, 19)"]),
    # pytest's short summary cuts the message ("does not require grad...", "does not ...")
    ("r25_b.yaml#1", "autograd.no_grad_fn", ["element 0"]),
    ("r25_b.yaml#36", "autograd.inplace_modified", ["[torch.FloatTensor [0]]", "NormBackward1", "version 1"]),
    # torch.load's call seen above the error (its map_location= argument), no torch frame in the paste
    ("r25_a.yaml#68", "data.checkpoint_not_a_checkpoint", ["'<'"]),
    # accelerate's notebook_launcher in a local notebook, called without num_processes
    ("r25_a.yaml#23", "distributed.accelerate_notebook_launcher", ["`notebook_launcher`", "`num_processes=...`"]),
]


CITED_CASES = [
    # accelerate 0.8's spelling of the argument (accelerate/launchers.py at v0.8.0)
    ("ValueError: You have to specify the number of GPUs you would like to use, add `num_process=...` to your call.",
     "distributed.accelerate_notebook_launcher", ["`num_process=...`", "`num_process=1`"]),
]


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_live_assert_close_names_the_item_printed_last():
    actual, expected = (torch.zeros(4), torch.ones(2)), (torch.zeros(4), torch.zeros(2))
    error = raised(lambda: torch.testing.assert_close(actual, expected))
    text = str(error)
    # newer torch prints the failing item after the differences, after a blank line
    assert text.rstrip().endswith("The failure occurred for item [1]"), text
    assert_names(explainer.explain(error), "numerics.assert_close_mismatch", ["2 of 2", "item [1]"])


def test_live_assert_close_under_pytests_prefix(tmp_path):
    # pytest's own report of a real failing assert_close, run in a subprocess: its "E       " prefix and blank "E"
    # lines are pytest's. (GitHub Actions' timestamped layout cannot be produced here: r25_b#24 and r25_b#22 above
    # are real pastes of it.)
    test_file = tmp_path / "test_close.py"
    test_file.write_text("import torch\n\n\ndef test_close():\n"
                         "    torch.testing.assert_close(torch.zeros(3), torch.tensor([0.0, 0.0, 1.0]))\n",
                         encoding="utf-8")
    result = run_python("-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", str(test_file),
                        env=PYTEST_TERMINALS["ci"], cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.stdout
    assert "E   AssertionError: Tensor-likes are not close!" in report and "\nE   \n" in report, report
    assert_names(explain_paste(report), "numerics.assert_close_mismatch", ["1 of 3", "(2,)"])


def _rules(message: str) -> list[str]:
    return [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]


def _logged_records() -> str:
    try:
        torch.zeros(2).sum().backward()
    except RuntimeError as exc:
        error_line = traceback.format_exception_only(exc)[-1].strip()
    try:
        torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]))
    except AssertionError as exc:
        mismatch = next(line for line in str(exc).splitlines() if line.startswith("Mismatched elements"))
    return logged_records((logging.ERROR, error_line), (logging.INFO, mismatch))


def test_near_misses_stay_with_their_own_rules():
    # a Python logging record with a date prefix is still a record of its own: the line after it is not its message
    # (both records written live by Python's logging, "%(asctime)s - %(name)s - %(levelname)s - %(message)s", with
    # the error line of a live backward() and a line of a live assert_close failure)
    logged = _logged_records()
    assert " - ERROR - RuntimeError: element 0 of tensors does not require grad" in logged
    assert " - INFO - Mismatched elements: 1 / 2 (50.0%)" in logged
    assert _rules(logged)[:1] == ["autograd.no_grad_fn"]
    # autograd.grad's inputs without grad keep their own rule, cut or not
    assert "autograd.no_grad_fn" not in _rules("RuntimeError: One of the differentiated Tensors does not require grad")
    # pickle.load of a user's dataset file (no torch.load, no map_location) is not a checkpoint problem
    assert "data.checkpoint_not_a_checkpoint" not in _rules(
        "    data = pkl.load(f)\n\n_pickle.UnpicklingError: invalid load key, '*'.")
    # torch's own fork check (no notebook_launcher) keeps its device rule
    assert "distributed.accelerate_notebook_launcher" not in _rules(
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
        "the 'spawn' start method")
    # numpy's own tolerance check stays out of assert_close's rule
    assert "numerics.assert_close_mismatch" not in _rules(
        "AssertionError: \nNot equal to tolerance rtol=0.001, atol=1e-05\n\nMismatched elements: 1 / 1059600 (9.44e-05%)\n"
        "Max absolute difference: 0.00576973\nMax relative difference: 0.0011973")
