"""Round-17 wordings for autograd, numerics, dtype and shape: each corpus message (verbatim from the opened rounds)
or pasted message (verbatim from the thread it cites) is claimed, from its text alone, by the right rule with the
values it holds named; near misses stay unclaimed; a number minus a boolean mask, which torch 2.13 still refuses,
is explained live."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, place

CORPUS_CASES = [
    # autograd
    ("r17_a.yaml#55", "autograd.inplace_modified",  # "in-place", no "which is output N of OP"
     ["[torch.FloatTensor [1, 2, 4]]", "at version 1 but is now at version 2"]),
    ("r17_b.yaml#45", "autograd.inplace_modified",  # wrapped between the type and the sizes
     ["[torch.cuda.FloatTensor [3, 64, 7, 7]]", "at version 1 but is now at version 3", "2 time(s)"]),
    ("r17_a.yaml#87", "autograd.cudnn_rnn_backward_eval", ["from tower 0 on device cuda:0", "use_lstm"]),
    # numerics
    ("r15_a.yaml#91", "numerics.anomaly_nan", ["MulBackward0"]),
    ("r17_a.yaml#57", "numerics.loss_nan_stop", ["[!] NaN loss with decoder_loss", "decoder_loss is NaN"]),
    ("r17_a.yaml#93", "numerics.loss_nan_stop", ["Loss was NaN for 1 times in a row", "allow_subsequent_nan_losses"]),
    ("r17_a.yaml#73", "numerics.nan_check_log",
     ["(logger fairseq.nan_detector)", "Inf in the forward output of the model itself", "torch.Size([1464, 505])"]),
    ("r17_a.yaml#79", "numerics.nan_check_log", ["sigmas is the first value", "nan in results[sigma]"]),
    # dtype
    ("r17_b.yaml#47", "dtype.bool_arithmetic", ["torch.rsub", "`1 - mask`"]),
    ("r17_b.yaml#48", "dtype.bool_arithmetic", ["Subtraction with `-` on a boolean tensor"]),
    # shape
    ("r17_a.yaml#15", "shape.expand_rank", ["invalid argument 1", "`a += b`"]),
    ("r17_a.yaml#19", "shape.rnn_hidden_contiguous", ["initial hidden state (hx", "contiguous hx of shape"]),
    ("r17_a.yaml#47", "shape.metric_input_shape", ["preds torch.Size([335, 2]) and target torch.Size([335])"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


def test_a_second_anomaly_report_in_the_paste_is_named_too():
    diagnosis = explain_paste(corpus_message("r15_a.yaml#91"))
    assert any("SqrtBackward0 returning NaN in its 0th output" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_the_place_the_tts_loss_raised_is_named():
    diagnosis = explain_paste(corpus_message("r17_a.yaml#57"))
    assert place(diagnosis.location)[:2] == ("losses.py", 398), diagnosis.location


PASTED_CASES = [
    # https://github.com/kenchan0226/keyphrase-generation-rl/issues/8, verbatim as the rule's example cites it
    ('File "/home/xx/project/keyphrase-generation-rl/pykp/rnn_decoder.py", line 111, in forward\n'
     "    _, h_next = self.rnn(rnn_input, h)\n"
     '  File "/home/xx/model_serving_python/lib/python3.6/site-packages/torch/nn/modules/module.py", line 493, in '
     "__call__\n    result = self.forward(*input, **kwargs)\n"
     '  File "/home/xx/model_serving_python/lib/python3.6/site-packages/torch/nn/modules/rnn.py", line 211, in forward\n'
     "    self.dropout, self.training, self.bidirectional, self.batch_first)\nRuntimeError: rnn: hx is not contiguous",
     "shape.rnn_hidden_contiguous", ["hx", "h0.contiguous()"]),
    ("Error: `rnn: hx is not contiguous`",  # fastai/fastai2#141
     "shape.rnn_hidden_contiguous", ["not contiguous in memory"]),
    # the message wrapped by hand in a docstring (psj6335490/pytorchLearn, day02/06_detach.py)
    ("RuntimeError: one of the variables needed for gradient computation has been modified \nby an inplace operation",
     "autograd.inplace_modified", ["set_detect_anomaly(True)"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, text=" ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, rules", [
    # scikit-learn's input check is a sentence of its own, not a script's NaN report
    ("ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",  # explosion/thinc#615
     {"numerics.nan_check_log"}),
    # the trainer's error alone is the gradient norm's, not the detector's
    ("FloatingPointError: gradients are Nan/Inf", {"numerics.nan_check_log"}),  # facebookresearch/fairseq#4118
    # an initial state of the wrong batch size is a size problem, not a layout one
    ("RuntimeError: Expected hidden[0] size (1, 32, 256), got [1, 8, 256]",  # miyamotok0105/pytorch_handbook#11
     {"shape.rnn_hidden_contiguous"}),
    # a leaf modified in place is another autograd check
    (corpus_message("r14_a.yaml#38"), {"autograd.inplace_modified"}),
])
def test_near_misses_are_not_claimed_by_the_round17_rules(text, rules):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in rules]
    assert not claimed, (text, claimed)


def test_a_number_minus_a_boolean_mask_is_named_live():
    diagnosis = explain_fixture("fixtures/dtype/bool_mask_rsub.py")
    assert_names(diagnosis, "dtype.bool_arithmetic", ["Subtraction", "`~mask`"])
    assert "with a bool tensor" in str(diagnosis.error), diagnosis.error
    assert {(c["name"], c.get("dtype")) for c in diagnosis.culprits} == {("keep", "bool")}, diagnosis.culprits
