"""Round-34 wordings for building and loading native extensions (3D vision and rendering repositories, PyTorch's own
tracker): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with
the values it holds named; near misses stay unclaimed by the new rules."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_a.yaml#36", "other.extension_build_failed", ["simple_knn.cu(90)", "simple_knn.cu(154)", "FLT_MAX", "<cfloat>"]),
    ("r34_a.yaml#53", "other.extension_build_failed", ["['ninja', '-v', '-j', '10']"]),
    ("r34_b.yaml#11", "other.extension_build_failed", ["compute_70", "caffe2_gpu_generated_THCSleep.cu.o"]),
    ("r34_a.yaml#37", "other.extension_module_missing", ["`_C` from `pytorch3d`", "GenPose-main/pytorch3d/__init__.py"]),
    ("r34_b.yaml#59", "other.libtorch_undefined_reference",
     ["c10::Error::Error(c10::SourceLocation, std::string const&)", "infer_test.cpp", "_GLIBCXX_USE_CXX11_ABI"]),
    ("r34_a.yaml#39", "other.extension_cxx_standard_too_old", ["boxing.h:229", "std::is_same_v", "C++17"]),
    ("r34_a.yaml#52", "other.extension_cxx_standard_too_old", ["C++14", "ATen"]),
    ("r34_a.yaml#19", "other.extension_build_header_missing", ["cusolverDn.h", "/usr/bin/gcc", "CUDA_HOME"]),
    ("r34_a.yaml#51", "other.extension_build_header_missing",
     ["glm/glm.hpp", "helpers.cuh:2:23", "bindings.cu:4:0", "third_party/glm"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text", [
    # torch's own header missing: other.extension_torch_header_missing's (FOTS.PyTorch#89)
    "rroi_align_kernel.cu:1:10: fatal error: torch/extension.h: No such file or directory\n"
    "    1 | #include <torch/extension.h>",
    # the removed THC header: other.extension_build_failed's (snake#244)
    "D:\\PythonProject\\snake-master\\lib\\csrc\\extreme_utils\\src\\nms.cu(5): fatal error C1083: 无法打开包括文件: "
    "“THC/THC.h”: No such file or directory",
])
def test_near_misses_are_not_claimed_by_the_new_rules(text):
    assert_left_alone(text, "other.extension_build_header_missing")
    assert_left_alone(text, "other.extension_cxx_standard_too_old")
    assert claimed_by(text)[0] in ("other.extension_torch_header_missing", "other.extension_build_failed")
