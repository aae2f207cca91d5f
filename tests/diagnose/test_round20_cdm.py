"""Round-20 wordings for compile, device and memory (LLM fine-tuning logs, torch 1.2-2.8): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; near misses stay unclaimed; the errors CPU torch can raise here are explained live from their fixtures."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # the elastic agent's line for a worker started from a function (start_processes), killed by the OOM killer
    ("r20_a.yaml#50", "distributed.child_failed",
     ["exitcode: -9", "`worker_process_entrypoint`", "start_method fork", "pid: 6774", "SIGKILL"]),
    # THCUNN's NLL kernel assertion, its signature wrapped over several lines and "failed." on a line of its own
    ("r20_a.yaml#58", "device.device_assert",
     ["cunn_ClassNLLCriterion_updateOutput_kernel", "ClassNLLCriterion.cu:105", "t >= 0 && t < n_classes"]),
    # Inductor's CantSplit, the divisor wrapped to the next line
    ("r20_a.yaml#62", "compile.inductor_internal_error",
     ["CantSplit", "202048*s47*s87 - 3434816*(((s47*s87 + 17)//18))", "s47*s87 - 17*(((s47*s87 + 17)//18))"]),
    # the graph of a "Backend compiler exception" warning: the unbacked symbol and the user line that made it
    ("r20_a.yaml#95", "compile.data_dependent",
     ["%item", "Sym(u0)", "num_tokens_per_expert.tolist()", "moe.py:76", "_run_experts_for_loop"]),
    # the old wording of pinned memory on a CPU-only build, the argument named on the failing line
    ("r20_b.yaml#10", "device.pin_memory_no_allocator", ["`pin_memory=pin_memory`", "`pin_memory`"]),
    # BackendCompilerFailed whose inner AssertionError's text starts on the next line, the IR node logged above it
    ("r20_a.yaml#61", "compile.backend_compiler_failed",
     ["Invalid match!", "ComputedBuffer(name='buf2'", "scheduler.py:1059"]),
    # Triton's launcher on ROCm, with the runtime's code and the test of torch's suite that failed
    ("r18_b.yaml#82", "device.no_kernel_image",
     ["Code: 209", "HIP", "`TestInductorOpInfoCUDA.test_comprehensive_mvlgamma_mvlgamma_p_5_cuda_float16`"]),
    # a request larger than the GPU, with the process the driver lists
    ("r20_a.yaml#81", "memory.cuda_oom", ["74.16 GiB", "44.40 GiB", "process 2684311 has 14.51 GiB"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_onnx_operator_fix_names_the_opset_asked_for_and_the_one_that_converts():
    diagnosis = explain_paste(corpus_message("r20_b.yaml#56"))
    assert_names(diagnosis, "compile.onnx_unsupported_operator", ["`fake_quantize_per_tensor_affine`", "opset 9"])
    assert_names(diagnosis, "compile.onnx_unsupported_operator",
                 ["opset_version=10", "instead of opset version 9", "from version 10 on"], " ".join(diagnosis.fixes))


@pytest.mark.parametrize("text, rule", [
    # pytorch/pytorch#93042: an FX node of a graph with no unbacked symbol: inference tensors, not data-dependence
    (corpus_message("r6_a.yaml#47"), "compile.data_dependent"),
    # DavidWBressler/GCNN#2: a CUDA tensor pinned, not a build without a pinned allocator
    ("RuntimeError: cannot pin 'torch.cuda.LongTensor' only dense CPU tensors can be pinned",
     "device.pin_memory_no_allocator"),
])
def test_near_misses_are_not_claimed(text, rule):
    assert all(d.rule != rule for d in explain_stream(io.StringIO(text)))


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/device/pin_memory_cpu_only.py", "device.pin_memory_no_allocator",
     ["`pin_memory=pin_memory`", "no CUDA (or other accelerator) backend"]),
    ("fixtures/device/pin_memory_method_cpu_only.py", "device.pin_memory_no_allocator",
     ["`features.pin_memory()`", "Cannot access accelerator device when none is available"]),
])
def test_live_exception_is_explained(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)
