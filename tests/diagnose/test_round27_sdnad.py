"""Round 27 for shape, distributed, dtype, numerics and autograd, and the paste reader: a chained paste whose last error
("During handling of the above exception, another exception occurred") is the one Python died of leads, the error it
was raised while handling shown under it, as the live hook reads the same chain, while a chain of "The above exception
was the direct cause" keeps its cause (the root cause) first; each corpus message is claimed, from its text alone, by
the right rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed
too, and near misses stay unclaimed."""

from __future__ import annotations

import importlib.util
import io
import traceback
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import explainer
from explainer.cli.explain import explain_stream
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text

from conftest import assert_left_alone, assert_names, benchmark_module, corpus_message, explain_paste, raised, run_python

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _ruled(text: str) -> list:
    return [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]


# --- chained exceptions: the last raised leads ------------------------------------------------------------------------

def test_a_chained_paste_is_answered_by_the_error_python_died_of():
    # r27_a#57: KeyError: 'epoch' on a checkpoint, handled; its fallback then failed with 'odict_keys' indexing
    [diagnosis] = _ruled(corpus_message("r27_a.yaml#57"))
    assert diagnosis.rule == "other.dict_view_not_subscriptable"
    assert (diagnosis.location.file, diagnosis.location.line) == ("../utils/Restore.py", 51)
    [handled] = diagnosis.facts["printed_with"]
    assert handled["rule"] == "data.checkpoint_entry_missing" and handled["handled"] is True
    assert "'epoch'" in handled["summary"] and handled["location"]["line"] == 24
    assert "raised while handling [data.checkpoint_entry_missing]" in render_text(diagnosis, colour=False)
    assert COVERAGE.judge(CORPUS["r27_a.yaml#57"]).outcome == "explained"


def _lookup_then_fail(direct: bool):
    table = {}
    try:
        return table["k"]
    except KeyError as e:
        if direct:
            raise ValueError("v") from e
        raise ValueError("v")


