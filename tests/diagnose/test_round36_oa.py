"""Round-36 wordings for other, part one (libtorch builds and links, CMake, ABI, MSVC, iOS, ExecuTorch kernels,
TorchServe): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule
with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_b.yaml#2", "other.libtorch_undefined_reference", ["c10::Symbol::fromQualString", "inline_c_Main_0"]),
    ("r36_b.yaml#25", "other.libtorch_undefined_reference",
     ["torch::executor::Module::Module", "executor_runner.cpp:40"]),
    ("r36_b.yaml#36", "other.libtorch_undefined_reference",
     ["c10::ivalue::checkCustomClassType", "torch::isCustomClass", "conversion.cpp"]),
    ("r36_b.yaml#3", "other.libtorch_libstdcxx_mismatch", ["GLIBCXX_3.4.21", "libtorch_cpu.so", "libc10.so"]),
    ("r36_b.yaml#4", "other.libtorch_libstdcxx_mismatch", ["libtorch_cpu.so", "torch::jit::InlinedCallStack"]),
    ("r36_b.yaml#9", "other.cmake_torch_config_not_found", ["TorchConfig.cmake", "CMakeLists.txt:11"]),
    ("r36_b.yaml#10", "other.cmake_torch_config_not_found", ["TorchConfig.cmake", "backend/CMakeLists.txt:4"]),
    ("r36_b.yaml#11", "other.msvc_unhandled_c10_error", ["example_app.exe", "c10::Error"]),
    ("r36_b.yaml#17", "other.file_format_version_mismatch",
     ["between 3 and 7", "model version is 8"]),
    ("r36_b.yaml#22", "other.executorch_kernel_not_found", ["aten::native_dropout.out"]),
    ("r36_b.yaml#23", "other.executorch_kernel_reregistration",
     ["aten::sym_size.int", "operator_registry.cpp:111", "error 18"]),
    ("r36_b.yaml#26", "other.executorch_kernel_not_found", ["aten::exp.out", "operator_registry.cpp:256"]),
    ("r36_b.yaml#27", "other.executorch_kernel_not_found",
     ["aten::bitwise_right_shift.Tensor_out", "operator_registry.cpp:256"]),
    ("r36_b.yaml#37", "other.torchserve_worker_died",
     ["backside_ver3", "model_service_worker.py:176", "WorkerThread.java:129"]),
    ("r36_b.yaml#47", "other.apple_ld_ignoring_libtorch", ["libc10.a", "c10::AutogradMetaInterface", "iOS-arm64"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # CMake's wording with typographic quotes (pytorch#44362) and the list alone (cutorch#844)
    ("CMake Error at CMakeLists.txt:4 (find_package):\nBy not providing “FindTorch.cmake” in CMAKE_MODULE_PATH this "
     "project has\nasked CMake to find a package configuration file provided by “Torch”, but\nCMake did not find one.\n\n"
     "Could not find a package configuration file provided by “Torch” with any of\nthe following names:\n\n"
     "TorchConfig.cmake\ntorch-config.cmake", "other.cmake_torch_config_not_found", ["CMakeLists.txt:4", "TorchConfig.cmake"]),
    ("Could not find a package configuration file provided by \"Torch\" with any of\n  the following names:\n\n"
     "    TorchConfig.cmake\n    torch-config.cmake", "other.cmake_torch_config_not_found", ["TorchConfig.cmake"]),
    # ExecuTorch's older registration assert (executorch#4510)
    ("E 00:00:00.000613 executorch:operator_registry.cpp:75] Re-registering aten::sym_size.int, from NOT_SUPPORTED\n"
     "E 00:00:00.000657 executorch:operator_registry.cpp:76] key: (null), is_fallback: true\n"
     "F 00:00:00.000658 executorch:operator_registry.cpp:33] In function register_kernels(), assert failed (false): "
     "Kernel registration failed with error 18, see error log for details.", "other.executorch_kernel_reregistration",
     ["aten::sym_size.int", "operator_registry.cpp:33", "error 18"]),
    # an Intel LibTorch linked on Apple Silicon (pytorch#63558, rust-bert#326)
    ("ld: warning: ignoring file ../libtorch/lib/libtorch_cpu.dylib, building for macOS-arm64 but attempting to link "
     "with file built for macOS-x86_64", "other.apple_ld_ignoring_libtorch",
     ["libtorch_cpu.dylib", "macOS-arm64", "macOS-x86_64"]),
    ("ld: warning: ignoring file /Users/jianshuzhao/Github/rust-bert/target/release/build/torch-sys-dfad9b078cf4fcfc/out/"
     "libtorch/libtorch/lib/libc10.dylib, building for macOS-arm64 but attempting to link with file built for "
     "macOS-x86_64", "other.apple_ld_ignoring_libtorch", ["libc10.dylib", "macOS-x86_64"]),
    # TorchServe's notice alone (mmdetection#6497)
    ("Torchserve error: Load model failed: modelname, error: Worker died", "other.torchserve_worker_died", ["modelname"]),
    # the lite interpreter's older wording, "verson" and no space before "But" (android-demo-app#211)
    ("java.lang.RuntimeException: Unable to start activity ComponentInfo{org.pytorch.demo.objectdetection/"
     "org.pytorch.demo.objectdetection.MainActivity}: com.facebook.jni.CppException: Lite Interpreter verson number does "
     "not match. The model version must be between 3 and 5But the model version is 7 ()",
     "other.file_format_version_mismatch", ["between 3 and 5", "model version is 7"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # CMake's wording for another package (vision#2573)
    ("CMake Warning at CMakeLists.txt:12 (find_package):\n  By not providing \"FindPython3.cmake\" in CMAKE_MODULE_PATH "
     "this project has\n  asked CMake to find a package configuration file provided by \"Python3\", but\n  CMake did not "
     "find one.", "other.cmake_torch_config_not_found"),
    # the standard library's exception in another Windows program (xlnt#361)
    ("Exception thrown at 0x00007FFD6EB04008 in read_excel.exe: Microsoft C++ exception: std::range_error at memory "
     "location 0x0000003191F1F990.", "other.msvc_unhandled_c10_error"),
    # a worker that died with no model load failing (serve#789)
    ("2020-11-19 08:11:14,605 [DEBUG] W-9000-backside_ver3_1.0 org.pytorch.serve.wlm.WorkerThread - Backend worker "
     "monitoring thread interrupted or backend worker process died.", "other.torchserve_worker_died"),
    # your own reference to a LibTorch function is not libtorch's reference to libstdc++ (pytorch#13541)
    ("error: undefined reference to `c10::Error::Error(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
     "const&, void const*)'", "other.libtorch_libstdcxx_mismatch"),
    # the lookup side is not the registration side (executorch#15673)
    ("[operator_registry.cpp:256] kernel 'aten::bitwise_right_shift.Tensor_out' not found.",
     "other.executorch_kernel_reregistration"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
