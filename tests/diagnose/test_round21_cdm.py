"""Round-21 wordings for compile, device and memory (scientific uses of torch, NPUs, Slurm logs): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
near misses stay unclaimed; the errors CPU torch can raise here are explained live from their fixtures."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # slurmstepd's report of the cgroup OOM handler: srun's step, then the batch step, with srun's task line between
    ("r21_b.yaml#45", "memory.slurm_oom_kill", ["StepId=9411285.batch", "StepId=9411285.0", "gpu20-15", "56"]),
    ("r21_b.yaml#46", "memory.slurm_oom_kill", ["StepId=37205392.0", "node107", "task 0"]),
    # the batch script's shell names the process killed
    ("r21_b.yaml#47", "memory.slurm_oom_kill", ["StepId=191.batch", "line 28", "8156", "Killed"]),
    ("r21_a.yaml#72", "compile.inductor_complex_fallback", ["aten.pow.Tensor_Scalar", "aten.add.Tensor"]),
    ("r21_b.yaml#26", "compile.fx_multiple_tracers", ["einsum", "GraphAppendingTracer"]),
    ("r21_a.yaml#87", "device.cuda_module_load_failed",
     ["CUDA_ERROR_INVALID_IMAGE", "cuModuleLoadDataEx", "generic_red.py line 383"]),
    ("r21_b.yaml#67", "device.ascend_npu_runtime_error",
     ["AclrtSynchronizeStreamWithTimeout", "507035", "ERR00100", "vector core execution is abnormal"]),
    ("r21_b.yaml#68", "device.npu_op_no_binary",
     ["aclnnCast", "EZ9999", "561000", "CastKernelNpuOpApi.cpp:33", "ERR01005"]),
    ("r21_b.yaml#63", "device.unspecified_launch_failure", ["THCTensorMathPointwise.cu line=265 error=4"]),
    ("r21_a.yaml#19", "device.cufft_error", ["CUFFT_INTERNAL_ERROR", "HorNet.py line 64", "torch.fft.rfft2"]),
    ("r21_a.yaml#20", "device.cufft_error", ["_VF.stft"]),
    # the indexing kernel's assertion printed under the cuFFT error is the real failure
    ("r21_a.yaml#21", "device.cufft_error", ["dstIndex < dstAddDimSize", "Indexing.cu:747", "indexFuncSmallIndex"]),
    ("r21_a.yaml#92", "device.cusolver_error", ["cusolverDnXsyevd", "CUDA_R_32F data (float32)"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, line", [("r21_a.yaml#71", 1778), ("r21_a.yaml#72", 1277)])
def test_inductor_complex_warning_names_its_lowering_line(where, line):
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == "compile.inductor_complex_fallback"
    raised_in = diagnosis.facts["raised_in"]  # torch's own file: shown as "raised in", not as the user's line
    assert (raised_in["file"].rsplit("/", 1)[-1], raised_in["line"]) == ("lowering.py", line)


@pytest.mark.parametrize("text, rule", [
    # other wordings of the same families, from their threads
    ("slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.", "memory.slurm_oom_kill"),
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
     "memory.slurm_oom_kill"),
    ("srun: error: Orion-01-01: task 4: Out Of Memory", "memory.slurm_oom_kill"),
])
def test_other_wordings_are_claimed(text, rule):
    assert explain_paste(text).rule == rule


@pytest.mark.parametrize("text, rule", [
    # the step's end for another reason, in the same thread as an OOM
    ("srun: error: Orion-18-69: task 289: Bus error", "memory.slurm_oom_kill"),
    ("slurmstepd: error: *** STEP 3495450.0 ON orion-01-04 CANCELLED AT 2021-10-27T20:22:22 ***", "memory.slurm_oom_kill"),
    # KeOps's Python error under the driver's line: it says nothing by itself
    ("RuntimeError: [KeOps] Cuda error.", "device.cuda_module_load_failed"),
    # a dtype the aclnn kernel refuses is a parameter check, not a missing kernel binary
    ("RuntimeError: call aclnnCast failed, detail:EZ1001: The param dtype not implemented for DT_BFLOAT16, should be in "
     "dtype support list [DT_FLOAT16,DT_FLOAT,DT_DOUBLE,DT_INT8,DT_UINT8,DT_INT16,DT_INT32,DT_INT64,DT_BOOL,"
     "DT_COMPLEX64,DT_COMPLEX128,].", "device.npu_op_no_binary"),
])
def test_near_misses_are_not_claimed(text, rule):
    assert all(d.rule != rule for d in explain_stream(io.StringIO(text)))


def test_live_fx_multiple_tracers_is_explained():
    assert_names(explain_fixture("fixtures/compile/fx_multiple_tracers.py"), "compile.fx_multiple_tracers",
                 ["`einsum`", "GraphAppendingTracer twice"])
