"""Round-15 wordings for autograd, numerics, dtype and shape: each corpus message (verbatim from the opened rounds)
or pasted message (verbatim from the thread it cites) is claimed, from its text alone, by the right rule with the
values it holds named; near misses stay unclaimed; the wordings torch 2.13 still raises (a tensor escaped from vmap,
an attention mask of another floating dtype) are explained live."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised

CORPUS_CASES = [
    # autograd
    ("r14_a.yaml#38", "autograd.leaf_inplace", ["leaf Variable that requires grad", "modified in place"]),
    ("r15_b.yaml#84", "autograd.vmap_escaped_tensor",
     ["`maybe_layer.has_value()`", "VmapGeneratedPlumbing.h:10652", "escaped from inside a function being vmapped"]),
    # numerics
    ("r15_a.yaml#70", "numerics.nan_probabilities", ["`inf`, `nan`", "element < 0"]),
    ("r15_b.yaml#57", "numerics.amp_overflow_skip",
     ["0.00048828125", "0.000244140625", "epoch 2", "gnorm 55.005", "loss_scale 0"]),
    ("r15_b.yaml#59", "numerics.loss_nan_stop", ["iteration=27", "loss_cls (nan on cuda:1)"]),
    # dtype
    ("r15_a.yaml#27", "dtype.legacy_mixed_operands", ["expected dtype Float but got dtype Half", "on CUDA"]),
    ("r15_a.yaml#28", "dtype.matmul_mixed", ["scalar type Half", "scalar type Float for argument #4 'mat1'"]),
    ("r15_a.yaml#56", "dtype.sdpa_dtype",
     ["attn_mask.dtype: float and query.dtype: struct c10::BFloat16", "refuses a float32 mask",
      "newer releases also accept float32"]),
    ("r15_a.yaml#57", "dtype.sdpa_dtype", ["attn_mask.dtype: float and query.dtype: double"]),
    ("r15_a.yaml#58", "dtype.sdpa_dtype", ["attn_mask.dtype: float and query.dtype: c10::BFloat16"]),
    # shape
    ("r15_a.yaml#21", "shape.set_module_tensor_shape",
     ['torch.Size([3072, 32, 2, 2]) in "weight"', "torch.Size([3072, 33, 2, 2])", "describe different models"]),
    ("r15_a.yaml#22", "shape.set_module_tensor_shape",
     ["torch.Size([3072, 128])", "torch.Size([3072, 16, 2, 2])", "a 2-D tensor where the model has a 4-D one"]),
    ("r15_a.yaml#32", "shape.einops_pattern",
     ["torch.Size([1, 16, 96, 173])", "axis of length 173 in chunks of 2", "{'ph': 2, 'pw': 2}"]),
    ("r15_a.yaml#34", "shape.kornia_same_shape",
     ["input torch.Size([4, 7, 256, 360])", "only the first of the two shapes", "(7 channels)",
      "`input.argmax(dim=1)`"]),
    ("r15_a.yaml#39", "shape.cat_sizes", ["expected size 4", "got size 2 for tensor number 1", "dimension 1"]),
    ("r15_a.yaml#75", "shape.pyg_edge_index", ["size 4287 in dimension 0", "size 2708 was expected"]),
    ("r15_b.yaml#81", "shape.conv_input_rank",
     ["[64, 3, 7, 7]", "4-dimensional input", "[2, 10, 3, 320, 320]"]),
    ("r15_b.yaml#82", "shape.view_size", ["[21, 64]", "input of size 21"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


PASTED_CASES = [
    # accelerate before 0.21 said "this look incorrect"
    ('ValueError: Trying to set a tensor of shape torch.Size([1024, 1024]) in "weight" (which has shape '
     'torch.Size([2048, 1024])), this look incorrect.',  # Ucas-HaoranWei/Vary-toy#11
     "shape.set_module_tensor_shape", ["torch.Size([1024, 1024])", "torch.Size([2048, 1024])"]),
    # the model's parameter is DeepSpeed ZeRO-3's empty placeholder
    ('ValueError: Trying to set a tensor of shape torch.Size([43176, 8192]) in "weight" (which has shape '
     'torch.Size([0])), this look incorrect.',  # huggingface/peft#1890
     "shape.set_module_tensor_shape", ["torch.Size([43176, 8192])", "torch.Size([0])", "DeepSpeed ZeRO-3"]),
    ("`RuntimeError: Expected object of scalar type Half but got scalar type Float for argument #4 'mat1'`",
     "dtype.matmul_mixed", ["argument #4 'mat1'"]),  # open-mmlab/mmdetection#1494
    ("RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 78 but got size 102 for tensor "
     "number 1 in the list",  # openclimatefix/graph_weather#83
     "shape.cat_sizes", ["expected size 78", "got size 102"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values)


@pytest.mark.parametrize("text, rules", [
    # load_state_dict's own wording of a size mismatch
    ("RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with "
     "shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([10, 256]).",
     {"shape.set_module_tensor_shape"}),
    # torchmetrics' wording of unequal prediction and target shapes
    ("Predictions and targets are expected to have the same shape, but got torch.Size([8, 400]) and torch.Size([8]).",
     {"shape.kornia_same_shape"}),  # mx-mark/VideoTransformer-pytorch#31
    # an internal assert of the dispatcher under vmap, not the escaped-tensor check
    ('RuntimeError: false INTERNAL ASSERT FAILED at "../c10/core/TensorOptions.h":693, please report a bug to '
     "PyTorch. Unknown DispatchKey: Batched", {"autograd.vmap_escaped_tensor"}),  # pytorch#47378
    # sdpa's query/key/value wording is the same rule's other summary, never the mask's
    ("RuntimeError: Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: "
     "float and value.dtype: double instead.", {"shape.kornia_same_shape", "autograd.vmap_escaped_tensor"}),
])
def test_near_misses_are_not_claimed_by_the_round15_rules(text, rules):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in rules]
    assert not claimed, (text, claimed)


def test_the_query_key_value_wording_keeps_its_own_summary():
    diagnosis = explain_paste("RuntimeError: Expected query, key, and value to have the same dtype, but got "
                              "query.dtype: float key.dtype: float and value.dtype: double instead.")
    assert_names(diagnosis, "dtype.sdpa_dtype", ["query.dtype: float, key.dtype: float and value.dtype: double"])
    assert "attn_mask" not in diagnosis.summary, diagnosis.summary


def test_a_tensor_kept_from_inside_vmap_is_named_live():
    diagnosis = explain_fixture("fixtures/autograd/vmap_escaped_tensor.py")
    assert_names(diagnosis, "autograd.vmap_escaped_tensor", ["used after vmap returned", "`gen_vmap_plumbing`"])
    assert diagnosis.location is not None and diagnosis.location.code == "seen[0].sin()", diagnosis.location
    assert any("out, extra = vmap(f)(x)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_a_float16_mask_with_a_float64_query_is_named_live():
    import torch
    import torch.nn.functional as F

    import explainer

    q = torch.randn(1, 4, 8, dtype=torch.float64)
    mask = torch.zeros(1, 4, 4, dtype=torch.float16)
    diagnosis = explainer.explain(raised(lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=mask)))
    assert_names(diagnosis, "dtype.sdpa_dtype",
                 ["attn_mask.dtype: c10::Half and query.dtype: double", "(float32, or the query's dtype)"])
    assert "refuses" not in diagnosis.summary, diagnosis.summary
    assert any("attn_mask.to(query.dtype)" in fix for fix in diagnosis.fixes), diagnosis.fixes
