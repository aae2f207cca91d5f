"""Round-35 wordings for other, part two (Hydra targets, HQQ/AWQ/bitsandbytes setup, RLlib spec checks, fusion and
pruning API misuse, torch.from_numpy given the wrong type): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r35_c.yaml#34", "other.hydra_error_locating_target",
     ["diffusion_policy.dataset", "train_diffusion_transformer_node_workspace"]),
    ("r35_c.yaml#45", "other.hqq_quant_config_missing", ["quant_config", "linear_layer"]),
    ("r35_c.yaml#46", "other.awq_kernels_missing", ["AWQ kernels"]),
    ("r35_c.yaml#52", "other.rllib_spec_check_failed", ["TorchMLPEncoder.forward", "torch.Tensor", "NestedDict"]),
    ("r35_c.yaml#59", "other.bnb_cuda_setup_failed", ["libsbitsandbytes_cpu.so"]),
    ("r35_c.yaml#65", "other.fuse_conv_bn_mode_mismatch", ["Conv and BN"]),
    ("r35_c.yaml#74", "other.prune_remove_not_pruned", ["weight", "prune.py:1128"]),
    ("r35_c.yaml#79", "other.from_numpy_not_ndarray", ["tuple", "agent.py:83"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # transformers' wording for the same missing kernels (AutoAWQ_kernels#19)
    ("ValueError: auto-awq kernels is needed to be installed to use `.backward()`. Make sure to install the auto-awq "
     "kernels by following the installation guides in https://github.com/casper-hansen/AutoAWQ_kernels",
     "other.awq_kernels_missing", ["autoawq-kernels", ".backward()"]),
    # the misspelled CPU library with its fallback line (bitsandbytes#228)
    ("CUDA SETUP: Required library version not found: libsbitsandbytes_cpu.so. Maybe you need to compile it from "
     "source?\nCUDA SETUP: Defaulting to libbitsandbytes_cpu.so...", "other.bnb_cuda_setup_failed",
     ["libsbitsandbytes_cpu.so", "torch.cuda.is_available()"]),
    # from_numpy given a list, a tensor, and NumPy's own array from another NumPy build
    ("  File \"E:\\Python\\ultralytics_afpn\\ultralytics\\models\\yolo\\detect\\predict_deepsort.py\", line 240, in\n "
     "preprocess\n    img = torch.from_numpy(img).to(self.model.device)\nTypeError: expected np.ndarray (got list)",
     "other.from_numpy_not_ndarray", ["list"]),
    ("TypeError: expected np.ndarray (got Tensor)", "other.from_numpy_not_ndarray", ["Tensor"]),
    ("TypeError: expected np.ndarray (got numpy.ndarray)", "other.from_numpy_not_ndarray", ["NumPy"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/other/fuse_conv_bn_mode_mismatch.py", "other.fuse_conv_bn_mode_mismatch", ["Conv and BN"]),
    ("fixtures/other/prune_remove_not_pruned.py", "other.prune_remove_not_pruned", ["weight", "Linear"]),
    ("fixtures/other/from_numpy_not_ndarray.py", "other.from_numpy_not_ndarray", ["tuple"]),
])
def test_live_messages(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # Hydra's error about the target's constructor, not its import (snarf#5)
    ("TypeError: Error instantiating 'lib.dataset.cape.CAPEDataProcessor' : __init__() missing 2 required positional "
     "arguments: 'opt'", "other.hydra_error_locating_target"),
    # a config key Hydra's struct mode refuses, not a target (HN-UnifiedSourceFilterGAN#2)
    ("Key 'chdir' not in 'JobConf'\n    full_key: hydra.job.chdir\n    reference_type=JobConf\n    object_type=JobConf\n\n"
     "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.", "other.hydra_error_locating_target"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
