"""Round-38 shape wordings left by the first writer: an embedding's padding_idx read from pytest's locals, foolbox's
bare assert on its model's predictions, and tensorboardX's add_image handing PIL an image in another layout: each
corpus message (verbatim from the opened rounds) is claimed by the right rule with its values named, and near misses
stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r38_a.yaml#50", "shape.embedding_padding_idx",
     ["padding_idx = 58100", "num_embeddings = 99", "padding_idx < self.num_embeddings"]),
    ("r38_b.yaml#49", "shape.foolbox_predictions_shape",
     ["pytorch.py:70", "predictions.shape == (n, self.num_classes())"]),
    ("r38_c.yaml#23", "shape.tensorboard_image_layout_pil", ["((1, 1, 832), '|u1')", "trainnoaspp.py, line 512"]),
    ("r38_c.yaml#24", "shape.tensorboard_image_layout_pil", ["((1, 1, 1000), '|u1')", "train.py, line 310"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the embedding's assert alone, as most threads paste it (InternVL#179): still the padding_idx rule
    ("AssertionError: Padding_idx must be within num_embeddings", "shape.embedding_padding_idx", ["padding_idx"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # PIL's error for an array built by hand, no TensorBoard in sight (GANimation#113)
    ("TypeError: Cannot handle this data type", "shape.tensorboard_image_layout_pil"),
    # foolbox's check on one example's predictions (foolbox#253)
    ("line 309, in predictions\n    assert predictions.ndim == 1\nAssertionError", "shape.foolbox_predictions_shape"),
    # torchaudio's bare assert (VocGAN#11)
    ("  File \"/home/stuart/sagar/speech_analysis_synth/VocGAN/venv/lib/python3.6/site-packages/torchaudio/compliance/"
     "kaldi.py\", line 802, in resample_waveform\n    assert waveform.dim() == 2\nAssertionError",
     "shape.foolbox_predictions_shape"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
