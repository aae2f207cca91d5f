"""Round-32 wordings for `other` (edge devices and less common hardware: ARM boards and their SIGILLs, cpuinfo's SVE
probe, OpenBLAS under OpenMP, Intel Extension for PyTorch's CPU check, POWER source builds and links; a stable-ABI
custom op in vLLM; Jetson's CUDA libraries at `import torch`; a NameError): each corpus message (verbatim from the
opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of
the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r32_b.yaml#1", "other.name_not_defined", ["The name `image` is not defined"]),
    ("r32_b.yaml#57", "other.stable_abi_call_failed",
     ["`aten::new_empty`", "fused_deepseek_v4_qnorm_rope_kv_rope_quant_insert", "`torch_call_dispatcher`"]),
    ("r32_c.yaml#1", "other.native_illegal_instruction", ["SIGILL", "`std::string::_Rep::_M_dispose`", "ARMv8.1"]),
    ("r32_c.yaml#3", "other.native_illegal_instruction", ["`torch.nn.init.kaiming_normal_(c.weight)`"]),
    ("r32_c.yaml#72", "other.native_illegal_instruction", ["`import intel_extension_for_pytorch as ipex`", "AVX2"]),
    ("r32_c.yaml#23", "other.shared_library_missing", ["`_load_global_deps()`", "`libnvToolsExt.so.1`", "line 93"]),
    ("r32_c.yaml#25", "other.shared_library_missing", ["`_load_global_deps()`", "`libcurand.so.10`", "line 141"]),
    ("r32_c.yaml#37", "other.torch_source_compile_error",
     ["QuantizedOpKernels.cpp:863:46", "Vectorized<c10::qint8>::dequantize", "VSX on POWER"]),
    ("r32_c.yaml#39", "other.link_relocation_truncated", ["R_PPC64_REL24", "32 MiB"]),
    ("r32_c.yaml#40", "other.cpuinfo_sve_prctl_failed", ["prctl(PR_SVE_GET_VL)", "2.5.1"]),
    ("r32_c.yaml#41", "other.cpuinfo_sve_prctl_failed", ["prctl(PR_SVE_GET_VL)"]),
    ("r32_c.yaml#69", "other.openblas_openmp_loop", ["`USE_OPENMP=1`", "`test_trace_save_load_copy`"]),
    ("r32_c.yaml#70", "other.ipex_cpu_isa_unsupported", ["AVX512 build", "does not support AVX512"]),
    ("r32_c.yaml#71", "other.ipex_cpu_isa_unsupported", ["need AVX2 or newer"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch 2.4.0's Arm Compute Library on a Raspberry Pi 4 (pytorch#97226), and 2.10's mimalloc in libc10 (hindsight#4142)
    ('Thread 1 "python3" received signal SIGILL, Illegal instruction.\n0x0000ffff3deff800 in '
     "std::string::_Rep::_M_dispose(std::allocator<char> const&) [clone .part.0] ()\n   from "
     "/usr/local/lib/python3.8/site-packages/torch/lib/../../torch.libs/libarm_compute-6cddc52f.so",
     "other.native_illegal_instruction", ["libarm_compute-6cddc52f.so", "ARMv8.0"]),
    ("Program received signal SIGILL, Illegal instruction.\n0x0000ffff6f660fec in _mi_options_init () from "
     "torch/lib/libc10.so", "other.native_illegal_instruction", ["`_mi_options_init`", "torch/lib/libc10.so", "mimalloc"]),
    # IPEX's minimal-ISA check as its source prints it (one space run), and the SystemExit of 1.10's AVX-512 binary
    ("ERROR! Intel® Extension for PyTorch* only works on machines with instruction sets equal or newer than AVX2, which "
     "are not detected on the current machine.", "other.ipex_cpu_isa_unsupported", ["AVX2"]),
    ("SystemExit: The extension binary is AVX512 while current machine does not support AVX512.",
     "other.ipex_cpu_isa_unsupported", ["AVX512"]),
    # cpuinfo's line alone (pytorch#139052), OpenBLAS's warning in a YOLOv5 run on a Jetson (yolov5#3603)
    ("Error in cpuinfo: prctl(PR_SVE_GET_VL) failed", "other.cpuinfo_sve_prctl_failed", ["SVE"]),
    ("Fusing layers... \nOpenBLAS Warning : Detect OpenMP Loop and this application may hang. Please rebuild the "
     "library with USE_OPENMP=1 option.", "other.openblas_openmp_loop", ["pthreads"]),
    # x86-64 relocations of a CUDA build's libtorch_cuda (csarofeen/pytorch#868) and of libc10 (pytorch#39968)
    ("crtstuff.c:(.text+0xb): relocation truncated to fit: R_X86_64_PC32 against symbol `__TMC_END__' defined in "
     ".nvFatBinSegment section in lib/libtorch_cuda.so", "other.link_relocation_truncated",
     ["R_X86_64_PC32", "`__TMC_END__`", "2 GiB"]),
    ("AffineGridGenerator.cpp:(.text+0x6c): relocation truncated to fit: R_X86_64_REX_GOTPCRELX against symbol "
     "`c10::UndefinedTensorImpl::_singleton' defined in .bss section in ../lib/libc10.so",
     "other.link_relocation_truncated", ["R_X86_64_REX_GOTPCRELX", "c10::UndefinedTensorImpl::_singleton"]),
    # s390x's ZVECTOR kernels (pytorch#112017), POWER's vec_base.h (pytorch#128130)
    ("/home1/ishizaki/PyTorch/main-lastest/aten/src/ATen/native/cpu/UnaryOpsKernel.cpp:405:60: error: ‘struct "
     "at::vec::ZVECTOR::Vectorized<c10::complex<float> >’ has no member named ‘atanh’; did you mean ‘atan’?",
     "other.torch_source_compile_error", ["UnaryOpsKernel.cpp:405:60", "has no member named"]),
    ("/home/manjulmohan/pytorch_may17/pytorch-3/aten/src/ATen/cpu/vec/vec_base.h:632:6: error: use of deleted function "
     "‘double& at::vec::DEFAULT::Vectorized<double>::operator[](int)’", "other.torch_source_compile_error",
     ["vec_base.h:632:6", "use of deleted function"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # another package's SIGILL at its import (onnx on a Jetson): not torch's
    (">>> import onnx\nIllegal instruction (core dumped)", "other.native_illegal_instruction"),
    # IPEX built for another torch release: its version check
    ("ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.2.*, but PyTorch 2.1.0+cu121 is found. Please "
     "switch to the matching version and run again.", "other.ipex_cpu_isa_unsupported"),
    # cpuinfo's sysfs complaint (pytorch/cpuinfo#76), and the SVE line with a Python error after it
    ("Error in cpuinfo: failed to parse the list of possible processors in /sys/devices/system/cpu/possible",
     "other.cpuinfo_sve_prctl_failed"),
    # OpenBLAS's NUM_THREADS warning on a 144-core Grace (pytorch#174373)
    ("OpenBLAS warning: precompiled NUM_THREADS exceeded, adding auxiliary array for thread metadata.",
     "other.openblas_openmp_loop"),
    # MXNet's own relocations (mxnet#17045)
    ("libmxnet.a(utils.cc.o): In function `mxnet::common::ExecuteMonInputCallback()':\nutils.cc:(.text+0xa5d): "
     "relocation truncated to fit: R_X86_64_PC32 against `.bss'", "other.link_relocation_truncated"),
    # an extension's or a LibTorch program's own file, not torch's source tree
    ("/root/ml/pytorch-cpp/tutorials/intermediate/convolutional_neural_network/src/main.cpp:106:12: error: "
     "'InferenceMode' is not a member of 'torch'", "other.torch_source_compile_error"),
    ("/usr/lib/python3/site-packages/torch/include/ATen/core/TensorBody.h:12:3: error: expected ';' before 'x'",
     "other.torch_source_compile_error"),
    # pip's resolver on another platform is a negative control (round 28's reading)
    ("torch-1.1.0-cp37-cp37m-linux_aarch64.whl is not a supported wheel on this platform.",
     "other.native_illegal_instruction"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_the_pip_wheel_platform_message_stays_unclaimed():
    assert claimed_by("torch-1.1.0-cp37-cp37m-linux_aarch64.whl is not a supported wheel on this platform.") == []
