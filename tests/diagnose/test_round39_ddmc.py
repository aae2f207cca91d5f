"""Round-39 wordings for device, distributed, memory and compile (training-loop machinery, biology and chemistry
models, tabular learning): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by
the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_a.yaml#20", "device.optimizer_capturable_state_device", ["step_t.is_cuda", "capturable=False"]),
    ("r39_a.yaml#39", "device.optimizer_capturable_state_device", ["capturable=False", "state_steps"]),
    ("r39_a.yaml#89", "device.illegal_memory_access",
     ["c10::CUDAError", "ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal"]),
    ("r39_c.yaml#58", "device.cuda_forked_subprocess", ["_MultiProcessingDataLoaderIter", "spawn"]),
    ("r39_c.yaml#10", "memory.cuda_oom", ["5,000", "41.96 GiB", "15.99 GiB", "47.18 GiB"]),
    ("r39_c.yaml#33", "memory.cuda_oom", ["144.00 MiB", "3.81", "81.12 MiB", "514", "512"]),
    ("r39_c.yaml#75", "memory.cpu_alloc", ["246685062276", "CPUAllocator.cpp:64", "248337"]),
    ("r39_b.yaml#14", "compile.nvfuser_fallback", ["compileCudaFusionGroup", "_spherical_harmonics.py:82"]),
    ("r39_b.yaml#50", "compile.torchscript_interpreter_failed", ["Unsupported value kind: Tensor"]),
    ("r39_b.yaml#66", "compile.triton_launcher_build", ["CalledProcessError", "/usr/bin/gcc"]),
    ("r39_c.yaml#60", "compile.dynamo_internal_error",
     ["UnspecializedNNModuleVariable", "module_key", "container.py:120"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the capturable=True side of the same check: torch 1.12-2.0 (neuralsim#18, pytorch#89987)
    ("AssertionError: If capturable=True, params and state_steps must be CUDA tensors.",
     "device.optimizer_capturable_state_device", ["capturable=True", "CUDA tensors"]),
    ("Error in Adam.step(): If capturable=True, params and state_steps must be CUDA tensors.",
     "device.optimizer_capturable_state_device", ["capturable=True"]),
    # the Lightning thread's copy of the capturable=False assertion (pytorch-lightning#13695)
    ("`AssertionError: If capturable=False, state_steps should not be CUDA tensors.`",
     "device.optimizer_capturable_state_device", ["capturable=False", "1.12.1"]),
    # NVFuser's full warning still read by its first pattern (pytorch#88050)
    ("C:\\Python310\\lib\\site-packages\\torch\\nn\\modules\\module.py:1423: UserWarning: FALLBACK path has been taken "
     "inside: torch::jit::fuser::cuda::runCudaFusionGroup. This is an indication that codegen Failed for some reason.\n"
     "To debug try disable codegen fallback path via setting the env variable `export PYTORCH_NVFUSER_DISABLE=fallback`\n"
     " (Triggered internally at ..\\torch\\csrc\\jit\\codegen\\cuda\\manager.cpp:336.)",
     "compile.nvfuser_fallback", ["torch::jit::fuser::cuda::runCudaFusionGroup", "manager.cpp:336"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_live_capturable_step_on_cpu_is_explained():
    from conftest import explain_fixture

    diagnosis = explain_fixture("fixtures/device/optimizer_capturable_state_device.py")
    assert_names(diagnosis, "device.optimizer_capturable_state_device", ["capturable=True", "'cuda'"])


@pytest.mark.parametrize("text, not_rule", [
    # a capture in progress with a non-capturable optimizer: the capture check (pytorch-lightning#18501)
    ("RuntimeError: Attempting CUDA graph capture of step() for an instance of AdamW",
     "device.optimizer_capturable_state_device"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
