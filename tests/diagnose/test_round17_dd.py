"""Round-17 wordings for data and distributed: each corpus message (verbatim from the opened rounds) or pasted message
(verbatim from the thread it cites) is claimed, from its text alone, by the right rule with the values it holds named;
near misses stay unclaimed; the wordings torch 2.13 still raises (a None among the tensors given to torch.cat, a
Dataset whose __len__ is negative) are explained live."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, said

CORPUS_CASES = [
    # data
    ("r17_a.yaml#20", "data.dataset_len_negative", ["`__len__`", "input_chunk_length"]),
    ("r17_a.yaml#21", "data.tabnet_unknown_valid_targets", ["1 was not: 11", "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12}"]),
    ("r17_a.yaml#41", "data.tensor_list_non_tensor", ["Element 0", "NoneType"]),
    ("r17_a.yaml#52", "data.state_dict_param_key_missing", ["'Student.backbone.conv1._conv.weight'", "'Student.'"]),
    ("r17_b.yaml#62", "data.torchscript_loaded_with_torch_load", ["`__torch__`", "torch.jit.load"]),
    ("r17_b.yaml#61", "other.unpickle_module_missing", ["`models`"]),
    # distributed
    ("r17_b.yaml#76", "distributed.launch_local_rank_argument", ["main.py refused `--local-rank=0`", "since torch 2.0"]),
    ("r17_b.yaml#77", "distributed.launch_local_rank_argument", ["train.py", "-m`", "declares no such argument"]),
    ("r17_b.yaml#78", "distributed.launch_local_rank_argument", ["train_adgen.py refused `--local_rank=2`"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


@pytest.mark.parametrize("where, rule, path", [
    ("r17_b.yaml#13", "data.state_dict_keys", "Finetune-c9-mpncovresnet50-MPNCOV-reproduce-lr0.001-bs40/checkpoint.pth.tar"),
    ("r17_b.yaml#31", "data.checkpoint_not_a_checkpoint", "checkpoints/SIM/ckpt_best.pth"),
    ("r17_b.yaml#58", "other.file_format_version_mismatch", "STDF_data/exp/MFQEv2_R3_enlarge300x/ckp_290000.pt"),
])
def test_the_file_a_log_line_says_was_loading_is_named_in_a_fix(where, rule, path):
    """The last "loading ... X.pth" line printed above the traceback (not an earlier "loaded" one) names the file."""
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == rule, diagnosis.rule
    assert diagnosis.facts.get("loading_path") == path, diagnosis.facts
    assert any(path in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_the_launcher_report_after_the_workers_refusal_is_its_consequence():
    diagnoses = [d for d in explain_stream(io.StringIO(corpus_message("r17_b.yaml#76"))) if d.rule]
    lead = diagnoses[0]
    assert lead.rule == "distributed.launch_local_rank_argument", [d.rule for d in diagnoses]
    assert "exitcode: 2" in lead.facts.get("launcher_report", ""), lead.facts


PASTED_CASES = [
    ("ValueError: Some specified arguments are not used by the HfArgumentParser: ['--local-rank=0']",  # transformers#22171
     "distributed.launch_local_rank_argument", ["HfArgumentParser refused `'--local-rank=0'`", "--local-rank"]),
    ("usage: trainval_distributed.py [-h] [--work-dir WORK_DIR] [--local_rank LOCAL_RANK]\n"
     "trainval_distributed.py: error: unrecognized arguments: --local-rank=1",  # lmy98129/VLPD#6
     "distributed.launch_local_rank_argument", ["the script declares `--local_rank`", "with a hyphen"]),
    ("DETR training and evaluation script: error: unrecognized arguments: --local-rank=0",  # IDEA-Research/ED-Pose#11
     "distributed.launch_local_rank_argument", ["DETR training and evaluation script refused `--local-rank=0`"]),
    ('File "/root/miniconda3/envs/myconda/lib/python3.7/site-packages/torch/serialization.py", line 782, in _load\n'
     "result = unpickler.load()\nModuleNotFoundError: No module named '__torch__'",  # pytorch/pytorch#50261
     "data.torchscript_loaded_with_torch_load", ["TorchScript archive"]),
    ("TypeError: expected Tensor as element 0 in argument 0, but got list",  # pytorch/pytorch#71479
     "data.tensor_list_non_tensor", ["is a list", "nested"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values)


@pytest.mark.parametrize("text, rules", [
    # an argument of the user's own that the parser lacks, not the launcher's
    ("ValueError: Some specified arguments are not used by the HfArgumentParser: ['--scale_factor', '2']",
     {"distributed.launch_local_rank_argument"}),  # CircleRadon/TokenPacker#23
    # the whole argument is not a list (a deque): another message
    ("TypeError: stack(): argument 'tensors' (position 1) must be tuple of Tensors, not collections.deque",
     {"data.tensor_list_non_tensor"}),  # pytorch/pytorch#6844
    # the checkpoint's 'state_dict' entry, not a parameter name
    ("KeyError: 'state_dict'", {"data.state_dict_param_key_missing"}),  # mit-han-lab/temporal-shift-module#81
    # the user's own import of the repository's package, not torch.load's unpickler
    ("    from models import build_model, build_loss\nModuleNotFoundError: No module named 'models'",
     {"other.unpickle_module_missing", "data.torchscript_loaded_with_torch_load"}),  # WenmuZhou/DBNet.pytorch#94
])
def test_near_misses_are_not_claimed_by_the_round17_rules(text, rules):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in rules]
    assert not claimed, (text, claimed)


def test_fairscales_consolidation_keyerror_keeps_its_own_rule():
    """A parameter name's KeyError inside fairscale's consolidate_shard_weights is that library's known bug."""
    diagnosis = explain_paste(corpus_message("r8_b.yaml#122"))
    assert diagnosis.rule == "distributed.fairscale_consolidate_shared_param", diagnosis.rule


def test_a_none_among_the_tensors_given_to_cat_is_explained_live():
    diagnosis = explain_fixture("fixtures/data/tensor_list_none.py")
    assert_names(diagnosis, "data.tensor_list_non_tensor", ["Element 0", "NoneType", "missing `return`"])
    assert diagnosis.location is not None and "torch.cat(features" in diagnosis.location.code, diagnosis.location


def test_a_dataset_with_a_negative_length_is_named_live():
    diagnosis = explain_fixture("fixtures/data/dataset_len_negative.py")
    assert_names(diagnosis, "data.dataset_len_negative", ["train_dataset (WindowDataset)"])
    assert any(c["name"] == "train_dataset" and c["type"] == "WindowDataset" for c in diagnosis.culprits), \
        diagnosis.culprits
    assert "input_chunk_length" in said(diagnosis)
