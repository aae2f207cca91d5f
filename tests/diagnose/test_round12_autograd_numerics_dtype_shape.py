"""Round-12 rules and wordings for autograd, numerics, dtype and shape: each pasted message is claimed, from its text
alone, by the right rule with the values it holds named; the generic kernel wording "expected scalar type X but found
Y" is explained as what it is (any kernel, not a matrix multiply), naming the operation only where the paste or the
live frames show it; near misses stay unclaimed; real torch calls raise what the new rules claim."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said

GROUP_NORM_GLUED = (
    '> File "/home/jasper/anaconda3/lib/python3.9/site-packages/torch/nn/functional.py", line 2516, in group_norm '
    "return torch.group_norm(input, num_groups, weight, bias, eps, torch.backends.cudnn.enabled)RuntimeError: "
    "expected scalar type BFloat16 but found Float")

FUNCTION_BARE_NOT_IMPLEMENTED = (
    'File "/usr/local/lib/python3.5/dist-packages/torch/autograd/function.py", line 180, in backward\n'
    "    raise NotImplementedError\n"
    "NotImplementedError")

# https://github.com/open-mmlab/mmskeleton/issues/4 (torch 0.3's input_buffer assertion under loss.backward())
INPUT_BUFFER_ASSERT = corpus_message("r12_b.yaml#16")

DEEPXDE_NAN = (
    "`Step      Train loss    Test loss     Test metric\n"
    "0         [5.47e+03]    [6.44e+03]    [1.00e+00]\n"
    "1000      [5.47e+03]    [6.44e+03]    [1.00e+00]\n"
    "2000      [nan]         [nan]         [nan]\n"
    "3000      [nan]         [nan]         [nan]")

# https://github.com/NVIDIA/tacotron2/issues/112 (the loss scale halved from 2**32 down to 262144)
FP16_OPTIMIZER_OVERFLOW = corpus_message("r12_b.yaml#64")

FAIRSEQ_OVERFLOW = (
    "| WARNING: overflow detected, setting loss scale to: 0.001953125\n"
    "| WARNING: overflow detected, setting loss scale to: 0.0009765625\n"
    "| WARNING: overflow detected, setting loss scale to: 0.00048828125\n"
    "| WARNING: overflow detected, setting loss scale to: 0.000244140625\n"
    "| WARNING: overflow detected, setting loss scale to: 0.0001220703125")

APEX_OVERFLOW_TINY = (
    # an excerpt, verbatim, of the corpus entry r12_b.yaml#63 (https://github.com/NVIDIA/apex/issues/715)
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.4582244039112795e-303\n"
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 2.916448807822559e-303\n"
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 3.645561009778199e-304")

FAIRSEQ_MIN_SCALE_CUT = (
    'File "/home/sumegha/fairseq/fairseq/optim/fp16_optimizer.py", line 189, in clip_grad_norm\n'
    "    ).format(self.args. scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, "
    "using gradient clipping or increasing the batch size.min_loss_scale))\n"
    "FloatingPointError: Minimum loss.")

HF_UNBATCHED = (
    '  File "anaconda3/envs/phrasebert/lib/python3.8/site-packages/transformers/models/bert/modeling_bert.py", '
    "line 950, in forward\n"
    "    batch_size, seq_length = input_shape\n"
    "ValueError: not enough values to unpack (expected 2, got 1)")

# an excerpt (the last two frames and the error) of https://github.com/pytorch/pytorch/issues/5308, verbatim
RNN_NAMEERROR = (
    '  File "/home/wds/.conda/envs/pytorch/lib/python3.6/site-packages/torch/nn/modules/rnn.py", line 190, in forward\n'
    "    self.check_forward_args(input, hx, batch_sizes)\n"
    '  File "/home/wds/.conda/envs/pytorch/lib/python3.6/site-packages/torch/nn/modules/rnn.py", line 141, in '
    "check_forward_args\n"
    "    fn.input_size, input.size(-1)))\n"
    "NameError: name 'fn' is not defined")

COMFY_LORA = (
    # an excerpt, verbatim, of r12_b.yaml#48
    # (https://github.com/xmarre/ComfyUI-DoRA-Dynamic-LoRA-Loader/issues/24)
    "ERROR lora diffusion_model.single_blocks.4.linear2.weight mat1 and mat2 shapes cannot be multiplied "
    "(32x24576 and 6144x32)\n"
    "ERROR lora diffusion_model.single_blocks.39.linear2.weight mat1 and mat2 shapes cannot be multiplied "
    "(32x24576 and 6144x32)")

CASES = [
    # the generic kernel wording: no operation claimed unless the paste shows it
    ("RuntimeError: expected scalar type Double but found Float", "dtype.kernel_scalar_type",
     ["Double", "Float", "does not name the operation", "NumPy"]),
    # an excerpt, verbatim, of dtype_autograd.yaml#163
    # (https://github.com/robometer/robometer/issues/38)
    ("runtimeerror: expected scalar type BFloat16 but found Float", "dtype.kernel_scalar_type",
     ["BFloat16", "Float", "Half precision"]),
    # an excerpt, verbatim, of r12_a.yaml#7
    # (https://github.com/sipie800/ComfyUI-PuLID-Flux-Enhanced/issues/47)
    ("!!! Exception during processing !!! expected scalar type Half but found BFloat16", "dtype.kernel_scalar_type",
     ["Half", "BFloat16"]),
    (GROUP_NORM_GLUED, "dtype.kernel_scalar_type", ["torch.group_norm", "BFloat16", "Float"]),
    ("RuntimeError: expected scalar type Long but found Int", "dtype.target_long",
     ["Long", "Int", "does not name", "class-index loss"]),
    # legacy argument checks that printed a backend type on one side
    ("RuntimeError: Expected tensor for argument #1 'grad_output' to have the same type as tensor for argument #2 "
     "'weight'; but type CUDABFloat16Type does not equal torch.cuda.HalfTensor (while checking arguments for "
     "cudnn_convolution_backward_input)", "dtype.argument_type_mismatch",
     ["cudnn_convolution_backward_input", "CUDABFloat16Type", "torch.cuda.HalfTensor", "bfloat16 and float16"]),
    # torch's weight-only quantized matmuls
    ("Expected A.dtype() == at::kBFloat16 to be true, but got false.  (Could this error message be improved?  If so, "
     "please report an enhancement request to PyTorch.)", "dtype.quantized_compute_dtype",
     ["A.dtype() == at::kBFloat16", "_weight_int4pack_mm", "bfloat16"]),
    ("`RuntimeError: expected dtype float for end but got dtype c10::BFloat16. `", "dtype.lerp_dtype",
     ["`end` is BFloat16", "c10::BFloat16", "float"]),
    # autograd
    ("NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function to "
     "use it with backward mode AD.", "autograd.function_not_implemented", ["`backward`", "NotImplementedError"]),
    ("RuntimeError: You must implement the backward function for custom autograd.Function.",
     "autograd.function_not_implemented", ["`backward`", "misspelt"]),
    (FUNCTION_BARE_NOT_IMPLEMENTED, "autograd.function_not_implemented",
     ["`backward`", "bare NotImplementedError", "torch/autograd/function.py"]),
    ("RuntimeError: Checkpointing is not compatible with .grad() or when an `inputs` parameter is passed to "
     ".backward(). Please use .backward() and do not pass its `inputs` argument.", "autograd.checkpoint_reentrant_grad",
     [".grad()", "`inputs`", "use_reentrant=True"]),
    ("``Checkpointing is not compatible with .grad() or when an `inputs` parameter is passed to .backward()``",
     "autograd.checkpoint_reentrant_grad", [".grad()", "`inputs`"]),
    ("Checkpointing is not compatible with .grad(), please use .backward() if possible",
     "autograd.checkpoint_reentrant_grad", [".grad()", "torch.autograd.grad"]),
    (INPUT_BUFFER_ASSERT, "autograd.engine_assert_legacy",
     ["input_buffer.cpp:14", "pos >= 0 && pos < buffer.size()", "0.4.1"]),
    # numerics
    (DEEPXDE_NAN, "numerics.loss_nan_log", ["[nan]", "step 2000", "[5.47e+03] at step 1000", "DeepXDE"]),
    (FP16_OPTIMIZER_OVERFLOW, "numerics.amp_overflow_skip", ["4294967296", "262144.0", "calibration"]),
    (FAIRSEQ_OVERFLOW, "numerics.amp_overflow_skip", ["0.001953125", "0.0001220703125", "at any scale"]),
    (APEX_OVERFLOW_TINY, "numerics.amp_overflow_skip", ["1.4582244039112795e-303", "3.645561009778199e-304"]),
    (FAIRSEQ_MIN_SCALE_CUT, "numerics.amp_overflow_skip", ["Minimum loss scale reached", "1e-4"]),
    # shape
    (HF_UNBATCHED, "shape.hf_unbatched_input", ["bert", "batch_size, seq_length", "expected 2, got 1", "(1, seq_len)"]),
    (RNN_NAMEERROR, "shape.rnn_input_size", ["NameError: name 'fn' is not defined", "input_size", "0.4"]),
    (COMFY_LORA, "shape.matmul", ["diffusion_model.single_blocks.4.linear2.weight", "32x24576", "6144x32", "lora"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text", [
    "RuntimeError: expected scalar type Float but found Half",
    "RuntimeError: expected scalar type Double but found Float",
])
def test_the_generic_kernel_wording_claims_no_matrix_multiply(text):
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "dtype.kernel_scalar_type"
    assert "matrix multiply" not in diagnosis.summary and "Linear" not in diagnosis.summary, diagnosis.summary


NEW_RULES = {"dtype.kernel_scalar_type", "autograd.function_not_implemented", "autograd.checkpoint_reentrant_grad",
             "autograd.engine_assert_legacy", "shape.hf_unbatched_input"}


@pytest.mark.parametrize("text", [
    # another framework's or a user's own wording of the same words
    "NotImplementedError: You must implement the jvp function for custom autograd.Function to use it with forward "
    "mode AD.",
    "ValueError: not enough values to unpack (expected 2, got 1)",
    "ValueError: not enough values to unpack (expected 3, got 2) from loss, output, logits = model",
    "NameError: name 'fn' is not defined",
    "/opt/conda/conda-bld/pytorch_1595629395347/work/aten/src/THCUNN/ClassNLLCriterion.cu:108: "
    "cunn_ClassNLLCriterion_updateOutput_kernel: block: [0,0,0], thread: [27,0,0] Assertion `t >= 0 && t < n_classes` "
    "failed.",
    "UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we "
    "will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to "
    "preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.",
    "RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float",
    # a loss scale that settles in the thousands, alone, is dynamic loss scaling at work
    "Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 32768.0",
])
def test_near_misses_are_not_claimed_by_the_round12_rules(text):
    widened = {"numerics.amp_overflow_skip", "shape.rnn_input_size"}
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES | widened]
    assert not claimed, (text, claimed)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/dtype/class_weight_double.py", "dtype.kernel_scalar_type",
     ["F.cross_entropy", "criterion.weight is float64", "class_weights = class_weights.float()"]),
    ("fixtures/dtype/conv_nobias_half_input.py", "dtype.kernel_scalar_type",
     ["stem.0 (Conv2d)", "images is float16", "stem.0.weight is float32"]),
    ("fixtures/dtype/int8pack_double_input.py", "dtype.quantized_compute_dtype",
     ["_weight_int8pack_mm_cpu", "either 32-bit or 16-bit float"]),
    ("fixtures/autograd/function_backward_misspelt.py", "autograd.function_not_implemented",
     ["`ClampGrad`", "backwards(ctx, grad_output)", "line 11", "Rename `backwards` to `backward`"]),
    ("fixtures/autograd/checkpoint_reentrant_autograd_grad.py", "autograd.checkpoint_reentrant_grad",
     ["use_reentrant=True", "torch.autograd.grad", "use_reentrant=False"]),
])
def test_new_fixtures_are_claimed_with_their_values(fixture, rule, values):
    diagnosis = explain_fixture(fixture)
    assert_names(diagnosis, rule, values, said(diagnosis))


def test_a_loss_with_float64_class_weights_converts_the_weights_not_the_logits():
    diagnosis = explain_fixture("fixtures/dtype/class_weight_double.py")
    assert diagnosis.facts["odd_name"] == "criterion.weight" and "module" not in diagnosis.facts
    assert not any("logits.double()" in fix for fix in diagnosis.fixes), diagnosis.fixes


class _Scale(torch.autograd.Function):
    @staticmethod
    def backward(ctx, grad):
        return grad


def _checkpoint_backward_with_inputs():
    x = torch.ones(3, requires_grad=True)
    out = checkpoint(lambda t: (t * 2).sin(), x, use_reentrant=True)
    out.sum().backward(inputs=[x])


@pytest.mark.parametrize("call, rule", [
    (lambda: F.conv2d(torch.zeros(1, 1, 4, 4, dtype=torch.float64), torch.zeros(1, 1, 3, 3)),
     "dtype.kernel_scalar_type"),
    (lambda: torch.bmm(torch.zeros(1, 2, 3, dtype=torch.bfloat16), torch.zeros(1, 3, 2)), "dtype.kernel_scalar_type"),
    (lambda: torch.einsum("ij,jk->ik", torch.zeros(2, 3, dtype=torch.float64), torch.zeros(3, 2)),
     "dtype.kernel_scalar_type"),
    (lambda: F.nll_loss(torch.zeros(2, 3), torch.tensor([0, 1]), weight=torch.ones(3, dtype=torch.float64)),
     "dtype.kernel_scalar_type"),
    (lambda: _Scale.apply(torch.ones(2, requires_grad=True)), "autograd.function_not_implemented"),
    (_checkpoint_backward_with_inputs, "autograd.checkpoint_reentrant_grad"),
    (lambda: torch._weight_int8pack_mm(torch.zeros(2, 4), torch.zeros(3, 4, dtype=torch.int32), torch.ones(3)),
     "dtype.quantized_compute_dtype"),
])
def test_real_torch_call_is_claimed_by_the_round12_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)


def test_a_live_kernel_error_names_the_call_on_the_failing_line():
    exc = raised(lambda: torch.bmm(torch.zeros(1, 2, 3, dtype=torch.bfloat16), torch.zeros(1, 3, 2)))
    diagnosis = explain(exc)
    assert diagnosis.rule == "dtype.kernel_scalar_type"
    assert diagnosis.summary.startswith("torch.bmm expected its tensors in BFloat16 but found one in Float"), \
        diagnosis.summary


def test_a_live_kernel_error_inside_torch_functional_names_that_function():
    exc = raised(lambda: F.nll_loss(torch.zeros(2, 3), torch.tensor([0, 1]), weight=torch.ones(3, dtype=torch.float64)))
    diagnosis = explain(exc)
    assert diagnosis.rule == "dtype.kernel_scalar_type" and diagnosis.facts["op"] == "F.nll_loss", diagnosis.summary
