"""Round-22 wordings for compile, device and memory (the long tail of GitHub threads 2018-2026): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
other wordings of the same families (from the threads cited) are claimed too, near misses stay unclaimed, and the
errors CPU torch can raise here (a foreach optimizer step across devices, a dropped TorchScript function) are
explained live from their fixtures."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    ("r22_a.yaml#1", "device.cuda_runtime_error", ["ROIAlign_cuda.cu:297", "unrecognized error code"]),
    ("r22_a.yaml#15", "memory.cuda_error_oom", ["(2)", "out of memory"]),
    ("r22_a.yaml#56", "device.cudnn_status", ["CUDNN_STATUS_SUCCESS", "torch 0.4"]),
    ("r22_a.yaml#64", "device.foreach_tensor_group", ["`step`", "float32"]),
    ("r22_a.yaml#65", "device.accelerate_fsdp_no_device", ["'XPU', 'CUDA', or 'NPU'", "sync_module_states"]),
    ("r22_a.yaml#51", "compile.onnx_checker_failed", ["ReduceMean", "did not pass defs schema check"]),
    ("r22_a.yaml#79", "device.mps_internal_assert",
     ["src_total_size >= storage_byte_offset", "Copy.mm:129"]),
    ("r22_a.yaml#80", "device.mpsgraph_op_verify",
     ["`anec.gain_offset_control`", "MPSGraphUtilities.mm:294", "memref<1x5x1x5xi1>", "mps_select"]),
    ("r22_a.yaml#81", "compile.jit_undefined_tensor", ["`dim()`", "interpreter"]),
    ("r22_a.yaml#82", "compile.torchscript_dropped_function",
     ["`self.layernorm_embedding(...)`", "trex_encoder.py:166"]),
    ("r22_b.yaml#18", "compile.torch2trt_unsupported_method",
     ["`torch.is_grad_enabled`", "`torch.Tensor.unbind`", "`torch.Tensor.__iter__`"]),
    ("r22_a.yaml#23", "device.unspecified_launch_failure", ["gemm_w4a4_launch_impl.cuh:498"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the torch 2.0-2.2 wording of the foreach grouping check (stanford_alpaca#315)
    ("RuntimeError: Tensors of the same index must be on the same device and the same dtype except `step` tensors that "
     "can be CPU and float32 notwithstanding", "device.foreach_tensor_group", ["float32"]),
    # onnx's C++ checker with the node it checked (onnx/tutorials#161)
    ("onnx.onnx_cpp2py_export.checker.ValidationError: Node () has input size 1 not in range [min=2, max=3].\n\n"
     "==> Context: Bad node spec: input: \"708\" output: \"715\" op_type: \"Pad\" attribute { name: \"mode\" s: "
     "\"constant\" type: STRING }", "compile.onnx_checker_failed", ["`Pad`", "1 input(s)", "2 to 3"]),
    # MPSGraph's dtype verifier, newer macOS wording without loc(...) (ComfyUI-Kolors-MZ#93)
    ("(mpsFileLoc): /AppleInternal/Library/BuildRoots/d187755d-b9a3-11ef-83e5-aabfac210453/Library/Caches/com.apple.xbs/"
     "Sources/MetalPerformanceShadersGraph/mpsgraph/MetalPerformanceShadersGraph/Core/Files/MPSGraphUtilities.mm:233:0: "
     "error: 'mps.add' op requires the same element type for all operands and results\n(mpsFileLoc): /AppleInternal/"
     "Library/BuildRoots/d187755d-b9a3-11ef-83e5-aabfac210453/Library/Caches/com.apple.xbs/Sources/"
     "MetalPerformanceShadersGraph/mpsgraph/MetalPerformanceShadersGraph/Core/Files/MPSGraphUtilities.mm:233:0: note: "
     "see current operation: %7 = \"mps.add\"(%5, %arg2) : (tensor<2x256x2048xf16>, tensor<2048xf32>) -> tensor<*xf32>",
     "device.mpsgraph_op_verify", ["`mps.add`", "tensor<2x256x2048xf16>, tensor<2048xf32>", "MPSGraphUtilities.mm:233"]),
    # MPS's stream copy check (pytorch#94390) and the empty-placeholder check (pytorch#90479)
    ("RuntimeError: length >= offset INTERNAL ASSERT FAILED at \"/Users/runner/work/_temp/anaconda/conda-bld/"
     "pytorch_1675757334591/work/aten/src/ATen/mps/MPSStream.mm\":122, please report a bug to PyTorch. ",
     "device.mps_internal_assert", ["length >= offset", "MPSStream.mm:122"]),
    ("RuntimeError: [srcBuf length] > 0 INTERNAL ASSERT FAILED at \"/Users/runner/work/pytorch/pytorch/pytorch/aten/src/"
     "ATen/native/mps/OperationUtils.mm\":277, please report a bug to PyTorch. Placeholder tensor is empty!",
     "device.mps_internal_assert", ["OperationUtils.mm:277", "Placeholder tensor is empty!", "empty tensor"]),
])
def test_other_wordings_are_claimed(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, rule", [
    # onnxruntime's loader, not onnx's checker (ortex#16)
    # https://github.com/elixir-nx/ortex/issues/16
    (corpus_message("r18_a.yaml#60"), "compile.onnx_checker_failed"),
    # the checker's warning about experimental ops (onnx#3891)
    ("`Warning: Checker does not support models with experimental ops: ATen`", "compile.onnx_checker_failed"),
    # a torch-internal assert outside the MPS backend (pytorch#133182)
    ("RuntimeError: result.storage().use_count() == 1 INTERNAL ASSERT FAILED at \"/torch/csrc/autograd/generated/"
     "VariableType_4.cpp\":14862, please report a bug to PyTorch. function: relu.", "device.mps_internal_assert"),
    # Caffe-style cuDNN check with SUCCESS as the expected value (RON#19)
    ("F1119 15:00:44.842713 16912 cudnn.hpp:96] Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)  "
     "CUDNN_STATUS_BAD_PARAM.", "device.cudnn_status"),
])
def test_near_misses_are_not_claimed(text, rule):
    assert all(d.rule != rule for d in explain_stream(io.StringIO(text)))


def test_live_foreach_step_across_devices_is_explained():
    assert_names(explain_fixture("fixtures/device/optimizer_state_device.py"), "device.foreach_tensor_group",
                 ["float32/64", "bfloat16", "`exp_avg`"])


def test_live_dropped_torchscript_function_is_explained():
    assert_names(explain_fixture("fixtures/compile/jit_ignored_function.py"), "compile.torchscript_dropped_function",
                 ["`self.debug_hook(...)`", "jit_ignored_function.py:15", "@torch.jit.unused"])
