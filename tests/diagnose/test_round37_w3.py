"""Round-37 third wave (leftovers of rounds 34-37 in other and data): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same
families (from the threads cited in the rules) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_b.yaml#2", "other.unknown_tensor_type_id", ["QuantizedCPUTensorId", "TensorOptions.h:586"]),
    ("r34_b.yaml#12", "other.cmake_unknown_cuda_arch",
     ["2.1(2.0)", "CUDA_SELECT_NVCC_ARCH_FLAGS", "select_compute_arch.cmake:142"]),
    ("r34_b.yaml#57", "other.libtorch_set_data_variable_assert",
     ["!is_variable()", "TensorImpl.h:927", "Darknet::load_weights"]),
    ("r36_b.yaml#8", "data.stream_reader_close_failed", ["inline_container.cc:137", "PyTorchStreamReader::valid"]),
    ("r37_a.yaml#14", "other.pytorch_fft_not_implemented",
     ["pytorch_fft", 'fft.py", line 25', 'CompactBilinearPooling.py", line 91']),
    ("r37_b.yaml#87", "data.metatensor_index_not_in_dataset", ["Index 30"]),
    ("r37_b.yaml#90", "data.wids_tar_member_name_not_utf8", ["0x92", 'wids_mmtar.py", line 58', 'wids.py", line 515']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # CMake's wording for a suffixed architecture (pytorch#113948) and from CMake 4.1's own module (nixpkgs#536525)
    ("-- Autodetected CUDA architecture(s): 3.5;5.0;8.0;8.6;8.9;9.0;9.0a\n"
     "CMake Error at cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake:225 (message):\n"
     "  Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS",
     "other.cmake_unknown_cuda_arch", ["9.0a", "select_compute_arch.cmake:225", "3.5;5.0;8.0;8.6;8.9;9.0;9.0a"]),
    ("CMake Error at /nix/store/k1b82rs72af124wmq6nb00nhw5i7ikp7-cmake-4.1.2/share/cmake-4.1/Modules/FindCUDA/"
     "select_compute_arch.cmake:245 (message):\n  Unknown CUDA Architecture Name 10.0 in CUDA_SELECT_NVCC_ARCH_FLAGS\n"
     "Call Stack (most recent call first):\n  CMakeLists.txt:541 (cuda_select_nvcc_arch_flags)",
     "other.cmake_unknown_cuda_arch", ["10.0", "select_compute_arch.cmake:245"]),
    # Torch7's copy of the file, autodetecting nothing (cutorch#450)
    ("-- Autodetected CUDA architecture(s): \n"
     "CMake Error at /home/bb/torch/install/share/cmake/torch/FindCUDA/select_compute_arch.cmake:142 (message):\n"
     "  Unknown CUDA Architecture Name 2.1(2.0) in CUDA_SELECT_NVCC_ARCH_FLAGS",
     "other.cmake_unknown_cuda_arch", ["2.1(2.0)", "Fermi"]),
    # the same assert as "ASSERT FAILED" in LibTorch 1.1.0 (libtorch-yolov3#21)
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  !is_variable() ASSERT FAILED at "
     "/pytorch/c10/core/TensorImpl.h:922, please report a bug to PyTorch. (shallow_copy_and_detach at "
     "/pytorch/c10/core/TensorImpl.h:922)\n"
     "frame #0: std::function<std::string ()>::operator()() const + 0x11 (0x7efc2cd3f441 in "
     "/home/youyi/Documents/packages/libtorch/lib/libc10.so)\n"
     "frame #1: c10::Error::Error(c10::SourceLocation, std::string const&) + 0x2a (0x7efc2cd3ed7a in "
     "/home/youyi/Documents/packages/libtorch/lib/libc10.so)\n"
     "frame #2: <unknown function> + 0x95063d (0x7efc2d8a863d in /home/youyi/Documents/packages/libtorch/lib/libtorch.so.1)\n"
     "frame #3: torch::autograd::Variable::Impl::set_data(at::Tensor const&) + 0x268 (0x7efc2d8a4b58 in "
     "/home/youyi/Documents/packages/libtorch/lib/libtorch.so.1)\n"
     "frame #4: at::Tensor::set_data(at::Tensor) + 0x61 (0x564f2799e459 in ./yolo-app)\n"
     "frame #5: Darknet::load_weights(char const*) + 0x816 (0x564f279980c0 in ./yolo-app)",
     "other.libtorch_set_data_variable_assert", ["TensorImpl.h:922", "Darknet::load_weights"]),
    # metatensor-learn iterated past its end (metatensor#499)
    ("`>>> ValueError: Index 3 not in dataset`", "data.metatensor_index_not_in_dataset", ["Index 3"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # torch.utils.cpp_extension's own arch check (DCNv2#143): not CMake's
    ("ValueError: Unknown CUDA arch (8.9) or GPU not supported", "other.cmake_unknown_cuda_arch"),
    # torch 0.4's own bare NotImplementedError under code written for torch 0.2 (zihangdai/mos#7), not pytorch_fft's
    ('Traceback (most recent call last):\n  File "/Users/TONY/Downloads/mos-master/model.py", line 131, in <module>\n'
     "    model(input, hidden)\n"
     '  File "/Users/TONY/anaconda/lib/python3.6/site-packages/torch/nn/modules/module.py", line 491, in __call__\n'
     "    result = self.forward(*input, **kwargs)\n"
     '  File "/Users/TONY/Downloads/mos-master/model.py", line 71, in forward\n'
     "    emb = embedded_dropout(self.encoder, input, dropout=self.dropoute if self.training else 0)\n"
     '  File "/Users/TONY/Downloads/mos-master/embed_regularize.py", line 19, in embedded_dropout\n'
     "    X = embed._backend.Embedding.apply(words, masked_embed_weight,\n"
     '  File "/Users/TONY/anaconda/lib/python3.6/site-packages/torch/nn/backends/backend.py", line 10, in __getattr__\n'
     "    raise NotImplementedError\nNotImplementedError", "other.pytorch_fft_not_implemented"),
    # another internal assert in a LibTorch app (libtorch-yolov5#21)
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  isTuple() INTERNAL ASSERT FAILED at "
     '"/dxd/libtorch-yolov5/libtorch/include/ATen/core/ivalue_inl.h":842, please report a bug to PyTorch. Expected '
     "Tuple but got GenericList", "other.libtorch_set_data_variable_assert"),
    # a missing record reported as such (FunASR#2078), and an archive that cannot be opened (P3M#13)
    ("RuntimeError: PytorchStreamReader failed locating file data/2: file not found", "data.stream_reader_close_failed"),
    ("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory,",
     "data.stream_reader_close_failed"),
    # another reader's UnicodeDecodeError (faceswap#1316)
    ("UnicodeDecodeError: 'cp950' codec can't decode byte 0x83 in position 52: illegal multibyte sequence",
     "data.wids_tar_member_name_not_utf8"),
    # a quantized tensor's other internal assert (pytorch#121230)
    ('RuntimeError: false INTERNAL ASSERT FAILED at "../aten/src/ATen/quantized/Quantizer.cpp":444, please report a '
     "bug to PyTorch. cannot call qscheme on UnknownQuantizer", "other.unknown_tensor_type_id"),
    # numpy's index error in another dataset library (deeplake#1286)
    ("IndexError: index 1 is out of bounds for axis 0 with size 1", "data.metatensor_index_not_in_dataset"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
