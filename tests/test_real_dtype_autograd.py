"""dtype rules against errors raised by real torch calls (CPU), and against corpus wordings torch no
longer produces (legacy 'Expected object of type', CUDA-only ones)."""

from __future__ import annotations

import pytest
import torch

from explainer import explain
from explainer._explain import explain_text

from conftest import raised


def test_integer_parameter_names_the_tensor_and_its_dtype():
    def build():
        fg_mask = torch.zeros(3, 5, dtype=torch.long)
        return torch.nn.Parameter(fg_mask)

    diagnosis = explain(raised(build))
    assert diagnosis.rule == "dtype.requires_grad_integer"
    assert "`fg_mask` (int64, shape (3, 5))" in diagnosis.summary, diagnosis.summary
    assert any("register_buffer" in fix and "fg_mask" in fix for fix in diagnosis.fixes), diagnosis.fixes
    assert any(c["name"] == "fg_mask" and c["dtype"] == "int64" for c in diagnosis.culprits), diagnosis.culprits


def test_float8_promotion_names_both_dtypes():
    weight = torch.ones(4, dtype=torch.float8_e5m2)
    diagnosis = explain(raised(lambda: torch.ones(4) * weight))
    assert diagnosis.rule == "dtype.float8_promotion"
    assert "Float tensor and a Float8_e5m2 tensor" in diagnosis.summary, diagnosis.summary


def test_half_input_float_bias_conv_is_a_dtype_mismatch():
    conv = torch.nn.Conv2d(1, 1, 1)
    exc = raised(lambda: torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3, dtype=torch.float64), conv.weight.double(),
                                                     conv.bias))
    diagnosis = explain(exc)
    assert diagnosis.rule == "dtype.conv_input_type", (diagnosis.rule, str(exc))


@pytest.mark.parametrize("message, rule, values", [
    ("RuntimeError: Input type (struct c10::Half) and bias type (float) should be the same",
     "dtype.conv_input_type", ["struct c10::Half", "float"]),
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (CUDABFloat16Type) should be the same",
     "dtype.conv_input_type", ["torch.cuda.FloatTensor", "CUDABFloat16Type"]),
    ("RuntimeError: Expected tensor for argument #1 'grad_output' to have the same type as tensor for argument #2 "
     "'weight'; but type torch.cuda.HalfTensor does not equal torch.cuda.FloatTensor (while checking arguments for "
     "cudnn_convolution_backward_input)",
     "dtype.argument_type_mismatch", ["grad_output", "torch.cuda.HalfTensor", "torch.cuda.FloatTensor",
                                      "cudnn_convolution_backward_input"]),
    ("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #3 'index'",
     "dtype.argument_type_mismatch", ["'index'", "Long", "Float"]),
    ("RuntimeError: Expected object of scaLar type Long but got scalar type FLoat for argument #2 ' target' in call "
     "to_ thnn_ nLL Loss_ forward", "dtype.target_long", ["FLoat"]),
    ("RuntimeError: Promotion for Float8 Types is not supported, attempted to promote Float and Float8_e4m3fn",
     "dtype.float8_promotion", ["Float8_e4m3fn"]),
    ("RuntimeError: Found dtype Double but expected Float\nException raised from compute_types at "
     "/opt/conda/aten/src/ATen/native/TensorIterator.cpp:183 (most recent call first):",
     "dtype.target_float", ["Double", "Float", "compute_types"]),
])
def test_message_only_dtype_summaries_name_the_values(message, rule, values):
    diagnosis = explain_text(message)
    assert diagnosis.rule == rule, diagnosis.rule
    for value in values:
        assert value in diagnosis.summary, (value, diagnosis.summary)


@pytest.mark.parametrize("message", [
    # a device mismatch in the same legacy wording: not a dtype problem
    "RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #2 'weight'",
    "RuntimeError: Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 'weight'; "
    "but type torch.FloatTensor does not equal torch.cuda.FloatTensor (while checking arguments for cudnn_convolution)",
])
def test_legacy_device_mismatches_are_not_claimed_by_dtype_rules(message):
    rule = explain_text(message).rule
    assert rule is None or not rule.startswith("dtype."), rule
