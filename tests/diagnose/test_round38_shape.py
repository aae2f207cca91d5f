"""Round-38 wordings for shape (sequence models, libraries that reach into a model, the tools around it): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r38_a.yaml#2", "shape.ctc_lengths", ["at least 12", "got size 8", "#2 'targets'", "ctc_loss_gpu"]),
    ("r38_a.yaml#19", "shape.attention_heads", ["dimension 1023", "heads 8"]),
    ("r38_a.yaml#27", "shape.rnn_hidden_contiguous", ["rnn: hx"]),
    ("r38_a.yaml#43", "shape.loss_batch_size", ["batch_size (8)", "batch_size (1024)", "lr_find"]),
    ("r38_a.yaml#46", "shape.rnn_input_rank", ["have 3 dimensions", "got 2"]),
    ("r38_a.yaml#47", "shape.rnn_input_rank", ["have 3 dimensions", "got 2"]),
    ("r38_b.yaml#42", "shape.captum_target", ["torch.Size([1, 1, 224, 224])"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # captum's target check on a multi-output regression model (captum#389) and a two-output GRU (captum#741)
    ("AssertionError: Tensor target dimension torch.Size([50, 20]) is not valid. torch.Size([50, 20])",
     "shape.captum_target", ["torch.Size([50, 20])"]),
    ("Tensor target dimension torch.Size([50, 2]) is not valid. torch.Size([50, 2])",
     "shape.captum_target", ["torch.Size([50, 2])"]),
    # nn.MultiheadAttention's own wording stays with the same rule (detr#499)
    ("AssertionError: embed_dim must be divisible by num_heads", "shape.attention_heads", ["num_heads"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # captum's check of an int target against a 1D output (captum#455): not a target tensor's shape
    ("AssertionError: Cannot choose target column with output shape torch.Size([100])", "shape.captum_target"),
    # ColossalAI's tensor-parallel split (ColossalAI#3043): not an attention head count
    ("AssertionError: 96 is not divisible by 64", "shape.attention_heads"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
