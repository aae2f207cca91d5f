"""Round-34 wordings of `other`, part B continued (PyTorch's own tracker and 3D vision): a sparse tensor given to an op
of torch 0.4-1.2 that takes only dense ones (one family in two releases' wordings, other.sparse_layout_unsupported), torch
0.3's THC contiguity check under the user's pasted line, and an interactive session that crashed after a native
package was imported before torch. Each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with its values named; other wordings from the threads cited are claimed too, and near misses
stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_b.yaml#91", "other.sparse_layout_unsupported", ["torch.FloatTensor", "torch.sparse.FloatTensor", "`mat2`"]),
    ("r34_b.yaml#90", "other.sparse_layout_unsupported", ["CPU", "SparseCPU", "`mat2`", "not a device mismatch"]),
    ("r21_a.yaml#47", "other.sparse_layout_unsupported", ["torch.sparse.FloatTensor", "addmm"]),
    ("r34_b.yaml#51", "other.input_not_contiguous", ["THCTensor.c:227", "output[:,[1,3]]", ".view("]),
    ("r34_a.yaml#43", "other.native_segfault",
     ["import open3d", "torch.nn.functional.linear", "Segmentation fault"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the backend wording on the GPU (pytorch#12498, a comment of 2019)
    ("RuntimeError: Expected object of backend CUDA but got backend SparseCUDA for argument #2 'mat2'",
     "other.sparse_layout_unsupported", ["SparseCUDA", "`mat2`", "torch.sparse.mm"]),
    # torch 0.3's TH check, the rule's older example (a blog's paste): no code line above it, none named
    ("RuntimeError: input is not contiguous", "other.input_not_contiguous", ["`input`"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # two dense tensors on two devices (ssd.pytorch#323, SAGPool#3): device.mismatch's, not the sparse rule's
    ("RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #2 "
     "'other'", "other.sparse_layout_unsupported"),
    ("RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'",
     "other.sparse_layout_unsupported"),
    # two dtypes on one device (pytorch#13050): not sparse
    ("RuntimeError: Expected object of type torch.cuda.LongTensor but found type torch.cuda.FloatTensor for argument "
     "#2 'other'", "other.sparse_layout_unsupported"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_the_backend_wording_of_two_devices_stays_device_mismatch():
    assert_names(explain_paste("RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'"),
                 "device.mismatch", ["`mat2`"])
