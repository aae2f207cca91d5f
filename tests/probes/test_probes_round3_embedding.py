"""nn.Embedding's padding_idx and nn.EmbeddingBag's ids, offsets and per_sample_weights, by the user's names.
Each fixture raises the real torch error."""

from __future__ import annotations

import torch
from torch import nn

import explainer
from conftest import assert_names, explain_fixture, raised
from probe_helpers import culprit, has_fix


def test_padding_idx_names_the_vocabulary_size_and_the_padding_id():
    d = explain_fixture("fixtures/shape/embedding_padding_idx.py")
    assert_names(d, "shape.embedding_padding_idx", ["pad_id", "vocab_size", "3 rows", "4 rows"])
    assert (d.facts["num_embeddings"], d.facts["padding_idx"], d.facts["needed_embeddings"]) == (3, 3, 4)
    assert culprit(d, "pad_id")["repr"] == "3"
    assert has_fix(d, "`nn.Embedding(4, ...)`")


def test_padding_idx_of_an_embedding_bag_names_its_class():
    d = explainer.explain(raised(lambda: nn.EmbeddingBag(10, 4, padding_idx=-11)))
    assert d.rule == "shape.embedding_padding_idx"
    assert d.facts["layer"] == "nn.EmbeddingBag"
    assert "needed_embeddings" not in d.facts  # a negative id past the start: no bigger table fixes it


def test_embedding_bag_2d_ids_with_offsets_names_both():
    d = explain_fixture("fixtures/shape/embedding_bag_2d_offsets.py")
    assert d.rule == "shape.embedding_bag_input"
    culprit(d, "bag")
    assert culprit(d, "token_ids")["shape"] == [2, 3]
    assert culprit(d, "offsets")["shape"] == [2]
    assert has_fix(d, "`bag(token_ids)`")


def test_embedding_bag_weights_shape_names_the_weights():
    d = explain_fixture("fixtures/shape/embedding_bag_weights_shape.py")
    assert d.rule == "shape.embedding_bag_input"
    assert culprit(d, "weights")["shape"] == [6]
    assert "weights (per_sample_weights) has shape [6] but ids (the ids) has shape [5]" in d.summary


def test_embedding_bag_without_offsets_is_explained_from_the_message():
    bag = nn.EmbeddingBag(10, 4)
    d = explainer.explain(raised(lambda: bag(torch.randint(0, 10, (6,)))))
    assert d.rule == "shape.embedding_bag_input"
    assert "without offsets" in d.summary


def test_embedding_bag_double_weights_name_the_bag():
    bag = nn.EmbeddingBag(10, 4, mode="sum")
    ids, offsets = torch.tensor([1, 2, 3]), torch.tensor([0, 2])
    tfidf = torch.rand(3, dtype=torch.float64)
    d = explainer.explain(raised(lambda: bag(ids, offsets, per_sample_weights=tfidf)))
    assert d.rule == "dtype.argument_type_mismatch"
    assert culprit(d, "bag")["type"] == "EmbeddingBag"
    assert culprit(d, "tfidf")["dtype"] == "float64"
    assert has_fix(d, "`tfidf.to(bag.weight.dtype)`")
