"""Round 19 `other` rules: learners' code of the torch 0.3-1.4 era and operator edge cases. Determinism without a
deterministic kernel (or without CUBLAS_WORKSPACE_CONFIG), float sizes from Python 3's `/`, a Variable mixed with a
plain tensor, tensor methods asked of Python numbers, `.item()` on torch 0.3's Variable, torch 0.3's truth value of a
tensor, named tensors, DGL 0.4's removed DGLGraph methods, and keywords that a later torch added. Messages verbatim
from the corpus and the threads cited; three also raised live."""

from __future__ import annotations

import io

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, rules_of

CORPUS = [
    ("r19_b.yaml#32", "other.deterministic_algorithms", ["CuBLAS", "CUDA >= 10.2", "CUBLAS_WORKSPACE_CONFIG=:4096:8"]),
    ("r19_b.yaml#33", "other.deterministic_algorithms", ["CUBLAS_WORKSPACE_CONFIG=:4096:8"]),
    ("r19_b.yaml#34", "other.deterministic_algorithms", ["Context.cpp:159", "warn_only=True"]),
    ("r19_b.yaml#48", "other.float_size_argument", ["torch.FloatTensor", "(int, int, float, float)"]),
    ("r19_b.yaml#49", "other.float_size_argument", ["(int, float)", "`/`"]),
    ("r19_b.yaml#50", "other.variable_tensor_mix", ["torch.mm", "(torch.FloatTensor, Variable)"]),
    ("r19_b.yaml#76", "other.tensor_attribute_newer_torch", ["`Variable.item`", "torch 0.4", "loss.data[0]"]),
    ("r19_b.yaml#77", "other.tensor_attribute_newer_torch", ["`Variable.item`"]),
    ("r19_b.yaml#79", "other.python_number_not_tensor", ["`.item`", "Python int", "torch 0.1-0.3"]),
    ("r19_b.yaml#88", "other.tensor_bool_ambiguous", ["torch.ByteTensor", "torch 0.1-0.3"]),
    ("r19_b.yaml#17", "other.named_tensor_unsupported", ["`align_to`", "Tensor[None, None]"]),
    ("r19_b.yaml#18", "other.named_tensor_unsupported", ['TensorOptions.h":679', "DispatchKey: Named"]),
    ("r19_b.yaml#19", "other.named_tensor_unsupported", ["`aten::unsqueeze`"]),
    ("r19_b.yaml#52", "other.dgl_api_deprecated", ["`DGLGraph.from_networkx`", "`dgl.from_networkx(...)`"]),
    ("r19_b.yaml#53", "other.dgl_api_deprecated", ["`DGLGraph.register_message_func`", "update_all"]),
    ("r19_a.yaml#28", "other.keyword_newer_torch", ["`interpolate()`", "'antialias'", "torch 1.11"]),
    ("r16_b.yaml#30", "other.keyword_newer_torch", ["`_scaled_dot_product_attention_math()`", "'enable_gqa'",
                                                    "torch 2.5"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' and torch's own words.
PASTED = [
    # torch 1.6 (https://github.com/pytorch/pytorch/issues/43692): the same assert at another line
    ("RuntimeError: false INTERNAL ASSERT FAILED at \"/opt/conda/conda-bld/pytorch_1595629411241/work/c10/core/"
     "TensorOptions.h\":659, please report a bug to PyTorch. Unknown DispatchKey: Named",
     "other.named_tensor_unsupported", ['TensorOptions.h":659']),
    # torch 0.3's zeros with float sizes (https://github.com/sniklaus/pytorch-spynet/issues/3)
    ("TypeError: torch.zeros received an invalid combination of arguments - got (int, int, float, float), but "
     "expected one of:", "other.float_size_argument", ["torch.zeros", "(int, int, float, float)"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NEW = {"other.deterministic_algorithms", "other.float_size_argument", "other.variable_tensor_mix",
       "other.python_number_not_tensor", "other.named_tensor_unsupported", "other.dgl_api_deprecated",
       "other.keyword_newer_torch"}


@pytest.mark.parametrize("text", [
    "TypeError: softmax() got an unexpected keyword argument 'hidden_size'",        # jingyaogong/minimind#431
    "TypeError: __init__() got an unexpected keyword argument 'weights_only'",      # ultralytics/ultralytics#19824
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm",  # a GPU failure
    # a THNN kernel's dtype mismatch (pytorch/pytorch#1258): the dtype rule's
    "TypeError: FloatClassNLLCriterion_updateOutput received an invalid combination of arguments - got (int, "
    "torch.FloatTensor, torch.DoubleTensor, torch.FloatTensor, bool, NoneType, torch.FloatTensor), but expected (int "
    "state, torch.FloatTensor input, torch.LongTensor target, torch.FloatTensor output, bool sizeAverage, "
    "[torch.FloatTensor weights or None], torch.FloatTensor total_weight)",
    "RuntimeError: !names.empty() INTERNAL ASSERT FAILED at \"/pytorch/aten/src/ATen/NamedTensorUtils.cpp\":163, "
    "please report a bug to PyTorch. propagate_names: passed in empty names to propagate to result with shape [2, 4].",
])
def test_near_misses_are_not_claimed(text):
    assert not set(rules_of(text)) & NEW, (text, rules_of(text))


@pytest.mark.parametrize("where", ["r13_a.yaml#83", "r5_b.yaml#58"])
def test_call_mistakes_get_only_the_generic_argument_rule(where):
    """Unexpected keywords that no torch release added: call mistakes, not version gaps (no torch-release rule)."""
    assert rules_of(corpus(where)) == ["other.call_signature_mismatch"], rules_of(corpus(where))


def test_live_op_without_deterministic_kernel():
    try:
        diagnosis = explain_fixture("fixtures/other/deterministic_op.py")
    finally:  # the fixture switches determinism on for the whole process: later live tests must not inherit it
        torch.use_deterministic_algorithms(False)
    assert_names(diagnosis, "other.deterministic_algorithms",
                 ["`put_`", "`torch.use_deterministic_algorithms(True)`", "accumulate=False"])


def test_live_float_layer_size():
    diagnosis = explain_fixture("fixtures/other/float_size_argument.py")
    assert_names(diagnosis, "other.float_size_argument", ["empty()", "nn.Linear", "float as element 2"])


def test_live_item_of_a_python_int():
    diagnosis = explain_fixture("fixtures/other/python_number_not_tensor.py")
    assert_names(diagnosis, "other.python_number_not_tensor", ["`.item`", "Python int", "empty loop"])


@pytest.mark.parametrize("where, tensor_type", [("r19_b.yaml#89", "torch.ByteTensor"),
                                                 ("r19_b.yaml#90", "torch.cuda.FloatTensor")])
def test_the_truth_value_of_a_torch_0_3_variable_names_its_tensor_type(where, tensor_type):
    [diagnosis] = [d for d in explain_stream(io.StringIO(corpus(where))) if d.rule]
    assert_names(diagnosis, "other.tensor_bool_ambiguous", [tensor_type])
