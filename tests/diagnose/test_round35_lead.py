"""Round 35's shared changes: a log printed by rich's logging handler, whose message column wraps the words of an error
(and folds a word longer than the column) under the record's first line, read as the lines the program printed;
IPython's arrow atop a paste that kept only a cell's lines; warnings of one rule folded into one diagnosis that still
says each one's values; pybind11's signature wrapped before `arg0:`, not a pdsh host's prefix. Corpus messages verbatim
from the opened rounds; rich's own output of a torch error raised live."""

from __future__ import annotations

import io
import logging

import pytest
import torch
from conftest import assert_names, corpus_message, explain_paste

from explainer.cli.paste import rich_log_unwrapped
from explainer.diagnose.render import render_text

rich_logging = pytest.importorskip("rich.logging")
rich_console = pytest.importorskip("rich.console")


def test_an_out_of_memory_error_wrapped_by_rich_names_every_figure():
    # infinity#483: "ERROR: CUDA" on the record's first line, "out of memory. Tried to allocate 3.88 GiB" under it
    message = corpus_message("r34_c.yaml#18")
    assert "CUDA out of memory. Tried to allocate 3.88 GiB. GPU 0 has a total capacity of 44.42 GiB" \
        in rich_log_unwrapped(message)
    assert_names(explain_paste(message), "memory.cuda_oom", ["3.88 GiB", "44.42 GiB", "920.81", "5.95 GiB", "37.55 GiB"])


def test_lines_the_message_broke_itself_stay_apart():
    # the same paste: the traceback's title is a line of its own under the wrapped message, not a wrapped word
    lines = rich_log_unwrapped(corpus_message("r34_c.yaml#18")).splitlines()
    assert lines[-1].strip() == "Traceback (most recent call last):"
    assert lines[-2].endswith("nvironment-variables)")  # a URL longer than the column, folded where it stood
    # ComfyUI-FluxTrainer#80: the traceback's frames stay lines; a frame's code line that rich wrapped is joined
    text = rich_log_unwrapped(corpus_message("r20_a.yaml#27"))
    assert '  File "D:\\ComfyUI\\execution.py", line 323, in execute\n' in text
    assert "get_output_data(obj, input_data_all, execution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb)\n" \
        in text
    assert "execution.py:392" not in text  # the column of the place it was logged from


def test_a_paste_without_a_rich_record_is_left_as_it_is():
    for where in ("r34_c.yaml#33", "modern.yaml#66", "r20_a.yaml#1"):
        message = corpus_message(where)
        assert rich_log_unwrapped(message) == message


def test_rich_handler_output_of_a_live_error_is_read_as_one_message():
    stream = io.StringIO()
    logger = logging.getLogger("test_round35_lead.rich")
    handler = rich_logging.RichHandler(console=rich_console.Console(file=stream, width=80, color_system=None))
    logger.addHandler(handler)
    logger.propagate = False
    try:
        torch.nn.Linear(256, 10)(torch.zeros(32, 512))
    except RuntimeError as error:
        logger.error("step failed: %s", error)
    finally:
        logger.removeHandler(handler)
    printed = stream.getvalue()
    whole = "mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)"
    assert whole not in printed and len(printed.splitlines()) > 1  # rich wrapped the message at its column
    assert whole in rich_log_unwrapped(printed)
    assert_names(explain_paste(printed), "shape.matmul", ["32x512", "256x10"])


@pytest.mark.parametrize(("where", "rule", "line", "code"), [
    # Lightning-AI/tutorials#211: the cell's lines only, "---> 50" first
    ("r35_b.yaml#49", "other.torchmetrics_task_required", 50, "self.val_accuracy = Accuracy()"),
    # Capsule-Network-Tutorial#9: the frame line cut to "ipython-input-4-...> in forward(self, x)" above the context
    ("r33_c.yaml#4", "shape.view_size", 16, "u = u.view(x.size(0), 32 * 6 * 6, -1)"),
])
def test_ipython_arrow_atop_a_paste_is_the_failing_line(where, rule, line, code):
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == rule
    raised = diagnosis.facts["raised_in"]  # the cell's line (no file: the paste left IPython's frame line out)
    assert (raised["line"], raised["code"]) == (line, code)


def test_warnings_of_one_rule_with_other_values_are_each_said():
    # torchmetrics#1051: the compute-before-update warning of three metrics, one diagnosis naming each of them
    diagnosis = explain_paste(corpus_message("r35_b.yaml#68"))
    assert diagnosis.rule == "other.torchmetrics_compute_before_update" and diagnosis.facts["occurrences"] == 3
    assert "Precision" in diagnosis.summary
    also = [part["summary"] for part in diagnosis.facts["printed_with"]]
    assert len(also) == 2 and "Recall" in also[0] and "F1Score" in also[1]
    assert "also " in render_text(diagnosis)


def test_a_pybind11_signature_wrapped_before_arg0_keeps_its_argument_names():
    # aimet#3698: "arg0: torch.Tensor, arg1: ..." on a line of its own is the signature, not a pdsh host's prefix
    diagnosis = explain_paste(corpus_message("r35_c.yaml#27"))
    assert diagnosis.rule == "other.extension_incompatible_arguments"
    assert "arg0: torch.Tensor, arg1: aimet_common._libpymo.TfEncoding, arg2: aimet_common._libpymo.RoundingMode" \
        in diagnosis.summary
