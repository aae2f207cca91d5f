"""Round-25 wordings for autograd, numerics, dtype, shape, data and distributed in test and CI logs: assert_close's
report under pytest's `E   ` prefix and under GitHub Actions' timestamps (its blank lines, and the failing item printed
last by newer torch), pytest's short summary cutting a message short with "..." (no_grad_fn, an in-place
modification), torch.load behind a `map_location=` call. Each corpus message (verbatim from the opened rounds) is
claimed by the right rule with its values named; assert_close's report is explained live; near misses stay out."""

from __future__ import annotations

import io

import pytest
import torch

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_paste, raised

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


def test_live_assert_close_under_pytest_and_actions_prefixes():
    error = raised(lambda: torch.testing.assert_close(torch.zeros(3), torch.tensor([0.0, 0.0, 1.0])))
    lines = f"{type(error).__name__}: {error}".splitlines()
    stamped = "\n".join(f"2026-02-13T15:56:24.83{i:05d}Z {line}".rstrip() + ("" if line else " ")
                        for i, line in enumerate(lines))
    pytest_e = "\n".join(f"E       {line}".rstrip() if line else "E       " for line in lines)
    for paste in (stamped, pytest_e):
        assert_names(explain_paste(paste), "numerics.assert_close_mismatch", ["1 of 3", "(2,)"])


def _rules(message: str) -> list[str]:
    return [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]


def test_near_misses_stay_with_their_own_rules():
    # a Python logging record with a date prefix is still a record of its own: the line after it is not its message
    logged = ("2024-05-01 10:00:00,123 - trainer - ERROR - RuntimeError: element 0 of tensors does not require grad "
              "and does not have a grad_fn\n2024-05-01 10:00:01,000 - trainer - INFO - Mismatched elements: 1 / 2 (50.0%)")
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
