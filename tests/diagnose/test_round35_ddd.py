"""Round-35 wordings for device, distributed, memory and data (graph neural networks and scientific ML, training
frameworks and experiment tooling, reinforcement learning with model compression): each corpus message (verbatim from
the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of
the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r35_a.yaml#48", "device.cuda_runtime_error", ["torch_scatter.scatter_max"]),
    ("r35_a.yaml#49", "device.extension_expects_cuda_tensor", ["scatter_max", "cuda/scatter.cpp:35"]),
    ("r35_a.yaml#71", "data.dgl_batch_schema_mismatch", ["(571,)", "(659,)", 'nodes["_N"]']),
    ("r35_b.yaml#12", "distributed.child_failed", ["exitcode: -9", "local_rank: 5", "SIGTERM"]),
    ("r35_b.yaml#25", "device.mismatch", ["cuda:0", "metrics.py:40"]),
    ("r35_b.yaml#26", "distributed.collective_tensor_device", ["sync_dist=True"]),
    ("r35_b.yaml#31", "data.lightning_weights_only_resume", ["ModelCheckpoint.save_weights_only"]),
    ("r35_b.yaml#40", "distributed.fsdp_non_root_is_root", ["_is_root"]),
    ("r35_b.yaml#45", "device.lightning_accelerator_unavailable", ["[0]", "only has: []"]),
    ("r35_b.yaml#47", "distributed.child_failed", ["process 3", "SIGSEGV", "xla_multiprocessing.py:296"]),
    ("r35_b.yaml#58", "distributed.nccl_error", ["ProcessGroupNCCL.cpp:784", "217", "transport/p2p.cc:238"]),
    ("r35_c.yaml#4", "device.device_assert", ["c10::CUDAError"]),
    ("r35_c.yaml#78", "device.backend_not_available", ["_C::ggml_dequantize", "torch_bindings.cpp:19"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # DGL's batch schema check with a dtype that differs (SessionRec-pytorch#1), DGL 0.4's wording (dgl#1831)
    ("dgl._ffi.base.DGLError: Expect all graphs to have the same schema on nodes[\"s2\"].data, but graph 1 got\n"
     "\t{'iid': Scheme(shape=(2,), dtype=torch.int32), 'last': Scheme(shape=(), dtype=torch.int32)}\n"
     "which is different from\n"
     "\t{'iid': Scheme(shape=(2,), dtype=torch.int64), 'last': Scheme(shape=(), dtype=torch.int32)}.",
     "data.dgl_batch_schema_mismatch", ['nodes["s2"]', "torch.int32", "torch.int64"]),
    ("ValueError: Expect graph 0 and 12 to have the same node attributes when node_attrs=ALL, got {'label'} and set().",
     "data.dgl_batch_schema_mismatch", ["{'label'}", "12"]),
    # Lightning 1.0-1.4's "training state" (bytedance/music_source_separation#20)
    ("KeyError: 'Trying to restore training state but checkpoint contains only the model. This is probably due to "
     "`ModelCheckpoint.save_weights_only` being set to `True`.'", "data.lightning_weights_only_resume",
     ["training state", "ModelCheckpoint.save_weights_only"]),
    # FSDP's assertion without backticks (LeapLabTHU/JustGRPO#1)
    ("[Bug] FSDP AssertionError: \"Non-root FSDP instance's _is_root should not have been set yet or should have been "
     "set to False\" during forward pass", "distributed.fsdp_non_root_is_root", ["_is_root"]),
    # the scatter extension's check with its op and place (pytorch_scatter#166 has none: still claimed)
    ("> RuntimeError: index.device().is_cuda() INTERNAL ASSERT FAILED at "
     "\"/home/travis/build/rusty1s/pytorch_scatter/csrc/cuda/scatter_cuda.cu\":63, please report a bug to PyTorch. "
     "index must be CUDA tensor", "device.extension_expects_cuda_tensor", ["scatter_cuda.cu:63"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # DGL's per-graph feature count (dgl#3165): data.dgl_feature_count's
    ("dgl._ffi.base.DGLError: Expect number of features to match number of nodes (len(u)). Got 18612081 and 18612080 "
     "instead.", "data.dgl_batch_schema_mismatch"),
    # transformers' Trainer resuming from a folder that is no checkpoint (GraphGPT#78)
    ("ValueError: Can't find a valid checkpoint at /data1/path/checkpoints/stage_2/checkpoint-50000",
     "data.lightning_weights_only_resume"),
    # FSDP's no_sync on an inner instance (pytorch#86336)
    ("`no_sync()` on inner FSDP instances is not supported. Please call `no_sync()` on root FSDP module.",
     "distributed.fsdp_non_root_is_root"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
