"""Sweep 27, `other`: NumPy 2's notice about a module built against NumPy 1.x (without torch in sight), a strided
nested tensor asked for its sizes or strides, setuptools' bare "command 'gcc' failed" line, a standalone libtorch
shadowing the Python package's (undefined symbol), "takes exactly N arguments (M given)" (C functions, Python 2),
static TLS exhausted at import, a spawned child that cannot rebuild its parent's lock, and a LibTorch app not linked
with pthread, and a native crash in torch's libraries as gdb or AddressSanitizer prints it. Messages verbatim from the corpus and the threads cited; the nested tensor and the argument count are
also raised here by real calls."""

from __future__ import annotations

import io

import pytest
import torch

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised

CORPUS = [
    ("r23_a.yaml#7", "other.numpy2_module_notice", ["NumPy 2.0.2", "NumPy 1.x", "downgrade to 'numpy<2'"]),
    ("r24_a.yaml#37", "other.numpy2_module_notice", ["NumPy 2.2.3", "'pybind11>=2.12'", "'numpy<2'"]),
    ("r26_a.yaml#18", "other.nested_tensor_no_sizes", ["doesn't support sizes", "`self.shape`", "`len(nt)`"]),
    ("r26_a.yaml#19", "other.nested_tensor_no_sizes", ["doesn't support strides", "`.stride()`"]),
    ("r26_b.yaml#23", "other.compiler_command_failed", ["`gcc`", "exit status 1", "first `error:`"]),
    ("r26_b.yaml#24", "other.compiler_command_failed", ["`gcc`", "exit status 1"]),
    ("r26_a.yaml#21", "other.undefined_symbol", ["`/usr/local/lib/libtorch.so`", "`cpuinfo_isa`", "outside the Python"]),
    ("r26_a.yaml#23", "other.undefined_symbol", ["`/home/weixuan/Documents/Code/libtorch/lib/libtorch_python.so`",
                                                 "`PyThread_tss_alloc`", "Python C API"]),
    ("r15_a.yaml#29", "other.argument_count_given", ["`encode()` takes at most 2 arguments (3 given)"]),
    ("r22_a.yaml#92", "other.argument_count_given", ["takes exactly 1 argument (3 given)", "implemented in C"]),
    ("r25_a.yaml#63", "other.static_tls_exhausted", ["cannot load any more object with static TLS", "import order"]),
    ("r26_a.yaml#16", "other.mp_semlock_rebuild_missing", ["`_multiprocessing.SemLock._rebuild`", "[Errno 2]"]),
    ("r26_a.yaml#2", "other.cpp_pthread_not_linked", ["`std::system_error`", "`Unknown error -1`", "pthread"]),
    ("r26_a.yaml#51", "other.native_crash_backtrace", ["`exec_blas`", "`libtorch_cpu.so`", "`sgemm_thread_nn`", "BLAS"]),
    ("r26_a.yaml#53", "other.native_crash_backtrace", ["SIGFPE", "`_GLOBAL__sub_I_jit_avx512_common_conv_kernel.cpp`",
                                                       "`libmkldnn.so.0`", "oneDNN"]),
    ("r26_a.yaml#55", "other.native_crash_backtrace", ["`AddressSanitizer: FPE`", "`check_shape_forward`",
                                                       "`Convolution.cpp:678`", "`Convolution.cpp:742`"]),
    ("r26_a.yaml#78", "other.native_crash_backtrace", ["`mkldnn_primitive_desc_create_v2`", "0x00007fb2939ae30a"]),
    ("r25_a.yaml#62", "other.native_heap_corruption", ["0x00007fe6609eab80", "`libshm.so`", "_M_install_facet"]),
    ("r25_a.yaml#4", "other.extension_not_compiled_gpu", ["Not compiled with GPU support"]),
    ("r26_b.yaml#46", "other.empty_optimizer", ["empty parameter list"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # torch's bundled libgomp on a Jetson (https://github.com/NVIDIA-AI-IOT/ros2_torch_trt/issues/2)
    (".local/lib/python3.8/site-packages/torch/lib/libgomp-d22c30c5.so.1: cannot allocate memory in static TLS block",
     "other.static_tls_exhausted", ["`.local/lib/python3.8/site-packages/torch/lib/libgomp-d22c30c5.so.1`", "libgomp"]),
    # the system libgomp that torch loads (https://github.com/NVIDIA-AI-IOT/trt_pose/issues/111)
    ("OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
     "other.static_tls_exhausted", ["`/usr/lib/aarch64-linux-gnu/libgomp.so.1`"]),
    # the raising frame's call named (https://github.com/learnables/learn2learn/issues/100)
    ("  File \"/Software/Python3/miniconda3/envs/torch-1.4/lib/python3.7/site-packages/PIL/Image.py\", line 2544, in new\n"
     "    return im._new(core.fill(mode, size, color))\nTypeError: function takes exactly 1 argument (3 given)",
     "other.argument_count_given", ["`im._new(core.fill(mode, size, color))`", "takes exactly 1 argument (3 given)"]),
    # Debian's compiler name (https://github.com/Tramac/awesome-semantic-segmentation-pytorch/issues/22)
    ("error: command 'x86_64-linux-gnu-gcc' failed with exit status 1", "other.compiler_command_failed",
     ["`x86_64-linux-gnu-gcc`", "exit status 1"]),
    # full-width colon and curly quotes (https://github.com/Gorilla-Lab-SCUT/AffordanceNet/issues/4)
    ("error：command ‘gcc’ failed with exit status 1", "other.compiler_command_failed", ["`gcc`"]),
    # distutils' LinkError (https://github.com/longcw/RoIAlign.pytorch/issues/51)
    ("LinkError: command 'gcc' failed with exit status 1", "other.compiler_command_failed", ["`gcc`"]),
    # an old DataLoader re-raising a worker's UnicodeDecodeError (https://github.com/whai362/PSENet/issues/119)
    ("  File \"/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 357, in _process_next_batch\n"
     "    raise batch.exc_type(batch.exc_msg)\nTypeError: function takes exactly 5 arguments (1 given)",
     "other.argument_count_given", ["`batch.exc_type(batch.exc_msg)`", "exactly 5 arguments (1 given)", "UnicodeDecodeError"]),
    # Python 2's wording for a Python function (https://github.com/pytorch/pytorch/issues/897)
    ("TypeError: forward() takes exactly 2 arguments (3 given)", "other.argument_count_given",
     ["`forward()` takes exactly 2 arguments (3 given)"]),
    # the fbcode spelling of the nested tensor check (pytorch's test/test_nestedtensor.py)
    ("RuntimeError: Tensors of type NestedTensorImpl do not have sizes", "other.nested_tensor_no_sizes",
     ["doesn't support sizes", "`.shape`"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_other_wordings(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NOT_CLAIMED = [
    # the linker's own error above setuptools' line: a corpus control (https://github.com/JPaulMora/Pyrit/issues/213)
    ("/usr/bin/ld: cannot find -lcuda\ncollect2: ld returned 1 exit status\nerror: command 'gcc' failed with exit status 1",
     "other.compiler_command_failed"),
    # nvcc is not the host compiler (https://github.com/WillSuen/LostGANs/issues/1)
    ("error: command '/usr/bin/nvcc' failed with exit status 1", "other.compiler_command_failed"),
    # Python 3's wording for a Python function (https://github.com/eric8607242/SGNAS/issues/4)
    ("TypeError: forward() takes 3 positional arguments but 4 were given", "other.argument_count_given"),
    # TorchScript's schema check (https://github.com/jma712/GEAR/issues/1)
    ("RuntimeError: scatter_mean() expected at most 5 argument(s) but received 6 argument(s)", "other.argument_count_given"),
    # the thread limit, not a missing pthread (https://github.com/RasaHQ/rasa/issues/5997)
    ("terminate called after throwing an instance of 'std::system_error'\n  what():  Resource temporarily unavailable",
     "other.cpp_pthread_not_linked"),
    # a data file missing, not a semaphore (https://github.com/zdzdliu/PPGArrhythmiaDetection/issues/3)
    ("FileNotFoundError: [Errno 2] No such file or directory: 'train_list.txt'", "other.mp_semlock_rebuild_missing"),
    # torch's own NumPy warning is other.numpy_incompatible's (https://github.com/xai4space/meteors/issues/20)
    ("UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
     "../torch/csrc/utils/tensor_numpy.cpp:84.)", "other.numpy2_module_notice"),
    # gdb at SIGILL is other.native_illegal_instruction's (https://github.com/pytorch/pytorch/issues/22338)
    ("Thread 1 \"python\" received signal SIGILL, Illegal instruction.\n0x00007fffa8ec2486 in THFloatVector_normal_fill_AVX2 () "
     "from /U01/anaconda3/envs/pyt1/lib/python3.7/site-packages/torch/lib/libcaffe2.so", "other.native_crash_backtrace"),
    # sparse CSR tensors have no strides either: other.sparse_layout_unsupported
    ("RuntimeError: Sparse CSR tensors do not have strides", "other.nested_tensor_no_sizes"),
]


@pytest.mark.parametrize(("text", "rule"), NOT_CLAIMED, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NOT_CLAIMED)])
def test_near_misses_are_left_to_others(text, rule):
    assert all(d.rule != rule for d in explain_stream(io.StringIO(text))), text


def test_numpy_notice_with_torch_in_the_traceback_stays_numpy_incompatible():
    # the rule that reads torch's import in the traceback keeps answering it (r15_b#71: torch/__init__.py below)
    assert explain_paste(corpus("r15_b.yaml#71")).rule == "other.numpy_incompatible"


def test_nested_tensor_len_live():
    diagnosis = explain_fixture("fixtures/other/nested_tensor_len.py")
    assert_names(diagnosis, "other.nested_tensor_no_sizes", ["doesn't support sizes", "`Tensor.__len__`"])


def test_nested_tensor_stride_live():
    nested = torch.nested.nested_tensor([torch.zeros(2, 3), torch.zeros(4, 3)])
    diagnosis = explainer.explain(raised(lambda: nested.stride()))
    assert_names(diagnosis, "other.nested_tensor_no_sizes", ["doesn't support strides", "(it has no single stride list)"])


def test_argument_count_live():
    # the wording of r15_a#29, raised by a real C function (str.encode takes encoding and errors)
    diagnosis = explainer.explain(raised(lambda: "text".encode("utf-8", "strict", 3)))
    assert_names(diagnosis, "other.argument_count_given", ["`encode()` takes at most 2 arguments (3 given)"])
