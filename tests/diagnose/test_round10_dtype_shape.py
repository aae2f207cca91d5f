"""Round 10 rules and wordings for dtype, autograd, numerics and shape: each pasted message is claimed,
from its text alone, by the right rule with the values it holds named; near misses (ppdiffusers' warning,
NumPy casts of other arrays, healthy gathers and other families) stay unclaimed; real torch calls raise what
the new rules claim."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, raised, said

CASES = [
    # round-10 misses
    ("RuntimeError: hook '<function bwd_hook at 0x7fc89a77b370>' has returned an incorrect number of values "
     "(got 1, but expected 2)", "autograd.hook_return_value", ["bwd_hook", "got 1, but expected 2"]),
    ("    tcls[b, best_n, gj, gi, target_labels] = 2\nRuntimeError: index 15 is out of bounds for dim with size 2",
     "shape.index_out_of_bounds", ["15", "size 2", "0..1"]),
    ("IndexError: out of range: tried to access index 15 on a tensor of 2 elements.", "shape.index_out_of_bounds",
     ["15", "2 elements", "flattened"]),
    ("RuntimeError: self and mat2 must have the same dtype", "dtype.matmul_mixed", ["same dtype"]),
    ("TypeError: Trying to convert ComplexFloat to the MPS backend but it does not have support for that dtype.",
     "dtype.mps_unsupported_dtype", ["ComplexFloat", "macOS 14", "torch.fft"]),
    ("TypeError: Trying to convert Float8_e4m3fn to the MPS backend but it does not have support for that dtype.",
     "dtype.mps_unsupported_dtype", ["Float8_e4m3fn", "float16"]),
    ("TypeError: Cannot convert a float64 Tensor to MPS as the MPS framework doesn't support float64. Please use "
     "float32 instead.", "dtype.mps_unsupported_dtype", ["float64", "float32"]),
    ("RuntimeError: Could not infer dtype of numpy.float32", "dtype.numpy_scalar_unrecognised",
     ["numpy.float32", "numpy<2", "2.3"]),
    ("[W ..\\torch\\csrc\\utils\\tensor_numpy.cpp:77] Warning: Failed to initialize NumPy: module compiled against API "
     "version 0x10 but this version of numpy is 0xf (function operator ())\nRuntimeError: Could not infer dtype of "
     "numpy.int64", "dtype.numpy_scalar_unrecognised", ["numpy.int64", "0x10", "0xf"]),
    ("Pipelines loaded with `dtype=torch.float16` cannot run with `cpu` device. It is not recommended to move them to "
     "`cpu` as running them will fail.", "dtype.diffusers_fp16_cpu", ["torch.float16", "cpu", "enable_model_cpu_offload"]),
    ("Pipelines loaded with `torch_dtype=torch.float16` cannot run with `cpu` device. It is not recommended to move "
     "them to `cpu` as running them will fail.", "dtype.diffusers_fp16_cpu", ["torch_dtype=torch.float16", "cpu"]),
    ("RuntimeError: Input tensor at index 1 has invalid shape [13, 432, 154], but expected [13, 432, 183]",
     "shape.dataparallel_gather", ["[13, 432, 154]", "[13, 432, 183]", "dimension 2: 154 instead of 183"]),
    ("RuntimeError: Gather got an input of invalid size: got [2, 3, 12, 256, 64], but expected [2, 4, 12, 256, 64] "
     "(gather at /opt/conda/conda-bld/pytorch_1544199946412/work/torch/csrc/cuda/comm.cpp:227)",
     "shape.dataparallel_gather", ["[2, 3, 12, 256, 64]", "dimension 1: 3 instead of 4"]),
    ("ValueError: gather got an input of invalid size: got 10x110x29, but expected 10x226x29",
     "shape.dataparallel_gather", ["10x110x29", "10x226x29", "110 instead of 226"]),
    ("RuntimeError: numel: integer multiplication overflow", "numerics.size_overflow", ["numel", "NaN"]),
    ("RuntimeError: Storage size calculation overflowed with sizes=[1, 4623015400198258675]", "numerics.size_overflow",
     ["[1, 4623015400198258675]", "bit pattern of a float"]),
    ("called epoch end, epoch num:  7\nEpoch    :  8\nLOSS     :  nan", "numerics.loss_nan_log", ["nan", "epoch 8"]),
    ("`2019-06-13 02:30:01,545 (e2e_asr:302) WARNING: loss (=nan) is not correct`", "numerics.loss_nan_log",
     ["ESPnet", "e2e_asr", "loss (=nan)"]),
    ("RuntimeError: NaN detected in latents: train/aki/5_girl/fengmian101.png\n02:41:40-093305 ERROR    Training "
     "failed / 训练失败", "numerics.nan_latents", ["train/aki/5_girl/fengmian101.png", "--no_half_vae"]),
    ("NaN found in latents, replacing with zeros", "numerics.nan_latents", ["replacing with zeros"]),
    ("/hdd/diffusers/.env/lib/python3.10/site-packages/diffusers/utils/pil_utils.py:45: RuntimeWarning: invalid value "
     "encountered in cast\n  images = (images * 255).round().astype(\"uint8\")", "numerics.nan_image_cast",
     ["diffusers", "black image", "sdxl-vae-fp16-fix"]),
    ("stable-diffusion-webui-forge/modules/processing.py:1008: RuntimeWarning: invalid value encountered in cast\n"
     "  x_sample = x_sample.astype(np.uint8)", "numerics.nan_image_cast", ["x_sample.astype(np.uint8)", "NaN"]),
    # wording families not in the corpus yet
    ("RuntimeError: Input and output sizes should be greater than 0, but got input (H: 196, W: 0) output (H: 13, W: 13)",
     "shape.interpolate_empty", ["H: 196, W: 0", "H: 13, W: 13", "input is empty"]),
    ("RuntimeError: Input and output sizes should be greater than 0, but got input (W: 1) and output (W: 0)",
     "shape.interpolate_empty", ["W: 1", "W: 0", "requested output is empty"]),
    ("RuntimeError: start (0) + length (15) exceeds dimension size (4)", "shape.narrow_range", ["15", "4", "0"]),
    ("RuntimeError: narrow(): length must be non-negative.", "shape.narrow_range", ["negative length"]),
    ("Token indices sequence length is longer than the specified maximum sequence length for this model (533 > 512). "
     "Running this sequence through the model will result in indexing errors", "shape.tokenizer_max_length",
     ["533", "512", "truncation=True"]),
    ("2025-12-23T06:41:38.979Z ValueError: Overflow when unpacking long long", "numerics.int_unpack_overflow",
     ["long long", "2**63 - 1"]),
    ("TypeError: zeros(): argument 'size' failed to unpack the object at pos 1 with error \"Overflow when unpacking long "
     "long", "numerics.int_unpack_overflow", ["zeros()", "'size'", "position 1"]),
    ("ValueError: Expected 2 or 4 dimensions (got 1)", "shape.loss_target_dims", ["2 or 4", "1 dimension", "(1, C)"]),
    ("ValueError: Incorrect configuration settings! The config of `pipeline.unet`: FrozenDict() expects 4 but received "
     "`num_channels_latents`: 4 + `num_channels_mask`: 1 + `num_channels_masked_image`: 4 = 9. Please verify the "
     "config of `pipeline.unet` or your `mask_image` or `image` input.", "shape.diffusers_unet_channels",
     ["expects 4", "= 9", "inpainting"]),
    ("ValueError: Query/Key/Value should either all have the same dtype, or (in the quantized case) Key/Value should "
     "have dtype torch.int32\n  query.dtype: torch.float32\n  key.dtype  : torch.float16\n  value.dtype: "
     "torch.float16", "dtype.xformers_qkv_dtype", ["torch.float32", "torch.float16", "encoder_hidden_states"]),
    ("IndexError: Found indices in 'edge_index' that are larger than 1 (got 4). Please ensure that all indices in "
     "'edge_index' point to valid indices in the interval [0, 2) in your node feature matrix and try again.",
     "shape.pyg_edge_index", ["node 4", "2 node(s)", "0..1"]),
    ("IndexError: Encountered an index error. Please ensure that all indices in 'edge_index' point to valid indices in "
     "the interval [0, 0] (got interval [0, 435])", "shape.pyg_edge_index", ["[0, 435]", "1 node(s)", "0..0"]),
    ("ValueError: Encountered tensor with size 2607 in dimension 0, but expected size 917.", "shape.pyg_edge_index",
     ["2607", "917", "dimension 0"]),
    ("ValueError: Expected 'edge_index' to have size '2' in the first dimension (got '172')", "shape.pyg_edge_index",
     ["172", "edge_index.t().contiguous()"]),
    ("AssertionError: Rank 11: found NaN in local grad norm in backward pass before data-parallel communication "
     "collective. Device: 3", "numerics.megatron_nan_grad", ["rank 11", "device 3", "NaN", "grad norm"]),
    ("[rank2]: RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, iteration -1: Unexpected result nan "
     "(message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication "
     "collective')", "numerics.megatron_nan_grad", ["rank 2", "dcfai-xe9680-01", "bucket #0", "iteration -1"]),
    ("BufferError: Can't export tensors that require gradient, use tensor.detach()", "autograd.numpy_requires_grad",
     ["DLPack", "t.detach()"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


NEW_RULES = {"dtype.numpy_scalar_unrecognised", "dtype.diffusers_fp16_cpu", "dtype.xformers_qkv_dtype",
             "shape.dataparallel_gather", "shape.interpolate_empty", "shape.narrow_range",
             "shape.tokenizer_max_length", "shape.diffusers_unet_channels", "numerics.size_overflow",
             "numerics.nan_latents", "numerics.nan_image_cast", "numerics.int_unpack_overflow",
             "shape.pyg_edge_index", "numerics.megatron_nan_grad"}


@pytest.mark.parametrize("text", [
    # ppdiffusers (PaddlePaddle) prints diffusers' warning for its own pipelines
    "Pipelines loaded with `paddle_dtype=paddle.float16` cannot run with `cpu` device. It is not recommended to move "
    "them to `cpu` as running them will fail.",
    # NumPy casts of arrays that are not a generated image
    "utils\\util_image.py:269: RuntimeWarning: invalid value encountered in cast\n  img_np = img_np.astype(out_type)",
    "RuntimeWarning: invalid value encountered in cast",
    # a progress log that stops generation on its own, and other words of the same families
    "⁉️ NaN detected in latents - stopping generation",
    "RuntimeError: Could not infer dtype of NoneType",
    "RuntimeError: Could not infer dtype of PILImage",
    "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 32 but got size 16 for tensor "
    "number 1 in the list.",
    "RuntimeError: split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 0), "
    "but got split_sizes=[4, 4]",
    "RuntimeError: value cannot be converted to type at::Half without overflow",
    "RuntimeError: Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: float "
    "and value.dtype: double instead.",
    "OverflowError: Python int too large to convert to C long",
    "IndexError: index 765 is out of bounds for dimension 0 with size 765",
    "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.",
])
def test_near_misses_are_not_claimed_by_the_round10_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES]
    assert not claimed, (text, claimed)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/shape/take_out_of_range.py", "shape.index_out_of_bounds", ["15", "2 elements"]),
    ("fixtures/shape/interpolate_empty.py", "shape.interpolate_empty", ["H: 0, W: 4", "H: 2, W: 2"]),
    ("fixtures/shape/narrow_range.py", "shape.narrow_range", ["15", "4"]),
    ("fixtures/numerics/numel_overflow.py", "numerics.size_overflow", ["numel"]),
    ("fixtures/numerics/int_unpack_overflow.py", "numerics.int_unpack_overflow", ["long long"]),
    ("fixtures/autograd/dlpack_requires_grad.py", "autograd.numpy_requires_grad", ["DLPack"]),
])
def test_new_fixtures_are_claimed_with_their_values(fixture, rule, values):
    diagnosis = explain_fixture(fixture)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("call, rule", [
    (lambda: torch.take(torch.zeros(2), torch.tensor([15])), "shape.index_out_of_bounds"),
    (lambda: F.interpolate(torch.zeros(1, 1, 4, 4), scale_factor=0.1), "shape.interpolate_empty"),
    (lambda: F.interpolate(torch.zeros(1, 1, 4, 4, 4), size=(0, 2, 2)), "shape.interpolate_empty"),
    (lambda: torch.zeros(4).narrow(0, 2, 5), "shape.narrow_range"),
    (lambda: torch.zeros(4).narrow(0, 0, -1), "shape.narrow_range"),
    (lambda: torch.empty(2**40, 2**40), "numerics.size_overflow"),
    (lambda: torch.zeros(1).expand(2**40, 2**40).contiguous(), "numerics.size_overflow"),
    (lambda: torch.tensor([2**64]), "numerics.int_unpack_overflow"),
])
def test_real_torch_call_is_claimed_by_the_round10_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)


def test_fsdp_refusing_integer_weights_is_read_as_quantized_weights():
    diagnosis = explain_fixture("fixtures/dtype/fsdp_integer_params.py")
    assert diagnosis.rule == "dtype.fsdp_uniform_dtype"
    assert "only integer tensors" in diagnosis.summary and "bnb_4bit_quant_storage" in said(diagnosis)
