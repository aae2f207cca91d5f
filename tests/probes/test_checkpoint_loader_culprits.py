"""Checkpoints and data loaders in real code: the transform between a checkpoint's keys and the model's (live and
pasted), what was handed to load_state_dict, the checkpoint file and the DataLoader by the user's own names, and
the rules for errors no rule matched before (Errno 22 from torch.load, collate of a None sample, init twice,
gather/index_select index rank). Each error is raised by a real torch call, here or in a fixture."""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import explainer
from explainer.diagnose.explain import exception_text, explain_text
from explainer.probes.runtime.checkpoint import head_prefix, training_entries

from conftest import raise_fixture
from probe_helpers import culprit, has_fix


def explained(error: pytest.ExceptionInfo):
    diagnosis = explainer.explain(error.value)
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def pasted(error: pytest.ExceptionInfo):
    """The same error explained from its message alone, as `explainer explain` sees a paste."""
    return explain_text(exception_text(error.value))


class Net(nn.Module):
    def __init__(self, classes: int = 5, head: str = "fc"):
        super().__init__()
        self.backbone = nn.Linear(8, 16)
        setattr(self, head, nn.Linear(16, classes))


# --- the transform between the key sets ------------------------------------------------------

@pytest.mark.parametrize("prefix, origin", [("module.", "DataParallel"), ("_orig_mod.", "torch.compile"),
                                            ("model.", "self.model")])
def test_a_prefixed_checkpoint_gets_the_one_line_strip_live_and_pasted(prefix, origin):
    model = Net()
    weights = {prefix + k: v for k, v in Net().state_dict().items()}
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(weights)
    one_liner = f"weights = {{k.removeprefix('{prefix}'): v for k, v in weights.items()}}"
    d = explained(error)
    assert (d.facts["key_prefix"], d.facts["prefix_side"]) == (prefix, "checkpoint")
    assert origin in d.summary and "model (Net)" in d.summary and has_fix(d, one_liner)
    assert culprit(d, "weights")["repr"] == "dict of 4 entries" and culprit(d, "model")["type"] == "Net"
    assert not has_fix(d, "strict=False)")
    text = pasted(error)
    assert text.rule == "data.state_dict_keys" and origin in text.summary and "Net" in text.summary
    assert has_fix(text, f"state_dict = {{k.removeprefix('{prefix}'): v for k, v in state_dict.items()}}")


def test_a_wrapped_model_loading_bare_weights_is_told_to_load_into_the_inner_model():
    wrapped = nn.DataParallel(Net())
    weights = Net().state_dict()
    with pytest.raises(RuntimeError) as error:
        wrapped.load_state_dict(weights)
    d = explained(error)
    assert (d.facts["key_prefix"], d.facts["prefix_side"]) == ("module.", "model")
    assert "wrapped (DataParallel) names its parameters with a 'module.' prefix" in d.summary
    assert has_fix(d, "`wrapped.module.load_state_dict(weights)`")
    assert "names its parameters with a 'module.' prefix" in pasted(error).summary


def test_pretrained_backbone_weights_loaded_into_the_whole_model_go_to_the_backbone():
    class Segmenter(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3))
            self.head = nn.Conv2d(8, 2, 1)

    model = Segmenter()
    pretrained = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3)).state_dict()
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(pretrained)
    d = explained(error)
    assert (d.facts["key_prefix"], d.facts["prefix_side"]) == ("backbone.", "model")
    assert has_fix(d, "`model.backbone.load_state_dict(pretrained)`")


def test_a_whole_training_checkpoint_points_at_the_entry_holding_the_weights():
    model = nn.Linear(10, 2)
    checkpoint = {"epoch": 7, "model_state": nn.Linear(10, 2).state_dict(), "optim_state": {"lr": 0.1}}
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(checkpoint)
    d = explained(error)
    assert d.facts["weights_entry"] == "model_state" and "epoch, model_state, optim_state" in d.summary
    assert has_fix(d, "`model.load_state_dict(checkpoint['model_state'])`")
    text = pasted(error)
    assert text.facts["weights_entry"] == "model_state"
    assert has_fix(text, "`model.load_state_dict(state_dict['model_state'])`")


def test_strict_false_is_offered_only_when_the_missing_keys_are_a_new_head():
    backbone_only = {k: v for k, v in Net().state_dict().items() if k.startswith("backbone.")}
    model = Net()
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(backbone_only)
    d = explained(error)
    assert d.facts["new_head"] == "fc." and "all in its head 'fc.'" in d.summary
    assert has_fix(d, "`missing, unexpected = model.load_state_dict(backbone_only, strict=False)`")
    assert not has_fix(d, "Do not reach for `strict=False`")
    assert pasted(error).facts["new_head"] == "fc."
    # missing keys that are not a head: strict=False is advised against, never offered
    no_backbone = {k: v for k, v in Net().state_dict().items() if k.startswith("fc.")}
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(no_backbone)
    d = explained(error)
    assert "new_head" not in d.facts and not has_fix(d, "strict=False)")
    assert has_fix(d, "Do not reach for `strict=False`")


