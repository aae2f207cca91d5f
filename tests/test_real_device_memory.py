"""Device and memory rules for messages seen in the wild: a live meta-device failure raised by real
torch calls, and pasted CUDA-only messages (no GPU here) whose diagnosis must repeat their values."""

from __future__ import annotations

import io

import pytest
import torch
from torch import nn

import explainer
from explainer._cli_explain import explain_stream
from explainer._explain import explain_text


def explain_paste(text: str):
    found = [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]
    assert found, f"no rule claimed {text[:120]!r}"
    return found[0]


def said(diagnosis) -> str:
    return " ".join([diagnosis.title, diagnosis.summary, *diagnosis.fixes])


def test_meta_module_moved_with_to_names_the_module_and_its_meta_parameters():
    with torch.device("meta"):
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    try:
        model.to("cpu")
    except NotImplementedError as exc:
        diagnosis = explainer.explain(exc)
    else:
        pytest.fail("moving a meta module did not raise")
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    assert diagnosis.rule == "device.meta_tensor_copy"
    assert diagnosis.facts["meta_module"] == "model"
    assert diagnosis.facts["meta_count"] == 4 and diagnosis.facts["meta_total"] == 4
    assert diagnosis.summary.startswith("4 of 4 parameters and buffers of model are still on the meta device")
    assert {c["name"] for c in diagnosis.culprits} >= {"model.0.weight", "model.2.bias"}
    assert all(c["device"] == "meta" for c in diagnosis.culprits)


@pytest.mark.parametrize("message, rule, values", [
    ("../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [654,0,0], thread: [46,0,0] "
     "Assertion `srcIndex < srcSelectDimSize` failed.",
     "device.device_assert", ["indexSelectLargeIndex", "Indexing.cu:1292", "srcIndex < srcSelectDimSize", "num_embeddings"]),
    ("/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:104: void cunn_SpatialClassNLLCriterion_updateOutput_kernel"
     "(T *, T *, long *, int) [with T = float, AccumT = float]: block: [0,0,0], thread: [475,0,0] Assertion "
     "`t >= 0 && t < n_classes` failed.",
     "device.device_assert", ["cunn_SpatialClassNLLCriterion_updateOutput_kernel", "SpatialClassNLLCriterion.cu", "n_classes"]),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, "
     "(int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea)`",
     "device.cublas_status", ["CUBLAS_STATUS_NOT_SUPPORTED", "cublasGemmStridedBatchedEx", "CUDA_R_16BF", "bfloat16"]),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR", "device.cudnn_status", ["CUDNN_STATUS_MAPPING_ERROR"]),
    ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58",
     "memory.cuda_error_oom", ["error 2", "THCStorage.cu:58"]),
    ("torch.AcceleratorError: CUDA error: out of memory\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
     "memory.cuda_error_oom", ["torch.AcceleratorError", "cudaErrorMemoryAllocation"]),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
     "device.driver_too_old", ["11040", "CUDA up to 11.4"]),
    ("NVIDIA GeForce RTX 3060 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n"
     "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
     "device.capability_incompatible", ["NVIDIA GeForce RTX 3060", "sm_86", "sm_37 sm_50 sm_60 sm_70"]),
    ("NotImplementedError: The operator 'aten::_fft_r2c' is not currently implemented for the MPS device",
     "device.mps_not_implemented", ["aten::_fft_r2c", "PYTORCH_ENABLE_MPS_FALLBACK=1"]),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
     "Reducing block sizes or `num_stages` may help.",
     "memory.triton_shared_memory", ["Required: 98304", "Hardware limit: 65536", "num_stages"]),
    ("RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.", "device.flash_attn_arch", ["is_sm8x || is_sm75"]),
])
def test_pasted_cuda_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert diagnosis.rule == rule, (diagnosis.rule, diagnosis.summary)
    text = said(diagnosis)
    for value in values:
        assert value in text, f"{value!r} missing from {text!r}"


@pytest.mark.parametrize("message", [
    "F1119 15:00:44.842713 16912 cudnn.hpp:96] Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)  CUDNN_STATUS_BAD_PARAM.",
    "CUBLAS failure 13: CUBLAS_STATUS_EXECUTION_FAILED ; GPU=1 ; expr=cublas_gemm(cuHandle, CUBLAS_OP_N)",
])
def test_other_frameworks_cuda_library_failures_are_not_claimed(message):
    assert all(d.rule is None for d in explain_stream(io.StringIO(message)))


@pytest.mark.parametrize("message, rule, named", [
    ("RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at /pytorch/aten/src/THC/THCGeneral.cpp:51",
     "device.no_cuda_device", ("(38)", "no CUDA-capable device is detected", "THCGeneral.cpp:51", "error=38")),
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
     "device.cuda_busy_unavailable", ("all CUDA-capable devices are busy or unavailable", "Exclusive-Process")),
    ("RuntimeError: CUDA error: misaligned address", "device.misaligned_address", ("misaligned address",)),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=84 error=74 : misaligned address",
     "device.misaligned_address", ("error=74", "THCTensorCopy.cu:84")),
    ("torch.AcceleratorError: HIP error: invalid device function\nSearch for `hipErrorInvalidDeviceFunction' in "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for more information.",
     "device.hip_error", ("HIP error: invalid device function", "hipErrorInvalidDeviceFunction", "AMD_SERIALIZE_KERNEL=3")),
    ("RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)",
     "device.xpu_native_api", ("-5", "PI_ERROR_OUT_OF_RESOURCES")),
    ("RuntimeError: Placeholder storage has not been allocated on MPS device!", "device.mps_placeholder_storage", ("MPS",)),
    ("AssertionError: Torch not compiled with XPU enabled", "device.no_cuda_build", ("XPU",)),
])
def test_new_device_wordings_name_their_values(message, rule, named):
    d = explain_text(message)
    assert d.rule == rule, d.rule
    said = d.summary + " ".join(d.fixes)
    for value in named:
        assert value in said, (value, said)
