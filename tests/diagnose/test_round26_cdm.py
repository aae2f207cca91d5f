"""Round-26 wordings for compile, device and memory (PyTorch's own tracker: TorchScript in libtorch, ROCm's MIOpen, gdb
backtraces, the caching allocator; and older rounds' stragglers): each corpus message (verbatim from the opened rounds)
is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed. Live fixtures raise the errors this CPU torch
can."""

from __future__ import annotations

import re

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r26_a.yaml#1", "compile.torchscript_builtin_attribute",
     ["torch::jit::script::ErrorReport", "`torch.mul_`", "size_prods_8 = torch.mul_(size_prods_7, _10)"]),
    ("r26_b.yaml#73", "compile.torchscript_attribute_cast",
     ["`arch_opt`", "__torch__.modules.ArchitectureOptions", "`rgb`", "`Tensor`"]),
    ("r26_b.yaml#59", "compile.fx_trace_control_flow", ["`torch.jit.trace`", "torch.compile"]),
    ("r26_a.yaml#56", "memory.invalid_device_pointer_free",
     ["0x7ff443ffdc00", "CUDACachingAllocator.cpp:844", "raw_delete"]),
    ("r26_a.yaml#45", "device.miopen_db_warning",
     ["[FindWinogradSolutions]", "/MIOpen/src/sqlite_db.cpp:109", "memvfs"]),
    ("r26_a.yaml#46", "device.miopen_error",
     ["MIOpenDropoutHIP.cpp", "HIPRTC_ERROR_COMPILATION (6)", "'rocrand/rocrand_xorwow.h'", "(rocrand)"]),
    ("r26_a.yaml#52", "device.cuda_native_segfault_gdb",
     ["SIGSEGV", "thread 16", "at::cuda::getCurrentCUDABlasHandle()", "libtorch_cuda_cu.so", "cuBLAS"]),
    ("r26_a.yaml#65", "device.cuda_forked_subprocess", ["started by fork", "CUDA context"]),
    ("r26_a.yaml#11", "device.packed_lengths_device", ["not a 1D CPU int64 tensor", "set_default_tensor_type"]),
    ("r26_b.yaml#35", "device.mismatch", ["backend CPU", "backend CUDA", "#3 `index`"]),
    ("r25_a.yaml#40", "device.input_weight_type", ["torch.FloatTensor", "torch.cuda.FloatTensor"]),
    ("r26_a.yaml#5", "device.cufft_error", ["CUFFT_INVALID_PLAN", "at::native::_fft_cufft"]),
    ("r26_a.yaml#24", "device.cudnn_status", ["CUDNN_STATUS_NOT_SUPPORTED", "at::native::cudnn_convolution_backward_input"]),
    ("r24_a.yaml#120", "device.tensorrt_driver_error", ["`builder.build_cuda_engine()`", "Driver error"]),
    ("r26_b.yaml#42", "device.no_cuda_build", ["AssertionError", "Torch not compiled with CUDA enabled"]),
    ("r25_a.yaml#26", "device.no_cuda_build", ["AssertionError", "Torch not compiled with CUDA enabled"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the caching allocator's free on ROCm (pytorch#134208), and the line alone
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  invalid device pointer: 0x6712000\n"
     "Exception raised from free at /pytorch/c10/hip/HIPCachingAllocator.cpp:3150 (most recent call first):",
     "memory.invalid_device_pointer_free", ["0x6712000", "HIPCachingAllocator.cpp:3150"]),
    ("  what():  invalid device pointer: 0x4c44000", "memory.invalid_device_pointer_free", ["0x4c44000"]),
    # gdb's other CUDA crashes: in the driver (pytorch#122308), the runtime (pytorch#24983), torch's CUDA init inside
    # libtorch.so (pytorch#23820)
    ('Thread 1 "demo" received signal SIGSEGV, Segmentation fault.\n0x00007ffedfb264a0 in ?? () from '
     "/lib/x86_64-linux-gnu/libcuda.so.1", "device.cuda_native_segfault_gdb", ["libcuda.so.1", "CUDA driver"]),
    ('Thread 1 "python" received signal SIGSEGV, Segmentation fault.\n0x00007fffc36857d8 in ?? () from '
     "/usr/local/cuda/lib64/libcudart.so.10.1", "device.cuda_native_segfault_gdb", ["libcudart.so.10.1"]),
    ("Program received signal SIGSEGV, Segmentation fault.\n0x00002aaac0642803 in at::cuda::detail::CUDAHooks::initCUDA() "
     "const () from /cluster/home/mikhailu/.local/lib/python3.7/site-packages/torch/lib/libtorch.so",
     "device.cuda_native_segfault_gdb", ["CUDAHooks::initCUDA", "libtorch.so"]),
    # MIOpen's database warnings of another release (MIOpen#1994) and the system database (pytorch-gpu-benchmark#19)
    ("MIOpen(HIP): Warning [ForwardBackwardDataGetWorkSpaceSizeWinograd] /MIOpen/src/sqlite_db.cpp:108: open memvfs: "
     "unable to open database file", "device.miopen_db_warning", ["sqlite_db.cpp:108", "memvfs"]),
    ("MIOpen(HIP): Warning [SQLiteBase] Unable to read system database file:/opt/rocm/miopen/share/miopen/db/gfx900_64.kdb "
     "Performance may degrade", "device.miopen_db_warning", ["/opt/rocm/miopen/share/miopen/db/gfx900_64.kdb", "[SQLiteBase]"]),
    # TensorRT's builder of the later API (tensorrt_demos#342)
    ('Traceback (most recent call last):\n  File "onnx_to_tensorrt.py", line 156, in build_engine\n'
     "    engine = builder.build_engine(network, config)\nRuntimeError: Driver error: ", "device.tensorrt_driver_error",
     ["`builder.build_engine()`"]),
    # the markdown-bold quote of the backend wording, and the rich-wrapped input/weight wording
    ("**Expected object of backend CPU but got backend CUDA for argument #3 'index**'", "device.mismatch", ["`index`"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a bare "Driver error" with no builder call above it says nothing (torch2trt#477's last line alone)
    ("RuntimeError: Driver error: ", "device.tensorrt_driver_error"),
    # a CUDA runtime status, not the allocator's own check (FastPhotoStyle#98)
    ("RuntimeError: CUDA error: invalid device pointer", "memory.invalid_device_pointer_free"),
    # gdb's other signals in CPU code stay with the native-crash rules (pytorch#37577)
    ("Program received signal SIGILL, Illegal instruction.\n0x00007fffe9076f17 in _GLOBAL__sub_I_BinaryOpsKernel.cpp.AVX2.cpp ()\n"
     "   from /home/j/src/pytorch/torch/lib/libtorch_cpu.so", "device.cuda_native_segfault_gdb"),
    # the attribute lookup on a Python value is torchscript_unsupported's (pytorch#36910)
    ("RuntimeError: \nattribute lookup is not defined on python value of type 'bk':\n  File \"\", line 6\n@torch.jit.script\n"
     "def f(a):\n    return backend.bkd.trace(a)\n           ~~~~~~~~~~~~~~~~~ <--- HERE", "compile.torchscript_builtin_attribute"),
    # pybind11's bare cast failure (no attribute named) stays with torchscript_cast_error (pytorch#6073)
    ("RuntimeError: Unable to cast Python instance to C++ type (compile in debug mode for details)",
     "compile.torchscript_attribute_cast"),
    # torch >= 1.7's lengths wording on the CPU with a 2-D tensor is a shape error
    ("RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor",
     "device.packed_lengths_device"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_miopen_error_still_leads_when_its_database_warning_is_printed_above():
    diagnosis = explain_paste(corpus_message("r18_b.yaml#25"))
    assert diagnosis.rule == "device.miopen_error", diagnosis.rule


def test_live_jit_trace_of_a_compiled_function():
    diagnosis = explain_fixture("fixtures/compile/jit_trace_compiled.py")
    assert_names(diagnosis, "compile.fx_trace_control_flow", ["`torch.jit.trace`", "torch.compile"])


def test_live_attribute_lookup_on_a_builtin():
    diagnosis = explain_fixture("fixtures/compile/torchscript_builtin_attribute.py")
    assert_names(diagnosis, "compile.torchscript_builtin_attribute", ["`return torch.mul.out(x, x)`"])


def test_live_scripted_class_field_of_another_type():
    diagnosis = explain_fixture("fixtures/compile/torchscript_attribute_cast.py")
    assert_names(diagnosis, "compile.torchscript_attribute_cast", ["`opt`", "`rgb`", "`Tensor`",
                                                                   "Unable to cast True to Tensor"])
    # the class as TorchScript names it: mangled where the process compiled a `__main__.Options` before (another test
    # running the same fixture)
    assert re.search(r"__torch__\.(?:___torch_mangle_\d+\.)?Options\b", diagnosis.summary), diagnosis.summary
