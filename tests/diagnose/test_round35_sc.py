"""Round-35 wordings for shape, dtype and numerics (graph and scientific ML, training frameworks, reinforcement
learning): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule
with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r35_a.yaml#4", "dtype.not_implemented", ["Long", "spspmm_sum"]),
    ("r35_a.yaml#13", "shape.cat_sizes", ["4390", "3804", "THTensor.cpp:689"]),
    ("r35_a.yaml#43", "dtype.torchdiffeq_floating", ["`y0`", "torch.LongTensor", "misc.py:106"]),
    ("r35_a.yaml#61", "dtype.pyg_edge_index_long", ["torch.long", "torch.int32"]),
    ("r35_b.yaml#6", "shape.metric_input_shape", ["stat_scores.py:180"]),
    ("r35_b.yaml#61", "numerics.distribution_invalid", ["loc", "Real()", "AddmmBackward0"]),
    ("r35_b.yaml#66", "numerics.loss_nan_log", ["training_step", "None", "loss=nan"]),
    ("r35_c.yaml#35", "shape.tensordict_batch_size", ["torch.Size([1])", "torch.Size([])"]),
    ("r35_c.yaml#36", "shape.tensordict_batch_size", ["torch.Size([128])", "torch.Size([3, 512])"]),
    ("r35_c.yaml#37", "shape.tensordict_batch_size", ["self.batch_size=[]", "torch.float64"]),
    ("r35_c.yaml#38", "shape.tensordict_batch_size", ["update_batch_size", "minari_data.py:466", "base.py:6735"]),
    ("r35_c.yaml#54", "shape.matmul", ["62016", "2816"]),
    ("r35_c.yaml#84", "numerics.cholesky_not_pd", ["27464"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # MessagePassing's newer wording of the edge_index check (pyg-team/pytorch_geometric#6211)
    ("ValueError: Expected 'edge_index' to be of type 'torch.long' (got 'torch.float32')",
     "dtype.pyg_edge_index_long", ["edge_index", "torch.float32"]),
    # the unwrapped Cholesky message (DIPP#6)
    ("torch._C._LinAlgError: torch.linalg_cholesky: (Batch element 11): The factorization could not be completed because "
     "the input is not positive-definite (the leading minor of order 48 is not positive-definite).",
     "numerics.cholesky_not_pd", ["Batch element 11", "48"]),
    # the m1/m2 wording without the space before the bracket (its existing example)
    ("RuntimeError: size mismatch, m1: [64 x 3200], m2: [800 x 500] at /pytorch/aten/src/TH/generic/THTensorMath.cpp:940",
     "shape.matmul", ["3200", "800"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # an edge_index that is not a tensor at all (Shen-Lab/GraphCL#53): not a dtype of edge_index
    ("ValueError: `MessagePassing.propagate` only supports `torch.LongTensor` of shape `[2, num_messages]` or "
     "`torch_sparse.SparseTensor` for argument `edge_index`.", "dtype.pyg_edge_index_long"),
    # a singular matrix given to an LU-based inverse (nanguoshun/LSR#22): not a Cholesky factorisation
    ("RuntimeError: inverse_cuda: For batch 24: U(68,68) is zero, singular U.", "numerics.cholesky_not_pd"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
