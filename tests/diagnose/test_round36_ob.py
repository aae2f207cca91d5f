"""Round-36 wordings for `other`, part two (deploying PyTorch: libtorch links on macOS, iOS and Windows; CV repositories'
extension builds and imports): each corpus message (verbatim from the opened rounds) is claimed, from its text alone,
by the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_b.yaml#48", "other.libtorch_link_unresolved_symbols", ["libtorch.so", "torch::jit::load", "x86_64"]),
    ("r36_b.yaml#49", "other.libtorch_link_unresolved_symbols", ["torch::jit::Object::find_method", "TorchModule.o"]),
    ("r36_b.yaml#50", "other.libtorch_link_unresolved_symbols",
     ["libc10.so", "macOS-arm64", "c10::UndefinedTensorImpl::_singleton"]),
    ("r36_b.yaml#51", "other.libtorch_link_unresolved_symbols", ["c10::AutogradMetaInterface"]),
    ("r36_b.yaml#52", "other.libtorch_link_unresolved_symbols",
     ["_OBJC_CLASS_$_TorchModule", "_OBJC_CLASS_$_Tensor", "x86_64"]),
    ("r36_b.yaml#53", "other.libtorch_link_unresolved_symbols", ["LNK2019", "c10::TensorOptions::type_set", "Source.obj"]),
    ("r36_b.yaml#54", "other.libtorch_link_unresolved_symbols", ["LNK2019", "c10::UndefinedTensorImpl::_singleton"]),
    ("r36_b.yaml#55", "other.libtorch_link_unresolved_symbols",
     ["LNK1120", "at::cuda::warp_size", "_torch_cuda_cu_linker_symbol_op_cuda"]),
    ("r36_c.yaml#35", "other.extension_build_header_missing", ["cuda_runtime_api.h"]),
    ("r36_c.yaml#50", "other.call_signature_mismatch", ["ImageModelDescriptor.__call__()", "argument 'w'"]),
    ("r36_c.yaml#54", "other.extension_module_missing",
     ["MultiScaleDeformableAttention", "mask2former/modeling/pixel_decoder/ops"]),
    ("r36_c.yaml#59", "other.path_argument_type", ["NoneType", "os.PathLike"]),
    ("r36_c.yaml#91", "other.build_isolation_no_torch", ["'torch'", "build editable", "exit code: 1"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # ExecuTorch's custom-ops build on an M-series Mac against the pip torch (executorch#3797)
    ("  Undefined symbols for architecture arm64:\n    \"c10::throwNullDataPtrError()\", referenced from:\n"
     "        void* c10::TensorImpl::data_impl<void, c10::TensorImpl::mutable_data()::'lambda'()>(c10::TensorImpl::"
     "mutable_data()::'lambda'() const&) const in op_sdpa_aot.cpp.o", "other.libtorch_link_unresolved_symbols",
     ["c10::throwNullDataPtrError", "op_sdpa_aot.cpp.o", "arm64"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # Apple ld on a symbol of torch's old C sources, not LibTorch's C++ API (pytorch#1872)
    ("Undefined symbols for architecture x86_64:\n  \"_state\", referenced from:\n"
     "      _THDTensorDescriptor_newFromTHCudaDoubleTensor in TensorDescriptor.cpp.o",
     "other.libtorch_link_unresolved_symbols"),
    # a bare missing torch, no build box around it (flash-attention#1920)
    ("ModuleNotFoundError: No module named 'torch'", "other.build_isolation_no_torch"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
