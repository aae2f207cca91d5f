"""Round 16, the lead's rule: torch's lr_scheduler order warnings (seven corpus entries, four of them
controls before the reading settled when round 16 was opened), verbatim from the corpus and raised live."""

from __future__ import annotations

import traceback
import warnings

import pytest
import torch

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised

RULE = "other.lr_scheduler_before_optimizer"
# (entry, values the summary names, the line of torch's lr_scheduler.py the warning was raised at, where printed)
CORPUS = [
    ("r4_a.yaml#66", ["first learning rate", "GradScaler"], 123),
    ("r4_a.yaml#67", ["`lr_scheduler.step()`"], 122),
    ("r5_a.yaml#80", ["`lr_scheduler.step()`", "GradScaler"], None),
    ("r5_a.yaml#81", ["lr_scheduler.py:129", "`optimizer.step()`"], None),  # place and warning on two lines
    ("r16_a.yaml#18", ["`lr_scheduler.step()`"], 82),
    ("r16_a.yaml#19", ["`lr_scheduler.step()`"], 131),
    ("r16_a.yaml#20", ["`lr_scheduler.step()`", "`optimizer.step()`"], None),
]


@pytest.mark.parametrize(("where", "values", "line"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, values, line):
    diagnosis = explain_paste(corpus(where))
    assert_names(diagnosis, RULE, values)
    if line is not None:  # the warning's own place: read by the scanner as where it was raised
        raised_in = diagnosis.facts["raised_in"]
        assert raised_in["file"].endswith("lr_scheduler.py") and raised_in["line"] == line, raised_in


def test_the_overridden_step_wording_says_the_order_could_not_be_checked():
    # https://github.com/ultralytics/yolov5/issues/392 (the code block, verbatim)
    text = ("/usr/local/lib/python3.6/dist-packages/torch/optim/lr_scheduler.py:114: UserWarning: Seems like "
            "`optimizer.step()` has been overridden after learning rate scheduler initialization. Please, make sure to "
            "call `optimizer.step()` before `lr_scheduler.step()`. See more details at "
            "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate\n"
            '  "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate", UserWarning)')
    diagnosis = explain_paste(text)
    assert_names(diagnosis, RULE, ["lr_scheduler.py:114", "`amp.initialize`", "cannot check their order"])
    assert "amp.initialize(model, optimizer)" in diagnosis.fixes[0]


def test_an_error_after_the_warning_answers_and_the_warning_goes_under_it():
    # the warning (r16_a#19), then a real crash printed after it: a Linear layer given inputs of the wrong width, its
    # traceback formatted as Python prints it
    error = raised(lambda: torch.nn.Linear(256, 10)(torch.randn(32, 512)))
    text = corpus("r16_a.yaml#19") + "\n" + "".join(traceback.format_exception(error))
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "shape.matmul", diagnosis.rule
    assert [p["rule"] for p in diagnosis.facts.get("printed_with", [])] == [RULE]


def test_live_scheduler_stepped_first():
    assert_names(explain_fixture("fixtures/other/lr_scheduler_before_optimizer.py"), RULE,
                 ["`lr_scheduler.step()`", "first learning rate"])


def test_live_scheduler_after_optimizer_does_not_warn():
    import explainer

    def loop(first_scheduler: bool):
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if first_scheduler:
                scheduler.step()
            model(torch.randn(8, 4)).sum().backward()
            optimizer.step()
            scheduler.step()
            raise ValueError("loop finished")

    assert explainer.explain(raised(lambda: loop(False))).rule != RULE
    assert explainer.explain(raised(lambda: loop(True))).rule == RULE
