"""Round-34 wordings for shape, dtype, numerics and compile (VLM image tokens, LibTorch bindings, assert_close and SVD
reports cut or wrapped by a paste, Dynamo's recompile warning without its first line, fake tensors): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_c.yaml#3", "shape.vlm_image_tokens_mismatch", ["2005", "2695"]),
    ("r34_c.yaml#4", "shape.vlm_image_tokens_mismatch", ["tokens: 64", "4608"]),
    ("r34_c.yaml#5", "shape.vlm_image_tokens_mismatch", ["848", "847"]),
    ("r34_b.yaml#3", "compile.fake_impl_missing", ["aten.quantize_per_tensor.tensor_qparams", "DispatchKey.Meta"]),
    ("r34_b.yaml#86", "compile.fake_impl_missing", ["mynamespace::func", "test.py:13", "use_func"]),
    ("r34_b.yaml#9", "compile.triton_launcher_build", ["-lcuda", "exit status 1"]),
    ("r34_b.yaml#34", "shape.negative_dimension", ["dimension -2", "[-2, 34, 3, 3]"]),
    ("r34_b.yaml#70", "shape.pool_output_size", ["(512x4x1)", "(512x2x0)", "_max_pool2d"]),
    ("r34_b.yaml#36", "numerics.linalg_failed", ["linalg.svd", "error code: 12"]),
    ("r34_b.yaml#45", "dtype.quantized_compute_dtype", ["_weight_int4pack_mm_cpu", "float16 or bfloat16"]),
    ("r34_b.yaml#83", "numerics.assert_close_mismatch", ["369638", "1048576", "2.760780096054077", "(13, 23, 477)"]),
    ("r34_b.yaml#84", "shape.embedding_index", ["TensorAdvancedIndexing.cpp:1189", "index_select_out_cpu_"]),
    ("r34_c.yaml#55", "compile.recompile_limit", ["modeling_llama.py:318", "layer_idx == 0", "[9/8]"]),
    ("r34_b.yaml#63", "shape.onnxruntime_input_shape", ["float_input", "sklearn-onnx", "torch.onnx.export"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the newer transformers wording, with a comma and "features:" (LlamaFactory#10241), and no placeholder at all
    # (chandra#88)
    ("[qwen3.5] ValueError: Image features and image tokens do not match, tokens: 8422, features: 8779",
     "shape.vlm_image_tokens_mismatch", ["8422", "8779"]),
    ("error:ValueError: Image features and image tokens do not match, tokens: 0, features: 6030",
     "shape.vlm_image_tokens_mismatch", ["tokens: 0", "6030", "chat template"]),
    ("ValueError: Image features and image tokens do not match: tokens: 1333, features 1332.",
     "shape.vlm_image_tokens_mismatch", ["1333", "1332"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the tokenizer's length warning is another family (AffordanceNet#4)
    ("Token indices sequence length is longer than the specified maximum sequence length for this model (533 > 512). "
     "Running this sequence through the model will result in indexing errors", "shape.vlm_image_tokens_mismatch"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert not_rule not in claimed_by(text)
