"""A new user's review (2026-12-07), losses and lookups inside library frames: a regression loss is never told to
make its target a column; a culprit is the tensor the loss got (`targets.unsqueeze(1)`), not the variable behind it;
names that are a library's own locals say where they live; fixes are valid Python at the user's line. Each error is
raised for real here by a torch call."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import explainer
from conftest import raised


def _mse_of_class_scores_against_labels():
    preds = torch.randn(8, 3)
    y = torch.randint(0, 3, (8,))
    return F.mse_loss(preds, y.float(), reduction="none")


def test_a_regression_loss_never_suggests_a_target_column_but_one_hot_rows_or_cross_entropy():
    d = explainer.explain(raised(_mse_of_class_scores_against_labels))
    assert d.rule == "shape.broadcast"
    fixes = " ".join(d.fixes)
    assert "unsqueeze" not in fixes and "`y.float().view(" not in fixes, d.fixes
    assert "`F.one_hot(y, 3).float()` -> (8, 3)" in d.fixes[0] and "`F.cross_entropy(preds, y)`" in d.fixes[0], d.fixes
    assert "Do not make y.float() a column" in d.fixes[0]


def _cross_entropy_of_an_unsqueezed_target():
    logits = torch.randn(16, 4)
    targets = torch.randint(0, 4, (16,))
    return F.cross_entropy(logits, targets.unsqueeze(1))


def test_the_culprit_is_the_target_the_loss_got_named_as_written_with_its_own_shape():
    d = explainer.explain(raised(_cross_entropy_of_an_unsqueezed_target))
    assert d.rule == "shape.loss_target_dims"
    found = {c["name"]: c["shape"] for c in d.culprits}
    assert found.get("targets.unsqueeze(1)") == [16, 1] and "targets" not in found, found
    assert d.fixes[0] == "targets.unsqueeze(1) adds the dimension the loss refuses: pass `targets` itself, without " \
                         "`.unsqueeze`.", d.fixes
    assert "labels" not in " ".join(d.fixes)


LIBRARY = Path(__file__).resolve().parents[2] / "fixtures" / "shape" / "library" / "site-packages"


def _fakeformers():
    """fixtures/shape/library/site-packages/fakeformers.py: a library's Trainer and model (transformers' names)."""
    if str(LIBRARY) not in sys.path:
        sys.path.append(str(LIBRARY))
    import fakeformers

    return fakeformers


def _trainer_with_ids_past_the_vocabulary():
    lib = _fakeformers()
    model = lib.TinyModel(vocab_size=100)
    batches = [{"input_ids": torch.tensor([[5, 150], [7, 30100]]), "labels": torch.tensor([0, 1])}]
    trainer = lib.Trainer(model, batches)
    trainer.train()


def test_an_embedding_index_named_in_a_library_says_where_and_the_models_own_resize_comes_first():
    d = explainer.explain(raised(_trainer_with_ids_past_the_vocabulary))
    assert d.rule == "shape.embedding_index"
    ids = next(c for c in d.culprits if c["name"] == "input_ids")
    assert ids["note"] == "in fakeformers' `Embeddings.forward`", ids
    assert d.fixes[0].startswith("Size the embeddings to the tokenizer's vocabulary with the model's own method: "
                                 "`model.resize_token_embeddings(len(tokenizer))`"), d.fixes
    assert not any("nn.Embedding(30101" in fix for fix in d.fixes), d.fixes
    assert "the index tensor" not in " ".join(d.fixes)
    assert any("`assert input_ids.max() < model.embeddings.word_embeddings.num_embeddings` (`input_ids` as "
               "fakeformers' `Embeddings.forward` names it" in fix for fix in d.fixes), d.fixes


def _train(labels, **model_options):
    lib = _fakeformers()
    model = lib.TinyModel(**model_options)
    batches = [{"input_ids": torch.randint(0, 100, (4, 16)), "labels": labels}]
    lib.Trainer(model, batches).train()


def _names(diagnosis) -> dict:
    return {c["name"]: c.get("note") for c in diagnosis.culprits}


def test_float_labels_inside_a_library_are_named_where_they_live_and_converted_in_the_users_data():
    d = explainer.explain(raised(lambda: _train(torch.ones(4))))
    assert d.rule == "dtype.target_long"
    assert _names(d)["labels.view(-1)"] == "in fakeformers' `TinyModel.forward`", d.culprits
    assert "target" not in _names(d) and "input" not in _names(d), d.culprits
    assert d.fixes[0].startswith("Make `labels` int64 where your dataset or collator builds them"), d.fixes
    assert "target = target.long()" not in " ".join(d.fixes), d.fixes


def test_one_hot_labels_flattened_by_a_library_are_read_from_batch_times_classes():
    d = explainer.explain(raised(lambda: _train(F.one_hot(torch.tensor([0, 1, 2, 1]), 3))))
    assert d.rule == "shape.loss_batch_size"
    assert d.summary.startswith("In fakeformers' `TinyModel.forward`, "), d.summary
    assert d.fixes[0].startswith("12 = 4 x 3 (batch x classes): labels.view(-1) holds 3 values per sample, one-hot "
                                 "rows (4, 3)"), d.fixes
    assert "`labels.argmax(-1)`" in d.fixes[0]
    assert not any("flatten" in fix and "reshape(-1" in fix for fix in d.fixes), d.fixes


def test_one_label_per_sequence_for_per_token_scores_asks_for_one_label_per_token():
    d = explainer.explain(raised(lambda: _train(torch.tensor([0, 1, 2, 1]), token_level=True)))
    assert d.rule == "shape.loss_batch_size"
    assert d.fixes[0].startswith("64 = 4 x 16: the scores come from logits (4, 16, 3), one row per token"), d.fixes
    assert "shape (4, 16)" in d.fixes[0]
    assert not any("x.flatten(1)" in fix for fix in d.fixes), d.fixes


def _library_models_layer_given_too_many_features():
    model = _fakeformers().TinyModel(hidden_size=8)
    model.classifier(torch.randn(2, 5))


def _top_level_layer_given_too_many_features():
    fc = torch.nn.Linear(4, 2)
    fc(torch.randn(3, 5))


def test_a_layer_replacement_sends_the_user_to_the_init_only_when_the_user_wrote_it():
    library = explainer.explain(raised(_library_models_layer_given_too_many_features))
    assert library.rule == "shape.matmul"
    assert "`model.classifier = nn.Linear(5, 3)`. Do it right after the model is built (TinyModel (fakeformers): " \
           "its `__init__` is the library's, not yours)" in library.fixes[0], library.fixes
    top = explainer.explain(raised(_top_level_layer_given_too_many_features))
    assert "`fc = nn.Linear(5, 2)`. Do it where the layer is built," in top.fixes[0], top.fixes
    assert not any("__init__" in fix for fix in top.fixes), top.fixes


def _lookup_of_an_expression_past_the_table():
    emb = torch.nn.Embedding(10, 4)
    ids = torch.tensor([1, 2, 3])
    return emb(ids + 10)


def test_the_largest_id_check_is_valid_python_or_words_never_a_placeholder_in_code():
    d = explainer.explain(raised(_lookup_of_an_expression_past_the_table))
    assert d.rule == "shape.embedding_index"
    check = next(fix for fix in d.fixes if fix.startswith("Check the largest id"))
    assert "assert the index tensor" not in check, check
    assert check.startswith("Check the largest id before the lookup: the largest id in the index tensor must be below "
                            "`emb.num_embeddings`"), check
