"""Round-30 wordings for shape, dtype, numerics and autograd (questions about people's own scripts, application
domains such as medical imaging, speech and scientific models, and threads of 2024-2026): each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed. Live fixtures
raise the errors this CPU torch can."""

from __future__ import annotations

import functools
import traceback

import pytest
import torch
import torch.utils.checkpoint

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, raised


CORPUS_CASES = [
    ("r30_b.yaml#19", "shape.einsum_operands", ["'bdcy'", "operand 1", "`abcx,bdcy->xyadc`", "(8, 1024, 2, 2),(8, 8, 2, 7, 2)"]),
    ("r30_b.yaml#20", "shape.einsum_operands", ["equation (5)", "dimensions (6)", "operand 1"]),
    ("r30_b.yaml#22", "shape.pred_target_same_shape", ["meandice.py:123", "compute_meandice"]),
    ("r30_b.yaml#23", "shape.pred_target_same_shape", ["torch.Size([1, 2, 3, 3])", "torch.Size([1, 4, 3, 3])"]),
    ("r30_b.yaml#24", "shape.pred_target_same_shape",
     ["torch.Size([1, 5, 80, 160, 160])", "torch.Size([1, 1, 80, 160, 160])", "to_onehot=5"]),
    ("r30_b.yaml#25", "shape.pred_target_same_shape", ["(512, 512, 60), (498, 498, 300)", "label.shape == pred.shape"]),
    ("r30_b.yaml#27", "shape.pred_target_same_shape", ["input.size() == target.size()"]),
    ("r30_b.yaml#59", "shape.cat_sizes", ["dimension 4", "Got 4 and 3", "offending index is 0"]),
    ("r30_b.yaml#65", "dtype.tensordot_dtype", ["tensordot", "same dtype"]),
    ("r30_b.yaml#74", "shape.torchaudio_kaldi_rank", ["kaldi.py:802", "waveform.dim() == 2", "resample_waveform"]),
    ("r30_c.yaml#14", "numerics.loss_nan_log", ["loss nan", "grad_norm nan", "0.00055784"]),
    ("r30_c.yaml#48", "autograd.custom_backward_count", ["torchrec.reduce_scatter_tensor.default", "expected 5", "got 6"]),
    ("r30_c.yaml#63", "numerics.assert_close_mismatch", ["test_out_warning__chunk_cat_xpu", "846 of 860", "98.4%"]),
    ("r30_c.yaml#65", "autograd.checkpoint_metadata", ["forward: 27", "recomputation: 8"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # opt_einsum's parser on its own (opt_einsum#130)
    ("ValueError: Einstein sum subscript ',' does not contain the correct number of indices for operand 1.",
     "shape.einsum_operands", ["operand 1"]),
    # the einsum count of another thread (locuslab/deq#17)
    ("RuntimeError: einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (4) "
     "for operand 0 and no ellipsis was given", "shape.einsum_operands", ["equation (3)", "dimensions (4)", "operand 0"]),
    # MONAI's metric wording in its tutorials (MONAI/tutorials#597; the wording with both shapes is r30_b.yaml#24's)
    ("ValueError: y_pred and y should have same shapes.", "shape.pred_target_same_shape", ["y_pred and y"]),
    # MedicalZooPytorch's copy of pytorch-3dunet's loss (MedicalZooPytorch#36)
    ("AssertionError: 'input' and 'target' must have the same shape", "shape.pred_target_same_shape", ["'input' and 'target'"]),
    # a custom Function's backward with one value too many (deepseek-ai/TileKernels#10)
    ("RuntimeError: function MHCPreNormFnBackward returned an incorrect number of gradients (expected 5, got 6)",
     "autograd.custom_backward_count", ["MHCPreNormFnBackward", "expected 5, got 6"]),
    # a training log of the same family with an epoch and a batch counter (yeyupiaoling/PPASR#3)
    ("[2021-07-14 02:12:37.086634] Train epoch: 0, batch: 790/34799, loss: nan, learning rate: 0.0001, train time: 3.768s",
     "numerics.loss_nan_log", ["loss: nan"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a finite loss on the same WeNet/CosyVoice progress line (CosyVoice#1141)
    ("2025-04-08 10:09:49,523 DEBUG TRAIN Batch 0/100 loss 1.339771 acc 0.298227 lr 0.00002040 grad_norm 1.128567 rank 0",
     "numerics.loss_nan_log"),
    # oneDNN's fusion check is not tensordot's
    ("RuntimeError: Binary Fusion's inputs should have same dimensions", "dtype.tensordot_dtype"),
    # torchmetrics', kornia's and binary cross-entropy's wordings keep their own rules
    ("Predictions and targets are expected to have the same shape, but got torch.Size([8, 400]) and torch.Size([8]).",
     "shape.pred_target_same_shape"),
    ("ValueError: Inputs input and target must have the same shape. Got: torch.Size([4, 7, 256, 360])",
     "shape.pred_target_same_shape"),
    ("ValueError: Target size (torch.Size([1, 3, 256, 256])) must be the same as input size (torch.Size([1, 1, 256, 256]))",
     "shape.pred_target_same_shape"),
    # an assert on a batch's inputs is not a prediction/label shape check (detectron2's, r15_a.yaml#4)
    (corpus_message("r15_a.yaml#4"), "shape.pred_target_same_shape"),
    # pytorch-3dunet's own transform assert is not torchaudio's (pytorch-3dunet#35)
    ('  File "/data/pytorch-3dunet/augment/transforms.py", line 120, in __call__\n    assert m.ndim == 3\nAssertionError',
     "shape.torchaudio_kaldi_rank"),
    # numpy's comparison report is not assert_close's, even cut after its count
    ("AssertionError: \nNot equal to tolerance rtol=0.001, atol=1e-05\n\nMismatched elements: 1 / 1059600 (9.44e-05%)",
     "numerics.assert_close_mismatch"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


@functools.cache
def _scaled_add():
    """A custom op made with torch.library whose registered backward returns too few gradients."""
    @torch.library.custom_op("explainer_round30::scaled_add", mutates_args=())
    def scaled_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y

    scaled_add.register_autograd(lambda ctx, grad: (grad,))
    return scaled_add


def test_live_custom_op_backward_with_too_few_gradients():
    # torch.library's generated autograd kernel counts the gradients (this torch's wording, raised here)
    x = torch.ones(2, requires_grad=True)
    exc = raised(lambda: _scaled_add()(x, x).sum().backward())
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert_names(explain_paste(text), "autograd.custom_backward_count",
                 ["GeneratedBackwardFor_explainer_round30_scaled_add_defaultBackward", "expected 3, got 2"])


def test_live_checkpoint_recomputation_that_saved_fewer_tensors():
    # a checkpointed block that takes another branch when backward recomputes it (a counter), raised here
    calls = []

    def block(a):
        calls.append(1)
        b = a.sin()
        return b.cos().exp().sin() if len(calls) == 1 else b

    a = torch.ones(3, requires_grad=True)
    with torch.utils.checkpoint.set_checkpoint_early_stop(False):
        exc = raised(lambda: torch.utils.checkpoint.checkpoint(block, a, use_reentrant=False).sum().backward())
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert_names(explain_paste(text), "autograd.checkpoint_metadata", ["forward: 4", "recomputation: 1"])


def test_live_tensordot_of_float32_and_float64():
    diagnosis = explain_fixture("fixtures/dtype/tensordot_mixed.py")
    assert_names(diagnosis, "dtype.tensordot_dtype", ["tensordot", "same dtype"])


def test_live_checkpoint_count_names_both_counts():
    diagnosis = explain_fixture("fixtures/autograd/checkpoint_count_mismatch.py")
    assert_names(diagnosis, "autograd.checkpoint_metadata", ["forward: ", "recomputation: "])
