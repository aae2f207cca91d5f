"""Round-27 wordings for `other` (failures mid-run and on resume: schedulers' warnings, checkpoint folders and resumed
epochs, the Trainer's best-metric and early-stopping checks, TensorBoard and MLflow logging, Python 2's dict views,
quantized embeddings, GPTQ kernels, Triton's Python backend): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed. Live fixtures raise the errors this CPU torch
can."""

from __future__ import annotations

import importlib.util
import traceback
from pathlib import Path

import pytest
import torch
import torch.ao.nn.quantized as nnq
from torch import nn

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, raised, said


CORPUS_CASES = [
    ("r27_a.yaml#95", "other.lr_scheduler_epoch_deprecated", ["lr_scheduler.py:232", "UserWarning"]),
    ("r27_a.yaml#96", "other.lr_scheduler_epoch_deprecated", ["lr_scheduler.py:591", "DeprecationWarning"]),
    ("r27_a.yaml#102", "other.lr_scheduler_get_lr_warning", ["lr_scheduler.py:351", "get_last_lr()"]),
    ("r27_a.yaml#103", "other.lr_scheduler_get_lr_warning", ["lr_scheduler.py:416"]),
    ("r27_a.yaml#39", "other.ignite_checkpoint_dir_not_empty", ["['checkpoint_mymodel_28215.pt']", "'.pt'", "directory model"]),
    ("r27_a.yaml#40", "other.ignite_checkpoint_dir_not_empty", ["['checkpoint_2.pt']", "training/flex1/"]),
    ("r27_a.yaml#61", "other.yacs_config_key", ["['output/']", "merge_from_list"]),
    ("r27_a.yaml#60", "other.yolo_resume_finished", ["/path/to/project/model_1/weights/last.pt", "300 epochs"]),
    ("r27_a.yaml#67", "other.lightning_resume_past_max_epochs", ["current_epoch=11", "max_epochs=10"]),
    ("r27_a.yaml#68", "other.lightning_resume_mid_epoch", ["fault_tolerant_training"]),
    ("r27_a.yaml#62", "other.hf_trainer_best_metric_missing", ["'eval_metric-name'", "metrics[metric_to_check]"]),
    ("r27_a.yaml#79", "other.hf_early_stopping_arguments", ["load_best_model_at_end"]),
    ("r27_a.yaml#37", "other.tensor_format_spec", ["TensorBase", "TensorBase.__format__"]),
    ("r27_b.yaml#80", "other.embedding_quantization_qconfig", ["float_qparams_weight_only_qconfig", "nn.Embedding"]),
    ("r27_a.yaml#16", "other.tensorboard_value_type", ["<class 'NoneType'>", "None"]),
    ("r27_a.yaml#29", "other.mlflow_autologging_error", ["'Accuracy'", "float()"]),
    ("r27_a.yaml#31", "other.metric_cannot_infer_num_classes", ["num_classes"]),
    ("r27_b.yaml#42", "other.autogptq_exllama_fused_attention", ["inject_fused_attention=False", "disable_exllama=True"]),
    ("r27_a.yaml#23", "other.call_signature_mismatch", ["argument: 'y'", "_validation.py:536", "FitFailedWarning"]),
    ("r27_b.yaml#12", "other.undefined_symbol", ["libtorch_python.so", "torch-simple_0", "EXECUTION_ENV_PATH"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, said(diagnosis))


def test_python2_dict_view_is_answered_in_the_chained_paste_with_the_key_it_was_handling():
    # the TypeError the program died of is answered, after the KeyError it was handling (data.checkpoint_entry_missing's)
    diagnosis = explain_paste(corpus_message("r27_a.yaml#57"))
    assert_names(diagnosis, "other.dict_view_not_subscriptable", ["'odict_keys'", "KeyError 'epoch'", "Python 2"])
    assert diagnosis.location is not None and diagnosis.location.line == 51


@pytest.mark.parametrize("text, rule, values", [
    # Lightning 2.2+'s mid-epoch wording with its place, as posted in https://github.com/Linketic/CityGaussian/issues/112
    ("/home/xxxx/anaconda3/envs/gspl/lib/python3.9/site-packages/lightning/pytorch/loops/training_epoch_loop.py:161: "
     "You're resuming from a checkpoint that ended before the epoch ended and your dataloader is not resumable. This can "
     "cause unreliable results if further training is done. Consider using an end-of-epoch checkpoint or make your "
     "dataloader resumable by implementing the `state_dict` / `load_state_dict` interface.", "other.lightning_resume_mid_epoch",
     ["training_epoch_loop.py:161", "not resumable", "StatefulDataLoader"]),
    # Lightning 1.2+'s restored-epoch wording (pytorch-lightning#20553)
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: You restored a checkpoint with current_epoch=12, "
     "but you have set Trainer(max_epochs=10).", "other.lightning_resume_past_max_epochs", ["current_epoch=12", "max_epochs=10"]),
    # ultralytics 8's wording: the first line of https://github.com/ultralytics/ultralytics/issues/10200's paste (an excerpt)
    ("AssertionError: build/RetrainTest_YOLO_V8_NANO_640x640_Round_1/training/weights/last.pt training to 1000 epochs is "
     "finished, nothing to resume.", "other.yolo_resume_finished",
     ["build/RetrainTest_YOLO_V8_NANO_640x640_Round_1/training/weights/last.pt", "1000 epochs"]),
    # transformers 4.45+'s own KeyError wording, verbatim from https://github.com/hiyouga/LlamaFactory/issues/7906
    ("KeyError: \"The `metric_for_best_model` training argument is set to 'eval_loss', which is not found in the evaluation "
     "metrics. The available evaluation metrics are: ['eval_custom_alpaca_loss', 'eval_custom_alpaca_runtime', "
     "'eval_custom_alpaca_samples_per_second', 'eval_custom_alpaca_steps_per_second', 'epoch']. Consider changing the "
     "`metric_for_best_model` via the TrainingArguments.", "other.hf_trainer_best_metric_missing",
     ["'eval_loss'", "'eval_custom_alpaca_loss'"]),
    ("AssertionError: EarlyStoppingCallback requires metric_for_best_model is defined", "other.hf_early_stopping_arguments",
     ["metric_for_best_model"]),
    # ignite's cut wording (ignite#2771)
    ("'.pt' are already present in the directory checkpoints. If you want to use this directory anyway, pass "
     "'require_empty=False'.", "other.ignite_checkpoint_dir_not_empty", ["checkpoints", "'.pt'", "DiskSaver"]),
    # the other dict views (nltk_book#140) and Python 3.0-3.6's wording: the last line of the traceback in
    # https://github.com/koalalorenzo/python-digitalocean/issues/79 (an excerpt)
    ("TypeError: 'dict_keys' object is not subscriptable", "other.dict_view_not_subscriptable", ["'dict_keys'", "list(d.keys())[0]"]),
    ("TypeError: 'dict_values' object does not support indexing", "other.dict_view_not_subscriptable",
     ["'dict_values'", "does not support indexing"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


def _format_parameter():
    return f"{nn.Parameter(torch.zeros(2)):.4f}"  # torch: unsupported format string passed to Parameter.__format__


def _quantize_embedding_bag():
    bag = nn.EmbeddingBag(10, 4)
    bag.qconfig = torch.ao.quantization.default_qconfig  # not float_qparams_weight_only_qconfig: torch's assertion
    return nnq.EmbeddingBag.from_float(bag)


def _log_a_list():
    # TensorBoard's make_np, loaded from torch's own file (the tensorboard package this machine lacks is imported only by
    # torch.utils.tensorboard's __init__): NotImplementedError: Got <class 'list'>, but numpy array or torch tensor ...
    path = Path(torch.__file__).parent / "utils" / "tensorboard" / "_convert_np.py"
    spec = importlib.util.spec_from_file_location("tensorboard_convert_np", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_np([0.5, 0.25])


@pytest.mark.parametrize("call, rule, values", [
    (_format_parameter, "other.tensor_format_spec", ["Parameter"]),
    (_quantize_embedding_bag, "other.embedding_quantization_qconfig", ["nn.EmbeddingBag"]),
    (_log_a_list, "other.tensorboard_value_type", ["<class 'list'>"]),
])
def test_live_wordings_pasted(call, rule, values):
    # raised here by real calls, and pasted as Python prints them
    exc = raised(call)
    diagnosis = explain_paste("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, not_rule", [
    # a bare KeyError names no family: not the Trainer's best metric without its lookup line
    ("KeyError: 'eval_loss'", "other.hf_trainer_best_metric_missing"),
    # Python's own format error on None or a plain object (c-rnn-gan#11, turbinia#438)
    ("TypeError: unsupported format string passed to NoneType.__format__", "other.tensor_format_spec"),
    ("TypeError: non-empty format string passed to object.__format__", "other.tensor_format_spec"),
    # the annotation wording of old Pythons stays with builtin_generic_old_python
    ("TypeError: 'type' object is not subscriptable", "other.dict_view_not_subscriptable"),
    # the keyword passed to Checkpoint instead of DiskSaver (ignite#2771) is a signature error
    ("TypeError: Checkpoint.__init__() got an unexpected keyword argument 'require_empty'", "other.ignite_checkpoint_dir_not_empty"),
    # another warning of the scheduler module
    ("UserWarning: To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
     "other.lr_scheduler_epoch_deprecated"),
    # Lightning's EarlyStopping is lightning_monitor_missing's
    ("RuntimeError: Early stopping conditioned on metric `val_loss` which is not available. Pass in or modify your "
     "`EarlyStopping` callback to use any of the following: `train/loss`", "other.hf_early_stopping_arguments"),
    # a bare .NET SEHException names no library (Tesseract, TensorFlow.NET and TorchSharp print the same)
    ("System.Runtime.InteropServices.SEHException: 'External component has thrown an exception.'", "other.undefined_symbol"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_bare_sehexception_stays_unexplained():
    assert claimed_by(corpus_message("r27_b.yaml#30")) == []


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/other/lr_scheduler_epoch_deprecated.py", "other.lr_scheduler_epoch_deprecated", ["scheduler.step(epoch)"]),
    ("fixtures/other/lr_scheduler_get_lr_warning.py", "other.lr_scheduler_get_lr_warning", ["get_lr()"]),
    ("fixtures/other/tensor_format_spec.py", "other.tensor_format_spec", ["Tensor", "more than one element"]),
    ("fixtures/other/embedding_quantization_qconfig.py", "other.embedding_quantization_qconfig",
     ["float_qparams_weight_only_qconfig"]),
])
def test_live_fixture(fixture, rule, values):
    diagnosis = explain_fixture(fixture)
    assert_names(diagnosis, rule, values, said(diagnosis))
