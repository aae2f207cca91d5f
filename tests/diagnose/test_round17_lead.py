"""Round 17, the lead's rule: torch's NNPACK warning (written by a round-17 writer and parked while two
controls had its words; installed with the reading that torch's own warnings are failures of their family),
verbatim from the corpus."""

from __future__ import annotations

import io
import traceback

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_paste, raised

RULE = "other.nnpack_init_failed"
CORPUS = [
    ("r5_a.yaml#78", ["NNPACK.cpp:80", "AVX2"]),
    ("r5_a.yaml#79", ["NNPACK.cpp:64", "Unsupported hardware"]),
    ("r17_a.yaml#9", ["NNPACK.cpp:79", "Unsopported hardware"]),
]


@pytest.mark.parametrize(("where", "values"), CORPUS, ids=[w for w, _ in CORPUS])
def test_corpus_messages_name_their_values(where, values):
    assert_names(explain_paste(corpus(where)), RULE, values)


def test_nnpacks_own_status_is_not_torchs_warning():
    # https://github.com/Maratyszcza/NNPACK/issues/7: a program calling NNPACK's C API directly
    text = "getting a `nnp_status_unsupported_hardware` with `nnp_initialize()` on OSX 10.11.4"
    assert all(d.rule != RULE for d in explain_stream(io.StringIO(text)))


def test_the_warning_goes_under_the_crash_printed_after_it():
    # the warning (r5_a#79), then a real crash printed after it: a Linear layer given inputs of the wrong width, its
    # traceback formatted as Python prints it
    error = raised(lambda: torch.nn.Linear(256, 10)(torch.randn(32, 512)))
    text = corpus("r5_a.yaml#79") + "\n" + "".join(traceback.format_exception(error))
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "shape.matmul", diagnosis.rule
