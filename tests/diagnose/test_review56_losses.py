"""A new user's review (2026-12-07), losses and checkpoints: BCE's CUDA check of its target is not torch.multinomial's;
a cross-entropy target out of range is counted and sized from its real range; a one-hot target and flattened images
get fixes that run and are right; torch.load's weights-only failures on an empty, a text and a random file; a
DataLoader worker's collate failure names the loader, as with num_workers=0. Each error is raised for real here, or
is a verbatim message with its source."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

import explainer
from conftest import claimed_by, explain_fixture, raised, rules_of, said

# https://github.com/RuiZhang97/ISNet/issues/31 ("edge_gt exceeds 1"), as posted
ISNET_BCE_TARGET = """RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.

/opt/conda/conda-bld/pytorch_1724789143830/work/aten/src/ATen/native/cuda/Loss.cu:95: operator(): block: [3663,0,0], \
thread: [64,0,0] Assertion `target_val >= zero && target_val <= one` failed.
"""


def test_bce_target_assertion_is_explained_as_a_bce_target_never_as_multinomial():
    import io

    from explainer.cli.explain import explain_stream

    assert "data.bce_target_range" in claimed_by(ISNET_BCE_TARGET)
    diagnoses = list(explain_stream(io.StringIO(ISNET_BCE_TARGET)))
    assert not any("multinomial" in said(d) for d in diagnoses), [d.summary for d in diagnoses]
    bce = next(d for d in diagnoses if d.rule == "data.bce_target_range")
    assert "target_val >= zero && target_val <= one" in bce.summary and "Loss.cu:95" in bce.summary


def test_the_python_error_of_a_kernel_assertion_is_shown_under_the_rule_that_reads_the_assertion():
    # one failure: "device-side assert triggered" and the kernel's line give one diagnosis, led by the closer reading
    assert rules_of(ISNET_BCE_TARGET) == ["data.bce_target_range"]
    import io

    from explainer.cli.explain import explain_stream

    [diagnosis] = explain_stream(io.StringIO(ISNET_BCE_TARGET))
    assert any("device-side assert triggered" in part for part in map(str, diagnosis.facts["printed_with"]))


def test_device_assert_reads_the_bce_target_check_as_such_and_multinomials_own_check_still_as_multinomial():
    from explainer.diagnose.explain import explain_text
    from explainer.rules.base import default_rulebase

    device_assert = default_rulebase().by_id["device.device_assert"]
    target = explain_text("Loss.cu:95: operator(): block: [1,0,0], thread: [2,0,0] Assertion `target_val >= zero && "
                          "target_val <= one` failed.", rulebase=_only(device_assert))
    assert "binary cross-entropy" in target.summary and "multinomial" not in said(target), said(target)
    multinomial = explain_text("MultinomialKernel.cu:243: sampleMultinomialOnce: block: [0,0,0], thread: [0,0,0] "
                               "Assertion `val >= zero` failed.", rulebase=_only(device_assert))
    assert "torch.multinomial" in multinomial.summary


def _only(rule):
    from explainer.rules.base import RuleBase

    return RuleBase([rule])


def _cross_entropy_of_0_based_labels_past_the_head():
    logits = torch.randn(16, 10, requires_grad=True)
    labels = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4])
    return nn.CrossEntropyLoss()(logits, labels)


def test_cross_entropy_target_out_of_range_is_counted_and_sized_from_its_largest_label():
    diagnosis = explainer.explain(raised(_cross_entropy_of_0_based_labels_past_the_head))
    assert diagnosis.rule == "data.target_out_of_bounds"
    facts = diagnosis.facts
    assert (facts["target_min"], facts["target_max"], facts["out_of_range"]) == (0, 11, 2), facts
    text = said(diagnosis)
    assert "1-based" not in text and "labels - 1" not in text, text
    assert "`num_classes = 12`" in text and "or more" not in text, text
    assert "12 classes" in diagnosis.summary, diagnosis.summary


def test_one_based_labels_are_still_called_one_based():
    diagnosis = explain_fixture("fixtures/data/target_out_of_bounds.py")
    assert "1-based" in diagnosis.summary and "`labels = labels - 1`" in said(diagnosis)
    assert "`num_classes = 6`" in said(diagnosis)


def _one_hot_targets_with_a_stray_dimension():
    criterion = nn.CrossEntropyLoss()
    logits = torch.randn(32, 5)
    targets = F.one_hot(torch.randint(0, 5, (32,)), 5).float().unsqueeze(1)
    return criterion(logits, targets)


def test_one_hot_target_becomes_class_indices_by_the_users_name_never_a_flat_view():
    diagnosis = explainer.explain(raised(_one_hot_targets_with_a_stray_dimension))
    assert diagnosis.rule == "shape.loss_target_dims"
    fixes = " ".join(diagnosis.fixes)
    assert "`targets.squeeze(1).argmax(dim=-1)`" in fixes and "`targets.squeeze(1)`" in fixes, fixes
    assert "view(-1)" not in fixes and "labels" not in fixes, fixes


def _flattened_mnist_into_a_conv():
    cnn = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU())
    mnist_batch = torch.randn(8, 784)
    return cnn(mnist_batch)


def test_flattened_square_images_are_viewed_back_as_images():
    diagnosis = explainer.explain(raised(_flattened_mnist_into_a_conv))
    assert diagnosis.rule == "shape.conv_input_rank"
    assert "`mnist_batch.view(8, 1, 28, 28)`" in diagnosis.fixes[0], diagnosis.fixes


def test_empty_checkpoint_under_the_weights_only_unpickler_is_an_empty_file():
    diagnosis = explain_fixture("fixtures/data/checkpoint_empty_weights_only.py")
    assert diagnosis.rule == "data.pickle_ran_out_of_input"
    assert "(0 bytes)" in diagnosis.summary and "model.pth" in diagnosis.summary


def test_text_file_under_the_weights_only_unpickler_is_not_a_checkpoint():
    diagnosis = explain_fixture("fixtures/data/checkpoint_text_file.py")
    assert diagnosis.rule == "data.checkpoint_unpickling_error"
    assert "pop from empty list" in diagnosis.summary and "b'this is not a ch'" in diagnosis.summary
    assert "not a torch checkpoint" in diagnosis.summary


def test_a_file_neither_zip_nor_pickle_is_not_offered_weights_only_false():
    diagnosis = explain_fixture("fixtures/data/checkpoint_random_bytes.py")
    assert diagnosis.rule == "data.weights_only_load"
    assert "not a torch checkpoint" in diagnosis.summary, diagnosis.summary
    fixes = " ".join(diagnosis.fixes)
    assert "weights_only=False" not in fixes and "the log says" not in fixes, fixes


def test_a_trusted_checkpoint_is_offered_weights_only_false_by_the_users_name_live():
    diagnosis = explain_fixture("fixtures/data/weights_only_namespace.py")
    fixes = " ".join(diagnosis.fixes)
    assert "weights_only=False" in fixes and "the log says" not in fixes, fixes


def test_a_workers_collate_failure_names_the_loader_and_its_dataset():
    diagnosis = explain_fixture("fixtures/shape/collate_resize_storage.py")
    assert diagnosis.rule == "data.collate_variable_length"
    assert "loader (DataLoader over Images" in diagnosis.summary, diagnosis.summary
    assert "Outside a DataLoader" not in diagnosis.summary
    assert any(c["name"] == "loader" for c in diagnosis.culprits), diagnosis.culprits


def test_the_bare_resize_storage_message_stays_with_its_rule():
    assert rules_of("RuntimeError: Trying to resize storage that is not resizable") == ["shape.collate_resize_storage"]
