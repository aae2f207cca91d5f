"""Runtime probes for the optimizer's parameter and state checks, the gloo collectives' buffer checks and
oneDNN's dtype check. Each fixture raises the real torch error; the diagnosis names what the user's code names."""

from __future__ import annotations

from conftest import assert_names, explain_fixture, explain_paste
from probe_helpers import culprit, has_fix


def _explain(path: str):
    diagnosis = explain_fixture(path)
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def test_non_leaf_parameter_is_named_with_the_line_that_made_it():
    d = _explain("fixtures/autograd/optimizer_non_leaf.py")
    assert_names(d, "autograd.optimizer_param_rejected",
                 ["`temperature`", "MulBackward0", "torch.ones(1, requires_grad=True) * 0.5"])
    assert culprit(d, "temperature")["grad_fn"] == "MulBackward0"
    assert has_fix(d, "`temperature = nn.Parameter(")


def test_module_in_the_parameter_list_is_named_as_a_module():
    d = _explain("fixtures/autograd/optimizer_param_not_tensor.py")
    assert_names(d, "autograd.optimizer_param_rejected", ["`model`", "Linear", "`.parameters()`"])
    assert culprit(d, "model")["kind"] == "module"


def test_parameter_in_two_groups_names_no_wrong_culprit():
    d = _explain("fixtures/autograd/optimizer_param_twice.py")
    assert_names(d, "autograd.optimizer_param_rejected", ["two parameter groups"])
    assert d.culprits == []


def test_optimizer_state_from_a_smaller_model_gives_both_group_sizes():
    d = _explain("fixtures/data/optimizer_state_group_size.py")
    assert_names(d, "data.optimizer_state_groups", ["`optimizer`", "4 parameters in group 0", "has 2 there", "(`saved`)"])
    assert culprit(d, "optimizer")["type"] == "SGD"
    assert has_fix(d, "with 2 parameters where this one has 4")


def test_optimizer_state_with_another_grouping_lists_the_groups():
    d = _explain("fixtures/data/optimizer_state_group_count.py")
    assert_names(d, "data.optimizer_state_groups", ["groups of 2, 2 parameters", "groups of 4"])
    assert "group_index" not in d.facts


def test_all_gather_list_sized_by_a_constant_names_the_list_and_the_tensor():
    d = _explain("fixtures/distributed/all_gather_list_length.py")
    assert_names(d, "distributed.collective_buffer_size", ["`outputs` holds 4 tensors", "world size 1", "`logits`"])
    assert culprit(d, "outputs")["length"] == 4
    assert culprit(d, "logits")["shape"] == [3, 5]
    assert has_fix(d, "`outputs = [torch.zeros_like(logits) for _ in range(dist.get_world_size())]`")


def test_all_gather_buffers_of_another_size_name_both_shapes():
    d = _explain("fixtures/distributed/all_gather_tensor_size.py")
    assert_names(d, "distributed.collective_buffer_size", ["`buffers` holds tensors of shape (8)", "`losses` has shape (6)"])
    assert has_fix(d, "`buffers = [torch.empty_like(losses)")


def test_gather_list_longer_than_the_group():
    d = _explain("fixtures/distributed/gather_list_size.py")
    assert_names(d, "distributed.collective_buffer_size", ["`collected` holds 2 tensors", "dist.gather", "`scores`"])


def test_pasted_collective_message_without_frames_still_explains_the_sizes():
    d = explain_paste("RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (3), got (4))")
    assert_names(d, "distributed.collective_buffer_size", ["size (4)", "size (3)", "allgather"])


def test_lstm_float64_state_names_the_numpy_state_and_the_conversion():
    d = _explain("fixtures/dtype/lstm_hidden_double.py")
    assert_names(d, "dtype.onednn_unsupported_dtype", ["`hidden[0]` as float64", "NumPy array `state`", "oneDNN"])
    assert culprit(d, "hidden[0]")["dtype"] == "float64" and culprit(d, "hidden[1]")["dtype"] == "float64"
    assert culprit(d, "sequence")["dtype"] == "float32"


def test_to_mkldnn_of_float64_lists_the_supported_dtypes():
    d = _explain("fixtures/dtype/to_mkldnn_double.py")
    assert_names(d, "dtype.onednn_unsupported_dtype", ["float, bfloat16, half, uint8, int8"])
    assert culprit(d, "weights")["dtype"] == "float64"
