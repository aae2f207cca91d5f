"""A new user's review (2026-12-07), library idioms: a torchmetrics metric built for another number of classes than
the model's scores names its num_classes; a tensor made on the wrong device inside a LightningModule's step gets
Lightning's fix (`device=self.device`, a buffer), not `model.to(device)`; a LightningModule built on meta is one
diagnosis with culprits the user's code can reach; torchvision's ViT size assertion and Lightning's `self.log` of a
tensor of several elements are explained. Errors are raised for real here (torch's own), or are the libraries'
verbatim messages with their source (torchmetrics and Lightning are not installed for the tests)."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

import explainer
from conftest import assert_left_alone, assert_names, explain_paste, raised, said

# torchmetrics 1.9.0, functional/classification/stat_scores.py, _multiclass_stat_scores_tensor_validation (the
# review's pl_metric.py: Accuracy(task="multiclass", num_classes=5) fed logits of 3 classes)
# https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/classification/stat_scores.py
METRIC_MESSAGE = ("If `preds` have one dimension more than `target`, `preds.shape[1]` should be equal to number of "
                  "classes.")

# torchmetrics' classes and its validation function, compiled under an installed package's path (its frames are a
# library's, as torchmetrics' are): Metric -> MulticlassAccuracy, which keeps num_classes as an attribute
_TORCHMETRICS_LIKE = f'''
import torch.nn as nn

class Metric(nn.Module):
    pass

Metric.__module__ = "torchmetrics.metric"

def _multiclass_stat_scores_tensor_validation(preds, target, num_classes):
    if preds.ndim == target.ndim + 1 and preds.shape[1] != num_classes:
        raise ValueError({METRIC_MESSAGE!r})

class MulticlassAccuracy(Metric):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes

    def forward(self, preds, target):
        _multiclass_stat_scores_tensor_validation(preds, target, self.num_classes)
'''


def _torchmetrics_like():
    namespace: dict = {}
    path = "/usr/lib/python3/site-packages/torchmetrics/functional/classification/stat_scores.py"
    exec(compile(_TORCHMETRICS_LIKE, path, "exec"), namespace)  # noqa: S102 - the test's own text
    return namespace["MulticlassAccuracy"]


def test_a_metric_built_for_other_classes_names_its_num_classes_and_the_fix_builds_it_for_the_model():
    val_acc = _torchmetrics_like()(num_classes=5)
    logits, y = torch.randn(8, 3), torch.randint(0, 3, (8,))
    diagnosis = explainer.explain(raised(lambda: val_acc(logits, y)))
    assert_names(diagnosis, "shape.metric_input_shape", ["`val_acc` (MulticlassAccuracy)", "num_classes=5",
                                                        "of shape (8, 3)", "3 class scores"])
    assert diagnosis.fixes[0].startswith("Build the metric for the model's 3 classes"), diagnosis.fixes
    assert 'val_acc = torchmetrics.Accuracy(task="multiclass", num_classes=3)' in diagnosis.fixes[0]
    assert not any(".argmax(dim=1)" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_the_pasted_metric_message_keeps_its_general_reading():
    diagnosis = explain_paste(f"ValueError: {METRIC_MESSAGE}")
    assert diagnosis.rule == "shape.metric_input_shape"
    assert "num_classes=" not in diagnosis.summary and any(".argmax(dim=1)" in fix for fix in diagnosis.fixes)


# Lightning's LightningModule, as its class sits in the installed package (lightning/pytorch/core/module.py): the probe
# knows it by that name in the MRO of the user's class
class LightningModule(nn.Module):
    pass


LightningModule.__module__ = "lightning.pytorch.core.module"


class Classifier(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        class_weights = torch.tensor([1.0, 2.0, 0.5], device="meta")  # meta stands in for the wrong device
        logits = self.net(x)
        return F.cross_entropy(logits, y, weight=class_weights)


def test_a_tensor_made_on_the_wrong_device_in_a_lightning_step_gets_lightnings_fix():
    batch = (torch.randn(8, 8), torch.randint(0, 3, (8,)))
    diagnosis = explainer.explain(raised(lambda: Classifier().training_step(batch, 0)))
    assert diagnosis.rule == "device.mismatch"
    assert "made on line" in diagnosis.summary and "self.device" in diagnosis.summary, diagnosis.summary
    first = diagnosis.fixes[0]
    assert "`class_weights = torch.tensor([1.0, 2.0, 0.5], device=self.device)`" in first, diagnosis.fixes
    assert 'self.register_buffer("class_weights"' in first
    assert not any("model.to(device)` after the model is built" in fix for fix in diagnosis.fixes), diagnosis.fixes
    assert not any('class_weights.to("cpu")' in fix for fix in diagnosis.fixes), diagnosis.fixes


class PlainClassifier(nn.Module):
    def training_step(self, batch):
        x, y = batch
        class_weights = torch.tensor([1.0, 2.0, 0.5], device="meta")
        return F.cross_entropy(x, y, weight=class_weights)


def test_a_plain_module_keeps_the_plain_loops_fixes():
    batch = (torch.randn(8, 3), torch.randint(0, 3, (8,)))
    diagnosis = explainer.explain(raised(lambda: PlainClassifier().training_step(batch)))
    assert diagnosis.rule == "device.mismatch"
    assert "self.device" not in said(diagnosis), diagnosis.fixes


# Lightning's Trainer.fit as it fails on a module built on meta (the review's pl_meta_model.py, Lightning 2.6.6): the
# strategy's model_to_device() raises, and the teardown in its except block moves the module back to the CPU, which
# raises the same error again ("During handling of the above exception, another exception occurred")
_TRAINER_LIKE = '''
def fit(model):
    try:
        model.to("cpu")
    except BaseException:
        model.cpu()
        raise
'''


class MetaClassifier(LightningModule):
    def __init__(self):
        super().__init__()
        with torch.device("meta"):
            self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


def test_a_lightning_module_left_on_meta_is_one_diagnosis_naming_what_its_code_reaches():
    namespace: dict = {}
    exec(compile(_TRAINER_LIKE, "/usr/lib/python3/site-packages/lightning/pytorch/trainer/call.py", "exec"), namespace)
    exc = raised(lambda: namespace["fit"](MetaClassifier()))
    assert isinstance(exc.__context__, NotImplementedError)  # the chain the review saw
    diagnosis = explainer.explain(exc)
    assert diagnosis.rule == "device.meta_tensor_copy"
    assert not diagnosis.facts.get("printed_with"), diagnosis.facts.get("printed_with")  # not the same rule twice
    names = [c["name"] for c in diagnosis.culprits]
    assert names[:2] == ["self.net[0].weight", "self.net[0].bias"], names
    assert "first: self.net[0].weight" in diagnosis.summary and "of MetaClassifier" in diagnosis.summary
    assert "`MetaClassifier` is a LightningModule" in diagnosis.fixes[0], diagnosis.fixes
    assert not any("transformers" in fix for fix in diagnosis.fixes), diagnosis.fixes


# torchvision 0.28's VisionTransformer._process_input (the review's tv_vit.py: vit_b_16(image_size=224) on 96x96 images)
# https://github.com/pytorch/vision/blob/main/torchvision/models/vision_transformer.py
VIT_MESSAGE = "AssertionError: Wrong image height! Expected 224 but got 96!"
# Lightning 2.6.6's LightningModule.__to_tensor (the review's pl_log_nonscalar.py: a loss with reduction="none")
# https://github.com/Lightning-AI/pytorch-lightning/blob/master/src/lightning/pytorch/core/module.py
LOG_MESSAGE = ("ValueError: `self.log(val_loss, tensor([1.1003, 1.2870, 0.8816, 0.8583, 1.4007, 1.3363, 1.0112, "
               "2.0939]))` was called, but the tensor must have a single element. You can try doing `self.log(val_loss, "
               "tensor([1.1003, 1.2870, 0.8816, 0.8583, 1.4007, 1.3363, 1.0112, 2.0939]).mean())`")


def test_torchvisions_vit_size_assertion_names_both_sizes_and_both_fixes():
    diagnosis = explain_paste(VIT_MESSAGE)
    assert_names(diagnosis, "shape.torchvision_vit_image_size", ["image_size=224", "height is 96", "image_size=96"])
    assert "Resize((224, 224))" in diagnosis.fixes[0] and "image_size=96" in diagnosis.fixes[1], diagnosis.fixes


def test_lightnings_log_of_several_elements_names_the_key_and_never_the_values():
    diagnosis = explain_paste(LOG_MESSAGE)
    assert_names(diagnosis, "other.lightning_log_not_scalar", ['self.log("val_loss"'])
    assert any(".mean())" in fix for fix in diagnosis.fixes), diagnosis.fixes
    assert "1.1003" not in said(diagnosis)


def test_the_logging_lines_value_is_named_where_the_paste_shows_it():
    paste = ('  File "train.py", line 16, in validation_step\n    self.log("val_loss", val_loss)\n' + LOG_MESSAGE)
    diagnosis = explain_paste(paste)
    assert diagnosis.rule == "other.lightning_log_not_scalar"
    assert 'self.log("val_loss", val_loss.mean())' in diagnosis.fixes[0], diagnosis.fixes


def test_near_misses_stay_with_their_own_rules():
    # timm's PatchEmbed wording is shape.vit_image_size's; self.log outside a hook is another Lightning error
    assert_left_alone("AssertionError: Input image height (736) doesn't match model (224).",
                      "shape.torchvision_vit_image_size")
    assert_left_alone("MisconfigurationException: You are trying to `self.log()` but the loop's result collection is "
                      "not registered yet.", "other.lightning_log_not_scalar")
