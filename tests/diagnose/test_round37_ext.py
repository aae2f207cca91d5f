"""Round-37 wordings of native extension builds (torch.utils.cpp_extension with nvcc and ninja, apex and xformers
builds, DLL loads of compiled extensions, libtorch links): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses (CuPy's own NVRTC compile, other packages' DLLs, other
projects' CUDA builds) stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r37_c.yaml#6", "other.extension_build_failed", ["compute_86", "softpool_cuda_kernel.cu", "nvcc", "11.1"]),
    ("r37_c.yaml#18", "other.extension_build_failed", ["ninja", "sm_90"]),
    ("r37_c.yaml#20", "other.apex_without_cuda_ext", ["--cuda_ext", "FusedAdam", "FusedLayerNorm", "Fused syncbn"]),
    ("r37_c.yaml#24", "other.extension_build_failed",
     ["Half", "lltm_cuda_kernel.cu(123)", "lltm_cuda_kernel.cu(157)", "at::Half"]),
    ("r37_c.yaml#45", "other.extension_build_failed", ["THC/THC.h", "gcc"]),
    ("r37_c.yaml#69", "other.cpp_extension_wrong_compiler_warning", ["c++", "g++", "cpp_extension.py:166"]),
    ("r37_c.yaml#70", "other.cpp_extension_wrong_compiler_warning", ["g++", "clang++", "darwin"]),
    ("r37_c.yaml#72", "other.libtorch_undefined_reference",
     ["c10::Error::Error(c10::SourceLocation, std::string const&)", "at::getDefaultTensorOptions()", "example-app.cpp"]),
    ("r37_c.yaml#76", "other.extension_toolchain_missing", ["version for cl", "WinError 2", "cpp_extension.py: 294"]),
    ("r37_c.yaml#77", "other.extension_build_failed", ["_grid_encoder", "bindings.o"]),
    ("r37_c.yaml#84", "other.dll_load_failed", ["custom_rasterizer_kernel"]),
    ("r37_c.yaml#85", "other.xformers_build_mismatch", ["2.0.1", "1106", "11.6"]),
    ("r37_c.yaml#86", "other.xformers_build_mismatch", ["2.0.1+cu118", "2.1.0+cu121", "1108"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_cupy_compile_exception_stays_unclaimed():
    # CuPy's RawKernel / NVRTC compile of its own source (a control): no extension build of torch
    assert_left_alone(corpus_message("r37_c.yaml#50"), "other.extension_build_failed")


@pytest.mark.parametrize("text, rule, values", [
    # the same warning on one line (GSCNN#56), and the spurious one for a compiler of the right name (pytorch#23676)
    ("Your compiler (c++) is not compatible with the compiler Pytorch was built with for this platform, which is g++ "
     "on linux. Please use g++ to to compile your extension. Alternatively, you may compile PyTorch from source using "
     "c++, and then you can also use c++ to compile your extension.",
     "other.cpp_extension_wrong_compiler_warning", ["c++", "g++", "linux"]),
    ("Your compiler (clang++) is not compatible with the compiler Pytorch was\nbuilt with for this platform, which is "
     "clang++ on darwin. Please\nuse clang++ to to compile your extension. Alternatively, you may\ncompile PyTorch from "
     "source using clang++, and then you can also use\nclang++ to compile your extension.",
     "other.cpp_extension_wrong_compiler_warning", ["clang++", "darwin", "spurious"]),
    # apex's fused optimizer refusing to run (apex#1193)
    ("  File \"G:\\Anaconda3\\envs\\xyy_imagenaire\\lib\\site-packages\\apex\\optimizers\\fused_adam.py\", line 80, in "
     "__init__\n    raise RuntimeError('apex.optimizers.FusedAdam requires cuda extensions')\nRuntimeError: "
     "apex.optimizers.FusedAdam requires cuda extensions",
     "other.apex_without_cuda_ext", ["FusedAdam", "fused_adam.py\", line 80"]),
    # auto-gptq's kernels, the suffix the widened pattern keeps (localGPT#630)
    ("ImportError: DLL load failed while importing exllama_kernels: The specified module could not be found.",
     "other.dll_load_failed", ["exllama_kernels"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a bare DLL failure names no module: numpy's (numpy#15512) and torch's read the same
    ("ImportError: DLL load failed: The specified module could not be found.", "other.dll_load_failed"),
    # DearPyGui's own module (DearPyGui#559)
    ("DLL load failed while importing core: 找不到指定的模块。", "other.dll_load_failed"),
    # ggml's `half` in a CMake build of llama.cpp (llama.cpp#4922), not torch's dispatch macro
    ("/build/source/ggml.h(309): error: identifier \"half\" is undefined\n\n1 error detected in the compilation of "
     "\"/build/source/ggml-cuda.cu\".", "other.extension_build_failed"),
    # apex.amp's warning names the missing module amp_C (apex#717): extension_module_missing's, not this rule's
    ("Warning:  multi_tensor_applier fused unscale kernel is unavailable, possibly because apex was installed without "
     "--cuda_ext --cpp_ext. Using Python fallback.  Original ImportError was: ModuleNotFoundError(\"No module named "
     "'amp_C'\")", "other.apex_without_cuda_ext"),
    # the compiler is missing altogether (nerfstudio#1394): the toolchain rule's, not the wrong-compiler warning's
    ("C:\\Users\\micro\\anaconda3\\envs\\nerfstudio\\lib\\site-packages\\torch\\utils\\cpp_extension.py:359: "
     "UserWarning: Error checking compiler version for cl:\n[WinError 2] The system cannot find the file specified\n"
     "  warnings.warn(f'Error checking compiler version for {compiler}: {error}')",
     "other.cpp_extension_wrong_compiler_warning"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
