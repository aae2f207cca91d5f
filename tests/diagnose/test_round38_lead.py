"""The lead's shared changes while round 38 was open: a paste that starts at the last frame's code line with Python
3.11's carets under it reads that line as the statement that raised. Corpus messages verbatim from the opened rounds,
and the same three lines cut from a traceback this Python prints for a real torch error."""

from __future__ import annotations

import sys
import traceback

import pytest
import torch
from conftest import assert_names, corpus_message, explain_paste


def test_a_code_line_with_carets_under_it_is_the_statement_that_raised():
    # PyTorchStepByStep#63: the code line, the carets, then the error
    diagnosis = explain_paste(corpus_message("r38_a.yaml#25"))
    assert_names(diagnosis, "shape.broadcast", ["tensor a (2)", "tensor b (6)"])
    assert diagnosis.facts["raised_in"]["code"] == "encoded = scaled_x + self.pe[:,:x.size(1),:]"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="carets under the code line are Python 3.11's")
def test_the_last_three_lines_of_a_live_traceback_name_their_statement():
    scaled_x, pe = torch.zeros(1, 3, 2), torch.zeros(1, 3, 6)
    try:
        encoded = scaled_x * 2 + pe[:, :3, :]  # noqa: F841 - raises
    except RuntimeError as exc:
        lines = "".join(traceback.format_exception(exc)).rstrip("\n").splitlines()
    assert set(lines[-2].strip()) <= set("^~"), lines
    diagnosis = explain_paste("\n".join(lines[-3:]))
    assert diagnosis.rule == "shape.broadcast"
    assert diagnosis.facts["raised_in"]["code"] == "encoded = scaled_x * 2 + pe[:, :3, :]  # noqa: F841 - raises"


def test_the_error_line_alone_names_no_statement():
    # the same error pasted without the lines above it: no statement to name
    message = corpus_message("r38_a.yaml#25").splitlines()[-1]
    assert "raised_in" not in explain_paste(message).facts
