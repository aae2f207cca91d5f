"""Round 6 rules and wordings for dtype, autograd, numerics and shape: each pasted message is claimed,
from its text alone, by the right rule with the values it holds named; near misses from other
frameworks and other families stay unclaimed; real torch calls raise what the new rules claim."""

from __future__ import annotations

import io

import pytest
import torch

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import raised

CASES = [
    # a terminal copy that lost the space before "non-singleton"
    ("The size of tensor a (16) must match the size of tensor b (5) atnon-singleton dimension 3",
     "shape.broadcast", ["16", "5", "3"]),
    ("    return F.linear(input, self.weight, self.bias)\nRuntimeError: Cannot set version_counter for inference tensor",
     "autograd.inference_tensor", ["Cannot set version_counter for inference tensor"]),
    ("RuntimeError: Inference tensors do not track version counter.",
     "autograd.inference_tensor", ["Inference tensors do not track version counter"]),
    ("RuntimeError:\nExpected object of type CPULongType but found type CPUIntType for argument #3 'other' "
     "(checked_cast_tensor at ../src/ATen/Utils.h:30)",
     "dtype.argument_type_mismatch", ["CPULongType", "CPUIntType", "#3 'other'"]),
    ("RuntimeError: Expected object of type Variable[CPUFloatType] but found type Variable[CPULongType] for "
     "argument #1 'mat2'", "dtype.argument_type_mismatch", ["Variable[CPUFloatType]", "Variable[CPULongType]", "'mat2'"]),
    ("RuntimeError: expected type torch.FloatTensor but got torch.LongTensor",
     "dtype.argument_type_mismatch", ["torch.FloatTensor", "torch.LongTensor"]),
    ("2022-02-09 20:28:32,418 - mmdet - INFO - Epoch [1][658/742]     lr: 5.000e-05, eta: 2:15:01, time: 0.396, "
     "data_time: 0.159, memory: 4127, loss_cls: nan, loss_bbox: nan, loss_centerness: nan, loss: nan",
     "numerics.loss_nan_log", ["mmdet", "loss_cls", "nan"]),
    ("{'loss': nan, 'reward': 5.7646, 'learning_rate': 5e-05}", "numerics.loss_nan_log", ["loss", "nan"]),
    ("loss_classifier: nan (nan)", "numerics.loss_nan_log", ["loss_classifier", "nan"]),
    ("ValueError: Expected value argument (Tensor of shape (100,)) to be within the support "
     "(GreaterThan(lower_bound=0.0)) of the distribution Weibull(scale: 3.6472277641296387, concentration: "
     "2.517430067062378), but found invalid values:\ntensor([-5.6482, -5.6381])",
     "numerics.distribution_value_support", ["(100,)", "GreaterThan(lower_bound=0.0)", "Weibull"]),
    ("ValueError: The value argument must be within the support", "numerics.distribution_value_support", ["support"]),
    ("RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
     "desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 4",
     "shape.permute_dims", ["3", "4"]),
    ("RuntimeError: number of dims don't match in permute", "shape.permute_dims", ["permute"]),
    ("RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
     "that this use case is ambiguous and error-prone, it is forbidden.", "autograd.nograd_view_inplace", ["no_grad"]),
    ("RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. This "
     "view was created inside a custom Function (or because an input was returned as-is) and the autograd logic",
     "autograd.nograd_view_inplace", ["custom autograd Function"]),
    ("RuntimeError: Could not infer dtype of PILImage", "dtype.tensor_from_strings", ["PILImage"]),
    ("RuntimeError: weight tensor should be defined either for all 19 classes or no classes but got weight tensor "
     "of shape: [1, 19]", "shape.class_weight_size", ["19", "[1, 19]", "view(-1)"]),
    ("RuntimeError:weight tensor should be defined either for all 19 classes or no classes but got weight tensor of "
     "shape:[1 x 8] at /pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu:44",
     "shape.class_weight_size", ["19", "[1 x 8]"]),
    ("RuntimeError: weight tensor should be defined either for all or no classes at "
     "/opt/conda/conda-bld/pytorch_1535491974311/work/aten/src/THCUNN/generic/SpatialClassNLLCriterion.cu:27",
     "shape.class_weight_size", ["weight"]),
    ("IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor to a Python number",
     "other.zero_dim_index", ["0-dim", ".item()"]),
    ("RuntimeError: zero-dimensional tensor (at position 1) cannot be concatenated", "shape.cat_zero_dim",
     ["1", "torch.stack"]),
    ("RuntimeError: unflatten: Provided sizes [1, 37200] don't multiply up to the size of dim 0 (40) in the input "
     "tensor", "shape.unflatten_sizes", ["[1, 37200]", "0", "40"]),
    ("RuntimeError: both arguments to matmul need to be at least 1D, but they are 0D and 0D",
     "shape.matmul_zero_dim", ["0D and a 0D"]),
    ("RuntimeError: leaf variable has been moved into the graph interior", "autograd.leaf_inplace",
     ["leaf variable"]),
    ("TypeError: save_for_backward can only save variables, but argument 1 is of type tuple",
     "autograd.save_for_backward_non_tensor", ["1", "tuple"]),
    ("RuntimeError: Expected isFloatingType(grads[i].type().scalarType()) to be true, but got false.  (Could this "
     "error message be improved?  If so, please report an enhancement request to PyTorch.)",
     "autograd.integer_grad", ["mark_non_differentiable"]),
    ("RuntimeError: bernoulli_ expects p to be in [0, 1], but got p=1.5", "numerics.bernoulli_probability", ["1.5"]),
    ("RuntimeError: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
     "shape.repeat_dims", ["repeat"]),
    ("ValueError: expected 4D input (got 2D input)", "shape.batchnorm_input_rank", ["4D", "2D", "BatchNorm1d"]),
    ("Batchnorm2d : ValueError: expected 2D or 3D input (got 4D input)", "shape.batchnorm_input_rank",
     ["2D or 3D", "4D", "BatchNorm2d"]),
    ("RuntimeError: Class values must be smaller than num_classes.", "shape.one_hot_classes", ["num_classes", "255"]),
    ("RuntimeError: Class values must be non-negative.", "shape.one_hot_classes", ["negative"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnoses = explain_stream(io.StringIO(text))
    assert diagnoses and diagnoses[0].rule == rule, f"{text[:80]!r} -> {[d.rule for d in diagnoses]}"
    said = " ".join([diagnoses[0].title, diagnoses[0].summary, *diagnoses[0].fixes])
    for value in values:
        assert value.lower() in said.lower(), f"{value!r} not named for {rule}: {said}"


NEW_RULES = {"numerics.loss_nan_log", "numerics.distribution_value_support", "shape.permute_dims",
             "autograd.nograd_view_inplace", "shape.class_weight_size", "other.zero_dim_index", "shape.cat_zero_dim",
             "shape.unflatten_sizes", "shape.matmul_zero_dim", "autograd.save_for_backward_non_tensor",
             "autograd.integer_grad", "numerics.bernoulli_probability", "dtype.tensor_from_strings",
             "dtype.argument_type_mismatch", "shape.repeat_dims", "shape.batchnorm_input_rank",
             "shape.one_hot_classes"}


@pytest.mark.parametrize("text", [
    "  49/5000 [..............................] - ETA: 11:01:10 - loss: nan",          # a Keras progress bar
    "INFO:tensorflow:loss = nan, step = 100",
    "RuntimeError: Could not infer dtype of numpy.float32",     # a NumPy build torch cannot read, not the data
    "ValueError: permute dims must have the same length as input shape",                # Triton
    "RuntimeError: Expected object of type CPUFloatType but found type CUDAFloatType for argument #2 'weight'",
    "RuntimeError: Expected object of type torch.cuda.LongTensor but found type torch.FloatTensor for argument #2 'other'",
    "ValueError: dropout probability has to be between 0 and 1, but got 1.5",
    "ValueError: Input 0 is incompatible with layer batchnormalization_59: expected ndim=2, found ndim=3",   # Keras
    "ValueError: shape mismatch: objects cannot be broadcast to a single shape",                           # NumPy
])
def test_near_misses_are_not_claimed_by_the_round6_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES]
    assert not claimed, (text, claimed)


def _inference_version():
    with torch.inference_mode():
        cache = torch.zeros(4, 8)
    return cache._version


def _nograd_view_inplace():
    weight = torch.randn(4, 3, requires_grad=True)
    with torch.no_grad():
        head = weight[:2]
    head.mul_(0.5)


@pytest.mark.parametrize("call, rule", [
    (_inference_version, "autograd.inference_tensor"),
    (_nograd_view_inplace, "autograd.nograd_view_inplace"),
    (lambda: torch.rand(64, 64).permute(2, 0, 1), "shape.permute_dims"),
    (lambda: torch.distributions.Categorical(logits=torch.zeros(3), validate_args=True).log_prob(torch.tensor([3])),
     "numerics.distribution_value_support"),
    (lambda: torch.nn.CrossEntropyLoss(weight=torch.ones(5))(torch.randn(4, 3), torch.tensor([0, 1, 2, 0])),
     "shape.class_weight_size"),
    (lambda: torch.tensor(1.0)[0], "other.zero_dim_index"),
    (lambda: torch.cat([torch.tensor(1.0), torch.tensor(2.0)]), "shape.cat_zero_dim"),
    (lambda: torch.rand(2, 7).unflatten(1, (2, 3)), "shape.unflatten_sizes"),
    (lambda: torch.tensor(0.5) @ torch.rand(3, 3), "shape.matmul_zero_dim"),
    (lambda: torch.bernoulli(torch.tensor([0.5, float("nan")])), "numerics.bernoulli_probability"),
    (lambda: torch.ones(3).bernoulli_(1.5), "numerics.bernoulli_probability"),
    (lambda: torch.rand(8, 1, 51).repeat(1, 4), "shape.repeat_dims"),
    (lambda: torch.nn.BatchNorm2d(8)(torch.rand(4, 8)), "shape.batchnorm_input_rank"),
    (lambda: torch.nn.functional.one_hot(torch.tensor([0, 255]), num_classes=2), "shape.one_hot_classes"),
])
def test_real_torch_call_is_claimed_by_the_round6_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)
