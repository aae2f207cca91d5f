"""Round-19 wordings for data and distributed (learners' DataLoader code, torch 0.3-era slicing, diffusers and
open_clip weights, ComfyUI and Triton loading checkpoints, torchrun summaries, torchtune recipes): each corpus message
(verbatim from the opened rounds) or pasted message (verbatim from the thread it cites) is claimed by the right rule
with the values it holds named; near misses stay unclaimed; the errors torch can raise here are explained live."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # `.next()` on a DataLoader iterator (removed in torch 1.13) or on the DataLoader itself
    ("r19_b.yaml#42", "data.dataloader_iter_next",
     ["`data_loader_iter.next()`", "_MultiProcessingDataLoaderIter", "PyTorch 1.13", "`next(data_loader_iter)`"]),
    ("r19_b.yaml#43", "data.dataloader_iter_next", ["`dataiter.next()`", "_SingleProcessDataLoaderIter", "`next(dataiter)`"]),
    ("r19_b.yaml#44", "data.dataloader_iter_next", ["`dataloader.next()`", "`DataLoader`", "not an iterator"]),
    # torch 0.3's empty slice
    ("r19_b.yaml#73", "data.empty_slice_old_torch",
     ["`targets[offset:offset + size]`", "offset:offset + size", "`targets`", "Torch 0.3"]),
    # weights that are not where the loader looks
    ("r19_a.yaml#42", "data.diffusers_missing_keys",
     ["`AutoencoderKL`", "digiplay/Photon_v1", "16 of the model's weights", "decoder.mid_block.attentions.0.value.bias",
      "`to_q`"]),
    ("r19_a.yaml#68", "data.openclip_pretrained_not_found",
     ["`./pre/open_clip_pytorch_model.bin`", "ViT-L-14", "'laion2b_s32b_b82k'", "working directory"]),
    ("r17_a.yaml#53", "data.state_dict_empty_index",
     ["`list(para_state_dict.values())[-1]`", "`para_state_dict` has no entries at all"]),
    # PytorchStreamReader named, and the model ComfyUI had just loaded
    ("r19_a.yaml#79", "data.checkpoint_corrupt", ["PytorchStreamReader", "failed finding central directory", "WanVAE"]),
    ("r19_a.yaml#80", "data.checkpoint_corrupt", ["PytorchStreamReader", "failed finding central directory"]),
    # torchrun's summaries: the exit code and pid as printed, a summary with no other failures
    ("r19_a.yaml#46", "distributed.child_failed", ["./train_network.py", "local_rank: 1", "exitcode  : 1 (pid: 7808)"]),
    ("r19_a.yaml#47", "distributed.child_failed", ["flux_train.py", "<NO_OTHER_FAILURES>", "one rank failed alone"]),
    ("r19_a.yaml#48", "distributed.child_failed", ["failed (exitcode: 1) local_rank: 1 (pid: 399410)"]),
    ("r15_b.yaml#13", "distributed.rendezvous_timeout", ["rank: 0", "world_size=2, worker_count=1, timeout=0:05:00"]),
    # torchtune's recipe rejecting its config on every rank
    ("r14_b.yaml#83", "distributed.torchtune_recipe_config",
     ["FullFinetuneRecipeDistributed", "full_finetune_distributed.py", "line 184", "`minimize_all_reduces`"]),
    # other writers' rules, widened: Triton's model and version, Python 3.7's pickle wording
    ("r18_a.yaml#15", "compile.jit_load_not_torchscript", ["'model' version 1", "`constants.pkl`"]),
    ("r18_b.yaml#56", "other.pickle_unpicklable", ["`module`", "can't pickle module objects"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


PASTED_CASES = [
    # next() on the DataLoader itself (pytorch/tutorials#2963)
    ("    X, y = next(dl)\n           ^^^^^^^^\nTypeError: 'DataLoader' object is not an iterator",
     "data.dataloader_iter_next", ["`DataLoader`", "next(iter(loader))"]),
    # the tutorial's line in a notebook (https://github.com/CompVis/metric-learning-divide-and-conquer/issues/13)
    (corpus_message("r19_b.yaml#43"), "data.dataloader_iter_next", ["`_SingleProcessDataLoaderIter`", "`next(dataiter)`"]),
    # a modified UNet class with extra attention blocks (haoningwu3639/StoryGen#22)
    ("ValueError: Cannot load <class 'model.unet_2d_condition.UNet2DConditionModel'> from "
     "/home/jay/StoryGen/ckpt/stable-diffusion-v1-5/ because the following keys are missing:\n up_blocks.1.attentions.1."
     "transformer_blocks.0.attn3.to_out.0.bias, down_blocks.1.attentions.0.transformer_blocks.0.attn3.to_out.0.weight",
     "data.diffusers_missing_keys",
     ["`UNet2DConditionModel`", "/home/jay/StoryGen/ckpt/stable-diffusion-v1-5/", "2 of the model's weights",
      "up_blocks.1.attentions.1.transformer_blocks.0.attn3.to_out.0.bias", "extra layers"]),
    # the empty slice with no code line (ruotianluo/self-critical.pytorch#5)
    ("ValueError: result of slicing is an empty tensor", "data.empty_slice_old_torch", ["zero elements", "size 0"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, text=" ".join([diagnosis.summary, *diagnosis.fixes]))


ROUND19_RULES = {"data.dataloader_iter_next", "data.empty_slice_old_torch", "data.diffusers_missing_keys",
                 "data.openclip_pretrained_not_found", "data.state_dict_empty_index",
                 "distributed.torchtune_recipe_config"}


@pytest.mark.parametrize("text", [
    # another attribute of a DataLoader (Jixuan-Fan/Momentum-GS#18)
    "AttributeError: 'DataLoader' object has no attribute 'copy'",
    # diffusers' shape check (levihsu/OOTDiffusion#34)
    "ValueError: Cannot load ../checkpoints/ootd/ootd_hd/checkpoint-36000 because conv_in.weight expected shape "
    "tensor(..., device='meta', size=(320, 8, 3, 3)), but got torch.Size([320, 4, 3, 3]).",
    # timm's unknown architecture (shimmer-ghq/DeepFidelity#2)
    "RuntimeError: Unknown model (uniformer_large_ls)",
    # a list index out of range in a dataset, no state dict in the line (gzaraunitn/autolabel#4)
    "  File \"/home/imi1214/data2/pengai/autolabel/data/dataset.py\", line 154, in get\n"
    "    seg_imgs = [Image.open(frame_paths[p]).convert(\"RGB\")]\nIndexError: list index out of range",
    # a ValueError of a recipe's library call, not its config check (FlagOpen/FlagEmbedding#1478)
    "ValueError: Default process group has not been initialized, please make sure to call init_process_group.",
])
def test_near_misses_are_not_claimed_by_the_round19_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in ROUND19_RULES]
    assert not claimed, (text, claimed)


def test_dataiter_next_is_explained_live():
    diagnosis = explain_fixture("fixtures/data/dataloader_iter_next.py")
    assert_names(diagnosis, "data.dataloader_iter_next",
                 ["`dataiter.next()`", "_SingleProcessDataLoaderIter", "`next(dataiter)`"])


def test_an_empty_state_dict_is_named_live():
    diagnosis = explain_fixture("fixtures/data/state_dict_empty_index.py")
    assert_names(diagnosis, "data.state_dict_empty_index",
                 ["`list(para_state_dict.values())[-1]`", "`para_state_dict` has no entries at all"])
