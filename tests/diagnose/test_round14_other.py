"""Round 14 `other` rules: the round's misses and the wording families around them, as pasted in their threads (none
of these libraries' errors can be raised by CPU torch alone: OpenMMLab registries, Lightning's monitored metrics and
checkpoint_callback, DGL's 0-in-degree check, PEFT's target modules, torch 1.12's MPS addmm); the import statement
that names the module of a bare "cannot import name", and transformers' lazy-import wrapper said after the summary."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message as corpus, explain_paste, rules_of


CORPUS = [
    # Python <= 3.6 did not say from where: the statement above the error does (a bare paste, a frame's code line)
    ("r12_a.yaml#79", "other.torch_attribute_missing", ["`torch._jit_internal.Optional`"]),
    ("r14_b.yaml#69", "other.torch_attribute_missing",
     ["`torch.distributed._tensor.device_mesh.init_device_mesh`", "torch 2.2"]),
    # transformers' lazy import around the error: both modules of the chain are named after the summary
    ("r14_b.yaml#56", "other.torch_attribute_missing",
     ["`torch.compiler`", "while transformers.integrations.integration_utils was being imported",
      "ended in transformers.modeling_utils"]),
    ("r14_a.yaml#7", "other.openmmlab_not_in_registry", ["type='CMCD'", "models registry", "register_module()"]),
    ("r14_a.yaml#8", "other.openmmlab_not_in_registry", ["type='ReDet'", "models registry (mmcv)"]),
    ("r14_a.yaml#22", "other.lightning_monitor_missing",
     ["ModelCheckpoint monitors `validation_mean_generated_predict_acc`", "'train_mean_loss'",
      "none of them a validation metric"]),
    ("r14_a.yaml#23", "other.trainer_argument_removed",
     ["`checkpoint_callback`", "expected bool", "pytorch_lightning.callbacks.model_checkpoint.ModelCheckpoint",
      "Lightning 1.3 or older"]),
    ("r14_a.yaml#50", "other.dgl_zero_in_degree", ["DGLError", "0-in-degree nodes"]),
    ("r14_a.yaml#51", "other.dgl_zero_in_degree", ["DGLError", "GraphConv"]),
    ("r14_a.yaml#94", "other.bnb_cuda_setup_failed", ['"CUDA Setup failed despite GPU being available"']),
    ("r14_a.yaml#97", "other.peft_target_modules", ["target modules []", "the list is empty"]),
    ("r14_a.yaml#98", "other.peft_target_modules", ["`target_modules` unset", "`config.model_type`"]),
    ("r14_b.yaml#28", "other.peft_target_modules", ["target modules ['q_proj', 'v_proj']", "`query_key_value`"]),
    ("r14_b.yaml#17", "other.extension_cuda_version_mismatch",
     ["installed CUDA version 9.1", "compiled with 11.8"]),
    ("r14_b.yaml#31", "other.xformers_build_mismatch",
     ["xFormers 0.0.25.dev741 was built for PyTorch 2.2.0+cu121", "2.2.0+cpu"]),
    ("r14_b.yaml#33", "other.torchvision_ops_missing", ["couldn't load its custom C++ ops"]),
    ("r9_a.yaml#12", "other.mps_addmm_not_2d", ["tensors must be 2-D", "torch 1.12", "MPS"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


def test_the_location_and_raising_frame_of_a_dgl_error_are_the_users_layer_and_dgls_conv():
    d = explain_paste(corpus("r14_a.yaml#51"))
    assert d.location is not None and d.location.code == "h1 = self.encoder1(graph, feat)", d.location
    assert d.facts["raised_in"]["file"].endswith("dgl/nn/pytorch/conv/graphconv.py"), d.facts["raised_in"]
    assert d.facts["raised_in"]["line"] == 408


def test_peft_from_an_egg_is_placed_at_the_users_get_peft_model_line():
    d = explain_paste(corpus("r14_a.yaml#97"))
    assert d.location.code == "model = get_peft_model(model, config)", d.location
    assert "peft-0.4.0.dev0" in d.facts["raised_in"]["file"], d.facts


# The same families in other threads' words.
PASTED = [
    # mmengine's wording with a scope, and mmcv's re-raise by the parent being built
    ("KeyError: 'Mask2Former is not in the mmengine::model registry. Please check whether the value of `Mask2Former` "
     "is correct or it was registered as expected. More details can be found at https://mmengine.readthedocs.io/en/"
     "latest/advanced_tutorials/config.html#import-the-custom-module'",
     "other.openmmlab_not_in_registry", ["type='Mask2Former'", "mmengine::model registry", "scope than `mmengine`"]),
    ("KeyError: \"MaskRCNN: 'RMT is not in the models registry'\"", "other.openmmlab_not_in_registry",
     ["type='RMT'", "while building MaskRCNN"]),
    # Lightning 1.5+'s ModelCheckpoint wording, EarlyStopping with nothing logged and with train metrics only
    ("lightning.fabric.utilities.exceptions.MisconfigurationException: `ModelCheckpoint(monitor='val/usdr')` could not "
     "find the monitored key in the returned metrics: ['lr-Adam', 'train/loss', 'grad_2.0_norm_total', 'val/loss', "
     "'usdr_other', 'usdr_vocals', 'usdr', 'epoch', 'step']. HINT: Did you call `log('val/usdr', value)` in the "
     "`LightningModule`?", "other.lightning_monitor_missing", ["`val/usdr`", "'val/loss'"]),
    ("RuntimeError: Early stopping conditioned on metric `val_loss` which is not available. Pass in or modify your "
     "`EarlyStopping` callback to use any of the following: ``", "other.lightning_monitor_missing",
     ["EarlyStopping monitors `val_loss`", "nothing had been logged at all"]),
    ("RuntimeError: Early stopping conditioned on metric `val/sdr` which is not available. Pass in or modify your "
     "`EarlyStopping` callback to use any of the following: `train/loss`, `train/loss_step`, `train/loss_epoch`",
     "other.lightning_monitor_missing", ["`val/sdr`", "`train/loss_step`", "none of them a validation metric"]),
    # a list given to checkpoint_callback (NeMo)
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: Invalid type provided for checkpoint_callback: "
     "Expected bool but received <class 'list'>.", "other.trainer_argument_removed", ["received list", "callbacks=["]),
    # PEFT's check with peft's own frame above it
    ("File \"/home/bocheng/softinstalled/anaconda3/envs/py38/lib/python3.8/site-packages/peft/mapping.py\", line 117, "
     "in _prepare_lora_config\n    raise ValueError(\"Please specify `target_modules` in `peft_config`\")\nValueError: "
     "Please specify `target_modules` in `peft_config`", "other.peft_target_modules", ["`target_modules` unset"]),
    # GPT-2's Conv1D call on torch 1.12's MPS
    ("x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)\nRuntimeError: tensors must be 2-D",
     "other.mps_addmm_not_2d", ["`self.bias`, a 1-D bias", "torch 1.13"]),
]


@pytest.mark.parametrize(("message", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_pasted_messages_name_their_values(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_a_sharded_linear_weight_under_f_linear_stays_the_distributed_rule():
    assert_names(explain_paste(corpus("r5_b.yaml#12")), "distributed.sharded_param_outside_forward", ["addmm"])


# Near misses that must stay unexplained, or with their own rule.
NOT_CLAIMED = [
    # Keras' EarlyStopping warning
    "WARNING:tensorflow:Early stopping conditioned on metric `val_loss` which is not available. Available metrics "
    "are: loss,accuracy",
]
# (a bare "ImportError: cannot import name 'Optional'" was a near miss here until round 52: other.import_name_cut_module
# now explains it as round 24 reads import errors, `other`, and says that the paste names no module; see
# tests/diagnose/test_round52_misc.py)


@pytest.mark.parametrize("message", NOT_CLAIMED, ids=range(len(NOT_CLAIMED)))
def test_near_misses_are_not_claimed(message):
    assert not any(rules_of(message)), rules_of(message)


def test_a_keyword_refused_by_an_unnamed_init_gets_only_the_generic_argument_rule():
    # Python < 3.10 does not say whose __init__ refused the keyword: no library's rule may claim it
    assert rules_of("`TypeError: __init__() got an unexpected keyword argument 'precision'`") == [
        "other.call_signature_mismatch"]


def test_a_dataset_key_error_under_mmcvs_build_is_not_a_registry_miss():
    text = ("Traceback (most recent call last):\n  File \"/opt/conda/envs/debug/lib/python3.8/site-packages/mmcv/utils/"
            "registry.py\", line 52, in build_from_cfg\n    return obj_cls(**args)\n  File \"/workspace/SoftTeacher/"
            "thirdparty/mmdetection/mmdet/datasets/coco.py\", line 59, in load_annotations\n    info['filename'] = "
            "info['file_name']\nKeyError: 'file_name'")
    assert "other.openmmlab_not_in_registry" not in rules_of(text)


def test_a_rule_that_names_the_lazy_import_itself_gets_no_second_note():
    d = explain_paste(corpus("r14_b.yaml#9"))
    assert d.rule == "other.undefined_symbol", d.rule
    assert "transformers.models.mistral.modeling_mistral" in d.summary
    assert "was being imported" not in d.summary, d.summary
