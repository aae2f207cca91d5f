"""Round-36 wordings for shape and dtype (medical volumes, time-series windows, prompt embeddings, exported graphs,
old THC checks): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed too,
and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_a.yaml#1", "shape.broadcast", ["256", "16", "dense_embeddings"]),
    ("r36_a.yaml#2", "shape.broadcast", ["(4)", "(2)", "dense_prompt_embeddings"]),
    ("r36_a.yaml#15", "shape.cat_sizes", ["10", "modeling_informer.py:2023", "generate"]),
    ("r36_a.yaml#23", "shape.rnn_input_size", ["Expected 37", "got 38"]),
    ("r36_a.yaml#47", "shape.torchio_subject_shapes", ["(1, 4, 5, 6)", "(2, 4, 5, 6)"]),
    ("r36_a.yaml#48", "shape.torchio_subject_shapes", ["inconsistent shapes"]),
    ("r36_a.yaml#53", "dtype.mps_unsupported_dtype", ["float64", "float32"]),
    ("r36_a.yaml#86", "shape.metric_input_shape", ["torch.Size([32, 100, 1])"]),
    ("r36_a.yaml#89", "shape.instancenorm_spatial_one", ["torch.Size([4, 768, 1, 1, 1])"]),
    ("r36_c.yaml#13", "shape.token_grid_size", ["7x7", "swin_transformer.py:314"]),
    ("r36_c.yaml#64", "shape.expected_rank_legacy", ["invalid argument 7", "expected 3D tensor", "THCTensorMathBlas.cu:457"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # TorchIO's later wording with spatial shapes (torchio#354) and the old one with its dict (torchio#215)
    ("RuntimeError: More than one spatial_shape found in subject images:\n{'0': (429, 429, 593), 'label': (512, 512, 237)}",
     "shape.torchio_subject_shapes", ["spatial_shape", "(429, 429, 593)", "(512, 512, 237)"]),
    ("ValueError: Images in sample have inconsistent shapes:\n{'Image': (1, 3, 4041, 2817), 'Mask': (1, 7, 4041, 2817)}",
     "shape.torchio_subject_shapes", ["(1, 3, 4041, 2817)", "(1, 7, 4041, 2817)"]),
    # InstanceNorm's check on 2-D and 1-D inputs (Attr2Font#22, SuperGlue-pytorch#31)
    ("ValueError: Expected more than 1 spatial element when training, got input size torch.Size([32, 165, 1, 1])",
     "shape.instancenorm_spatial_one", ["torch.Size([32, 165, 1, 1])"]),
    ("ValueError: Expected more than 1 spatial element when training, got input size torch.Size([1, 32, 1])",
     "shape.instancenorm_spatial_one", ["torch.Size([1, 32, 1])"]),
    # the MPS float64 check on one line (the rule's own wording)
    ("TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
     "Please use float32 instead.", "dtype.mps_unsupported_dtype", ["float64", "float32"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_instancenorm_fixture_is_claimed():
    from conftest import raise_fixture

    error = raise_fixture("fixtures/shape/instancenorm_spatial_one.py")
    assert_names(explain_paste(f"{type(error).__name__}: {error}"), "shape.instancenorm_spatial_one",
                 ["torch.Size([2, 8, 1, 1, 1])"])


@pytest.mark.parametrize("text, not_rule", [
    # BatchNorm's batch-of-one check (CCT#47): shape.batchnorm_batch_one's, not InstanceNorm's
    ("ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 512, 1, 1])",
     "shape.instancenorm_spatial_one"),
    # TorchIO's Resize rounding report (torchio#1023): not a subject's images compared
    ('For a subject with ["img", "mask"], resized image shape is (320, 320, 112) but mask shape is (320, 320, 113)',
     "shape.torchio_subject_shapes"),
    # THC's rank check for matrices (meProp#3): another wording, not the 3D one of bmm
    ("RuntimeError: 2D tensors expected, got 1D, 2D tensors at /pytorch/aten/src/THC/generic/THCTensorMathBlas.cu:258",
     "shape.expected_rank_legacy"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