def test_a_checkpoint_with_an_extra_head_is_loaded_strictly_without_it():
    model = nn.Sequential(nn.Linear(8, 16))
    weights = {"0.weight": torch.zeros(16, 8), "0.bias": torch.zeros(16), "classifier.weight": torch.zeros(3, 16)}
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(weights)
    d = explained(error)
    assert d.facts["extra_head"] == "classifier."
    assert has_fix(d, "if not k.startswith('classifier.')})`") and not has_fix(d, "strict=False)")


def test_a_renamed_head_is_renamed_not_loaded_loosely():
    model = Net(head="head")
    checkpoint = Net(head="classifier").state_dict()
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(checkpoint)
    d = explained(error)
    assert (d.facts["renamed_from"], d.facts["renamed_to"]) == ("classifier.", "head.")
    assert has_fix(d, "k.replace('classifier.', 'head.', 1)") and not has_fix(d, "strict=False)")


def test_a_different_number_of_classes_names_the_head_and_its_checkpoint_size():
    model = Net(classes=10)
    pretrained = Net(classes=1000).state_dict()
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(pretrained)
    d = explained(error)
    assert d.rule == "shape.state_dict_size" and culprit(d, "model.fc.weight")["checkpoint_shape"] == [1000, 16]
    assert has_fix(d, "model.fc = nn.Linear(16, 1000)")


def test_key_analysis_helpers():
    assert head_prefix(["roi_heads.box_predictor.cls_score.weight", "roi_heads.box_predictor.bbox_pred.weight"]) \
        == "roi_heads.box_predictor."
    assert head_prefix(["encoder.layer.0.weight", "encoder.layer.1.weight"]) is None
    assert training_entries(["fc.weight"], ["epoch", "state_dict", "optimizer"]) == \
        (["epoch", "state_dict", "optimizer"], "state_dict")
    # top-level parameters of a model (ViT's cls_token) are not a training checkpoint
    assert training_entries(["fc.weight"], ["cls_token", "pos_embed"]) is None


# --- what load_state_dict was given ------------------------------------------------------------

def test_a_whole_model_given_to_load_state_dict_is_named():
    d = explainer.explain(raise_fixture("fixtures/data/whole_model_as_state_dict.py"))
    assert d.rule == "data.state_dict_not_module" and d.facts["got_type"] == "Sequential"
    assert culprit(d, "checkpoint")["type"] == "Sequential" and "a whole model, a Sequential module" in d.summary
    assert has_fix(d, "`model.load_state_dict(checkpoint.state_dict())`")


def test_a_path_given_to_load_state_dict_from_text():
    d = explain_text("TypeError: Expected state_dict to be dict-like, got <class 'str'>.")
    assert d.rule == "data.state_dict_not_module" and "`torch.load` it first" in d.summary


# --- checkpoint files --------------------------------------------------------------------------

def test_a_half_written_checkpoint_names_the_path_variable_and_its_size():
    d = explainer.explain(raise_fixture("fixtures/data/checkpoint_half_written.py"))
    assert d.rule == "data.checkpoint_invalid_argument" and d.category == "data"
    file = culprit(d, "path")
    assert file["kind"] == "file" and file["path"].endswith("last.pt")
    assert d.facts["checkpoint_head"].startswith("b'PK") and "truncated" in d.summary


def test_a_checkpoint_already_deleted_is_still_named(tmp_path):
    path = str(tmp_path / "epoch_3.pt")
    with open(path, "wb"):
        pass
    with pytest.raises(EOFError) as error:
        torch.load(path, weights_only=False)
    os.remove(path)
    d = explained(error)
    assert d.rule == "data.pickle_ran_out_of_input" and culprit(d, "path")["path"] == path


def test_errno_22_wordings_outside_torch_load():
    legacy = ('  File "torch\\serialization.py", line 581, in _load\n'
              '    deserialized_objects[key]._set_from_file(f, offset, f_should_read_directly)\n'
              'OSError: [Errno 22] Invalid argument')
    d = explain_text(legacy)
    assert d.rule == "data.checkpoint_invalid_argument" and "2 GB" in d.summary
    bare = explain_text("OSError: [Errno 22] Invalid argument")
    assert bare.rule == "data.checkpoint_invalid_argument" and "DataLoader workers" in bare.summary
    assert explain_text("OSError: [Errno 22] Invalid argument: 'C:\\\\runs\\\\12:30.pth'").rule != \
        "data.checkpoint_invalid_argument"


