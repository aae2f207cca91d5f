"""Operands of functional calls (F.conv2d, torch.matmul, keyword arguments, `k.transpose(-2, -1)`), read from the
user's failing line without evaluating it. Each test raises the real torch error in this file's own frame."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import explainer
from probe_helpers import culprit, has_fix


def explained(error: pytest.ExceptionInfo):
    diagnosis = explainer.explain(error.value)
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def test_functional_conv1d_names_input_and_kernel_and_spots_channels_last():
    kernel, audio = torch.randn(32, 1, 5), torch.randn(8, 400, 1)
    with pytest.raises(RuntimeError) as error:
        F.conv1d(audio, kernel, padding=2)
    d = explained(error)
    assert d.rule == "shape.conv_channels"
    assert culprit(d, "audio")["shape"] == [8, 400, 1] and culprit(d, "kernel")["role"] == "weight"
    assert "`F.conv1d` with weight `kernel` (32, 1, 5) expects 1 input channels, but audio (8, 400, 1)" in d.summary
    assert has_fix(d, "`audio.permute(0, 2, 1)` -> (8, 1, 400)")


def test_functional_conv2d_reads_keyword_arguments_and_the_weight_that_would_fit():
    weight, images = torch.randn(16, 3, 3, 3), torch.randn(2, 1, 8, 8)
    with pytest.raises(RuntimeError) as error:
        F.conv2d(input=images, weight=weight, padding=1)
    d = explained(error)
    assert culprit(d, "images")["role"] == "input" and culprit(d, "weight")["shape"] == [16, 3, 3, 3]
    assert has_fix(d, "`weight` must have shape (16, 1, 3, 3)")


def test_matmul_with_a_transposed_operand_names_the_variable_and_its_transposed_shape():
    q, k = torch.randn(2, 8, 64), torch.randn(2, 8, 32)
    with pytest.raises(RuntimeError) as error:
        torch.matmul(q, k.transpose(-2, -1))
    d = explained(error)
    assert d.rule == "shape.bmm"
    assert culprit(d, "k")["shape"] == [2, 8, 32]
    assert (d.facts["right_name"], d.facts["right_shape"]) == ("k.transpose(-2, -1)", "(2, 32, 8)")


def test_operator_with_mT_gets_the_transpose_fix_from_the_derived_shape():
    a, b = torch.randn(3, 4, 5), torch.randn(3, 4, 6)
    with pytest.raises(RuntimeError) as error:
        a @ b.mT
    d = explained(error)
    assert d.facts["right_shape"] == "(3, 6, 4)" and d.facts["left_shape"] == "(3, 4, 5)"
    assert {"a", "b"} <= {c["name"] for c in d.culprits}


def test_an_operand_shape_that_needs_evaluation_is_left_unstated():
    q, k = torch.randn(2, 8, 64), torch.randn(2, 8, 32)
    dims = (2, 8, 32)
    with pytest.raises(RuntimeError) as error:
        torch.matmul(q, k.reshape(dims).transpose(-2, -1))
    d = explained(error)
    assert culprit(d, "k")["shape"] == [2, 8, 32]
    assert "right_shape" not in d.facts


def test_attention_mask_is_named_as_the_caller_holds_it():
    attention = nn.MultiheadAttention(16, 2, batch_first=True)
    x, causal = torch.randn(3, 5, 16), torch.zeros(7, 7, dtype=torch.bool)
    with pytest.raises(RuntimeError) as error:
        attention(x, x, x, attn_mask=causal)
    d = explained(error)
    assert d.rule == "shape.attention_mask"
    assert culprit(d, "causal")["role"] == "attn_mask"
    assert d.facts["mask_name"] == "causal"


def call_operands_of(error: pytest.ExceptionInfo):
    from explainer._inspect import walk_traceback
    from explainer.probes import PROBES, ProbeContext, load_builtin_probes

    load_builtin_probes()
    return PROBES["call_operands"].function(ProbeContext(error.value, walk_traceback(error.tb), {}))


def test_call_operands_names_the_argument_of_a_failing_linalg_call():
    K = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(RuntimeError) as error:
        torch.linalg.cholesky(K)
    evidence = call_operands_of(error)
    assert evidence.facts["operand_names"] == "K" and evidence.culprits[0]["shape"] == [2, 2]


def test_call_operands_reads_tensors_listed_in_the_call():
    w1, w2 = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    loss = (w1 * 2).sum()
    with pytest.raises(RuntimeError) as error:
        torch.autograd.grad(loss, [w1, w2])
    evidence = call_operands_of(error)
    assert evidence.facts["operand_names"] == "loss, w1, w2"


def test_call_operands_names_the_tensor_of_a_comparison_and_of_an_attribute_store():
    confidence = torch.rand(16)
    with pytest.raises(RuntimeError) as error:
        if confidence > 0.9:
            pass
    assert call_operands_of(error).culprits[0]["name"] == "confidence"
    embeddings = torch.randn(4, 8, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as error:
        embeddings.requires_grad = False
    assert call_operands_of(error).culprits[0]["name"] == "embeddings"


def test_device_mismatch_in_a_list_operand_names_the_odd_element():
    outputs = [torch.zeros(2, 3, device="meta"), torch.zeros(2, 3, device="meta"), torch.zeros(2, 3)]
    with pytest.raises(RuntimeError) as error:
        torch.stack(outputs)
    d = explained(error)
    assert d.rule == "device.mismatch"
    assert d.facts["odd_name"] == "outputs[2]" and d.facts["odd_device"] == "cpu"
    assert {"outputs[0]", "outputs[1]"} <= {c["name"] for c in d.culprits}
