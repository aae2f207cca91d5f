"""nn.Module's own bookkeeping checks: a class without forward (the misspelt method named) and a value of the
wrong kind assigned to a parameter or child-module slot (the slot and the variables the value comes from).
Each fixture raises the real torch error."""

from __future__ import annotations

from conftest import assert_names, explain_fixture, explain_paste
from probe_helpers import culprit, has_fix


def test_missing_forward_names_the_misspelt_method_and_the_module():
    d = explain_fixture("fixtures/other/module_forward_misspelled.py")
    assert_names(d, "other.module_forward_missing", ["`head` (Head)", "`foward` (line 11)"])
    assert culprit(d, "foward")["repr"] == "def foward(self, x)"
    assert culprit(d, "head")["type"] == "Head"
    assert has_fix(d, "Rename `def foward(self, x)` to `def forward(self, x)`")


def test_missing_forward_on_a_pasted_module_list_says_it_is_a_container():
    d = explain_paste('NotImplementedError: Module [ModuleList] is missing the required "forward" function')
    assert_names(d, "other.module_forward_missing", ["ModuleList was called like a layer"])
    assert has_fix(d, "for layer in self.layers")


def test_tensor_assigned_to_a_parameter_names_the_parameter_and_the_value():
    d = explain_fixture("fixtures/other/parameter_assigned_tensor.py")
    assert_names(d, "other.module_slot_wrong_type", ["`embed.weight` is a registered parameter", "`pretrained`"])
    assert culprit(d, "embed.weight")["kind"] == "parameter"
    assert culprit(d, "pretrained")["shape"] == [10, 4]
    assert has_fix(d, "embed.weight.copy_(pretrained)")
    assert has_fix(d, "embed.weight = nn.Parameter(pretrained)")


def test_function_assigned_over_a_child_module_names_the_layer():
    d = explain_fixture("fixtures/other/child_module_assigned_function.py")
    assert_names(d, "other.module_slot_wrong_type", ["`self.act` is a registered child module", "`F.gelu`"])
    assert culprit(d, "self.act")["type"] == "ReLU"
    assert "F" not in {c["name"] for c in d.culprits}


def test_register_parameter_wording_is_the_same_rule():
    d = explain_paste("TypeError: cannot assign 'torch.cuda.FloatTensor' object to parameter '0' "
                      "(torch.nn.Parameter or None required)")
    assert_names(d, "other.module_slot_wrong_type", ["`0` is a registered parameter"])