# --- data loaders ------------------------------------------------------------------------------

class Captions(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        return {"image": torch.zeros(3, 4, 4), "caption": None if index == 0 else f"image {index}"}


def test_a_collate_error_names_the_loader_its_dataset_and_batch_size():
    val_loader = DataLoader(Captions(), batch_size=2)
    train_loader = DataLoader(Captions(), batch_size=4)
    with pytest.raises(TypeError) as error:
        next(iter(train_loader))
    d = explained(error)
    assert d.rule == "data.default_collate_type"
    assert culprit(d, "train_loader")["repr"] == \
        "DataLoader(dataset=Captions, batch_size=4, num_workers=0, collate_fn=default_collate)"
    assert "train_loader (DataLoader over Captions, batch_size=4)" in d.summary and val_loader is not None


def test_a_none_sample_among_tuples_in_a_worker():
    d = explainer.explain(raise_fixture("fixtures/data/collate_none_in_tuples.py"))
    assert d.rule == "data.collate_none_len" and d.category == "data"
    assert "__getitem__ returned None" in d.summary


def test_variable_length_samples_in_the_main_process_are_a_collate_error_with_the_loader():
    class Sentences(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return torch.zeros(3 + index)

    loader = DataLoader(Sentences(), batch_size=2)
    with pytest.raises(RuntimeError) as error:
        next(iter(loader))
    d = explained(error)
    assert d.rule == "data.collate_variable_length" and d.category == "data"
    assert culprit(d, "loader")["kind"] == "DataLoader"
    assert d.summary.startswith("loader (DataLoader over Sentences, batch_size=2, collate_fn=default_collate) stacks")
    assert explain_text(exception_text(error.value)).rule == "shape.stack_sizes"  # the bare message stays generic


def test_the_bare_nonetype_len_message_is_not_a_collate_error():
    assert explain_text("TypeError: object of type 'NoneType' has no len()").rule != "data.collate_none_len"


# --- distributed -------------------------------------------------------------------------------

def test_init_process_group_twice_points_at_the_guard():
    d = explainer.explain(raise_fixture("fixtures/distributed/init_process_group_twice.py"))
    assert d.rule == "distributed.init_twice" and d.category == "distributed"
    assert has_fix(d, "if not dist.is_initialized()") and has_fix(d, "dist.destroy_process_group()")
    assert d.location.line == 15


# --- index rank --------------------------------------------------------------------------------

def test_gather_with_a_vector_index_names_both_and_the_unsqueeze():
    q_values, actions = torch.randn(64, 4), torch.randint(0, 4, (64,))
    with pytest.raises(RuntimeError) as error:
        q_values.gather(1, actions)
    d = explained(error)
    assert d.rule == "shape.gather_index_rank"
    assert culprit(d, "q_values")["shape"] == [64, 4] and culprit(d, "actions")["shape"] == [64]
    assert has_fix(d, "`q_values.gather(1, actions.unsqueeze(1)).squeeze(1)`")
    assert "scatter" in pasted(error).summary


def test_index_select_with_a_matrix_index_names_both_and_the_direct_indexing():
    vocab, token_ids = torch.randn(100, 8), torch.randint(0, 100, (4, 6))
    with pytest.raises(IndexError) as error:
        torch.index_select(vocab, 0, token_ids)
    d = explained(error)
    assert d.rule == "shape.index_vector" and culprit(d, "token_ids")["shape"] == [4, 6]
    assert "token_ids is (4, 6), 2-D" in d.summary and has_fix(d, "`vocab[token_ids]`")
    added = explainer.explain(raise_fixture("fixtures/shape/index_add_matrix.py"))
    assert added.rule == "shape.index_vector" and added.facts["method"] == "index_add_"
    assert added.facts["index_shape"] == "(2, 20)"


def test_random_split_names_the_lengths_their_sum_and_the_datasets_own_length():
    d = explainer.explain(raise_fixture("fixtures/data/random_split_lengths.py"))
    assert d.rule == "data.random_split_lengths"
    assert d.summary.startswith("random_split got the lengths [84, 21, 5], which add up to 110, for dataset, "
                                "which holds 105 samples")
    assert culprit(d, "dataset")["length"] == 105


def test_random_split_of_a_users_dataset_never_calls_its_len():
    class Counted(Dataset):
        calls = 0

        def __len__(self):
            Counted.calls += 1
            return 10

        def __getitem__(self, index):
            return index

    data = Counted()
    with pytest.raises(ValueError) as error:
        torch.utils.data.random_split(data, [3, 3])
    calls = Counted.calls
    d = explained(error)
    assert Counted.calls == calls and "dataset_length" not in d.facts
    assert "they add up to 6" in d.summary
