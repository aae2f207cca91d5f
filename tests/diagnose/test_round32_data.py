"""Round-32 wordings for data (ComfyUI's unmapped LoRA keys, Detectron2's skipped weights, a DataLoader iterator run past
its end, DataLoader attributes set after init, InstanceNorm running stats in 0.3-era checkpoints, 0.4.1's storage
slicing, safetensors' header in a mangled paste, weights-only loads logged by applications, a worker killed by SIGKILL):
each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values
it holds named; other wordings of the same families (from the threads cited in the rules) are claimed too, and near
misses stay unclaimed. The live fixtures raise the InstanceNorm and DataLoader errors with this CPU torch."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, said


CORPUS_CASES = [
    ("r32_a.yaml#23", "data.safetensors_header", ["MetadataIncompleteBuffer"]),
    ("r32_a.yaml#25", "data.weights_only_load", ["operand 118", "weights_only", "tts_base:setup:60"]),
    ("r32_a.yaml#86", "data.worker_killed", ["signal: Killed"]),
    ("r32_a.yaml#88", "data.comfyui_lora_key_not_loaded",
     ["lora_unet_output_blocks_5_1_transformer_blocks_0_attn2_to_k.lora_up.weight", "base model"]),
    ("r32_b.yaml#2", "data.legacy_storage_slicing", ["storages don't support slicing", "0.4.1"]),
    ("r32_b.yaml#4", "data.instancenorm_running_stats",
     ["model1.1.running_mean", "model1.1.running_var", "InstanceNorm2d", "Net", "strict=False"]),
    ("r32_b.yaml#14", "data.dataloader_attribute_after_init", ["dataset", "DataLoader"]),
    ("r32_b.yaml#31", "data.weights_only_load", ["segment_anything_2", "operand 118"]),
    ("r32_b.yaml#45", "data.dataloader_exhausted", ["next(batch_iterator)", "iter(data_loader)"]),
    ("r32_b.yaml#47", "data.detectron2_checkpoint_shape_skipped",
     ["roi_heads.box_predictor.cls_score.weight", "(81, 2048)", "(7, 2048)", "NUM_CLASSES"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # ComfyUI: diffusers-named keys (ComfyUI#6397) and a DiT LoRA from Musubi Tuner (ComfyUI#11487)
    ("lora key not loaded: lora_unet_mid_block_attentions_0_transformer_blocks_0_attn1_to_k.on_input\n"
     "lora key not loaded: lora_unet_mid_block_attentions_0_transformer_blocks_0_attn1_to_k.weight",
     "data.comfyui_lora_key_not_loaded", ["lora_unet_mid_block_attentions_0_transformer_blocks_0_attn1_to_k.on_input",
                                          "diffusers"]),
    ("lora key not loaded: lora_unet_layers_12_attention_to_q.lora_down.weight",
     "data.comfyui_lora_key_not_loaded", ["lora_unet_layers_12_attention_to_q.lora_down.weight", "Update ComfyUI"]),
    # Detectron2: a backbone key (hpanwar08/detectron2#13) and fvcore's newer wording (faster-rcnn.pytorch#828)
    ("'backbone.bottom_up.res4.10.conv2.weight' has shape (256, 256, 3, 3) in the checkpoint but (1024, 32, 3, 3) in "
     "the model! Skipped.", "data.detectron2_checkpoint_shape_skipped",
     ["backbone.bottom_up.res4.10.conv2.weight", "(256, 256, 3, 3)", "(1024, 32, 3, 3)", "config"]),
    ("Skip loading parameter 'roi_heads.box_predictor.cls_score.weight' to the model due to incompatible shapes: "
     "(5, 1024) in the checkpoint but (81, 1024) in the model! You might want to double check if this is expected.",
     "data.detectron2_checkpoint_shape_skipped", ["(5, 1024)", "(81, 1024)", "NUM_CLASSES"]),
    # the exhausted iterator, flattened onto one line (Retinaface_Ghost#5) and in IPython's form (pytorch#6179)
    ('Traceback (most recent call last): File "train.py", line 178, in <module> train() File "train.py", line 134, in '
     'train images, targets = next(batch_iterator) File "/home/wyw/.conda/envs/py36_torch/lib/python3.6/site-packages/'
     'torch/utils/data/dataloader.py", line 435, in __next__ data = self._next_data() File "/home/wyw/.conda/envs/'
     'py36_torch/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 1058, in _next_data raise '
     "StopIteration StopIteration", "data.dataloader_exhausted", ["next(batch_iterator)"]),
    ("~/anaconda3/lib/python3.6/site-packages/torch/utils/data/dataloader.py in __next__(self)\n"
     "    269         if self.batches_outstanding == 0:\n    270             self._shutdown_workers()\n"
     "--> 271             raise StopIteration\n    272 \n    273         while True:\n\nStopIteration: ",
     "data.dataloader_exhausted", ["__next__", "iter(loader)"]),
    # DataLoader subclasses setting self.dataset after init (nonechucks#28, P-Conv#4)
    ('  File "/root/anaconda3/lib/python3.7/site-packages/nonechucks/dataloader.py", line 141, in __init__\n'
     "    self.dataset = _OriginalDataset(self.safe_dataset)\n"
     '  File "/root/anaconda3/lib/python3.7/site-packages/torch/utils/data/dataloader.py", line 271, in __setattr__\n'
     "    'initialized'.format(attr, self.__class__.__name__))\n"
     "ValueError: dataset attribute should not be set after SafeDataLoader is initialized",
     "data.dataloader_attribute_after_init", ["SafeDataLoader", "self.dataset = _OriginalDataset(self.safe_dataset)",
                                              "subclass"]),
    # InstanceNorm running stats, listed without the head line (DeblurGAN#130)
    ('        Unexpected running stats buffer(s) "model.15.conv_block.7.running_mean" and '
     '"model.15.conv_block.7.running_var" for InstanceNorm2d with track_running_stats=False. If state_dict is a '
     "checkpoint saved before 0.4.0, this may be expected because InstanceNorm2d does not track running stats by default "
     "since 0.4.0.", "data.instancenorm_running_stats", ["model.15.conv_block.7.running_mean", "0.4.0"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, not_rule", [
    # a worker that raised StopIteration itself (data.worker_error's family)
    ("StopIteration: Caught StopIteration in DataLoader worker process 0.", "data.dataloader_exhausted"),
    # a bare StopIteration from the user's own generator: no DataLoader frame
    ('  File "gen.py", line 3, in <module>\n    x = next(g)\nStopIteration', "data.dataloader_exhausted"),
    # mmcv's IterLoader handled the StopIteration and the program died of another error (mmsegmentation#2775)
    ('  File "/home/w/anaconda3/envs/MRM/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1172, in '
     "_next_data\n    raise StopIteration\nStopIteration\n\nDuring handling of the above exception, another exception "
     "occurred:\n\nTraceback (most recent call last):\n  File \"tools/train.py\", line 242, in <module>\n    main()\n"
     "KeyError: 'img'", "data.dataloader_exhausted"),
    # the constructor's own option check (data.dataloader_options)
    ("ValueError: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
     "data.dataloader_attribute_after_init"),
    # torch's load_state_dict size report is shape.state_dict_size
    ("RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with shape "
     "torch.Size([81, 2048]) from checkpoint, the shape in current model is torch.Size([7, 2048]).",
     "data.detectron2_checkpoint_shape_skipped"),
    # ordinary unexpected keys (data.state_dict_keys)
    ('RuntimeError: Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: "bn.running_mean", '
     '"bn.running_var".', "data.instancenorm_running_stats"),
    # a damaged legacy file, not the slicing bug
    ("RuntimeError: storage has wrong size: expected 4254413747647032608 got 1024", "data.legacy_storage_slicing"),
    # a LoRA text without ComfyUI's line
    ("Loading LoRA weights from lora.safetensors: 0 keys not matched", "data.comfyui_lora_key_not_loaded"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_live_instancenorm_running_stats():
    diagnosis = explain_fixture("fixtures/data/instancenorm_running_stats.py")
    assert_names(diagnosis, "data.instancenorm_running_stats", ["1.running_mean", "1.running_var", "InstanceNorm2d"])


def test_live_dataloader_attribute_after_init():
    diagnosis = explain_fixture("fixtures/data/dataloader_attribute_after_init.py")
    assert_names(diagnosis, "data.dataloader_attribute_after_init", ["batch_size", "DataLoader"], said(diagnosis))
