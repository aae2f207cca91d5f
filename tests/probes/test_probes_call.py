"""The failing call itself: a module called with arguments its forward does not take, a tuple where a Tensor
belongs, a method passed without calling it, non-string names for submodules, the attribute that holds what
pickle refused. Each test raises the real error from a fixture or a real call."""

from __future__ import annotations

import os
import tempfile

import pytest
import torch
from torch import nn

import explainer
from conftest import raise_fixture
from probe_helpers import culprit, has_fix


def explain_fixture(name: str):
    diagnosis = explainer.explain(raise_fixture(f"fixtures/other/{name}.py"))
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def test_sequential_called_with_two_inputs_names_the_module_and_its_forward():
    d = explain_fixture("forward_extra_argument")
    assert d.rule == "other.module_call_arguments"
    assert culprit(d, "encoder")["type"] == "Sequential"
    assert "encoder (Sequential) was called with 2 arguments (tokens, mask)" in d.summary
    assert "forward takes (input)" in d.summary
    assert has_fix(d, "`encoder(tokens)`")


def test_a_custom_forward_signature_is_shown_without_default_values():
    class Block(nn.Module):
        def forward(self, x, mask=object(), *rest, scale: float = 1.0):
            return x

    block = Block()
    with pytest.raises(TypeError) as caught:
        block(torch.ones(2), torch.ones(2), unknown=1)
    d = explainer.explain(caught.value)
    assert d.rule == "other.module_call_arguments"
    assert d.facts["forward_params"] == "(x, mask=..., *rest, scale=...)"
    assert "object at 0x" not in d.summary + " ".join(d.fixes)


def test_tuple_passed_to_a_loss_names_the_tuple_and_what_it_holds():
    d = explain_fixture("argument_tuple_not_tensor")
    assert d.rule == "other.argument_type"
    assert culprit(d, "outputs")["type"] == "tuple of 2: Tensor (8, 4), Tensor (8, 4)"
    assert "cross_entropy_loss() needs a Tensor for its argument 'input' (position 1)" in d.summary
    assert has_fix(d, "`logits, aux = outputs`")


def test_uncalled_parameters_method_is_named_with_its_call():
    d = explain_fixture("optimizer_method_uncalled")
    assert d.rule == "other.method_not_called"
    assert culprit(d, "model.parameters()")["type"] == "Module.parameters"
    assert has_fix(d, "`model.parameters()`")


def test_integer_module_dict_keys_name_the_comprehension_and_the_string_fix():
    d = explain_fixture("module_dict_int_keys")
    assert d.rule == "other.module_name_type"
    assert culprit(d, "class_ids")["kind"] == "list"
    assert "heads is built from `c` for each c in class_ids, and these keys are ints" in d.summary
    assert has_fix(d, "`heads = nn.ModuleDict({str(c): ... for c in class_ids})`")


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(2, 2)])
        self.blocks[0].act = lambda x: x


def test_pickled_model_names_the_attribute_holding_the_lambda():
    model = Stack()
    with tempfile.TemporaryDirectory() as folder, pytest.raises(Exception) as caught:
        torch.save(model, os.path.join(folder, "model.pt"))
    d = explainer.explain(caught.value)
    assert d.rule == "other.pickle_local_object"
    assert d.facts["holder"] == "model.blocks.0.act"
    assert d.summary.startswith("model.blocks.0.act holds `Stack.__init__.<locals>.<lambda>`")
    assert has_fix(d, "make model.blocks.0.act a top-level function or an nn.Module")


def test_a_local_class_of_the_saved_object_itself_is_the_object():
    class Local(nn.Module):
        pass

    model = Local()
    with tempfile.TemporaryDirectory() as folder, pytest.raises(Exception) as caught:
        torch.save(model, os.path.join(folder, "model.pt"))
    assert explainer.explain(caught.value).facts["holder"] == "model"


def _truth_of_mask():
    mask = torch.randn(4, 3) > 0
    if mask:
        return True


def _truth_in_a_while_with_not():
    scores, best = torch.randn(8), 0.5
    while not scores > best:
        best -= 1


def _truth_of_an_or():
    map_per_class = torch.tensor([0.4, 0.7, 0.6])
    return (map_per_class > 0.5) or False


@pytest.mark.parametrize("call, name, shape", [
    (_truth_of_mask, "mask", [4, 3]),
    (_truth_in_a_while_with_not, "scores", [8]),
    (_truth_of_an_or, "map_per_class", [3]),
])
def test_the_tensor_a_truth_test_asked_one_bool_of_is_named(call, name, shape):
    # `if mask:` and `while not x > y:` fail at the statement (its positions take in the body), `a or b` at the or
    with pytest.raises(RuntimeError) as caught:
        call()
    d = explainer.explain(caught.value)
    assert d.rule == "other.tensor_bool_ambiguous"
    assert f"The condition on the failing line holds `{name}`" in d.summary
    assert culprit(d, name)["shape"] == shape
