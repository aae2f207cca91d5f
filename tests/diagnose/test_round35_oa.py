"""Round-35 wordings for other, part one (DGL and PyG libraries missing or mismatched, torchmetrics API changes): each
corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values
it holds named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r35_a.yaml#21", "other.dgl_graphbolt_missing", ["libdgl_sparse_pytorch_2.4.0.post301.so"]),
    ("r35_a.yaml#36", "other.pyg_optional_package_missing", ["NeighborSampler", "pyg-lib", "torch-sparse"]),
    ("r35_a.yaml#45", "other.dgl_cuda_not_enabled", ["c_runtime_api.cc:82", "Device API cuda"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # dgl.sparse's library for a torch this DGL was not built for (dgl#5442), on Windows (dgl#7873)
    ("FileNotFoundError: Cannot find DGL C++ sparse library at /root/miniconda3/envs/crime/lib/python3.8/site-packages/"
     "dgl/dgl_sparse/libdgl_sparse_pytorch_1.9.0.so", "other.dgl_graphbolt_missing", ["libdgl_sparse_pytorch_1.9.0.so"]),
    ("FileNotFoundError: Cannot find DGL C++ sparse library at D:\\Anaconda3\\envs\\pytorch\\Lib\\site-packages\\"
     "dgl-2.5-py3.12-win-amd64.egg\\dgl\\dgl_sparse\\dgl_sparse_pytorch_2.4.0.dll", "other.dgl_graphbolt_missing",
     ["dgl_sparse_pytorch_2.4.0.dll"]),
    # the sampler's wording without its traceback (pyg#9818)
    ("ImportError: 'NeighborSampler' requires either 'pyg-lib' or 'torch-sparse'", "other.pyg_optional_package_missing",
     ["NeighborSampler", "pyg-lib", "torch-sparse"]),
    # DGL <= 0.9 named the CUDA device "gpu" (GraphMAE#9)
    ("dgl._ffi.base.DGLError: [21:48:49] /opt/dgl/src/runtime/c_runtime_api.cc:88: Check failed: allow_missing: Device "
     "API gpu is not enabled. Please install the cuda version of dgl.", "other.dgl_cuda_not_enabled",
     ["c_runtime_api.cc:88", "Device API gpu"]),
    # torchmetrics 0.11's dispatchers (machine-learning-book#128; NLProofS#4 on Python < 3.10; the functional form,
    # pytorch-lightning#18256)
    ("TypeError: Accuracy.__new__() missing 1 required positional argument: 'task'", "other.torchmetrics_task_required",
     ["Accuracy", "task"]),
    ('  File "/content/NLProofS/verifier/model.py", line 32, in __init__\n    "accuracy": torchmetrics.Accuracy(threshold=0),'
     "\nTypeError: __new__() missing 1 required positional argument: 'task'", "other.torchmetrics_task_required",
     ["torchmetrics.Accuracy(threshold=0)"]),
    ("TypeError: accuracy() missing 1 required positional argument: 'task'", "other.torchmetrics_task_required",
     ["torchmetrics.functional.accuracy()"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # TVM's identical runtime check, not DGL's (tvm#604)
    ("TVMError: [11:28:52] E:\\Git_sources\\TVM\\tvm\\src\\runtime\\c_runtime_api.cc:83: Check failed: allow_missing "
     "Device API gpu is not enabled.", "other.dgl_cuda_not_enabled"),
    # a namedtuple's new field (the fixture's live message), not torchmetrics' task
    ("TypeError: RasterizationSettings.__new__() missing 1 required positional argument: 'antialiasing'",
     "other.torchmetrics_task_required"),
    # DGL's native library on Windows, not a per-torch library (dgl#3067)
    ("FileNotFoundError: Could not find module 'c:\\users\\ewindpeng\\appdata\\local\\programs\\python\\python38\\lib\\"
     "site-packages\\dgl\\dgl.dll' (or one of its dependencies). Try using the full path with constructor syntax.",
     "other.dgl_graphbolt_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
