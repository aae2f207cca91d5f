"""Round 20 `other` rules (second half): the training loop's schedulers (ReduceLROnPlateau stepped without its metric, a
scheduler resumed with last_epoch on an optimizer that never had 'initial_lr'), cuDNN's warning about RNN weights that
are not one block, pickling a torch function under torch 1.5.0, and the Hugging Face stack's install mismatches: a
checkpoint's model type or tokenizer class that the installed transformers does not know, names imported from another
release of transformers (or its 2019 names pytorch_pretrained_bert / pytorch_transformers), and accelerate missing for
the Trainer or device_map. Messages verbatim from the corpus and the threads cited; two raised live."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, rules_of

CORPUS = [
    ("r20_b.yaml#44", "other.plateau_step_metrics", ["'metrics'", "`self.lr_scheduler.step()`", "ReduceLROnPlateau"]),
    ("r20_b.yaml#45", "other.plateau_step_metrics", ["'metrics'", "`scheduler.step()`"]),
    ("r20_b.yaml#46", "other.plateau_step_metrics", ["'metrics'", "`self.lr_scheduler.step()`"]),
    ("r20_b.yaml#47", "other.scheduler_initial_lr_missing", ["'initial_lr'", "param_groups[0]"]),
    ("r20_b.yaml#48", "other.scheduler_initial_lr_missing", ["'initial_lr'", "param_groups[0]"]),
    ("r20_b.yaml#49", "other.scheduler_initial_lr_missing",
     ["'initial_lr'", "param_groups[0]", "`ExponentialLR(optim_g, ..., last_epoch=epoch_str - 2)`"]),
    ("r20_b.yaml#62", "other.rnn_weights_not_contiguous", ["`self.rnn(emb, hidden)`", "`flatten_parameters()`"]),
    ("r20_b.yaml#63", "other.rnn_weights_not_contiguous", ["`flatten_parameters()`", "DataParallel"]),
    ("r20_a.yaml#91", "other.transformers_unknown_model_type", ["`qwen2`", "4.37", "configuration_auto.py"]),
    ("r20_a.yaml#92", "other.transformers_unknown_model_type", ["`qwen2_5_vl`", "4.49"]),
    ("r20_a.yaml#71", "other.transformers_import_mismatch", ["`check_peft_version`", "`transformers.utils`", "4.34"]),
    ("r20_a.yaml#72", "other.transformers_import_mismatch", ["`top_k_top_p_filtering`", "`transformers`", "4.39"]),
    ("r20_b.yaml#21", "other.transformers_import_mismatch",
     ["`PreTrainedBertModel`", "`pytorch_pretrained_bert.modeling`", "`BertPreTrainedModel`"]),
    ("r20_b.yaml#22", "other.transformers_import_mismatch", ["`pytorch_pretrained_bert`", "`transformers`"]),
    ("r20_a.yaml#93", "other.accelerate_required", ["`low_cpu_mem_usage=True`", "`pip install accelerate`"]),
    ("r20_b.yaml#39", "other.pickle_not_same_object", ["`torch._C._VariableFunctions`", "torch 1.5.0", "1.5.1"]),
    ("r20_b.yaml#40", "other.pickle_not_same_object", ["`torch._C._VariableFunctions`", "`torch.tanh`"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    diagnosis = explain_paste(corpus(where))
    assert_names(diagnosis, rule, values, diagnosis.summary + " ".join(diagnosis.fixes))


# The same families in other threads' and releases' words.
PASTED = [
    # Python 3.10+ names the class (torch 2.x, live in fixtures/other/plateau_step_metrics.py)
    ("TypeError: ReduceLROnPlateau.step() missing 1 required positional argument: 'metrics'",
     "other.plateau_step_metrics", ["ReduceLROnPlateau", "'metrics'"]),
    # transformers 4.36+ for a project's own architecture (https://github.com/NVlabs/describe-anything/issues/15)
    ("ValueError: The checkpoint you are trying to load has model type `llava_llama` but Transformers does not "
     "recognize this architecture. This could be because of an issue with the checkpoint, or because your version of "
     "Transformers is out of date.", "other.transformers_unknown_model_type", ["`llava_llama`", "trust_remote_code=True"]),
    # early LLaMA conversions (https://github.com/huggingface/transformers/issues/22222)
    ("ValueError: Tokenizer class LLaMATokenizer does not exist or is not currently imported.",
     "other.transformers_unknown_model_type", ["`LLaMATokenizer`", "`LlamaTokenizer`", "4.28"]),
    # transformers 4.29's Trainer wording (https://github.com/huggingface/transformers/pull/23373)
    ("ImportError: Using the Trainer with PyTorch requires accelerate: Run pip install --upgrade accelerate",
     "other.accelerate_required", ["The Trainer with PyTorch", "`pip install --upgrade accelerate`"]),
    # and 4.30's (https://github.com/neuml/txtinstruct/issues/6)
    ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`: Please run `pip install "
     "transformers[torch]` or `pip install accelerate -U`", "other.accelerate_required",
     ["0.20.1", "`pip install transformers[torch]`"]),
    # transformers 3 (https://github.com/huggingface/transformers/issues/5842)
    ("ImportError: cannot import name 'BERT_PRETRAINED_MODEL_ARCHIVE_MAP' from 'transformers' "
     "(/home/hoa/transformers/src/transformers/__init__.py)", "other.transformers_import_mismatch",
     ["`BERT_PRETRAINED_MODEL_ARCHIVE_MAP`", "transformers 3"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, diagnosis.summary + " ".join(diagnosis.fixes))


NEW = {"other.plateau_step_metrics", "other.scheduler_initial_lr_missing", "other.rnn_weights_not_contiguous",
       "other.transformers_unknown_model_type", "other.transformers_import_mismatch", "other.accelerate_required",
       "other.pickle_not_same_object"}


@pytest.mark.parametrize("text", [
    # timm's schedulers step with the epoch (https://github.com/PharMolix/OpenBioMed/issues/12)
    "TlypeError: step() missing 1 required positional argument: 'epoch'",
    # LambdaLR.load_state_dict's side effect (https://github.com/pytorch/pytorch/issues/32756)
    "KeyError: 'lr_lambdas'",
    # a bare KeyError of a model name without transformers' frame (https://github.com/OptimalScale/LMFlow/issues/105)
    "KeyError: 'llama'",
    # auto_factory's reverse mapping (https://github.com/huggingface/transformers/issues/38517)
    "  File \"/anaconda/envs/openrlhf/lib/python3.10/site-packages/transformers/models/auto/auto_factory.py\", line "
    "767, in __getitem__\n    model_type = self._reverse_config_mapping[key.__name__]\nKeyError: 'Qwen2RMConfig'",
    # the 8-bit quantizer's check (https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1213)
    "ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install accelerate` and the latest "
    "version of bitsandbytes: `pip install -i https://pypi.org/simple/ bitsandbytes`",
    # a project's module (https://github.com/649453932/Bert-Chinese-Text-Classification-Pytorch/issues/73)
    "ModuleNotFoundError: No module named 'pytorch_pretrained'",
    # a user's class redefined after the object was made: data.pickle_class_identity's (live in fixtures/data)
    "_pickle.PicklingError: Can't pickle <class '__main__.Vocab'>: it's not the same object as __main__.Vocab",
    # another RNN warning (https://github.com/espnet/espnet/issues/1780)
    "/lib/python3.6/site-packages/torch/nn/modules/rnn.py:50: UserWarning: dropout option adds dropout after all but "
    "last recurrent layer, so non-zero dropout expects num_layers greater than 1, but got dropout=0.5 and num_layers=1",
])
def test_near_misses_are_not_claimed(text):
    assert not set(rules_of(text)) & NEW, (text, rules_of(text))


def test_live_plateau_stepped_without_its_metric():
    diagnosis = explain_fixture("fixtures/other/plateau_step_metrics.py")
    assert_names(diagnosis, "other.plateau_step_metrics", ["`scheduler.step()`", "ReduceLROnPlateau", "'metrics'"])


def test_live_scheduler_resumed_on_a_fresh_optimizer():
    diagnosis = explain_fixture("fixtures/other/scheduler_initial_lr.py")
    assert_names(diagnosis, "other.scheduler_initial_lr_missing",
                 ["`ExponentialLR(optimizer, ..., last_epoch=start_epoch - 1)`", "'initial_lr'", "param_groups[0]"])


def test_the_cudnn_warning_keeps_the_place_torch_logged_it_from():
    """The C++ place before ": UserWarning:" is shown as the diagnosis' source place (facts.torch_source)."""
    diagnosis = explain_paste(corpus("r20_b.yaml#63"))
    assert diagnosis.rule == "other.rnn_weights_not_contiguous"
    assert (diagnosis.facts["torch_source"]["file"], diagnosis.facts["torch_source"]["line"]) == (
        "aten/src/ATen/native/cudnn/RNN.cpp", 1236)
