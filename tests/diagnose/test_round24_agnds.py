"""Round-24 wordings for autograd, numerics, dtype and shape (torch's and its extensions' internal asserts:
functorch's transform stack, TensorIterator's type promotion, TH's empty-tensor check, xformers' csrc; select()'s
index check, SBDSDC's LAPACK code and MKL's complaint above it, nvdiffrast's resolution) and for data and
distributed (MoCo-style DDP-only scripts, ZeRO-3's empty parameter group, open_clip pickles): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; the errors this CPU build can raise are explained live; near misses stay with their own rules."""

from __future__ import annotations

import io
import traceback

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised

CORPUS_CASES = [
    # SBDSDC's LAPACK code, and MKL's "Parameter 4 was incorrect on entry to SLASCL" printed above (nan in the matrix)
    ("r24_b.yaml#76", "numerics.linalg_failed", ["svd_cuda", "(error: 18)", "SLASCL", "Parameter 4"]),
    ("r24_b.yaml#78", "numerics.linalg_failed", ["svd_cpu", "(error: 2)"]),
    # torch.cat of mixed dtypes, the dtypes in markdown bold
    ("r24_b.yaml#42", "dtype.cat_mixed_dtypes", ["Double", "Float", "element 1", "'tensors'"]),
    ("r23_b.yaml#78", "dtype.target_long", ["#2 'target'", "Float"]),
    # internal asserts: an extension's absolute csrc path, functorch's layer stack, TensorIterator, TH
    ("r24_a.yaml#56", "other.extension_internal_assert", ["p.gQ_strideM() == grad_q.stride(1)",
                                                          "attention_backward_generic.cu:181"]),
    ("r19_b.yaml#23", "autograd.functorch_internal_assert", ["batched == nullptr", "DynamicLayer.cpp:250", "vmap"]),
    ("r19_b.yaml#4", "dtype.tensoriterator_promotion_assert", ["common_dtype_ != ScalarType::Undefined",
                                                               "TensorIterator.cpp:237", "complex32"]),
    ("r19_b.yaml#75", "shape.th_empty_tensor_assert", ["!t->is_empty()", "THTensorMath.cpp:2854", "`x[:0]`"]),
    # select()'s wording of an index past the end
    ("r24_a.yaml#59", "shape.index_out_of_bounds", ["Index 14", "[14, 64, 300]", "dimension 0", "size 14", "select()"]),
    ("r24_b.yaml#60", "dtype.bool_arithmetic", ["bitwise_not()"]),
    ("r24_b.yaml#68", "autograd.leaf_inplace", ["moved into the graph interior"]),
    ("r24_a.yaml#21", "numerics.cholesky_not_pd", ["torch.linalg_cholesky", "order 314"]),
    ("r24_a.yaml#16", "shape.einops_pattern", ["{'h': 8}", "3 dimensions"]),
    ("r22_a.yaml#39", "dtype.dtype_argument", ["argument 'dtype'", "type"]),
    ("r23_b.yaml#14", "shape.ragged_sequence", ["length 17", "got 0", "empty list"]),
    # the attribute read on the failing line
    ("r21_a.yaml#35", "dtype.complex_view", ["`input.imag`"]),
    ("r20_b.yaml#84", "autograd.nonleaf_grad_access", ["leaf Tensor"]),
    # torch 0.2's sparse Variable through autograd's Addmm
    ("r21_a.yaml#47", "other.sparse_layout_unsupported", ["torch.sparse.FloatTensor", "`addmm`"]),
    # nvdiffrast's CUDA rasterizer and the resolution the user's call asked for
    ("r24_b.yaml#36", "shape.image_size_multiple", ["rasterize_fwd_cuda", "[uv_size, uv_size]", "multiples of 8"]),
    ("r24_a.yaml#74", "data.unpickle_class_missing", ["VisualTransformer", "open_clip"]),
    ("r24_b.yaml#11", "distributed.ddp_only_script", ["main_moco.py (line 186, in main_worker)",
                                                      "DistributedDataParallel"]),
    ("r24_a.yaml#86", "distributed.deepspeed_zero3_empty_param_group", ["stage3.py:923 in initialize_optimizer_states",
                                                                        "largest_numel = max("]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


CITED_CASES = [
    # functorch's assert from torch's own copy (pytorch/functorch#1103), and torch/csrc/functorch (pytorch#177581)
    ("RuntimeError: data.find(layerId) == data.end() INTERNAL ASSERT FAILED at \"../aten/src/ATen/functorch/"
     "DynamicLayer.cpp\":256, please report a bug to PyTorch. ", "autograd.functorch_internal_assert",
     ["data.find(layerId) == data.end()", "DynamicLayer.cpp:256"]),
    ("RuntimeError: layer.key() == TransformType::Vmap INTERNAL ASSERT FAILED at \"torch/csrc/functorch/init.cpp\":288, "
     "please report a bug to PyTorch.", "autograd.functorch_internal_assert", ["init.cpp:288"]),
    # addcmul with a complex operand in torch 1.10 (pytorch#70486)
    ("RuntimeError: !(has_different_input_dtypes && !config.promote_inputs_to_common_dtype_ && (has_undefined_outputs "
     "|| config.enforce_safe_casting_to_output_ || config.cast_common_dtype_to_outputs_))INTERNAL ASSERT FAILED at "
     "\"../aten/src/ATen/TensorIterator.cpp\":331, please report a bug to PyTorch. ",
     "dtype.tensoriterator_promotion_assert", ["TensorIterator.cpp:331", "addcmul"]),
]


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_live_select_past_the_end():
    assert_names(explain_fixture("fixtures/shape/select_out_of_range.py"), "shape.index_out_of_bounds",
                 ["Index 14", "[14, 64, 300]", "size 14", "off-by-one"])


def test_live_imag_of_a_real_tensor_names_the_attribute():
    import explainer

    real = torch.ones(3)
    assert_names(explainer.explain(raised(lambda: real.imag)), "dtype.complex_view", ["`.imag`", "`real.imag`"])


def _rules(message: str) -> list[str]:
    return [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]


def _best_of(scores):
    best = max(scores)
    return best


def test_near_misses_stay_with_their_own_rules():
    # torch's own csrc (functorch's) is not an extension's check, and the extension's is not functorch's
    assert "other.extension_internal_assert" not in _rules(corpus_message("r19_b.yaml#23"))
    assert "autograd.functorch_internal_assert" not in _rules(corpus_message("r24_a.yaml#56"))
    # torch's c10 allocator assert stays out of both
    nvml = "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":830, " \
           "please report a bug to PyTorch. "
    assert not {"other.extension_internal_assert", "autograd.functorch_internal_assert"} & set(_rules(nvml))
    # vmap's escaped tensor keeps its own rule
    assert _rules(corpus_message("r15_b.yaml#84"))[:1] == ["autograd.vmap_escaped_tensor"]
    # a max() of an empty list in the user's own code is not ZeRO-3's (raised live, printed as Python prints it)
    try:
        _best_of([])
    except ValueError as exc:
        printed = "".join(traceback.format_exception(exc))
    assert "best = max(scores)" in printed and "ValueError: max() arg is an empty sequence" in printed
    assert "distributed.deepspeed_zero3_empty_param_group" not in _rules(printed)
    # diffusers' own size check, which names the sizes, keeps its rule (verbatim from
    # https://github.com/smthemex/ComfyUI_SVFR/issues/10)
    assert _rules("!!! Exception during processing !!! `height` and `width` have to be divisible by 8 but are 325 "
                  "and 325.")[:1] == ["shape.diffusers_size_multiple"]
    # the `x[i]` wording of an index past the end stays with the same rule (raised live)
    try:
        torch.zeros(14)[14]
    except IndexError as exc:
        past_the_end = f"IndexError: {exc}"
    assert past_the_end == "IndexError: index 14 is out of bounds for dimension 0 with size 14"
    assert _rules(past_the_end)[:1] == ["shape.index_out_of_bounds"]
