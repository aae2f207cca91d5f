"""Round-40 leftovers for other and data (speech, RL and robotics, learners' code): each corpus message (verbatim from
the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings
of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r40_a.yaml#60", "other.omegaconf_key_not_in_config", ["eval_wer", "AudioPretrainingConfig"]),
    ("r40_b.yaml#14", "other.lerobot_feature_key_missing", ["observation.images.top"]),
    ("r35_c.yaml#39", "other.lerobot_feature_key_missing", ["observation.image"]),
    ("r40_b.yaml#17", "other.module_not_installed", ["torch", "debug_node-3"]),
    ("r40_c.yaml#5", "other.object_has_no_attribute", ["NBMasterBar", "attribute 'out'", "'str'"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # fairseq's other configs (fairseq#4267, #4057), deepspeech.pytorch's Lightning config (#670)
    ("omegaconf.errors.ConfigKeyError: Key 'cache_in_scratch' not in 'AudioFinetuningConfig'\n"
     "        full_key: cache_in_scratch\n        reference_type=Optional[AudioFinetuningConfig]\n"
     "        object_type=AudioFinetuningConfig", "other.omegaconf_key_not_in_config",
     ["cache_in_scratch", "AudioFinetuningConfig"]),
    ("omegaconf.errors.ConfigAttributeError: Key 'checkpoint_activations' not in 'HubertConfig'",
     "other.omegaconf_key_not_in_config", ["checkpoint_activations", "HubertConfig"]),
    ("Key 'period' not in 'ModelCheckpointConf'\n    full_key: checkpoint.period\n    object_type=ModelCheckpointConf",
     "other.omegaconf_key_not_in_config", ["period", "ModelCheckpointConf", "checkpoint.period"]),
    # ROS nodes: ROS 2's prefixed traceback (Marnonel6/YOLOv7_ROS2#2)
    ("[object_detection-1] ModuleNotFoundError: No module named 'torch'", "other.module_not_installed",
     ["object_detection-1", "torch"]),
    # fastprogress's bar alone, with a paste's curly quotes (fastprogress#42)
    ("AttributeError: ‘NBMasterBar’ object has no attribute ‘out’", "other.object_has_no_attribute",
     ["NBMasterBar", "attribute 'out'", "fastprogress"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, not_rule", [
    # an interpolation to a missing key (fairseq#3706) and a plain dict's missing key (FAME-ViL#2)
    ("omegaconf.errors.ConfigKeyError: str interpolation key 'model.mask_min_space' not found",
     "other.omegaconf_key_not_in_config"),
    ("omegaconf.errors.ConfigAttributeError: Missing key config\n    full_key: config\n    object_type=dict",
     "other.omegaconf_key_not_in_config"),
    # a struct-mode config's key read by the user's own code, a control (lipzh5/X2CNet#2)
    ("omegaconf.errors.ConfigAttributeError: Key 'pred_delta_from_neutral' is not in struct\n"
     "    full_key: train.pred_delta_from_neutral\n    object_type=dict", "other.omegaconf_key_not_in_config"),
    # a plain camera name without LeRobot's feature prefix (intrinsic-dev/aic#371)
    ("KeyError: 'left_camera'", "other.lerobot_feature_key_missing"),
    # a module missing outside any ROS launch: no node named
    ("ModuleNotFoundError: No module named 'x_transformers'", "other.lerobot_feature_key_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_lerobot_stats_lookup_stays_with_the_data_rule():
    # lerobot#2595: the same key raised from the dataset's meta.stats lookup is the data rule's
    text = ("  File \"/home/zhihuan/lerobot/src/lerobot/datasets/factory.py\", line 129, in make_dataset\n"
            "    dataset.meta.stats[key][stats_type] = torch.tensor(stats, dtype=torch.float32)\n"
            "KeyError: 'observation.images.rgb.left_wrist'")
    assert explain_paste(text).rule == "data.dataset_example_key_missing"
