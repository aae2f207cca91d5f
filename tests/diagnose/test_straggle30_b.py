"""Straggler sweep 30 (b) for data, autograd and other: corpus messages whose rule answered without naming every
value now name them (a dotted class default_collate found, the C++ accessor of libtorch's non-leaf .grad warning,
transformers' use_cache notice beside the use_reentrant warning, the pin-memory thread's own frame, Python's
'partially initialized module' wording of a missing compiled _C); other wordings of the same families are claimed too,
and near misses keep their answers."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r24_a.yaml#116", "data.default_collate_type", ["torchio.data.dataset.SubjectsDataset", "a Dataset object"]),
    ("r20_b.yaml#85", "autograd.nonleaf_grad_access", ["(function grad)", "C++"]),
    ("r20_a.yaml#48", "autograd.checkpoint_use_reentrant", ["use_reentrant", "`use_cache=True`"]),
    ("r22_b.yaml#64", "data.pin_memory_thread", ["device 0", "pin_memory.py:37 in do_one_step"]),
    ("r24_b.yaml#8", "other.extension_module_missing", ["name '_C'", "diff_gaussian_rasterization", "circular import"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # a dotted class without <class '...'> (torchio#566) and with it (mtp-go#2, mmdetection#10952)
    ("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "torchio.data.dataset.SubjectsDataset", "data.default_collate_type", ["torchio.data.dataset.SubjectsDataset"]),
    ("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "<class 'torch_geometric.data.data.Data'>", "data.default_collate_type", ["torch_geometric.data.data.Data"]),
    ("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "<class 'mmdet.structures.det_data_sample.DetDataSample'>", "data.default_collate_type",
     ["mmdet.structures.det_data_sample.DetDataSample"]),
    # the Python-side spelling of the non-leaf warning keeps its own summary (ByteTrackInference#2)
    ("Warning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
     "populated during autograd.backward(). (Triggered internally at aten/src/ATen/core/TensorBody.h:486.)",
     "autograd.nonleaf_grad_access", ["not a leaf Tensor (the result of an operation"]),
    # the _ext of another package, partially initialized too
    ("ImportError: cannot import name '_ext' from partially initialized module 'pointnet2' (most likely due to a "
     "circular import) (/src/pointnet2/__init__.py)", "other.extension_module_missing", ["name '_ext'", "pointnet2"]),
    # the pin-memory thread's loop of torch 1.x
    ("RuntimeError: Caught RuntimeError in pin memory thread for device 0.\nOriginal Traceback (most recent call last):\n"
     '  File "/usr/lib/python3.8/site-packages/torch/utils/data/_utils/pin_memory.py", line 31, in _pin_memory_loop\n'
     "    data = pin_memory(data, device)\n", "data.pin_memory_thread", ["pin_memory.py:31 in _pin_memory_loop"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_numpy_dtypes_stay_dtypes():
    # GYXGY/Anomaly-Detection#3: the NumPy dtype 'object', not a class
    d = explain_paste("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                      "found object")
    assert d.rule == "data.default_collate_type" and "dtype object" in d.summary
    d = explain_paste("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                      "found <U14")
    assert "array of strings" in d.summary


def test_use_cache_notice_alone_is_not_claimed_by_the_checkpoint_rule():
    assert "autograd.checkpoint_use_reentrant" not in claimed_by(
        "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.")


def test_circular_import_of_a_python_name_is_not_a_missing_extension():
    assert "other.extension_module_missing" not in claimed_by(
        "ImportError: cannot import name 'Trainer' from partially initialized module 'mylib' (most likely due to a "
        "circular import) (/src/mylib/__init__.py)")
