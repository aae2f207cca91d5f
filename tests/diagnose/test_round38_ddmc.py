"""Round-38 wordings for device, memory and compile (sequence models, libraries that reach into autograd, tools run
around a model): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed too,
and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r38_a.yaml#1", "device.mismatch", ["torch.cuda.LongTensor", "torch .LongTensor", "#3 `index`", "torch.embedding"]),
    ("r38_a.yaml#32", "device.cudnn_status", ["CUDNN_STATUS_EXECUTION_FAILED", "DAGMM_LSTMAutoEncoder_withWindow"]),
    ("r38_a.yaml#40", "device.backend_not_available",
     ["aten::_thnn_fused_lstm_cell", "CPU", "PrivateUse1", "dml_cpu_fallback.cpp:58"]),
    ("r38_a.yaml#42", "device.backend_not_available",
     ["aten::_thnn_fused_lstm_cell", "CPU", "XPU", "RegisterXPU.cpp:45865"]),
    ("r38_b.yaml#17", "memory.cuda_oom", ["rl_base_strategy.py:377", "self.loss.backward()"]),
    ("r38_b.yaml#30", "device.invalid_gradient_device", ["torch.cuda.FloatTensor", "torch.FloatTensor"]),
    ("r38_c.yaml#20", "compile.trace_output_type", ["Tensor", "List[str]", "add_graph"]),
    ("r38_c.yaml#21", "compile.trace_output_type",
     ["Tuple[Tensor, Tensor, NoneType, NoneType, NoneType]", "_pytorch_graph.py:335"]),
    ("r38_c.yaml#45", "device.input_weight_type", ["Variable"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the engine's device check in torch 0.4-1.4, named by the node whose backward returned it (LaneNet-PyTorch#6,
    # logbert#3)
    ("RuntimeError: Function AddBackward0 returned an invalid gradient at index 1 - expected type torch.FloatTensor "
     "but got torch.cuda.FloatTensor", "device.invalid_gradient_device",
     ["AddBackward0", "#1", "torch.cuda.FloatTensor"]),
    ("RuntimeError: Function AddBackward0 returned an invalid gradient at index 1 - expected type "
     "torch.cuda.FloatTensor but got torch.FloatTensor", "device.invalid_gradient_device", ["AddBackward0"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/device/backward_gradient_device.py", "device.invalid_gradient_device", ["on meta", "on cpu"]),
    ("fixtures/compile/trace_dict_input_mixed.py", "compile.trace_output_type", ["Tensor", "List[str]"]),
])
def test_live_messages(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the same device, two dtypes (PKD-for-BERT-Model-Compression#6, pytorch/tutorials#284): not a device problem
    ("RuntimeError: Function AddBackward0 returned an invalid gradient at index 1 - expected type "
     "torch.cuda.HalfTensor but got torch.cuda.FloatTensor", "device.invalid_gradient_device"),
    ("E       RuntimeError: invalid gradient at index 0 - expected type torch.FloatTensor but got torch.LongTensor",
     "device.invalid_gradient_device"),
    # two CPU types (pytorch-book#81): the widened legacy type pattern still wants a CUDA type on one side
    ("RuntimeError: Expected object of type torch.LongTensor but found type torch.FloatTensor for argument #2 'mat2'",
     "device.mismatch"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
