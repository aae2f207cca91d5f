"""Round-27 wordings for data (checkpoints on resume: accelerate's and the HF Trainer's resume, fairseq's optimizer check,
OpenMMLab's key report, DCP, torch.load's weights-only refusals; a batch unpacked into the wrong number of names; loading
on other runtimes: ExecuTorch, TorchSharp, libtorch's jit::load): each corpus message (verbatim from the opened rounds)
is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed. A live fixture raises the batch error this
CPU torch can."""

from __future__ import annotations

import traceback

import pytest
import torch

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, said


CORPUS_CASES = [
    ("r27_a.yaml#20", "data.mmcv_state_dict_mismatch", ["ema_backbone_model_base_layer_0_weight", "EMA"]),
    ("r27_a.yaml#21", "data.mmcv_state_dict_mismatch", ["data_preprocessor.mean", "data_preprocessor.std", "strict=True"]),
    ("r27_a.yaml#25", "data.resume_checkpoint_not_found",
     ["E:/lora-scripts-v1.8.5/output/SilverWolf-000001-state/model.safetensors", "pass its parent folder"]),
    ("r27_a.yaml#71", "data.resume_checkpoint_not_found", ["cuhk03labeled_b64f2048//checkpoint_600.pth.tar", "'//'"]),
    ("r27_a.yaml#27", "data.accelerate_load_state_step", ["KeyError: 'step'", "random_states_<rank>.pkl"]),
    ("r27_a.yaml#34", "data.weights_only_load", ["numpy._core.multiarray.scalar"]),
    ("r27_a.yaml#56", "data.checkpoint_entry_missing", ["utils_state_dict['optimizer']", "'optimizer'"]),
    ("r27_a.yaml#58", "data.fairseq_optimizer_mismatch", ["Criterion does not match", "--criterion"]),
    ("r27_a.yaml#59", "data.fairseq_optimizer_mismatch", ["Optimizer does not match", "FP16Optimizer"]),
    ("r27_a.yaml#64", "data.dcp_missing_key", ["model.layers.0.attention.wq.weight", "'model.'"]),
    ("r27_a.yaml#65", "data.compile_state_checkpoint_check", ["load_resume_state_dict", "'_orig_mod.'"]),
    ("r27_a.yaml#69", "data.hf_trainer_resume_checkpoint", ["/finetune-sft/outputs-sft-v2/checkpoint-32500"]),
    ("r27_a.yaml#70", "data.hf_trainer_resume_checkpoint", ["./output/checkpoint-500", "relative"]),
    ("r27_a.yaml#94", "data.batch_unpack_count", ["`x, y = batch`", "(expected 2)"]),
    ("r27_b.yaml#15", "data.executorch_segment_out_of_file",
     ["offset 5320704", "size 4198960", "file_size_ 8912896", "XnnpackBackend"]),
    ("r27_b.yaml#31", "data.torchsharp_load_shape_mismatch", ["System.ArgumentException", "Mismatched tensor shape"]),
    ("r27_b.yaml#32", "data.jit_load_unrecognized_format", ["import.cpp:449", "javacpp-presets"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_allowlist_fix_names_the_class_as_the_message_does():
    # ms-swift#5808: `add_safe_globals([LossScaler])` after importing it from its module
    diagnosis = explain_paste(corpus_message("r27_a.yaml#35"))
    assert_names(diagnosis, "data.weights_only_load",
                 ["from deepspeed.runtime.fp16.loss_scaler import LossScaler", "[LossScaler]"], said(diagnosis))


def test_weights_only_refusal_names_the_file_the_log_was_loading():
    diagnosis = explain_paste(corpus_message("r27_b.yaml#50"))
    assert_names(diagnosis, "data.weights_only_load", ["checkpoint_p2/checkpoint_000002041_1064960.pth"], said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # HF Trainer: the folder holds shards without their index (GraphGPT#78); resume_from_checkpoint=True with no
    # checkpoint-N folder (LLaVA#901)
    ("ValueError: Can't find a valid checkpoint at /data1/path/checkpoints/stage_2/checkpoint-50000",
     "data.hf_trainer_resume_checkpoint", ["/data1/path/checkpoints/stage_2/checkpoint-50000"]),
    ("ValueError: No valid checkpoint found in output directory (./checkpoints/llava-v1.5-7b-pretrain)",
     "data.hf_trainer_resume_checkpoint", ["./checkpoints/llava-v1.5-7b-pretrain", "checkpoint-<step>"]),
    # accelerate's load_state at override_attributes["step"]: the last frame and error of
    # https://github.com/huggingface/accelerate/issues/3067 (an excerpt)
    ('  File "/home/bghira/simpletuner/.venv/lib64/python3.11/site-packages/accelerate/accelerator.py", line 3156, in '
     'load_state\n    self.step = override_attributes["step"]\n                ~~~~~~~~~~~~~~~~~~~^^^^^^^^\n'
     "KeyError: 'step'",
     "data.accelerate_load_state_step", ["Could not load random states", "0.32"]),
    # mmdetection#1316: the missing side alone; O2SFormer#23: the EMA copies
    ("missing keys in source state_dict: layer4.2.bn1.weight, layer3.9.bn1.weight, layer1.0.bn3.running_var",
     "data.mmcv_state_dict_mismatch", ["layer4.2.bn1.weight", "initial values"]),
    ("unexpected key in source state_dict: ema_backbone_conv1_weight, ema_backbone_bn1_weight, ema_backbone_bn1_bias",
     "data.mmcv_state_dict_mismatch", ["ema_backbone_conv1_weight", "EMA"]),
    # fairseq's criterion check (https://github.com/microsoft/MASS/issues/83) and its optimizer check
    # (https://github.com/facebookresearch/fairseq/issues/1046), the error lines of their tracebacks (excerpts)
    ("AssertionError: Criterion does not match; please reset the optimizer (--reset-optimizer).",
     "data.fairseq_optimizer_mismatch", ["Criterion"]),
    ("AssertionError: Optimizer does not match; please reset the optimizer (--reset-optimizer).",
     "data.fairseq_optimizer_mismatch", ["Optimizer"]),
    # a loop over a loader (a-PyTorch-Tutorial-to-Image-Captioning#115, CCLIS#2)
    ('  File "train.py", line 161, in train\n    for i, (imgs, caps, caplens) in enumerate(train_loader):\n'
     "ValueError: too many values to unpack (expected 3)", "data.batch_unpack_count", ["train_loader", "3 names"]),
    ('  File "CCLIS/main.py", line 864, in main\n'
     "    for idx, (images, labels, importance_weight, index) in enumerate(train_loader):\n"
     "ValueError: not enough values to unpack (expected 4, got 2)", "data.batch_unpack_count", ["4 names", "2 items"]),
    # an optimizer's own state restored from a checkpoint of another torch (fairseq#3119)
    ('  File "/home/user/code/fairseq/fairseq/optim/adam.py", line 199, in step\n    state["step"] += 1\n'
     "KeyError: 'step'", "data.accelerate_load_state_step", ['`state["step"] += 1`', "another optimizer class"]),
    # the script's own check, raised (https://github.com/wuhuikai/FastFCN/issues/109, its title)
    ("RuntimeError: => no checkpoint found at 'encnet_jpu_res50_pcontext.pth.tar'", "data.resume_checkpoint_not_found",
     ["encnet_jpu_res50_pcontext.pth.tar"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a tensor's shape unpacked is shape.shape_unpack_count's; a function's results are no batch (UniPose#35)
    ("    h, w = img.shape\nValueError: too many values to unpack (expected 2)", "data.batch_unpack_count"),
    ('  File "unipose.py", line 64, in __init__\n    self.val_dir, self.sigma, self.stride, self.workers, self.batch_size)\n'
     "ValueError: too many values to unpack (expected 2)", "data.batch_unpack_count"),
    ("ValueError: too many values to unpack (expected 4)", "data.batch_unpack_count"),
    # another missing checkpoint entry is data.checkpoint_entry_missing's (drn#40)
    (corpus_message("r27_a.yaml#55"), "data.accelerate_load_state_step"),
    # the same head line over size mismatches only stays with shape.state_dict_size (FasterViT#118)
    ("The model and loaded state dict do not match exactly\n\nsize mismatch for levels.2.blocks.0.pos_embed.relative_bias: "
     "copying a param with shape torch.Size([1, 49, 256]) from checkpoint, the shape in current model is "
     "torch.Size([1, 144, 256]).", "data.mmcv_state_dict_mismatch"),
    # detectron2's checkpointer and the HF Trainer keep their own rules
    ("AssertionError: Checkpoint ./ckpts/model_final_dfa862.pkl not found!", "data.resume_checkpoint_not_found"),
    ("ValueError: Can't find a valid checkpoint at ./output/checkpoint-500", "data.resume_checkpoint_not_found"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_dcp_report_leads_over_each_ranks_missing_key(tmp_path):
    # raised here: torch.distributed.checkpoint (no process group: one rank) saves a weight, then loads a bias too
    import torch.distributed.checkpoint as dcp

    dcp.save({"weight": torch.zeros(2)}, checkpoint_id=str(tmp_path))
    with pytest.raises(dcp.api.CheckpointException) as caught:  # (a BaseException: conftest's raised() lets it through)
        dcp.load({"weight": torch.zeros(2), "bias": torch.zeros(2)}, checkpoint_id=str(tmp_path))
    exc = caught.value
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert "(RANK 0)" in text and "RuntimeError: Missing key in checkpoint state_dict: bias." in text
    assert explain_paste(text).rule == "distributed.checkpoint_exception"


def test_spawned_fairseq_child_error_leads_over_the_spawn_head():
    assert explain_paste(corpus_message("r27_a.yaml#58")).rule == "data.fairseq_optimizer_mismatch"


def test_live_loop_unpacks_a_batch_of_three_into_two_names():
    diagnosis = explain_fixture("fixtures/data/batch_unpack_count.py")
    assert_names(diagnosis, "data.batch_unpack_count", ["`for images, labels in loader:`", "2 names", "(expected 2)"])
