"""Round-28 wordings for `other` (macOS, Windows and CPU-only users; threads of 2017-2021): macOS's dyld reports of a
library torch needs, Windows' long install paths, Apple clang's -fopenmp, StyleGAN's plugin builds, a
torch._C DLL failure without a reason, and the shell's SIGILL reports. Each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same
families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, said

CORPUS_CASES = [
    ("r28_a.yaml#6", "other.dyld_library_not_loaded", ["/opt/homebrew/opt/libomp/lib/libomp.dylib", "Apple Silicon"]),
    ("r28_a.yaml#7", "other.dyld_library_not_loaded", ["libomp.dylib", "libshm.dylib", "_C.cpython-36m-darwin.so"]),
    ("r28_a.yaml#8", "other.dyld_library_not_loaded", ["@rpath/libc++.1.dylib", "_C.cpython-37m-darwin.so"]),
    ("r28_a.yaml#9", "other.dyld_library_not_loaded", ["libomp.dylib", "liblantern.dylib", "libtorch_cpu.dylib"]),
    ("r28_a.yaml#18", "other.extension_toolchain_missing", ["for cl", "WinError 2"]),
    ("r28_a.yaml#41", "other.native_illegal_instruction", ["predict.py", "illegal hardware instruction"]),
    ("r28_a.yaml#42", "other.native_illegal_instruction", ["Illegal instruction"]),
    ("r28_a.yaml#72", "other.clang_openmp_unsupported", ["-fopenmp", "Apple"]),
    ("r28_a.yaml#76", "other.windows_long_path_install", ["Errno 2", "caffe2", "Microsoft Store"]),
    ("r28_a.yaml#77", "other.windows_long_path_install", ["WinError 206", "torch"]),
    ("r28_b.yaml#52", "other.dll_load_failed", ["torch._C", "no reason given"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # a libtorch program on Apple Silicon (pytorch#123833): the library is found through libtorch_cpu's rpath
    ("dyld[29154]: Library not loaded: @rpath/libomp.dylib\n"
     "  Referenced from: <A671B878-4D06-37B0-BF44-D143DE87C287> /Users/tkol/Desktop/dcgan/libtorch/lib/libtorch_cpu.dylib\n"
     "  Reason: tried: '/Users/runner/work/pytorch/pytorch/pytorch/build/lib/libomp.dylib' (no such file)",
     "other.dyld_library_not_loaded", ["@rpath/libomp.dylib", "libtorch_cpu.dylib"]),
    # a nightly's bundled libomp that this macOS cannot load (pytorch#78938)
    ("ImportError: dlopen(/Users/user/opt/miniconda3/envs/vision/lib/python3.9/site-packages/torch/_C.cpython-39-darwin.so, 2):"
     " Library not loaded: @loader_path/../.dylibs/libomp.dylib\n"
     "  Referenced from: /Users/user/opt/miniconda3/envs/vision/lib/python3.9/site-packages/torch/lib/libtorch_cpu.dylib\n"
     "  Reason: no suitable image found.  Did find:",
     "other.dyld_library_not_loaded", ["@loader_path/../.dylibs/libomp.dylib", "could not be loaded"]),
    # StyleGAN's plugin build (an excerpt of Lafite#3, r28_a.yaml#69: its first three lines, before the OOM line that
    # the whole entry is answered by)
    (corpus_message("r28_a.yaml#69").split("\n4:")[0],
     "other.stylegan_plugin_build_failed", ["bias_act_plugin", "upfirdn2d", "no C++ compiler"]),
    # (an excerpt of QC-StyleGAN#2, other/stylegan_plugin_build_failed's example: its second line)
    ("/QCstylegan/torch_utils/ops/bias_act.py:121: UserWarning: Failed to build CUDA kernels for bias_act. Falling back to"
     " slow reference implementation. Details:", "other.stylegan_plugin_build_failed", ["bias_act"]),
    # Apple clang's report with the build's failure after it
    ("clang: error: unsupported option '-fopenmp'\nerror: command 'gcc' failed with exit status 1",
     "other.clang_openmp_unsupported", ["`gcc`", "exit 1"]),
    # flash-attn's sdist unpacked under a temp folder (flash-attention#1631)
    ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\Temp\\\\pip-install-"
     "kbhuwt7y\\\\flash-attn_fc9d8f2226254f13ac13d4f7db12c1ea\\\\csrc/composable_kernel/library/src/tensor_operation_instance/"
     "gpu/batched_gemm_add_relu_gemm_add/device_batched_gemm_add_relu_gemm_add_xdl_cshuffle_f16_f16_f16_f16_gmk_gnk_gno_gmo_"
     "instance.cpp'", "other.windows_long_path_install", ["flash-attn", "Errno 2"]),
])
def test_other_wordings_are_claimed(text, rule, values):
    assert_names(explain_paste(text), rule, values, said(explain_paste(text)))


@pytest.mark.parametrize("text, rule", [
    # LightGBM's and pymrmr's own libraries need OpenMP: other frameworks' imports
    ("OSError: dlopen(/Users/wei-enwang/Library/Caches/pypoetry/virtualenvs/pyreal-rk1el9Uh-py3.8/lib/python3.8/site-packages/"
     "lightgbm/lib_lightgbm.so, 6): Library not loaded: /usr/local/opt/libomp/lib/libomp.dylib\n"
     "  Referenced from: /Users/wei-enwang/Library/Caches/pypoetry/virtualenvs/pyreal-rk1el9Uh-py3.8/lib/python3.8/"
     "site-packages/lightgbm/lib_lightgbm.so\n  Reason: image not found", "*"),
    ("ImportError: dlopen(/usr/local/lib/python3.6/site-packages/pymrmr.cpython-36m-darwin.so, 2): Library not loaded: "
     "/usr/local/opt/libiomp/lib/libiomp5.dylib\n  Referenced from: /usr/local/lib/python3.6/site-packages/"
     "pymrmr.cpython-36m-darwin.so\n  Reason: image not found", "*"),
    # ONNX's test data, a long path but not torch's
    ("ERROR: Could not install packages due to an OSError: [WinError 206] The filename or extension is too long: "
     "'C:\\\\Users\\\\username\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.10_qbz5n2kfra8p0\\\\"
     "LocalCache\\\\local-packages\\\\Python310\\\\site-packages\\\\onnx\\\\backend\\\\test\\\\data\\\\node\\\\test_resize_"
     "upsample_sizes_nearest_round_prefer_ceil_asymmetric\\\\test_data_set_0'", "other.windows_long_path_install"),
    # a plain C program's build on macOS (llama2.c): the paste shows a compile command that is not torch's
    ("clang -Ofast -fopenmp -march=native run.c  -lm  -o run\n\nclang: error: unsupported option '-fopenmp'\n"
     "clang: error: unsupported option '-fopenmp'", "other.clang_openmp_unsupported"),
    # another package's import killed by SIGILL (onnx on a Jetson, onnx#3268)
    (corpus_message("r18_b.yaml#50"), "other.native_illegal_instruction"),
    ('Setting up PyTorch plugin "bias_act_plugin"... Done.', "other.stylegan_plugin_build_failed"),
])
def test_near_misses_stay_unclaimed(text, rule):
    assert_left_alone(text, rule)
