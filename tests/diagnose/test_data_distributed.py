"""Data, distributed and numerics rules on their real fixtures (in-process) and on verbatim text."""

from __future__ import annotations

import io
import re
import traceback

import pytest
import torch
from torch.utils.data import DataLoader, Dataset

import explainer
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import exception_text, explain_text
from explainer.probes.runtime.checkpoint import key_prefix, parse_state_dict_keys, renamed_prefix
from explainer.rules.base import default_rulebase

from conftest import corpus_message, explain_fixture, raise_fixture


def _culprit(diagnosis, name):
    found = [c for c in diagnosis.culprits if c["name"] == name]
    assert found, f"no culprit {name!r} in {[c['name'] for c in diagnosis.culprits]}"
    return found[0]


# --- data -------------------------------------------------------------------------------------

def test_worker_error_points_at_the_dataset_line():
    d = explain_fixture("fixtures/data/worker_keyerror.py")
    assert d.rule == "data.worker_error"
    assert d.facts["original_error"] == "KeyError: 'sat'"
    assert d.facts["worker"] == 0 and d.facts["dataset_function"] == "__getitem__"
    assert d.location.file.endswith("fixtures/data/worker_keyerror.py") and d.location.line == 18
    assert d.facts["dataset_line"] == 18
    assert "KeyError: 'sat'" in d.summary and "worker_keyerror.py:18" in d.summary
    assert any("num_workers=0" in fix for fix in d.fixes)


def test_collate_rule_claims_the_worker_wrapper_text():
    text = exception_text(raise_fixture("fixtures/data/collate_variable_length.py"))
    found = default_rulebase().match(text)
    assert found.rule.id == "data.collate_variable_length"
    assert (found.groups["first_size"], found.groups["other_size"]) == (3, 5)


def test_bare_stack_message_is_left_to_the_shape_family():
    found = default_rulebase().match(
        "RuntimeError: stack expects each tensor to be equal size, but got [3] at entry 0 and [5] at entry 1")
    assert found is None or found.rule.id != "data.collate_variable_length"


def test_collate_in_a_worker_is_explained_as_collate():
    d = explain_fixture("fixtures/data/collate_variable_length.py")
    assert d.rule == "data.collate_variable_length"
    assert any("pad_sequence" in fix for fix in d.fixes)


