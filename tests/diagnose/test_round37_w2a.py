"""Round-37 second wave, leftovers of rounds 33-37 in other, data, shape and autograd: each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (verbatim from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r37_b.yaml#33", "data.too_many_open_files",
     ["MapAllocator.cpp:243", "</torch_3348965_1934759801>"]),
    ("r36_a.yaml#10", "shape.state_dict_size",
     ["pos_embed", "torch.Size([1, 64, 64, 1280])", "torch.Size([1, 4, 4, 1280])"]),
    ("r34_b.yaml#28", "autograd.forward_grad_dtype_assert", ["autograd_meta.cpp:132", "UNKNOWN_SCALAR", "Float"]),
    ("r37_a.yaml#19", "other.fft_kernel_internal_assert",
     ["SpectralOps.cpp:464", "torch._fft_c2c", "out_size == signal_size[i + 1]"]),
    ("r34_b.yaml#60", "other.msvc_unhandled_c10_error", ["c10::Error", "ConsoleApplication1.exe"]),
    ("r36_a.yaml#68", "other.openslide_library_missing", ["libopenslide.so.0"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the shm assert of torch 1.10 (pytorch#75185, #67992)
    ('RuntimeError: falseINTERNAL ASSERT FAILED at "../aten/src/ATen/MapAllocator.cpp":263, please report a bug to '
     "PyTorch. unable to open shared memory object </torch_621231_0> in read-write mode", "data.too_many_open_files",
     ["MapAllocator.cpp:263", "</torch_621231_0>"]),
    ('RuntimeError: falseINTERNAL ASSERT FAILED at "/opt/conda/conda-bld/pytorch_1634272068185/work/aten/src/ATen/'
     'MapAllocator.cpp":263, please report a bug to PyTorch. unable to open shared memory object </torch_3888992_0> '
     "in read-write mode", "data.too_many_open_files", ["MapAllocator.cpp:263", "</torch_3888992_0>"]),
    # the same FFT assert from _fft_c2r (pytorch#124384)
    ("    torch._fft_c2r(input, dim, normalization, last_dim_size)\nRuntimeError: out_size == signal_size[i + 1] || "
     'out_size == (signal_size[i + 1] / 2) + 1 INTERNAL ASSERT FAILED at "../aten/src/ATen/native/mkl/SpectralOps.cpp"'
     ":464, please report a bug to PyTorch. ", "other.fft_kernel_internal_assert",
     ["torch._fft_c2r", "SpectralOps.cpp:464"]),
    # openslide-python's import on Linux (openslide-python#59) and its own wording on macOS (#27)
    ("    _lib = cdll.LoadLibrary('libopenslide.so.0')\n  File \"/usr/lib/python3.5/ctypes/__init__.py\", line 425, in "
     "LoadLibrary\n    return self._dlltype(name)\n  File \"/usr/lib/python3.5/ctypes/__init__.py\", line 347, in "
     "__init__\n    self._handle = _dlopen(self._name, mode)\nOSError: libopenslide.so.0: cannot open shared object "
     "file: No such file or directory", "other.openslide_library_missing", ["libopenslide.so.0"]),
    ("ImportError: Couldn't locate OpenSlide dylib.  Is OpenSlide installed?", "other.openslide_library_missing",
     ["dylib"]),
    # the English notice (pytorch#40024)
    ("Unhandled exception at 0x00007FFA5DDDA799 in example_app.exe: Microsoft C++ exception: c10::Error at memory "
     "location 0x00000033C53CF770.", "other.msvc_unhandled_c10_error", ["example_app.exe", "c10::Error"]),
    # another model's checkpoint, torch's own wording (WAFT#4)
    ("size mismatch for refine_net.pos_embed: copying a param with shape torch.Size([1, 64, 384]) from checkpoint, "
     "the shape in current model is torch.Size([1, 256, 384]).", "shape.state_dict_size",
     ["refine_net.pos_embed", "[1, 64, 384]", "[1, 256, 384]"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_private_fft_kernel_raised_live():
    assert_names(explain_fixture("fixtures/other/fft_private_op_assert.py"), "other.fft_kernel_internal_assert",
                 ["SpectralOps.cpp", "signal_size"])


@pytest.mark.parametrize("text, not_rule", [
    # the Windows MapAllocator assert is a mapping refused, not a descriptor limit (pytorch#71092)
    ('RuntimeError: falseINTERNAL ASSERT FAILED at "..\\\\aten\\\\src\\\\ATen\\\\MapAllocator.cpp":141, please report '
     "a bug to PyTorch. Couldn't map view of shared file <00000249EFE007A2>, error code: <5>",
     "data.too_many_open_files"),
    # the Chinese notice for another program's std::runtime_error (DEye#3)
    ("0x00007FFD2DAE50D8 处(位于 classifier.exe 中)有未经处理的异常: Microsoft C++ 异常: std::runtime_error，位于内存位置 "
     "0x0000000B29DDD040 处。", "other.msvc_unhandled_c10_error"),
    # another library's loader failure (HunyuanVideo-Avatar#21)
    ("OSError: cannot load library 'libsndfile.so': libsndfile.so: cannot open shared object file: No such file or "
     "directory", "other.openslide_library_missing"),
    # functorch's DynamicLayer assert (functorch#1103): neither the FFT nor the forward-grad rule
    ('RuntimeError: data.find(layerId) == data.end() INTERNAL ASSERT FAILED at "../aten/src/ATen/functorch/'
     'DynamicLayer.cpp":256, please report a bug to PyTorch. ', "other.fft_kernel_internal_assert"),
    ('RuntimeError: data.find(layerId) == data.end() INTERNAL ASSERT FAILED at "../aten/src/ATen/functorch/'
     'DynamicLayer.cpp":256, please report a bug to PyTorch. ', "autograd.forward_grad_dtype_assert"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_make_dual_integer_primal_is_not_the_set_fw_grad_assert():
    assert_left_alone("ValueError: Expected primal to be floating point or complex, but got: torch.int64",
                      "autograd.forward_grad_dtype_assert")
