"""Round 9 rules and wordings for dtype, autograd, numerics and shape: each pasted message is claimed,
from its text alone, by the right rule with the values it holds named; near misses (healthy loss-scale
messages, Keras progress bars, other families) stay unclaimed; real torch calls raise what the new rules
claim."""

from __future__ import annotations

import io

import pytest
import torch

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, raised, said

CASES = [
    # wordings of existing rules: a space in "argument # 1", a ComfyUI report that wraps the line,
    # THCUNN's elementwise BCE kernel, an old SVD, the MPS check of F.linear
    ("RuntimeError: Expected tensor for argument # 1 'indices' to have scalar type Long; but got torch.IntTensor "
     "instead (while checking arguments for embedding)", "dtype.embedding_indices",
     ["torch.IntTensor", "Long", "int32", "embedding", "1.8"]),
    ("- **Exception Message:** mixed dtype (CPU): expect parameter to have\nscalar type of Float",
     "dtype.norm_mixed_cpu", ["parameter", "Float"]),
    ("/pytorch/aten/src/THCUNN/BCECriterion.cu:57: void bce_updateOutput_no_reduce_functor<Dtype, Acctype>::operator()"
     "(const Dtype *, const Dtype *, Dtype *) [with Dtype = float, Acctype = float]: block: [40376,0,0], thread: "
     "[451,0,0] Assertion `*input >= 0. && *input <= 1.` failed.", "numerics.bce_input_range",
     ["BCECriterion", "*input >= 0. && *input <= 1."]),
    ("RuntimeError: svd_cuda: (Batch element 0): The algorithm failed to converge because the input matrix is "
     "ill-conditioned or has too many repeated singular values (error code: 1057).", "numerics.linalg_failed",
     ["svd_cuda", "batch element 0", "1057"]),
    ("RuntimeError: MAGMA gesdd : the updating process of SBDSDC did not converge (error: 11) at /opt/conda/conda-bld/"
     "pytorch_1549628766161/work/aten/src/THC/generic/THCTensorMathMagma.cu:522", "numerics.linalg_failed",
     ["gesdd", "11"]),
    ("RuntimeError: svd_cuda: For batch 0: U(65,65) is zero, singular U.", "numerics.linalg_failed",
     ["U(65,65) is zero", "nan or inf"]),
    ("RuntimeError: linear(): input and weight.T shapes cannot be multiplied (1x1280 and 768x3072)", "shape.matmul",
     ["1280", "768", "3072"]),
    # training logs: loss scalers and nan losses
    ("Found NaN, decreased lg_loss_scale to -16199.354", "numerics.amp_overflow_skip",
     ["lg_loss_scale", "-16199.354", "guided-diffusion"]),
    ("2024-08-25 14:48:04,998 - INFO - Train Summary | Epoch 4 | Loss=nan | Grad=nan", "numerics.loss_nan_log",
     ["Loss=nan", "Grad=nan"]),
    ("| epoch   1 |   200/ 2983 batches | lr 20.0000 | ms/batch 11.61 | loss   nan | ppl      nan",
     "numerics.loss_nan_log", ["loss   nan"]),
    ("Epoch 0:  35%|███▌      | 7/20 [00:01<00:02,  5.23it/s, loss=nan, v_num=0]", "numerics.loss_nan_log",
     ["loss=nan"]),
    # tensorboardX's warning, with the loop's log line or apex's scaler next to it
    ("`Warning: NaN or Inf found in input tensor.`", "numerics.tensorboard_nonfinite", ["tensorboardX", "nan or inf"]),
    ("[epoch  3][iter    0/ 110] loss: nan, lr: 1.00e-10, rpn_cls: nan, rpn_box: nan\nWARNING:root:NaN or Inf found in "
     "input tensor.", "numerics.tensorboard_nonfinite", ["loss: nan", "rpn_cls: nan"]),
    ("WARNING:root:NaN or Inf found in input tensor.\nEpoch : 0 finished. Training Loss: nan. Validation Loss: nan",
     "numerics.tensorboard_nonfinite", ["Training Loss: nan"]),
    ("[1,1]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n[1,0]<stdout>:"
     "Warning: NaN or Inf found in input tensor.\n[1,0]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 "
     "reducing loss scale to 32768.0", "numerics.tensorboard_nonfinite", ["32768.0", "loss scaler 0"]),
    ("WARNING: non-finite loss, ending training  tensor([nan, nan, 0., nan], device='cuda:0')",
     "numerics.loss_nan_stop", ["tensor([nan, nan, 0., nan], device='cuda:0')", "YOLO"]),
    ("[deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: 2, reducing to 1",
     "numerics.amp_overflow_skip", ["DeepSpeed", "2", "1"]),
    ("[INFO] [unfused_optimizer.py:207:step] [deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted "
     "loss scale: 65536.0, reducing to 32768.0\n06/18/2026 23:36:57 - WARNING - tensorboardX.x2num -   NaN or Inf "
     "found in input tensor.", "numerics.tensorboard_nonfinite", ["DeepSpeed", "65536.0", "32768.0"]),
    # old dtype wordings
    ("RuntimeError: _thnn_conv2d_forward not supported on CPUType for Half", "dtype.not_implemented",
     ["_thnn_conv2d_forward", "Half"]),
    ("RuntimeError: log_vml_cpu not implemented for 'Long'", "dtype.not_implemented", ["log_vml_cpu", "Long"]),
    ("TypeError: can't convert np.ndarray of type numpy.uint16. The only supported types are: float64, float32, "
     "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.", "dtype.numpy_object_array",
     ["numpy.uint16", "2.3", "astype(np.int32)"]),
    ("RuntimeError: Can't convert a given np.ndarray to a tensor - it has an invalid type. The only supported types "
     "are: double, float, float16, int64, int32, and uint8.", "dtype.numpy_object_array",
     ["double, float, float16, int64, int32, and uint8", "object"]),
    # GradScaler
    ("RuntimeError: unscale_() has already been called on this optimizer since the last update().",
     "numerics.gradscaler_call_order", ["unscale_()", "update()"]),
    ("RuntimeError: step() has already been called since the last update().", "numerics.gradscaler_call_order",
     ["step()", "scaler.update()"]),
    ("RuntimeError: unscale_() is being called after step().", "numerics.gradscaler_call_order",
     ["after step()"]),
    ("outputs must be a Tensor or an iterable of Tensors", "autograd.gradscaler_scale_non_tensor",
     ["scaler.scale(loss)", ".item()"]),
    # hooks
    ("RuntimeError: hook 'hookFunc' has returned an incorrect number of values (got 1, but expected 4)",
     "autograd.hook_return_value", ["hookFunc", "1", "4", "register_full_backward_hook"]),
    ("RuntimeError: hook 'linear_fa_backward_hook' has changed the size of value", "autograd.hook_return_value",
     ["linear_fa_backward_hook", "same shape"]),
    ("RuntimeError: hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)",
     "autograd.hook_return_value", ["torch.FloatTensor", "torch.DoubleTensor"]),
    ("RuntimeError: Backward pre hook returned an invalid number of grad_output, got 2, but expected 1",
     "autograd.hook_return_value", ["pre-hook", "2", "1", "grad_output"]),
    ("    File \"/envs/pytracking/lib/python3.7/site-packages/torch/utils/hooks.py\", line 141, in _apply_on_tensors\n"
     "        if not grad_fn.name() == \"BackwardHookFunctionBackward\":\n"
     "    AttributeError: 'NoneType' object has no attribute 'name'", "autograd.module_backward_hook",
     ["_apply_on_tensors", "BackwardHookFunctionBackward", "1.8", "1.9"]),
    ("UserWarning: Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and "
     "will be removed in future versions. This hook will be missing some grad_input. Please use "
     "register_full_backward_hook to get the documented behavior.", "autograd.module_backward_hook",
     ["when the forward contains multiple autograd Nodes", "register_full_backward_hook"]),
    ("RuntimeError: Module backward hook for grad_input is called before the grad_output one. This happens because "
     "the gradient in your nn.Module flows to the Module's input without passing through the Module's output.",
     "autograd.module_backward_hook", ["grad_input", "grad_output"]),
    # torch.func
    ("RuntimeError: vmap: aten::put_(self, *extra_args) is not possible because there exists a Tensor `other` \n"
     "# in extra_args that has more elements than `self`. \n# This happened due to `other` being vmapped over but "
     "`self` not being vmapped over at level 1. ", "autograd.vmap_unsupported", ["aten::put_", "level 1"]),
    ("RuntimeError: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), \n"
     "it must override the setup_context staticmethod.", "autograd.func_transform_misuse",
     ["setup_context", "vmap, grad, jvp, jacrev"]),
    ("ValueError: vmap(<lambda>, in_dims=0, ...)(<inputs>): Got in_dim=0 for an input but the input is of type "
     "<class 'int'>. We cannot vmap over non-Tensor arguments, please use None as the respective in_dim",
     "autograd.func_transform_misuse", ["in_dims=0", "<class 'int'>", "None"]),
    ("ValueError: vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [3, 4] for the "
     "mapped dimension", "autograd.func_transform_misuse", ["[3, 4]"]),
    ("RuntimeError: During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place "
     "operation (aten::add_.Tensor) that would mutate a captured Tensor.", "autograd.func_transform_misuse",
     ["aten::add_.Tensor"]),
    # quantized models
    ("ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]",
     "dtype.quantized_compute_dtype", ["torch.bfloat16", "awq", "torch.float16", "--dtype half"]),
    ("ValueError: Blockwise quantization only supports 16/32-bit floats, but got torch.uint8",
     "dtype.quantized_compute_dtype", ["torch.uint8", "already quantized"]),
    # views, indices, collate
    ("RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory "
     "location. Please clone() the tensor before performing the operation.", "shape.memory_overlap",
     ["expand()", ".clone()"]),
    ("RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
     "single memory location. Please clone() the tensor before performing the operation.", "shape.memory_overlap",
     ["x[1:] = x[:-1].clone()"]),
    ("TypeError: only integer tensors of a single element can be converted to an index", "shape.tensor_as_index",
     ["float", "several elements", "//"]),
    ("RuntimeError: Trying to resize storage that is not resizable", "shape.collate_resize_storage",
     ["num_workers", "first sample", "num_workers=0"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


NEW_RULES = {"numerics.tensorboard_nonfinite", "numerics.gradscaler_call_order", "autograd.gradscaler_scale_non_tensor",
             "autograd.hook_return_value", "autograd.module_backward_hook", "autograd.func_transform_misuse",
             "dtype.quantized_compute_dtype", "shape.memory_overlap", "shape.tensor_as_index",
             "shape.collate_resize_storage", "numerics.loss_nan_log", "numerics.amp_overflow_skip"}


@pytest.mark.parametrize("text", [
    # dynamic loss scaling finding its level, on its own: healthy
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
    "Found NaN, decreased lg_loss_scale to 19.0",
    "[deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0",
    # Keras progress bars, with or without their epoch line
    "  49/5000 [..............................] - ETA: 11:01:10 - loss: nan",
    "Epoch 1/10\n  49/5000 [..............................] - ETA: 11:01:10 - loss: nan",
    # a healthy loss on a progress line
    "Epoch 3: 100%|██████████| 20/20 [00:02<00:00,  8.1it/s, loss=0.231, v_num=0]",
    # other families that share words
    "ValueError: only one element tensors can be converted to Python scalars",
    "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [1, 224, 224] at "
    "entry 5",
    "RuntimeError: Batching rule not implemented for aten::t; the fallback path doesn't work on out= or view ops.",
    "RuntimeError: cannot register a hook on a tensor that doesn't require gradient",
    "RuntimeError: Function AddmmBackward0 returned an invalid gradient at index 1 - got [10, 5] but expected shape "
    "compatible with [5, 10]",
])
def test_near_misses_are_not_claimed_by_the_round9_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES]
    assert not claimed, (text, claimed)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/numerics/gradscaler_unscale_twice.py", "numerics.gradscaler_call_order", ["unscale_()"]),
    ("fixtures/autograd/gradscaler_scale_float.py", "autograd.gradscaler_scale_non_tensor", [".item()"]),
    ("fixtures/autograd/hook_changed_size.py", "autograd.hook_return_value", ["<lambda>"]),
    ("fixtures/autograd/module_backward_hook_count.py", "autograd.hook_return_value", ["2", "1", "grad_input"]),
    ("fixtures/autograd/nonfull_backward_hook.py", "autograd.module_backward_hook", ["register_full_backward_hook"]),
    ("fixtures/autograd/vmap_inplace_unbatched.py", "autograd.vmap_unsupported", ["inplace arithmetic"]),
    ("fixtures/autograd/func_autograd_function_setup_context.py", "autograd.func_transform_misuse",
     ["setup_context"]),
    ("fixtures/shape/expanded_inplace.py", "shape.memory_overlap", ["expand()"]),
    ("fixtures/shape/float_tensor_as_index.py", "shape.tensor_as_index", ["//"]),
])
def test_new_fixtures_are_claimed_with_their_values(fixture, rule, values):
    diagnosis = explain_fixture(fixture)
    assert_names(diagnosis, rule, values, said(diagnosis))


def _scale_twice_after_step():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(model(torch.ones(1, 2)).sum()).backward()
    scaler.step(optimizer)
    scaler.step(optimizer)


def _hook_changes_dtype():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda grad: grad.double())
    y.sum().backward()


@pytest.mark.parametrize("call, rule", [
    (_scale_twice_after_step, "numerics.gradscaler_call_order"),
    (lambda: torch.amp.GradScaler("cpu").scale(1.5), "autograd.gradscaler_scale_non_tensor"),
    (_hook_changes_dtype, "autograd.hook_return_value"),
    (lambda: torch.func.vmap(lambda a, b: a + b)(torch.ones(3, 2), torch.ones(4, 2)), "autograd.func_transform_misuse"),
    (lambda: torch.func.vmap(lambda a: None)(torch.ones(3, 2)), "autograd.func_transform_misuse"),
    (lambda: torch.zeros(3, 1).expand(3, 3).add_(1), "shape.memory_overlap"),
    (lambda: [1, 2, 3][torch.tensor([0, 1])], "shape.tensor_as_index"),
])
def test_real_torch_call_is_claimed_by_the_round9_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)
