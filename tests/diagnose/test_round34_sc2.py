"""Round-34 wordings for shape, dtype and numerics (3D code, quantization, LLM tooling), second writer: each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too.
The live fixture raises the error this CPU torch can."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r34_a.yaml#71", "shape.einsum_operands", ["'bl,mkl->bmk'", "operand 1", "dim 2"]),
    ("r34_a.yaml#34", "shape.shape_unpack_count", ["unbind(dim=-1)", "expected 2, got 0"]),
    ("r34_a.yaml#11", "shape.pytorch3d_input_shape", ["lengths", "(N,)", "chamfer_distance"]),
    ("r34_a.yaml#40", "shape.pytorch3d_input_shape", ["Textures do not match the dimensions of Meshes"]),
    ("r34_c.yaml#7", "dtype.flash_attn_dtype", ["Phi3ForCausalLM", "Phi3Model", "torch.float32"]),
    ("r34_b.yaml#6", "dtype.quantize_float_input", ["torch.quantize_per_tensor", "Float", "Double"]),
    ("r34_a.yaml#25", "numerics.loss_nan_stop", ["fine_rgb_loss, color_range_reg, rgb_loss, total_loss"]),
    ("r34_a.yaml#26", "numerics.loss_nan_stop", ["loss render is NaN", "summarize_loss"]),
    ("r34_c.yaml#43", "numerics.awq_scale_search_nan", ["_compute_best_scale", "quantizer.py:409"]),
    ("r34_c.yaml#44", "numerics.awq_scale_search_nan",
     ["torch.isnan(w).sum() == 0", "pseudo_quantize_tensor", "quantizer.py:79"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # transformers' warning naming another model class (profam#364), and its ValueError of 4.36 (transformers#28052)
    ("Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes, but the current dype in "
     "WrappedLlamaForCausalLM is torch.float32. You should run training or inference using Automatic Mixed-Precision "
     "via the `with torch.autocast(device_type='torch_device'):` decorator, or load the model with the `torch_dtype` "
     "argument. Example: `model = AutoModel.from_pretrained(\"openai/whisper-tiny\", "
     "attn_implementation=\"flash_attention_2\", torch_dtype=torch.float16)`",
     "dtype.flash_attn_dtype", ["WrappedLlamaForCausalLM", "torch.float32"]),
    ("ValueError: Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes. You passed torch.float32, "
     "this might lead to unexpected behaviour.", "dtype.flash_attn_dtype", ["torch.float32", "from_pretrained"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_quantize_fixture_is_explained_live():
    assert_names(explain_fixture("fixtures/dtype/quantize_float_input.py"), "dtype.quantize_float_input",
                 ["Double", "Float", "torch.quantize_per_tensor"])
