"""Round-33 wordings for shape, dtype, numerics, autograd and compile (vision and detection frameworks, speech and
language code before LLMs, learners' material): each corpus message (verbatim from the opened rounds) is claimed, from
its text alone, by the right rule with the values it holds named; other wordings of the same families (from the
threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r33_a.yaml#15", "numerics.detection_boxes_nonfinite", ["generalized_box_iou", "boxes1", "nan", "cuda:4"]),
    ("r33_a.yaml#65", "numerics.loss_nan_log", ["cls_loss: nan", "loc_loss: 0.084"]),
    ("r33_a.yaml#66", "numerics.loss_nan_log", ["train_loss: inf", "train_loss: nan", "-9223372036854775808.000"]),
    ("r33_a.yaml#67", "numerics.tensorboard_nonfinite", ["total_loss: nan", "cls_loss: nan", "reg_loss: nan"]),
    ("r33_c.yaml#22", "numerics.loss_nan_stop", ["ArithmeticError", "train loss"]),
    ("r33_a.yaml#81", "autograd.inplace_modified", ["version 4", "expected version 3"]),
    ("r33_a.yaml#82", "autograd.inplace_modified", ["CudnnBatchNormBackward", "expected version 0"]),
    ("r33_b.yaml#26", "dtype.target_float", ["Float", "Long", "mse_loss_backward_out"]),
    ("r33_c.yaml#8", "compile.torchscript_unresolved_name", ["builtin", "_utils.py:14:56"]),
    ("r33_c.yaml#31", "shape.batchnorm_input_rank", ["expected 4D input", "got 5D input", "BatchNorm3d"]),
    ("r33_c.yaml#33", "shape.batchnorm_input_rank", ["2D or 3D", "got 1D input"]),
    ("r33_c.yaml#35", "shape.loss_batch_size", ["batch_size (8)", "batch_size (1382400)"]),
    ("r33_c.yaml#36", "shape.loss_batch_size", ["batch_size (1)", "batch_size (64)"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # kuangliu/pytorch-retinanet's table with the first term nan (andreaazzini/retinanet.pytorch#3, pytorch-retinanet#47)
    ("loc_loss: nan | cls_loss: 6.013 | train_loss: nan | avg_loss: nan", "numerics.loss_nan_log", ["loc_loss: nan"]),
    ("loc_loss: 0.101 | cls_loss: nan | train_loss: nan | avg_loss: nan", "numerics.loss_nan_log", ["cls_loss: nan"]),
    # DETR's assert printing the boxes without "incorrect boxes" (SparseR-CNN#21)
    ('File "SparseR-CNN/projects/SparseRCNN/sparsercnn/util/box_ops.py", line 51, in generalized_box_iou\n'
     "    assert (boxes1[:, 2:] >= boxes1[:, :2]).all(), boxes1\nAssertionError: tensor([[nan, nan, nan, nan],\n"
     "        [nan, nan, nan, nan]], device='cuda:0', requires_grad=True\n)",
     "numerics.detection_boxes_nonfinite", ["boxes1", "nan", "cuda:0"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # Keras's progress bar with nan losses separated by " - " stays unclaimed (keras-retinanet#800)
    ("3/10000 [..............................] - ETA: 34:20:08 - loss: nan - regression_loss: nan - "
     "classification_loss: nan", "numerics.loss_nan_log"),
    # a finite loss table is not a divergence
    ("loc_loss: 0.096 | cls_loss: 49.812 | train_loss: 49.907 | avg_loss: 312.096", "numerics.loss_nan_log"),
    # DETR's check on finite degenerate boxes (x1 < x0) is not a non-finite value
    ("AssertionError: incorrect boxes, boxes1 tensor([[0.5000, 0.2000, 0.4000, 0.3000]], device='cuda:0')",
     "numerics.detection_boxes_nonfinite"),
    # a bare assert without the boxes says neither nan nor degenerate (ISTR#11)
    ('File "/ISTR/projects/ISTR/istr/util/box_ops.py", line 51, in generalized_box_iou\n'
     "    assert (boxes1[:, 2:] >= boxes1[:, :2]).all()\nAssertionError", "numerics.detection_boxes_nonfinite"),
    # another ArithmeticError is not pythae's NaN guard
    ("ArithmeticError: division result out of range", "numerics.loss_nan_stop"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