def _printed(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def test_the_scanner_links_an_error_to_the_one_it_was_raised_while_handling():
    # both chains raised here by real code and printed by Python's traceback module
    text = _printed(raised(lambda: _lookup_then_fail(direct=False)))
    assert "During handling of the above exception" in text
    first, second = scan(text.splitlines())
    assert (first.handling, second.handling) == (0, first.line)
    assert second.direct_cause == ""
    direct = _printed(raised(lambda: _lookup_then_fail(direct=True)))
    assert "The above exception was the direct cause" in direct
    first, second = scan(direct.splitlines())
    assert second.handling == 0 and second.direct_cause == "KeyError: 'k'"


def _ipython_prints(cell: str, tmp_path) -> str:
    """What a real IPython shell (the installed one, a test dependency) prints for a cell that raises: `ipython -c`,
    in a subprocess with its own profile folder."""
    done = run_python("-m", "IPython", "--colors=NoColor", "--no-banner", f"--ipython-dir={tmp_path}", "-c", cell,
                      cwd=tmp_path)
    return done.stdout


def test_an_ipython_chain_is_linked_across_its_layout(tmp_path):
    # IPython's own layout (its line of dashes over the first error, "KeyError   Traceback (most recent call last)",
    # "Cell In[n], line m", "---->" marks) printed live by IPython; nothing typed by hand
    text = _ipython_prints("d = {}\ntry:\n    x = d['k']\nexcept KeyError:\n    raise ValueError('v')", tmp_path)
    assert text.startswith("-" * 75) and "During handling of the above exception" in text
    records = list(scan(text.splitlines()))
    assert [r.text for r in records] == ["KeyError: 'k'", "ValueError: v"]
    assert records[-1].handling == records[0].line
    direct = _ipython_prints("d = {}\ntry:\n    x = d['k']\nexcept KeyError as e:\n    raise ValueError('v') from e",
                             tmp_path)
    records = list(scan(direct.splitlines()))
    assert records[-1].handling == 0 and records[-1].direct_cause == "KeyError: 'k'"


def _checkpoint_fallback():
    model = nn.Linear(4, 2)
    checkpoint = {"weight": torch.zeros(2, 4)}  # a bare state_dict that lost its bias: no 'epoch' either
    try:
        start = checkpoint["epoch"] + 1
    except KeyError:
        model.load_state_dict(checkpoint)  # torch raises: Missing key(s) in state_dict: "bias"
        start = 0
    return start


def test_live_and_pasted_chains_lead_with_the_same_error():
    exc = raised(_checkpoint_fallback)
    assert isinstance(exc, RuntimeError) and isinstance(exc.__context__, KeyError)
    live = explainer.explain(exc)
    printed = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert "During handling of the above exception" in printed
    pasted = _ruled(printed)
    assert live.rule == pasted[0].rule and live.rule.startswith("data.")
    assert "bias" in live.summary
    for diagnosis in (live, pasted[0]):
        [handled] = [p for p in diagnosis.facts["printed_with"] if p.get("handled")]
        assert handled["rule"] == "data.checkpoint_entry_missing" and "'epoch'" in handled["summary"]
    assert len(pasted) == 1  # the handled error is shown under the one explained, not again on its own


def test_a_live_chain_lends_the_handled_error_to_the_rules_context():
    def fallback():
        checkpoint = nn.Linear(4, 2).state_dict()
        try:
            return checkpoint["epoch"]
        except KeyError:
            return checkpoint.keys()[0]

    diagnosis = explainer.explain(raised(fallback))
    assert diagnosis.rule == "other.dict_view_not_subscriptable"
    assert "KeyError 'epoch'" in diagnosis.summary


def test_an_error_raised_again_while_handling_itself_is_not_shown_twice():
    def again():
        try:
            torch.zeros(2, 3) @ torch.zeros(4, 5)
        except RuntimeError:
            torch.zeros(2, 3) @ torch.zeros(4, 5)

    diagnosis = explainer.explain(raised(again))
    assert not [p for p in diagnosis.facts.get("printed_with", []) if p.get("handled")]


def test_an_unexplained_last_error_leaves_the_handled_one_the_answer():
    # r22_b#60: torch.save's write failed, and the paste's second copy is cut ("RuntimeError: [enforce fail at")
    rules = [d.rule for d in explain_stream(io.StringIO(corpus_message("r22_b.yaml#60")))]
    assert rules == ["data.checkpoint_save_failed", None]


def test_a_wrapper_raised_from_a_torch_error_keeps_the_cause_first_in_a_paste():
    # "raise X from e": the corpus's direct-cause chains are answered by their first error, the root cause (a rendezvous
    # timeout under torchrun's RendezvousConnectionError, torchvision's missing nms under transformers' import error)
    def wrapped():
        try:
            torch.zeros(2, 3) @ torch.zeros(4, 5)
        except RuntimeError as e:
            raise ValueError("training step failed") from e

    exc = raised(wrapped)
    printed = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    first = _ruled(printed)[0]
    assert first.rule == explainer.explain(exc).rule == "shape.matmul"
    assert first.error.startswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied")
    for where in ("r4_b.yaml#54", "r25_a.yaml#49", "r24_a.yaml#42"):
        assert COVERAGE.judge(CORPUS[where]).rule == _ruled(corpus_message(where))[0].rule
        assert "direct cause" in CORPUS[where].message


# --- round 27's corpus entries ------------------------------------------------------------------------------------------

CORPUS_CASES = [
    ("r27_a.yaml#97", "numerics.amp_overflow_skip", ["16384.0", "8192.0", "4096.0"]),
    ("r27_b.yaml#44", "distributed.nccl_error", ["ib_plugin.c:978", "2.14.3"]),
    ("r27_a.yaml#53", "shape.scalar_conversion", ["`loss_ce.item()`", "'loss_ce'"]),
    ("r27_a.yaml#49", "numerics.tensorboard_nonfinite", ["WARNING:root"]),
    ("r27_a.yaml#80", "numerics.tensorboard_histogram_empty", ["writer.add_histogram('Vectors', vector)"]),
    ("r27_a.yaml#81", "numerics.tensorboard_histogram_empty", ["nan or inf"]),
    ("r27_a.yaml#82", "shape.tensorboard_image_format", ["(8, 3, 512, 512)", "'CHW'", "add_images"]),
    ("r27_a.yaml#84", "shape.tensorboard_image_format", ["(1, 3, 256, 512)", "'CHW'"]),
    ("r27_a.yaml#83", "shape.tensorboard_image_format", ["batch"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_a_live_two_dimensional_image_is_explained():
    # a 2-D mask logged as CHW: raised here by torch's own TensorBoard helper, loaded from its file (the tensorboard
    # package this machine lacks is imported only by torch.utils.tensorboard's __init__)
    path = Path(torch.__file__).parent / "utils" / "tensorboard" / "_utils.py"
    spec = importlib.util.spec_from_file_location("tensorboard_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    exc = raised(lambda: module.convert_to_HWC(np.zeros((28, 28)), "CHW"))
    assert str(exc).startswith("size of input tensor and input format are different.")
    assert_names(explain_paste(_printed(exc)), "shape.tensorboard_image_format", ["(28, 28)", "dataformats='HW'"])


@pytest.mark.parametrize("text, rule, values", [
    # the other threads' wordings: manydepth's extra leading 1 (nianticlabs/manydepth#20)
    ("AssertionError: size of input tensor and input format are different.         tensor shape: (1, 3, 192, 640), "
     "input_format: CHW", "shape.tensorboard_image_format", ["(1, 3, 192, 640)", "4 dimensions"]),
    ("ValueError: The histogram is empty, please file a bug report.", "numerics.tensorboard_histogram_empty",
     ["nan or inf"]),
    # DeepSpeed's loss scaler: halvings in a run, with the scale of the line after the first
    ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 512.0\n"
     "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 256.0\n"
     "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 128.0",
     "numerics.amp_overflow_skip", ["512.0", "256.0", "128.0"]),
])
def test_other_wordings_are_explained(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, rule", [
    ("ValueError: The input has no element.", "numerics.tensorboard_histogram_empty"),
    ("AssertionError: You can not use the same dimension shorthand twice.         input_format: CCHW",
     "shape.tensorboard_image_format"),
])
def test_near_misses_stay_unclaimed(text, rule):
    assert_left_alone(text, rule)
