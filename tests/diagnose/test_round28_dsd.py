"""Round-28 wordings for data, shape, distributed, dtype and numerics (macOS, Windows and CPU-only users, torch 0.3-1.9):
each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values
it holds named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r28_a.yaml#40", "data.worker_killed", ["16184, 7428", "exited unexpectedly"]),
    ("r28_b.yaml#16", "data.unpickle_class_missing", ["_rebuild_tensor", "torch.load", "newer PyTorch"]),
    ("r28_b.yaml#39", "data.too_many_open_files", ["shared memory object", "/torch_175312_2031012121"]),
    ("r28_b.yaml#74", "data.checkpoint_corrupt", ["4254413747647032608", "1024", "mask1_model_resnet101.pth"]),
    ("r28_a.yaml#14", "distributed.store_connect_failed", ["29995", "10049", "socket.cpp:558"]),
    ("r28_a.yaml#38", "dtype.mps_unsupported_dtype", ["ComplexFloat", "getMPSDataType", "OperationUtils.mm:124"]),
    ("r28_a.yaml#43", "shape.mps_adaptive_pool_divisible", ["Adaptive pool MPS", "not implemented on MPS"]),
    ("r28_a.yaml#44", "shape.mps_adaptive_pool_divisible", ["Adaptive pool MPS"]),
    ("r28_a.yaml#59", "distributed.distributed_not_built", ["torch.distributed", "init_process_group"]),
    ("r28_b.yaml#2", "shape.matmul", ["1x8192", "2048x256", "torch.addmm"]),
    ("r28_b.yaml#65", "distributed.rendezvous_timeout",
     ["world_size=1", "rank=1", "_tcp_rendezvous_handler", "rendezvous.py:120"]),
    ("r28_b.yaml#66", "distributed.rendezvous_timeout", ["_create_c10d_store", "rendezvous.py:154"]),
    ("r28_b.yaml#78", "numerics.loss_nan_log", ["nan", "759.924", "822.332"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    d = explain_paste(corpus_message(where))
    assert_names(d, rule, values, said(d))


@pytest.mark.parametrize("text, rule, values", [
    # Python 2's and Python 3's wordings of a checkpoint saved by a newer torch (espnet#296, pytorch#15375)
    ("  File \"/espnet/tools/venv/local/lib/python2.7/site-packages/torch/serialization.py\", line 420, in _load\n"
     "    result = unpickler.load()\nAttributeError: 'module' object has no attribute '_rebuild_tensor_v2'",
     "data.unpickle_class_missing", ["_rebuild_tensor_v2", "PyTorch 0.4"]),
    ("AttributeError: Can't get attribute '_rebuild_parameter' on <module 'torch._utils' from "
     "'/opt/conda/lib/python3.6/site-packages/torch/_utils.py'>", "data.unpickle_class_missing", ["_rebuild_parameter"]),
    # torch.distributed without its API (maskrcnn-benchmark#257, conda-forge pytorch-cpu-feedstock#46)
    ("AttributeError: module 'torch.distributed' has no attribute 'is_initialized'",
     "distributed.distributed_not_built", ["is_initialized"]),
    ("from torch.distributed import ReduceOp\nImportError: cannot import name 'ReduceOp'",
     "distributed.distributed_not_built", ["ReduceOp"]),
    # the client socket warning with its reason on the same line (PiPPy#158)
    ("[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:29500 "
     "(errno: 99 - Cannot assign requested address).", "distributed.store_connect_failed", ["29500", "errno: 99"]),
    # the legacy linear's other line (input.matmul(weight.t())) in a plain traceback (pytorch#5135)
    (corpus_message("r23_b.yaml#32"), "shape.matmul", ["input.matmul(weight.t())", "THCTensorMathBlas.cu:247"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    d = explain_paste(text)
    assert_names(d, rule, values, said(d))


@pytest.mark.parametrize("text, not_rule", [
    # a name newer than the installed torch: an old version, not a build without distributed (apex#1529)
    ("AttributeError: module 'torch.distributed' has no attribute '_all_gather_base'",
     "distributed.distributed_not_built"),
    ("AttributeError: module 'torch.distributed' has no attribute 'all_gather_into_tensor'",
     "distributed.distributed_not_built"),
    # Python 2's wording for another module's missing attribute
    ("AttributeError: 'module' object has no attribute 'SummaryWriter'", "data.unpickle_class_missing"),
    # a bare socket timeout with no TCPStore in sight
    ("RuntimeError: connect() timed out.", "distributed.rendezvous_timeout"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_loss_log_without_finite_lines_before_says_nothing_of_a_trend():
    # an excerpt of r28_b.yaml#78: the start of its first line with a nan loss, alone
    d = explain_paste("epoch: 0, step: 160, loss: nan, bbox_loss: nan")
    assert d.rule == "numerics.loss_nan_log"
    assert "just before it logged" not in d.summary


def test_libtorch_spelling_of_the_embedding_index_error():
    d = explain_paste(corpus_message("r28_b.yaml#70"))
    assert_names(d, "shape.embedding_index", ["TensorAdvancedIndexing.cpp:448", "index_select_out_cpu_"])
