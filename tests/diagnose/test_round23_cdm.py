"""Round-23 wordings for compile, device and memory (threads of 2025-2026: Blackwell GPUs under older Triton,
SageAttention wheels, Numba kernels inside speech toolkits): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r23_a.yaml#19", "compile.triton_ptxas_arch", ["--gpu-name=sm_120", "status 255", "Blackwell"]),
    ("r23_a.yaml#46", "device.sageattention_kernel_unavailable",
     ["SM80 kernel", "_qattn_sm80", "8.0 or higher", "using pytorch attention instead"]),
    ("r23_b.yaml#11", "device.numba_cuda_api_error", ["`cuLaunchKernel`", "CUDA_ERROR_INVALID_VALUE", "1024 threads"]),
    ("r23_a.yaml#25", "device.device_assert", ["`test_training_vlm_multi_image`", "tests/test_grpo_trainer.py"]),
    ("r23_a.yaml#37", "compile.fake_tensor_failed", ["<built-in function mul>", "s27: hint = 2048"]),
    ("r23_a.yaml#57", "compile.recompile_limit", ["`fn` (_test_recompile1.py:14)", "recompile_limit (1)"]),
    ("r23_b.yaml#18", "compile.jit_fuser_nvrtc", ["`kernel_0`", "`c10::complex<float>`", "default_program(30)"]),
    ("r23_b.yaml#52", "compile.triton_compilation_error", ["backend='inductor'", "17:2422"]),
    ("r23_b.yaml#95", "compile.data_dependent",
     ["`forward`", "modeling_audioldm2.py line 664", "aten.repeat_interleave.Tensor"]),
    ("r23_b.yaml#96", "compile.graph_break", ["`with self.autocast:`", "TorchAutocast", "SETUP_WITH"]),
    # earlier rounds' partial answers, now naming what was missing
    ("r18_b.yaml#74", "device.no_cuda_build", ["`debug_wrapper`", "AssertionError", "BackendCompilerFailed"]),
    ("r21_a.yaml#73", "compile.backend_compiler_failed", ["`_type_of`", "torch.complex64", "view_as_real"]),
    ("r21_b.yaml#34", "device.driver_too_old", ["file=cuda_util.cc line=32 error=35"]),
    ("r19_a.yaml#36", "device.device_assert", ["THCTensorMathCompare.cuh line=82 error=59", "t >= 0 && t < n_classes"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_recompile_limit_empty_last_reason_is_not_named_as_the_guard():
    # "last reason: 0/0: " with nothing after it (pytorch#164119): no guard to name
    diagnosis = explain_paste(corpus_message("r23_a.yaml#57"))
    assert "guard that kept failing" not in diagnosis.summary, diagnosis.summary


@pytest.mark.parametrize("text, rule, values", [
    # SageAttention's other kernels and wrappers (ComfyUI-Easy-Install#33, Wan2GP#746, SageAttention#177)
    ("Error running sage attention: SM89 kernel is not available. Make sure you GPUs with compute capability 8.9., "
     "using pytorch attention instead.", "device.sageattention_kernel_unavailable",
     ["SM89 kernel", "_qattn_sm89", "RTX 50xx", "using pytorch attention instead"]),
    ("The generation of the video has encountered an error, please check your terminal for more information. "
     "'SM89 kernel is not available. Make sure you have GPUs with compute capability 8.9.'",
     "device.sageattention_kernel_unavailable", ["SM89 kernel", "8.9"]),
    ("Error in worker loop (rank 3): SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.",
     "device.sageattention_kernel_unavailable", ["SM89 kernel"]),
    # numba's older wording without the code number (numba#1055), and its logged line (numba#3788, numba#4833)
    ("numba.cuda.cudadrv.driver.CudaAPIError: Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE",
     "device.numba_cuda_api_error", ["`cuLaunchKernel`", "CUDA_ERROR_INVALID_VALUE"]),
    ("2019-02-21 10:15:18,210 - ERROR - Call to cuMemcpyDtoH results in CUDA_ERROR_LAUNCH_FAILED",
     "device.numba_cuda_api_error", ["`cuMemcpyDtoH`", "CUDA_ERROR_LAUNCH_FAILED", "crashed"]),
    # the same ptxas failure on another Blackwell GPU (pytorch#148551) and Triton's newer wording (triton#8539)
    ("E0305 20:23:38.890000 755 site-packages/torch/_inductor/runtime/triton_heuristics.py:533] "
     "subprocess.CalledProcessError: Command '['/home/eason/anaconda3/envs/fish-speech/lib/python3.10/site-packages/"
     "triton/backends/nvidia/bin/ptxas', '-lineinfo', '-v', '--gpu-name=sm_120', '/tmp/tmpr8yxx0lh.ptx', '-o', "
     "'/tmp/tmpr8yxx0lh.ptx.o']' returned non-zero exit status 255.", "compile.triton_ptxas_arch",
     ["sm_120", "255"]),
    ("ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'", "compile.triton_ptxas_arch",
     ["sm_121a", "Blackwell"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_oom_and_module_load_codes_stay_with_their_rules():
    # numba's out-of-memory code belongs to another family (verbatim from
    # https://github.com/rapidsai/dask-cuda/issues/225); PyCUDA's wording is not numba's
    assert "device.numba_cuda_api_error" not in claimed_by(
        "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
    assert "device.numba_cuda_api_error" not in claimed_by("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory")


def test_a_c_compiler_failure_is_not_read_as_ptxas():
    # Triton's launcher stub built by gcc, verbatim from https://github.com/neverbiasu/ComfyUI-OmniGen2/issues/10
    assert "compile.triton_ptxas_arch" not in claimed_by(
        r"subprocess.CalledProcessError: Command '['C:\\TDM-GCC-64\\bin\\gcc.EXE', "
        r"'C:\\Users\\ADMINI~1\\AppData\\Local\\Temp\\tmpyh_8fmdt\\main.c', '-O3', '-shared', '-lcuda', "
        r"'-LD:\\AI1\\ComfyUI\\venv\\Lib\\site-packages\\triton\\backends\\nvidia\\include', "
        r"'-LC:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\include', "
        r"'-LC:\\Users\\ADMINI~1\\AppData\\Local\\Temp\\tmpyh_8fmdt', "
        r"'-LC:\\Users\\Administrator\\AppData\\Local\\Programs\\Python\\Python311\\Include', "
        r"'-ID:\\AI1\\ComfyUI\\venv\\Lib\\site-packages\\triton\\backends\\nvidia\\lib', "
        r"'-IC:\\Users\\Administrator\\AppData\\Local\\Programs\\Python\\Python311\\libs', "
        r"'-IC:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\lib\\x64', '-o', "
        r"'C:\\Users\\ADMINI~1\\AppData\\Local\\Temp\\tmpyh_8fmdt\\cuda_utils.cp311-win_amd64.pyd']' "
        r"returned non-zero exit status 1.")


def test_other_sageattention_failures_are_not_this_family():
    # SageAttention's Triton/CUDA version check, and a log line that says a kernel is missing (SageAttention#177)
    for text in ("Error running sage attention: Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8, "
                 "using pytorch attention instead.",
                 "2025-05-22 05:58:36 - INFO - Sparge attention is not available"):
        assert "device.sageattention_kernel_unavailable" not in claimed_by(text)
