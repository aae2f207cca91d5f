"""Shape probes: losses and their input and target. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_loss_batch_size_names_output_and_target_and_the_ratio():
    d = explain_fixture("loss_batch_size")
    assert d.rule == "shape.loss_batch_size"
    assert culprit(d, "criterion")["repr"] == "CrossEntropyLoss()"
    assert culprit(d, "logits")["shape"] == [32, 10]
    assert culprit(d, "labels")["shape"] == [16]
    assert (d.facts["input_batch"], d.facts["target_batch"], d.facts["batch_ratio"]) == (32, 16, 2)
    assert has_fix(d, "x.flatten(1)")


def test_bce_target_size_suggests_squeeze():
    d = explain_fixture("loss_target_size")
    assert d.rule == "shape.loss_target_size"
    assert culprit(d, "probs")["shape"] == [32, 1]
    assert culprit(d, "labels")["shape"] == [32]
    assert has_fix(d, "probs.squeeze(-1)` -> (32,)")
    assert has_fix(d, "labels.view_as(probs)")


def test_cross_entropy_on_sequence_logits_suggests_permute():
    d = explain_fixture("loss_target_dims")
    assert d.rule == "shape.loss_target_dims"
    assert d.facts["loss"] == "F.cross_entropy"
    assert culprit(d, "logits")["shape"] == [4, 7, 10]
    assert culprit(d, "targets")["shape"] == [4, 7]
    assert has_fix(d, "logits.permute(0, 2, 1)` -> (4, 10, 7)")
    assert has_fix(d, "logits.reshape(-1, 10), targets.reshape(-1)")


def test_multi_target_labels_suggest_squeeze():
    d = explain_fixture("loss_multi_target")
    assert d.rule == "shape.loss_target_dims"
    assert culprit(d, "labels")["shape"] == [32, 1]
    assert has_fix(d, "labels.squeeze(1)")


def test_loss_spatial_target_names_the_mask_with_its_channel_dimension():
    d = explain_fixture("loss_spatial_target")
    assert d.rule == "shape.loss_spatial_target"
    assert culprit(d, "masks")["shape"] == [2, 1, 16, 16]
    assert "(2, 5, 16, 16)" in d.summary and "(2, 1, 16, 16)" in d.summary
    assert has_fix(d, "mask.squeeze(1).long()")


def test_regression_loss_broadcast_warning_names_output_and_target():
    d = explain_fixture("loss_broadcast_warning")
    assert d.rule == "shape.loss_broadcast_warning"
    assert culprit(d, "targets")["shape"] == [32]
    assert "(32, 1)" in d.summary and "(32,)" in d.summary


def test_cross_entropy_spatial_size_mismatch_names_scores_and_masks():
    d = explain_fixture("loss_spatial_size")
    assert d.rule == "shape.loss_spatial_target"
    assert culprit(d, "masks")["shape"] == [2, 64, 48]
    assert "(2, 5, 64, 64)" in d.summary and "(2, 64, 48)" in d.summary


def test_bce_with_logits_target_size_names_logits_and_labels():
    d = explain_fixture("bce_target_size")
    assert d.rule == "shape.loss_target_size"
    assert culprit(d, "labels")["shape"] == [32]
    assert "logits is (32, 1)" in d.summary and "labels is (32,)" in d.summary
    assert has_fix(d, "`logits.squeeze(-1)` -> (32,)")
