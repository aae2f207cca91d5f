"""Round 18 `other` rules: deploying and building against torch. LibTorch C++ programs that do not link or compile
(undefined reference to `torch::jit::load`, 'load' is not a member of 'torch::jit'), GPTQ's exllama buffer, vLLM's
punica LoRA kernels, Windows' WinError 127 under torch.ops.load_library, torch_xla built for another torch, Lightning's
checked argument values, torch 0.3's THNN backend stub, nested tensors without an op, and three warnings (OpenMP's
Error #15 truncated, torchaudio's set_audio_backend, pytree's LeafSpec). Messages verbatim from the corpus and the
threads cited; the nested-tensor and pytree ones also raised live."""

from __future__ import annotations

import pytest

from explainer.rules.base import default_rulebase

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, rules_of

CORPUS = [
    ("r18_a.yaml#3", "other.libtorch_undefined_reference",
     ["`torch::jit::load`", "`myapp.cpp`", "`std::__cxx11::basic_string`"]),
    ("r18_a.yaml#4", "other.libtorch_not_a_member", ["`torch::jit::load`", "`<torch/script.h>`"]),
    ("r18_a.yaml#10", "other.gptq_exllama_buffer_too_small", ["2960 tokens", "max_input_length=2960"]),
    ("r18_a.yaml#13", "other.punica_no_suitable_kernel", ["h_in=16", "h_out=8960", "Float", "BFloat16"]),
    ("r18_b.yaml#12", "other.dll_load_failed", ["WinError 127", "torch/__init__.py:81"]),
    ("r18_b.yaml#13", "other.ops_load_library_failed",
     ["torch/_ops.py:643", "`torch_sparse`", "WinError 127", "undefined symbol"]),
    ("r18_b.yaml#30", "other.undefined_symbol", ["`_XLAC", "torch_xla", "`pytorch-1.9`"]),
    ("r18_b.yaml#45", "other.openmp_duplicate_runtime", ["`test_exponential_kstest`", "`libiomp5md.dll`"]),
    ("r18_b.yaml#47", "other.openmp_duplicate_runtime", ["`libiomp5md.dll`"]),
    ("r18_b.yaml#48", "other.native_illegal_instruction", ["`import torch` itself", "ARM board"]),
    ("r18_b.yaml#52", "other.lightning_argument_value", ["`tpu_cores`", "1, 8 or [<1-8>]"]),
    ("r18_b.yaml#89", "other.thnn_backend_removed", ["`ctx._backend", "torch/_thnn/utils.py:27"]),
    ("r16_b.yaml#43", "other.lightning_argument_value", ["`mode=None`", "min, max"]),
    ("r16_b.yaml#35", "other.torchaudio_set_audio_backend_deprecated",
     ["`__main__.py:9`", "`torchaudio._backend.set_audio_backend`(\"soundfile\")", "no-op"]),
    ("r16_b.yaml#79", "other.pytree_leafspec_deprecated", ["`copyreg.py:101`", "`LeafSpec`", "unpickling"]),
    ("r16_b.yaml#66", "other.nested_tensor_op_unsupported", ["`aten.avg_pool2d.default`", "nested_tensor.py:288"]),
    ("r17_b.yaml#79", "other.torchvision_module_version", ["`load_state_dict_from_url`", "`torch.hub"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # https://github.com/pytorch/pytorch/issues/39718: the paste lost the opening backtick
    ("undefined reference to torch::jit::load(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const&)'\ncollect2: error: ld returned 1 exit status",
     "other.libtorch_undefined_reference", ["`torch::jit::load`"]),
    # https://github.com/pytorch/pytorch/issues/13541
    ("error: undefined reference to `c10::Error::Error(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
     "const&, void const*)'", "other.libtorch_undefined_reference", ["`c10::Error::Error`", "old ABI"]),
    # https://github.com/prabhuomkar/pytorch-cpp/issues/96
    ("/root/ml/pytorch-cpp/tutorials/intermediate/convolutional_neural_network/src/main.cpp:106:12: error: "
     "'InferenceMode' is not a member of 'torch'", "other.libtorch_not_a_member",
     ["`torch::InferenceMode`", "src/main.cpp`, line 106", "libtorch 1.9"]),
    # https://github.com/WebODM/OpenSplat/issues/22
    ("OpenSplat/model.cpp:386:35: error: ‘to_string’ is not a member of ‘c10::guts’", "other.libtorch_not_a_member",
     ["`c10::guts::to_string`", "C++17"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NEW = {"other.libtorch_undefined_reference", "other.libtorch_not_a_member", "other.gptq_exllama_buffer_too_small",
       "other.punica_no_suitable_kernel", "other.lightning_argument_value", "other.thnn_backend_removed",
       "other.torchaudio_set_audio_backend_deprecated", "other.pytree_leafspec_deprecated",
       "other.nested_tensor_op_unsupported", "other.native_illegal_instruction", "other.openmp_duplicate_runtime"}


@pytest.mark.parametrize("text", [
    # libtorch's own references to a newer libstdc++ (https://github.com/pytorch/pytorch/issues/56576)
    "/data/username/workspace/torch_cxx_test/libtorch/lib/libtorch_cpu.so: undefined reference to `std::basic_ifstream"
    "<char, std::char_traits<char> >::basic_ifstream(std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> > const&, std::_Ios_Openmode)@GLIBCXX_3.4.21'",
    "utils.cpp:372:15: error: ‘numeric_limits’ is not a member of ‘std’",    # IEDMS/standard-bkt#3
    "RuntimeError: No available kernel.  Aborting execution.",             # SDPA, not punica
    "OMP: Error #13: Assertion failure at z_Linux_util.cpp(2361).",        # hszhao/semseg#16
    "ValueError: Found modules on cpu/disk. Using Exllama backend requires all the modules to be on GPU.You can "
    "deactivate exllama backend by setting `disable_exllama=True` in the quantization config objec",
])
def test_near_misses_are_not_claimed(text):
    assert not set(rules_of(text)) & NEW, (text, rules_of(text))


@pytest.mark.parametrize("where", [
    "r18_b.yaml#50",        # `import onnx` killed by SIGILL on a Jetson: onnx's wheel, not torch's
    "r11_b.yaml#26",        # onnxruntime's CUDA provider library (a control): still ONNX Runtime's, not claimed
    "r11_b.yaml#27",
])
def test_controls_stay_unexplained(where):
    assert set(rules_of(corpus(where))) <= {None}, rules_of(corpus(where))


def test_a_title_with_a_hash_is_not_cut_by_yaml():
    """The OpenMP rule's title names "OMP Error #15": unquoted, YAML read " #15..." as a comment."""
    assert "Error #15" in default_rulebase().by_id["other.openmp_duplicate_runtime"].title


def test_live_nested_tensor_op_without_kernel():
    diagnosis = explain_fixture("fixtures/other/nested_tensor_op_unsupported.py")
    assert_names(diagnosis, "other.nested_tensor_op_unsupported", ["`aten.avg_pool2d.default`", "jagged layout"])


def test_live_pytree_leafspec_warning_as_error():
    diagnosis = explain_fixture("fixtures/other/pytree_leafspec_deprecated.py")
    assert_names(diagnosis, "other.pytree_leafspec_deprecated", ["`LeafSpec`", "FutureWarning"])