class _Tokens(Dataset):
    """Token ids of different lengths, each sample a bare tensor, a (tokens, label) tuple or a dict."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int):
        tokens = torch.arange(3 + index)
        return {"tokens": tokens, "label": index % 2} if self.kind == "dict" else \
            (tokens, index % 2) if self.kind == "tuple" else tokens


def _suggested_collate(fix: str):
    """The collate_fn the rule's first fix writes out (our runbook's text, not user code), defined."""
    [code] = re.findall(r"`(def collate\(batch\): .*?)` and ", fix)
    namespace = {"torch": torch}
    exec(code, namespace)
    return namespace["collate"]


@pytest.mark.parametrize("workers", [0, 1])
@pytest.mark.parametrize("kind", ["tensor", "tuple", "dict"])
def test_the_padding_collate_suggested_runs_on_the_samples_that_failed(kind, workers):
    with pytest.raises(RuntimeError) as caught:
        next(iter(DataLoader(_Tokens(kind), batch_size=4, num_workers=workers)))
    d = explainer.explain(caught.value)
    assert d.rule == "data.collate_variable_length"
    collate = _suggested_collate(d.fixes[0])
    batch = next(iter(DataLoader(_Tokens(kind), batch_size=4, collate_fn=collate)))
    tokens = batch["tokens"] if kind == "dict" else batch[0] if kind == "tuple" else batch
    assert tokens.shape == (4, 6) and tokens[0].tolist() == [0, 1, 2, 0, 0, 0]
    if kind != "tensor":
        labels = batch["label"] if kind == "dict" else batch[1]
        assert labels.tolist() == [0, 1, 0, 1]


def test_a_pasted_worker_traceback_of_tuple_samples_gets_the_tuple_collate():
    with pytest.raises(RuntimeError) as caught:
        next(iter(DataLoader(_Tokens("tuple"), batch_size=4, num_workers=1)))
    [d] = explain_stream(io.StringIO("".join(traceback.format_exception(caught.value))))
    assert d.rule == "data.collate_variable_length" and "zip(*batch)" in d.fixes[0]


def test_worker_killed_by_bus_error_reads_the_signal_from_the_cause():
    d = explain_fixture("fixtures/data/worker_killed_bus_error.py")
    assert d.rule == "data.worker_killed"
    assert d.facts["signal"] == "Bus error"
    assert "shared memory" in d.summary
    assert any("--shm-size" in fix for fix in d.fixes)
    assert any("set_sharing_strategy('file_system')" in fix for fix in d.fixes)


def test_worker_killed_from_text_alone():
    d = explain_text("RuntimeError: DataLoader worker (pid 56811) is killed by signal: Bus error. It is possible "
                     "that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.")
    assert d.rule == "data.worker_killed" and d.facts["pid"] == 56811 and d.facts["signal"] == "Bus error"
    assert any("--shm-size" in fix for fix in d.fixes)


def test_legacy_worker_reraise_names_the_dataset_frame():
    # https://github.com/jakeoung/Unet_pytorch/issues/4 (torch 0.4's 'IndexError: Traceback ...' re-raise)
    d = explain_text(corpus_message("r4_a.yaml#73"))
    assert d.rule == "data.worker_error"
    assert "IndexError" in d.summary and "__getitem__ at /dataset.py:46" in d.summary, d.summary


def test_state_dict_used_as_the_model():
    d = explain_fixture("fixtures/data/state_dict_as_model.py")
    assert d.rule == "data.state_dict_not_module"
    assert "`collections.OrderedDict` was used as a model (`.eval`)" in d.summary, d.summary
    assert any("load_state_dict" in fix for fix in d.fixes)
    called = explain_text("TypeError: 'collections.OrderedDict' object is not callable")
    assert called.rule == "data.state_dict_not_module" and "not callable" in called.summary


def test_dict_batches_and_model_outputs_are_not_state_dicts():
    # a batch dict moved to the GPU, a segmentation model's OrderedDict output used as a tensor
    for message in ("AttributeError: 'dict' object has no attribute 'to'",
                    "AttributeError: 'collections.OrderedDict' object has no attribute 'argmax'"):
        d = explain_text(message)
        assert d.rule != "data.state_dict_not_module", message


def test_checkpoint_without_a_state_dict_key():
    d = explain_fixture("fixtures/data/checkpoint_no_state_dict_key.py")
    assert d.rule == "data.checkpoint_missing_key"
    assert "checkpoint['state_dict']" in d.summary and any("ckpt.get('state_dict', ckpt)" in f for f in d.fixes)
    # other missing keys are the user's own dictionaries
    assert explain_text("KeyError: 'categories'").rule is None
    assert explain_text('KeyError: \'unexpected key "module.fc.weight" in state_dict\'').rule != \
        "data.checkpoint_missing_key"


def test_empty_checkpoint_names_the_file_live():
    d = explain_fixture("fixtures/data/checkpoint_empty_file.py")
    assert d.rule == "data.pickle_ran_out_of_input"
    assert "model.pth (0 bytes)" in d.summary, d.summary
    # the bare line is any pickle.load's (a dataset's own cache file): only torch.load's or spawn's frames make it ours
    assert explain_text("EOFError: Ran out of input").rule is None


def test_spawn_bootstrapping_points_at_the_main_guard():
    d = explain_text("RuntimeError:\n        An attempt has been made to start a new process before the\n"
                     "        current process has finished its bootstrapping phase.")
    assert d.rule == "data.spawn_bootstrapping"
    assert "freeze_support()" in d.summary and any("__name__ == '__main__'" in f for f in d.fixes)


def test_state_dict_module_prefix():
    d = explain_fixture("fixtures/data/state_dict_module_prefix.py")
    assert d.rule == "data.state_dict_keys"
    assert (d.facts["key_prefix"], d.facts["prefix_side"]) == ("module.", "checkpoint")
    assert d.facts["missing_count"] == 4 and d.facts["model_name"] == "model"
    assert "DataParallel" in d.summary
    assert "consume_prefix_in_state_dict_if_present(checkpoint, 'module.')" in d.fixes[0]
    assert any("strict=False" in fix and "fc.weight, fc.bias, head.weight, head.bias" in fix for fix in d.fixes)
    assert _culprit(d, "model")["type"] == "Net"


def test_state_dict_renamed_submodule():
    d = explain_fixture("fixtures/data/state_dict_renamed.py")
    assert d.rule == "data.state_dict_keys"
    assert (d.facts["renamed_from"], d.facts["renamed_to"]) == ("classifier.", "head.")
    assert "key_prefix" not in d.facts
    assert "k.replace('classifier.', 'head.', 1)" in d.fixes[0]


def test_state_dict_prefix_from_text_alone():
    # https://github.com/abeardear/pytorch-YOLO-v1/issues/4
    d = explain_text(corpus_message("r14_a.yaml#34"))
    assert d.rule == "data.state_dict_keys" and d.facts["key_prefix"] == "module."
    assert "module.features.0.weight" in d.summary and "VGG" in d.summary and "DataParallel" in d.summary
    assert "state_dict = {k.removeprefix('module.'): v for k, v in state_dict.items()}" in d.fixes[0]
    assert "consume_prefix_in_state_dict_if_present(state_dict, 'module.')" in d.fixes[0]


def test_state_dict_key_analysis():
    missing, unexpected = parse_state_dict_keys(
        'Missing key(s) in state_dict: "module.fc.weight", "module.fc.bias". \n'
        '\tUnexpected key(s) in state_dict: "fc.weight", "fc.bias". ')
    assert key_prefix(missing, unexpected) == ("module.", "model")
    assert key_prefix(["fc.weight"], ["head.weight"]) is None
    assert renamed_prefix(["encoder.layer.0.weight"], ["backbone.layer.0.weight"]) == ("backbone.", "encoder.")
    assert renamed_prefix(["fc.weight", "fc.bias"], ["other.thing"]) is None


def test_batchnorm_batch_of_one_names_module_and_loader():
    d = explain_fixture("fixtures/data/batchnorm_batch_one.py")
    assert d.rule == "shape.batchnorm_batch_one"
    assert d.facts["module"] == "model.bn" and d.facts["input_size"] == "1, 10"
    assert (d.facts["loader_name"], d.facts["batch_size"]) == ("loader", 4)
    assert "DataLoader(..., batch_size=4, drop_last=True)" in d.fixes[0]
    assert any("model.eval()" in fix for fix in d.fixes)
    assert _culprit(d, "model.bn")["type"] == "BatchNorm1d"


def test_target_out_of_bounds_reads_classes_from_the_output():
    d = explain_fixture("fixtures/data/target_out_of_bounds.py")
    assert d.rule == "data.target_out_of_bounds"
    assert (d.facts["target_value"], d.facts["num_classes"]) == (5, 5)
    assert (d.facts["input_name"], d.facts["target_name"]) == ("logits", "labels")
    assert "0..4" in d.summary and "1-based" in d.summary
    assert "`labels = labels - 1`" in d.fixes[0]
    assert any("num_classes = 6" in fix for fix in d.fixes)
    assert _culprit(d, "logits")["shape"] == [4, 5]


def test_negative_target_from_text_suggests_ignore_index_only_live():
    d = explain_text("IndexError: Target -1 is out of bounds.")
    assert d.rule == "data.target_out_of_bounds" and d.facts["target_value"] == -1


def test_empty_optimizer_finds_the_plain_list():
    d = explain_fixture("fixtures/data/empty_optimizer.py")
    assert d.rule == "other.empty_optimizer"
    assert d.facts["param_count"] == 0
    assert "model.layers" in d.facts["unregistered"]
    assert "self.layers = nn.ModuleList([...])" in d.fixes[0]
    assert _culprit(d, "model.layers")["type"] == "list"


# --- distributed ------------------------------------------------------------------------------

def test_ddp_unused_parameters_named_from_the_live_model():
    d = explain_fixture("fixtures/distributed/ddp_unused_parameters.py")
    assert d.rule == "distributed.ddp_unused_parameters"
    assert d.facts["unused_indices"] == "2 3" and d.facts["rank"] == 0
    assert d.facts["unused_parameters"] == "aux_head.weight, aux_head.bias"
    assert d.facts["unused_modules"] == "aux_head"
    assert _culprit(d, "model.module.aux_head")["type"] == "Linear"
    assert "aux_head" in d.fixes[0]
    assert any("find_unused_parameters=True" in fix for fix in d.fixes)


def test_ddp_parameter_names_from_text():
    rule = default_rulebase().by_id["distributed.ddp_unused_parameters"]
    d = explain_text(rule.examples[1].message)
    assert d.rule == rule.id and d.facts["rank"] == 3
    assert d.facts["unused_names"].startswith("mask_encoder.sensory_update.transform.bias")
    assert d.facts["unused_indices"] == "282 283"


def test_nccl_timeout_numbers():
    d = explain_text("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, "
                     "NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600030 milliseconds before timing out.")
    assert d.rule == "distributed.nccl_timeout"
    assert (d.facts["seq_num"], d.facts["op_type"], d.facts["timeout_ms"]) == (808, "ALLREDUCE", 600000)
    assert "10.0 min" in d.summary and "SeqNum=808" in d.summary
    assert any("timedelta" in fix for fix in d.fixes)


def test_child_failed_exit_code():
    rule = default_rulebase().by_id["distributed.child_failed"]
    summary = next(e.message for e in rule.examples if "Root Cause" in e.message and "exitcode  : 1 " in e.message)
    d = explain_text(summary)
    assert d.rule == rule.id and (d.facts["root_rank"], d.facts["exitcode"]) == (0, 1)
    assert "Python exception" in d.summary


# --- numerics ---------------------------------------------------------------------------------

def test_multinomial_nan_finds_the_non_finite_tensors():
    d = explain_fixture("fixtures/numerics/multinomial_nan.py")
    assert d.rule == "numerics.nan_probabilities"
    assert d.facts["nonfinite"] == "logits (1 inf), probs (3 nan)"
    assert d.facts["first_nonfinite"] == "logits"
    assert _culprit(d, "probs")["nan"] == 3


def test_multinomial_zero_sum():
    d = explain_fixture("fixtures/numerics/multinomial_zero_sum.py")
    assert d.rule == "numerics.nan_probabilities" and d.facts["invalid_reason"] == "sum of probabilities <= 0"


def test_clip_grad_nonfinite_lists_values_before_gradients():
    d = explain_fixture("fixtures/numerics/clip_grad_nonfinite.py")
    assert d.rule == "numerics.nonfinite_grad_norm" and d.facts["norm_type"] == "2.0"
    assert d.facts["first_nonfinite"] == "loss"
    assert "model.weight.grad (4 nan)" in d.facts["nonfinite"]
    assert _culprit(d, "model.bias.grad")["inf"] == 1
