"""Round-38 wordings for other (sequence layers, libraries around autograd, tools around a model): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
other wordings of the same families (from the threads cited) are claimed too."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r38_a.yaml#18", "other.transformer_encoder_nested_tensor_warning", ["enable_nested_tensor", "encoder_layer.norm_first"]),
    ("r38_b.yaml#18", "other.argument_type", ["mul()", "numpy.ndarray"]),
    ("r38_b.yaml#25", "other.module_call_arguments", ["params", "replica 0"]),
    ("r38_b.yaml#41", "other.gradcam_target_layers_not_iterable", ["LayerNorm", "activations_and_gradients.py:11"]),
    ("r38_b.yaml#54", "other.optimizer_param_no_grad_legacy", ["doesn't require gradients"]),
    ("r38_c.yaml#17", "other.path_argument_type", ["hub_utils.py:56", "NoneType"]),
    ("r38_c.yaml#25", "other.add_hparams_value_type", ["summary.py:97", "str"]),
    ("r38_c.yaml#26", "other.add_hparams_value_type", ["summary.py:319", "add_hparams"]),
    ("r38_c.yaml#44", "other.module_call_arguments", ["argument: 'x'"]),
    ("r38_c.yaml#57", "other.register_buffer_attribute_exists", ["blah", "register_buffer"]),
    ("r38_c.yaml#58", "other.register_buffer_attribute_exists", ["mem_bias"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # nn.Transformer() with its default batch_first=False (pytorch#137173)
    ("UserWarning: enable_nested_tensor is True, but self.use_nested_tensor is False because "
     "encoder_layer.self_attn.batch_first was not True(use batch_first for better inference performance)",
     "other.transformer_encoder_nested_tensor_warning", ["batch_first"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)
