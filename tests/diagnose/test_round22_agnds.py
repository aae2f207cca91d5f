"""Round-22 wordings for autograd, numerics, data and shape (the long tail of GitHub threads: torch.rot90's dims in
every release's wording, Swin-style token-grid assertions, Opacus' per-sample gradients, training scripts' own NaN
guards, GPyTorch's NotPSDError without its full stop): each corpus message (verbatim from the opened rounds) is claimed,
from its text alone, by the right rule with the values it holds named; near misses stay with their own rules."""

from __future__ import annotations

import io

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised

CORPUS_CASES = [
    # torch.rot90 before 2.0: the missing rotation dim, with the call and the IPython frame it came from
    ("r22_b.yaml#24", "shape.rot90_dims", ["dim1 = 3", "torch.rot90(x, k, (2, 3))", "functional.py:7"]),
    # a bare `assert h * w == N`: tokens folded back into a grid
    ("r22_a.yaml#44", "shape.token_grid_size", ["h * w == N"]),
    # GPyTorch's NotPSDError pasted without its full stop
    ("r22_b.yaml#44", "numerics.cholesky_not_pd", ["NotPSDError", "1.0e-06"]),
    # training scripts' NaN guards: SlowFast's check_nan_losses (with its frame) and pytorch-fcn's trainer
    ("r22_a.yaml#21", "numerics.loss_nan_stop", ["check_nan_losses", "misc.py:27", "2021-10-28 23:20:46"]),
    ("r22_a.yaml#93", "numerics.loss_nan_stop", ["loss is nan"]),
    # Opacus' DP optimizer: a trainable parameter without a per-sample gradient
    ("r22_b.yaml#16", "autograd.opacus_grad_sample_none", ["Per sample gradient is not initialized"]),
    # a one-number weight shape (read as an int) still names both sizes
    ("r22_b.yaml#7", "shape.class_weight_size", ["[10]", "2 classes"]),
    ("r22_b.yaml#23", "shape.repeat_dims", ["repeat dims"]),
    # a pdb session pasted with the in-place error names where the debugger stopped
    ("r22_b.yaml#55", "autograd.inplace_modified", ["adjoint.py(31)", "OdeintAdjointMethodBackward", "version 1"]),
    # a loguru line that caught the error names the function and line that logged it
    ("r22_a.yaml#77", "shape.topk_k_range", ["cli_evaluate:348"]),
    # the IPython frame that sampled
    ("r22_b.yaml#90", "numerics.nan_probabilities", ["GenerationMixin._sample", "3043"]),
    # Hugging Face Trainer log lines without their braces, and a later nan loss
    ("r21_b.yaml#101", "numerics.grad_norm_log", ["grad_norm: nan", "loss: 0.000"]),
    ("r21_b.yaml#100", "numerics.grad_norm_log", ["153318.95", "'loss': nan"]),
    # functorch's older fallback wording (two ops), and the function torch.compile was tracing
    ("r21_a.yaml#55", "autograd.vmap_fallback", ["aten::diag", "aten::where.Scalar", "BatchedFallback.cpp:89"]),
    ("r21_a.yaml#57", "autograd.vmap_fallback", ["aten::matmul", "BatchedFallback.cpp:82", "splitLinearFast"]),
    # torch 0.4's mm backward with a sparse argument; linear_operator's broadcasting check
    ("r21_a.yaml#46", "autograd.derivative_not_implemented", ["`mm`", "sparse"]),
    ("r21_a.yaml#61", "shape.broadcast", ["mul operation", "GPyTorch"]),
    # the frame that called the factorisation / the solver, and DeepSpeed's hysteresis before its halvings
    ("r21_a.yaml#18", "numerics.cholesky_not_pd", ["cholesky_cuda", "rmi_loss.py:118 in log_det_by_cholesky"]),
    ("r21_a.yaml#25", "numerics.ode_solver_failed", ["underflow in dt nan", "latent_ode.py:263"]),
    ("r21_b.yaml#55", "numerics.amp_overflow_skip", ["65536", "8192", "hysteresis is 2", "loss_scaler.py:181"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


CITED_CASES = [
    # ttach's rot90 on a (C, H, W) image (qubvel/ttach#13)
    ('e-packages/ttach/functional.py", line 7, in rot90\n    return torch.rot90(x, k, (2, 3))\n'
     "RuntimeError: Rotation dim0 out of range, dim0 = 2", "shape.rot90_dims", ["dim0 = 2", "at most 2 dimensions"]),
    # Swin's PatchMerging on an odd grid (microsoft/Swin-Transformer#202) and its token-count check (nnFormer#7)
    ('"swin_transformer.py", line 314, in forward\n'
     '    assert H % 2 == 0 and W % 2 == 0, f"x size ({H}*{W}) are not even."\n'
     "AssertionError: x size (7*7) are not even.", "shape.token_grid_size", ["7x7", "not even"]),
    ("AssertionError: input feature has wrong size", "shape.token_grid_size", ["input feature has wrong size"]),
    # the assert line above it (https://github.com/HDETR/H-Deformable-DETR/issues/26, the rule's example); the case
    # with a typed Swin-Unet frame above it was dropped (no real paste of that frame found)
    ('assert L == H * W, "input feature has wrong size"\nAssertionError: input feature has wrong size',
     "shape.token_grid_size", ["`L == H * W`"]),
    # opacus' other branch of the same check (opacus/optimizers/optimizer.py)
    ("ValueError: Per sample gradient not found. Are you using GradSampleModule?", "autograd.opacus_grad_sample_none",
     ["Per sample gradient not found", "GradSampleModule"]),
]


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_fixture_rot90_of_a_vector_is_explained():
    diagnosis = explain_fixture("fixtures/shape/rot90_dims.py")
    assert_names(diagnosis, "shape.rot90_dims", ["total dims = 1", "rot90(features, 1, (0, 1))"])


@pytest.mark.parametrize("call, values", [
    (lambda: torch.rot90(torch.zeros(3, 4, 5), 1, (0, -3)), ["dim0 = 0", "dim1 = -3"]),
    (lambda: torch.rot90(torch.zeros(3, 4, 5), 1, (1,)), ["dims = 1"]),
], ids=["same-dim", "one-dim"])
def test_live_rot90_dims(call, values):
    import explainer

    assert_names(explainer.explain(raised(call)), "shape.rot90_dims", values)


def test_live_class_weight_of_another_class_count():
    import explainer

    call = lambda: torch.nn.functional.cross_entropy(  # noqa: E731
        torch.randn(4, 2), torch.tensor([0, 1, 0, 1]), weight=torch.ones(10))
    assert_names(explainer.explain(raised(call)), "shape.class_weight_size", ["[10]", "2 classes"])


def _rules(message: str) -> list[str]:
    return [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]


def test_near_misses_stay_with_their_own_rules():
    # torch 2.x wraps rot90's dims first: the generic dimension error
    assert _rules("IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)")[:1] == [
        "shape.dim_out_of_range"]
    # older opacus' AttributeError is the hooks' missing attribute, not the optimizer's None
    assert _rules("AttributeError: 'Parameter' object has no attribute 'grad_sample'")[:1] == [
        "other.opacus_grad_sample_missing"]
    # timm's image-size assertion is the patch embedding's, not the token grid's
    assert _rules("AssertionError: Input image height (736) doesn't match model (224).")[:1] == ["shape.vit_image_size"]


def test_a_user_assert_on_other_sizes_is_not_a_token_grid():
    # a negative control of the corpus: an embedding file's dimension, asserted without a message
    assert "shape.token_grid_size" not in _rules(corpus_message("shape.yaml#192"))
