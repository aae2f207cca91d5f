"""Round 7 rules and wordings for dtype, autograd, numerics and shape: each pasted message is claimed,
from its text alone, by the right rule with the values it holds named; near misses from other
frameworks and other families stay unclaimed; real torch calls raise what the new rules claim."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_paste, raised, said

CASES = [
    # the CUDA cat of torch 1.5-1.8 names the dimension where the sizes differ
    (" in_data[small_ch_id] = torch.cat([in_data[small_ch_id], tmp * 0], 1)\n"
     "RuntimeError: Sizes of tensors must match except in dimension 2. Got 4 and 8",
     "shape.cat_sizes", ["4", "8", "dimension 2"]),
    ("RuntimeError: Sizes of tensors must match except in dimension 3. Got 166 and 167 (The offending index is 0)",
     "shape.cat_sizes", ["166", "167", "dimension 3", "offending index is 0"]),
    ("RuntimeError: cannot reshape tensor of 0 elements into shape [0, -1, 256, 256] because the unspecified "
     "dimension size -1 can be any value and is ambiguous", "shape.reshape_empty_ambiguous", ["[0, -1, 256, 256]", "0"]),
    ("RuntimeError: invalid argument 1: the number of sizes provided must be greater or equal to the number of "
     "dimensions in the tensor at /opt/conda/conda-bld/pytorch_1518243271935/work/torch/lib/THC/generic/THCTensor.c:326",
     "shape.expand_rank", ["never drops one"]),
    ("RuntimeError: expand(CUDABoolType{[1, 457]}, size=[457]): the number of sizes provided (1) must be greater or "
     "equal to the number of dimensions in the tensor (2)", "shape.expand_rank", ["[1, 457]", "[457]", "CUDABoolType"]),
    ("RuntimeError: invalid argument 3: sizes do not match at "
     "/pytorch/torch/lib/THC/generated/../generic/THCTensorMathPointwise.cu:217",
     "shape.elementwise_numel_legacy", ["sizes do not match", "THCTensorMathPointwise.cu:217"]),
    ("RuntimeError: inconsistent tensor size, expected src [64 x 1] and mask [64 x 64] to have the same number of "
     "elements, but got 64 and 4096 elements respectively at /opt/conda/work/torch/lib/TH/generic/THTensorMath.c:197",
     "shape.elementwise_numel_legacy", ["[64 x 1]", "[64 x 64]", "4096", "masked"]),
    ("RuntimeError: cannot perform reduction function max on tensor with no elements because the operation does "
     "not have an identity", "shape.reduction_empty", ["max", "no elements"]),
    ("IndexError: min(): Expected reduction dim 0 to have non-zero size.", "shape.reduction_empty", ["min()", "0"]),
    ("RuntimeError:stack expects a non-empty tensorlist", "shape.empty_tensor_list", ["stack", "empty list"]),
    ("RuntimeError: torch.cat(): expected a non-empty list of Tensors", "shape.empty_tensor_list", ["torch.cat"]),
    ("ValueError: expected sequence of length 517 at dim 1 (got 512)", "shape.ragged_sequence", ["517", "512", "dim 1"]),
    ("NotImplementedError: Got 3D input, but bilinear mode needs 4D input", "shape.interpolate_rank",
     ["3D", "4D", "bilinear"]),
    ("NotImplementedError: Input Error: Only 3D, 4D and 5D input Tensors supported (got 3D) for the modes: nearest | "
     "linear | bilinear | bicubic | trilinear (got bicubic)", "shape.interpolate_rank", ["3D", "bicubic"]),
    ("ValueError: Input and output must have the same number of spatial dimensions, but got input with with spatial "
     "dimensions of [256, 256] and output size of torch.Size([1, 256, 256, 3]). Please provide input tensor in "
     "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.", "shape.interpolate_rank",
     ["[256, 256]", "torch.Size([1, 256, 256, 3])"]),
    ("ValueError: lengths array has to be sorted in decreasing order", "shape.packed_sequence_lengths",
     ["sorted", "1.1"]),
    ("RuntimeError: Expected `len(lengths)` to be equal to batch_size, but got 3 (batch_size=2)",
     "shape.packed_sequence_lengths", ["3", "2", "batch_first"]),
    ("RuntimeError: input must have 3 dimensions, got 2", "shape.rnn_input_rank", ["2D", "3D"]),
    ("RuntimeError: Size does not match at dimension 0 expected index [3, 3] to be smaller than self [2, 3] apart "
     "from dimension 1", "shape.gather_index_size", ["[3, 3]", "[2, 3]", "dimension 1", "dimension 0"]),
    ("RuntimeError: Expected index [3, 3] to be no larger than self [2, 3] apart from dimension 1 and to be no larger "
     "size than src [3, 3]", "shape.gather_index_size", ["[3, 3]", "[2, 3]", "scatter"]),
    ("ret = torch.addmm(bias, input, weight.t())\nRuntimeError: mat1 dim 1 must match mat2 dim 0",
     "shape.matmul", ["mat1 dim 1 must match mat2 dim 0", "in_features"]),
    ("RuntimeError: Expected batch2_sizes[0] == bs && batch2_sizes[1] == contraction_size to be true, but got false.",
     "shape.bmm", ["batch size"]),
    ("RuntimeError: function adderBackward returned an incorrect number of gradients (expected 2, got 1)",
     "autograd.custom_backward_count", ["adderBackward", "expected 2, got 1"]),
    ("RuntimeError: assigned grad has data of a different type", "autograd.assign_grad_mismatch", ["type"]),
    ("RuntimeError: Integers to negative integer powers are not allowed.", "dtype.int_negative_power", ["float"]),
    ("RuntimeError: invalid argument 5: k not in range for dimension at /pytorch/aten/src/THC/generic/THCTensorTopK.cu:23",
     "shape.topk_k_range", ["topk"]),
    ("ValueError: num_channels (10) must be divisible by num_groups (32)", "shape.group_norm_groups",
     ["10", "32", "swapped"]),
    ("NansException: A tensor with NaNs was produced in Unet. This could be either because there's not enough "
     "precision to represent the picture, or because your video card does not support half type. Try setting the "
     "\"Upcast cross attention layer to float32\" option in Settings > Stable Diffusion or using the --no-half "
     "commandline argument to fix this. Use --disable-nan-check commandline argument to disable this check.",
     "numerics.sd_nans_exception", ["Unet", "--no-half"]),
    ("modules.devices.NansException: A tensor with all NaNs was produced in VAE. This could be because there's not "
     "enough precision to represent the picture. Try adding --no-half-vae commandline argument to fix this.",
     "numerics.sd_nans_exception", ["VAE", "--no-half-vae"]),
    ("ValueError: Loss is not finite and patience is exhausted. To debug, wrap `fit()` with autograd's "
     "`detect_anomaly()`, e.g.", "numerics.loss_nan_stop", ["detect_anomaly()", "SpeechBrain"]),
    ("Training: 2023-03-14 09:08:47,984-Speed 2183.37 samples/sec   Loss nan   LearningRate 0.001000   Epoch: 0   "
     "Global Step: 30   Fp16 Grad Scale:  0   Required: 144 hours", "numerics.loss_nan_log", ["nan", "Scale: 0"]),
    ("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.00012142857142857143, 'epoch': 0.0}",
     "numerics.grad_norm_log", ["grad_norm: nan", "0.0"]),
    ("2020-07-31 22:40:50,985 - mmdet - INFO - Epoch [1][50/1749]\tlr: 1.978e-03, eta: 2:36:29, time: 1.807, "
     "loss: 59307.8674, grad_norm: 3801898445783.2651", "numerics.grad_norm_log",
     ["59307.8674", "3801898445783.2651", "diverging"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


NEW_RULES = {"shape.reshape_empty_ambiguous", "shape.expand_rank", "shape.elementwise_numel_legacy",
             "shape.reduction_empty", "shape.empty_tensor_list", "shape.ragged_sequence", "shape.interpolate_rank",
             "shape.packed_sequence_lengths", "shape.rnn_input_rank", "shape.gather_index_size",
             "autograd.assign_grad_mismatch", "dtype.int_negative_power", "numerics.sd_nans_exception",
             "numerics.grad_norm_log", "shape.topk_k_range", "shape.group_norm_groups"}


@pytest.mark.parametrize("text", [
    "inconsistent tensor sizes",                                                          # Lua Torch7
    "ValueError: Integers to negative integer powers are not allowed.",                   # NumPy
    "ValueError: Input 0 of layer sequential is incompatible with the layer: expected ndim=3, found ndim=4. "
    "Full shape received: [None, 1, 60, 2]",                                              # Keras
    "NotImplementedError: Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D) for the modes: nearest | "
    "linear | bilinear | bicubic | trilinear (got nearest-exact)",                        # a mode too new for the torch
    "2021-11-22 01:32:34,502 - mmocr - INFO - Epoch [1][200/62598]\tlr: 1.000e-03, loss: 0.9186, grad_norm: 3.9772",
    "  49/5000 [..............................] - ETA: 11:01:10 - loss: nan",             # a Keras progress bar
    "ValueError: setting an array element with a sequence. The requested array has an inhomogeneous shape after "
    "1 dimensions.",                                                                      # NumPy
])
def test_near_misses_are_not_claimed_by_the_round7_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES]
    assert not claimed, (text, claimed)


@pytest.mark.parametrize("call, rule", [
    (lambda: torch.empty(0, 4).view(0, -1), "shape.reshape_empty_ambiguous"),
    (lambda: torch.rand(4, 1).expand(8), "shape.expand_rank"),
    (lambda: torch.dot(torch.ones(3), torch.ones(4)), "shape.elementwise_numel_legacy"),
    (lambda: torch.rand(0, 5).max(0), "shape.reduction_empty"),
    (lambda: torch.rand(0).argmax(), "shape.reduction_empty"),
    (lambda: torch.stack([]), "shape.empty_tensor_list"),
    (lambda: torch.cat([]), "shape.empty_tensor_list"),
    (lambda: torch.tensor([[1, 2, 3], [4, 5]]), "shape.ragged_sequence"),
    (lambda: F.interpolate(torch.rand(2, 8, 8), scale_factor=2, mode="bilinear"), "shape.interpolate_rank"),
    (lambda: F.interpolate(torch.rand(8, 8), scale_factor=2), "shape.interpolate_rank"),
    (lambda: F.interpolate(torch.rand(2, 8, 8), size=(16, 16)), "shape.interpolate_rank"),
    (lambda: nn.utils.rnn.pack_padded_sequence(torch.rand(3, 5, 2), [2, 5, 3], batch_first=True),
     "shape.packed_sequence_lengths"),
    (lambda: nn.GRU(4, 8)(torch.rand(2, 3, 4, 1)), "shape.rnn_input_rank"),
    (lambda: torch.rand(4, 10).gather(1, torch.zeros(6, 1, dtype=torch.long)), "shape.gather_index_size"),
    (lambda: torch.zeros(2, 3).scatter_(1, torch.zeros(3, 3, dtype=torch.long), torch.ones(3, 3)),
     "shape.gather_index_size"),
    (lambda: setattr(torch.ones(2, requires_grad=True), "grad", torch.ones(3)), "autograd.assign_grad_mismatch"),
    (lambda: torch.tensor([2, 4]) ** -1, "dtype.int_negative_power"),
    (lambda: torch.rand(50).topk(100), "shape.topk_k_range"),
    (lambda: nn.GroupNorm(32, 48), "shape.group_norm_groups"),
    (lambda: F.group_norm(torch.rand(2, 8, 4), 3), "shape.group_norm_groups"),
])
def test_real_torch_call_is_claimed_by_the_round7_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)
