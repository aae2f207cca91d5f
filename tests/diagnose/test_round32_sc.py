"""Round-32 wordings for shape, dtype and compile (generative-image apps, edge hardware, older releases): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


def _raised(call) -> str:
    try:
        call()
    except RuntimeError as error:
        return str(error)
    raise AssertionError("the call did not raise")


CORPUS_CASES = [
    ("r32_a.yaml#16", "compile.triton_launcher_build",
     ["/usr/bin/gcc", "cuda_utils.cpython-311-x86_64-linux-gnu.so", "exit status 1"]),
    ("r32_a.yaml#18", "compile.triton_passmanager", ["`tt.load`", "TritonAMDGPUStreamPipeline"]),
    ("r32_c.yaml#31", "compile.tensorrt_engine_version", ["stdArchiveReader.cpp::StdArchiveReader::34", "97", "43"]),
    ("r32_a.yaml#46", "compile.dynamo_internal_error", ["flash_attn_interface", "attention.py:206", "pay_attention"]),
    ("r32_a.yaml#67", "shape.view_stride", ["view size"]),
    ("r32_a.yaml#81", "shape.expand_size", ["700", "size (32)", "dimension 2"]),
    ("r32_a.yaml#33", "shape.cat_sizes", ["size 23", "dimension 1", "tensor number 1"]),
    ("r32_a.yaml#80", "shape.thnn_loss_shapes", ["[1 x 1]", "[1]"]),
    ("r32_c.yaml#46", "dtype.device_no_float64", ["Double (Float64)", "`__rsub__`", "_tensor.py:962"]),
    ("r32_c.yaml#47", "dtype.device_no_float64", ["Double", "`abs_kernel`", "AtenIpexTypeXPU"]),
    ("r32_c.yaml#54", "dtype.device_no_float64", ["compiler_depend.ts:133", "double"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # THNN's pointwise criteria of torch 0.3/0.4, with the criterion's file (pytorch/tutorials#213, CNNIQA#1,
    # neusomatic#8)
    ("RuntimeError: input and target shapes do not match: input [1 x 10], target [10] at "
     "/tmp/pip-l72ec2wl-build/aten/src/THNN/generic/MSECriterion.c:13", "shape.thnn_loss_shapes",
     ["[1 x 10]", "[10]", "MSELoss", "MSECriterion.c:13"]),
    ("RuntimeError: input and target shapes do not match: input [1], target [1 x 1] at c:\\programdata\\miniconda3\\"
     "conda-bld\\pytorch_1524543037166\\work\\aten\\src\\thcunn\\generic/AbsCriterion.cu:15", "shape.thnn_loss_shapes",
     ["L1Loss", "[1 x 1]"]),
    ("RuntimeError: input and target shapes do not match: input [24 x 1], target [24] at "
     "/pytorch/aten/src/THCUNN/generic/SmoothL1Criterion.cu:12", "shape.thnn_loss_shapes", ["SmoothL1Loss", "[24 x 1]"]),
    # cat's message with "but got size" kept, as this torch raises it
    (f"RuntimeError: {_raised(lambda: torch.cat([torch.zeros(2, 3, 23), torch.zeros(2, 4, 24)], dim=1))}",
     "shape.cat_sizes", ["23", "24", "tensor number 1"]),
    # an MLIR pass of Triton's NVIDIA path breaking the IR (triton#9809's pass)
    ("error: 'ttg.convert_layout' op operation destroyed but still has uses\nLLVM ERROR: operation destroyed but still "
     "has uses\nPipeline failed while executing [`TritonGPURemoveLayoutConversions` on 'builtin.module' operation]",
     "compile.triton_passmanager", ["ttg.convert_layout", "TritonGPURemoveLayoutConversions"]),
])
def test_other_wordings_are_claimed(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, rule", [
    # Lua Torch's nn prints a like check from THNN.lua
    ("/torch/install/share/lua/5.1/nn/THNN.lua:110: input and gradOutput shapes do not match", "shape.thnn_loss_shapes"),
    # the spatial losses' check is another rule's
    ("RuntimeError: input and target batch or spatial sizes don't match: target [4, 31, 31], input [4, 31, 10000, 31]",
     "shape.thnn_loss_shapes"),
    # MPS's float64 refusal is the MPS rule's
    ("TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use "
     "float32 instead.", "dtype.device_no_float64"),
])
def test_near_misses_stay_unclaimed(text, rule):
    assert_left_alone(text, rule)
