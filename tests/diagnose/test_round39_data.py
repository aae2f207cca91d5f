"""Round-39 wordings for data (hand-written training loops and their checkpoints, biology models, tabular work around
torch): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with
the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_a.yaml#35", "data.optimizer_state_keyerror_parameter", ["sgd.py:87", "param_state = self.state[p]",
                                                                  "trainer.py:245"]),
    ("r39_a.yaml#36", "data.optimizer_state_keyerror_parameter", ["adadelta.py:43", "state = self.state[p]",
                                                                  "30008x620"]),
    ("r39_a.yaml#55", "data.optimizer_state_keyerror_parameter", ["adam.py:46", "1x2"]),
    ("r39_b.yaml#24", "data.hub_legacy_zip_many_files", ["load_state_dict_from_url", "hub.py:504",
                                                         "esm_msa1b_t12_100M_UR50S"]),
    ("r39_b.yaml#31", "data.legacy_state_dict_copy_mismatch", ["embedding.weight", "[11, 128]", "[50, 128]",
                                                               "train_agent.py:38"]),
    ("r39_b.yaml#37", "data.esmfold_keys_missing", ["trunk.structure_module.ipa.linear_q_points.linear.weight",
                                                    "trunk.structure_module.ipa.linear_kv_points.linear.bias"]),
    ("r39_b.yaml#51", "data.state_dict_errors_cut", ["GraphModel", "model.model.func.per_species_rescale.scales",
                                                     "trainer.py:699"]),
    ("r39_b.yaml#79", "data.weights_only_kwarg_old_torch", ["weights_only", "Unpickler()"]),
    ("r39_c.yaml#28", "data.tensor_from_pandas_object", ["Series", "torch.LongTensor(dfb['A'])"]),
    ("r39_c.yaml#29", "data.tensor_from_pandas_object", ["Series", "torch.tensor(v, device=device)"]),
    ("r39_c.yaml#63", "data.ptf_unknown_category", ["encoders.py:119", "3 unknown classes"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the old torch.hub in ColBERT's thread (line 490 there)
    ("  File \"/[...]/site-packages/torch/hub.py\", line 490, in load_state_dict_from_url\n    raise RuntimeError('Only "
     "one file(not dir) is allowed in the zipfile')\nRuntimeError: Only one file(not dir) is allowed in the zipfile",
     "data.hub_legacy_zip_many_files", ["hub.py:490"]),
    # weights_only on an old torch, as a TypeError (Moore-AnimateAnyone#39) and through a custom Unpickler (so-vits-svc-fork#530)
    ("TypeError: 'weights_only' is an invalid keyword argument for Unpickler()", "data.weights_only_kwarg_old_torch",
     ["weights_only", "1.13"]),
    ("TypeError: _Unpickler.__init__() got an unexpected keyword argument 'weights_only'",
     "data.weights_only_kwarg_old_torch", ["weights_only", "_Unpickler"]),
    # PyTorch 0.4's wording in SGM#3 and BIMPM-pytorch#7, and under the Error(s) header (distiller#26)
    ("RuntimeError: While copying the parameter named decoder.embedding.weight, whose dimensions in the model are "
     "torch.Size([58, 256]) and whose dimensions in the checkpoint are torch.Size([107, 256]).",
     "data.legacy_state_dict_copy_mismatch", ["decoder.embedding.weight", "[58, 256]", "[107, 256]"]),
    ("RuntimeError: While copying the parameter named context_LSTM.weight_ih_l0, whose dimensions in the model are "
     "torch.Size([400, 350]) and whose dimensions in the checkpoint are torch.Size([400, 300]).",
     "data.legacy_state_dict_copy_mismatch", ["context_LSTM.weight_ih_l0", "[400, 350]", "[400, 300]"]),
    ("RuntimeError: Error(s) in loading state_dict for ResNetCifar:\n\tWhile copying the parameter named "
     "\"layer1.0.conv1.weight\", whose dimensions in the model are torch.Size([16, 16, 3, 3]) and whose dimensions in "
     "the checkpoint are torch.Size([11, 16, 3, 3]).", "data.legacy_state_dict_copy_mismatch",
     ["ResNetCifar", "layer1.0.conv1.weight", "[16, 16, 3, 3]", "[11, 16, 3, 3]"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a key missing inside one parameter's state, not a parameter without state (YOWO#82)
    ("site-packages/torch/optim/adam.py\", line 86, in step\n    exp_avg, exp_avg_sq = state['exp_avg'], "
     "state['exp_avg_sq']\nKeyError: 'exp_avg'", "data.optimizer_state_keyerror_parameter"),
    # a keyword the weights-only unpickler of a new torch rejects (pytorch#159555)
    ("TypeError: Unpickler.__init__() got an unexpected keyword argument 'errors'", "data.weights_only_kwarg_old_torch"),
    # NumPy's ragged-list message, no pandas object (xiaoyuycr/rl#4)
    ("ValueError: setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 "
     "dimensions. The detected shape was (64, 5) + inhomogeneous part.", "data.tensor_from_pandas_object"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_legacy_copy_line_printed_before_another_error_is_not_claimed():
    # OpenNMT-py#281: the line is printed (shapes equal) before a Variable without copy_; that error is another family
    assert_left_alone(corpus_message("r39_b.yaml#30"), "data.legacy_state_dict_copy_mismatch")
