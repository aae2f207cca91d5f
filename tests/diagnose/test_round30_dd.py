"""Round-30 wordings for device, distributed and memory (CUDA checkpoints on CPU-only machines, flash-attention's
kernels, float8 matmuls, vLLM's and SGLang's custom all-reduce, cut pastes): each corpus message (verbatim from the
opened round) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the
same families (from the threads cited in the rules) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import traceback

import pytest
import torch

from conftest import assert_names, claimed_by, corpus_message, explain_paste, raised


CORPUS_CASES = [
    ("r30_a.yaml#13", "device.map_location", ["map_location", "torch.cuda.is_available() is False"]),
    ("r30_a.yaml#14", "device.map_location", ["torch.cuda.is_available() is False"]),
    ("r30_a.yaml#21", "device.no_cuda_build", ["`_parse_data` (trainers.py:66)", "_lazy_init"]),
    ("r30_b.yaml#3", "device.mismatch", ["`mat1`", "`wrapper_addmm`", "which is on cuda:0", "are on cpu"]),
    ("r30_b.yaml#43", "device.legacy_constructor_device", ["expected CPU, got CUDA", "`torch.Tensor(t)`"]),
    ("r30_b.yaml#73", "device.input_weight_type", ["torch.cuda.FloatTensor", "torch.FloatTensor"]),
    ("r30_c.yaml#7", "device.no_kernel_image", ["/build/source/flash-attn/flash_fwd_launch_template.h:184",
                                                "FlashAttention-2"]),
    ("r30_c.yaml#8", "device.no_kernel_image", ["third_party/flash-attention/hopper/flash_fwd_launch_template.h:167",
                                                "FlashAttention-3", "xformers", "sm_90"]),
    ("r30_c.yaml#10", "device.no_kernel_image", ["csrc/flash_attn/src/fmha_fwd_launch_template.h:89",
                                                 "FlashAttention 1"]),
    ("r30_c.yaml#11", "device.illegal_memory_access", ["`args = (torch.randn([32, 16], device=DEVICE),)`",
                                                       "cudaErrorIllegalAddress"]),
    ("r30_c.yaml#21", "device.scaled_mm_capability", ["torch._scaled_mm", ">= 9.0 or 8.9", "ROCm MI300+"]),
    ("r30_c.yaml#22", "device.scaled_mm_capability", ["torch._scaled_mm", ">= 9.0 or 8.9"]),
    ("r30_c.yaml#53", "distributed.custom_all_reduce_cuda_error",
     ["SGLang", "/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:350", "`invalid argument`"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # flash-attention's check in the kernels a LlamaFactory run loaded (LlamaFactory#10132) and in FlashMLA (FlashMLA#7)
    ("CUDA error (/build/source/flash-attn/flash_fwd_launch_template.h:191): no kernel image is available for "
     "execution on the device", "device.no_kernel_image", ["flash_fwd_launch_template.h:191", "sm_80+"]),
    ("CUDA error (/workspace/.deps/flashmla-src/csrc/flash_fwd_mla_metadata.cu:76): no kernel image is available for "
     "execution on the device", "device.no_kernel_image", ["flash_fwd_mla_metadata.cu:76", "FlashMLA"]),
    # torch 2.1-2.2's Hopper-only check (pytorch#118703)
    ("RuntimeError: torch._scaled_mm is only supported on devices with compute capability >= 9.0)",
     "device.scaled_mm_capability", [">= 9.0", "torch 2.3"]),
    # vLLM's CUDACHECK (vllm#5613) and SGLang's JIT kernels' check (slime#1998)
    ("Failed: /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:310 'invalid argument'",
     "distributed.custom_all_reduce_cuda_error", ["vLLM", "custom_all_reduce.cuh:310", "`invalid argument`"]),
    ("RuntimeError: Runtime check failed at /sgl-workspace/sglang/python/sglang/jit_kernel/include/sgl_kernel/"
     "distributed/custom_all_reduce.cuh:37: CUDA error: invalid argument",
     "distributed.custom_all_reduce_cuda_error", ["SGLang", "custom_all_reduce.cuh:37"]),
    # the full wordings the cut pastes came from
    ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
     "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
     "storages to the CPU.", "device.map_location", ["torch.cuda.is_available() is False"]),
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
     "device.input_weight_type", ["torch.cuda.FloatTensor"]),
    # torch 1.10+ spelling of the common-device check (no typo)
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
     "(when checking argument for argument index in method wrapper__index_select)",
     "device.mismatch", ["`index`", "which is on cpu"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # NCCL's own all-reduce failing a CUDA call (nccl#1410), and torch's bare CUDA error (URWKV#12)
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled "
     "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\nncclUnhandledCudaError: Call to CUDA "
     "function failed.\nLast error:\nCuda failure 1 'invalid argument'", "distributed.custom_all_reduce_cuda_error"),
    ("RuntimeError: CUDA error: invalid argument", "distributed.custom_all_reduce_cuda_error"),
    # vLLM's own capability check and the scales of a call that reached the kernel
    ("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 90. Current "
     "capability: 86", "device.scaled_mm_capability"),
    ("RuntimeError: scale_a must be float scalar", "device.scaled_mm_capability"),
    # two CUDA tensor types: a dtype clash, not a device one
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.HalfTensor) should be the same",
     "device.input_weight_type"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_legacy_constructor_with_two_dtypes_on_one_device_is_not_a_device_question():
    # the same device with two dtypes is a dtype question: raised here by the legacy constructor, pasted as printed
    exc = raised(lambda: torch.FloatTensor(torch.zeros(2, dtype=torch.float64)))
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert "(got TensorOptions(dtype=double, device=cpu" in text
    assert "device.legacy_constructor_device" not in claimed_by(text)


def test_markdown_quote_is_not_read_as_pytest_marked_line():
    # a CUDA error quoted in a Markdown reply (Fooocus#3862)
    diagnosis = explain_paste(corpus_message("r30_c.yaml#6"))
    assert diagnosis.rule == "device.no_kernel_image"
    assert "pytest marked" not in diagnosis.summary
