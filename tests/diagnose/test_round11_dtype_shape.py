"""Round 11 rules and wordings for dtype, autograd, numerics and shape: each pasted message is claimed,
from its text alone, by the right rule with the values it holds named; near misses (Lua Torch's bare cat
message, other losses' and libraries' wordings) stay unclaimed; real torch calls raise what the new rules
claim."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said


def _live(call) -> str:
    """The message a real torch call on this build raises, as a traceback's last line prints it."""
    exc = raised(call)
    return f"{type(exc).__name__}: {exc}"


class ResNet(nn.Module):
    """A module named like torchvision's, so the live state_dict error names 'ResNet'."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, bias=False)

CASES = [
    # round-11 misses
    ("2023-02-08 16:18:29 RuntimeError: 2D or 3D (batch mode) tensor expected for input, but got: "
     "[ torch.FloatTensor{1,1,0} ]", "shape.pool_pad_input", ["[ torch.FloatTensor{1,1,0} ]", "empty"]),
    ("An error occurred while transcribing the audio: Expected 3D or 4D (batch mode) tensor with possibly 0 batch "
     "size and other non-zero dimensions for input, but got: [10, 0, 1500]", "shape.pool_pad_input",
     ["[10, 0, 1500]", "empty"]),
    ("RuntimeError: index out of range: Tried to access index 100 out of table with 99", "shape.embedding_index",
     ["100", "99", "100 rows", "just past the end"]),
    ("ValueError: `MessagePassing.propagate` only supports `torch.LongTensor` of shape `[2, num_messages]` or "
     "`torch_sparse.SparseTensor` for argument `edge_index`.", "shape.pyg_edge_index",
     ["edge_index", "[2, num_messages]"]),
    ("RuntimeError: inconsistent tensor sizes at /home/ubuntu/pytorch/torch/lib/TH/generic/THTensorMath.c:2625",
     "shape.cat_sizes", ["THTensorMath.c:2625", "torch.stack"]),
    ("NotImplementedError: the derivative for 'inplace version of acosh' is not implemented.",
     "autograd.derivative_not_implemented", ["inplace version of acosh", "x.acosh()"]),
    # the pooling / padding / unfold input checks, across releases
    (_live(lambda: F.max_pool1d(torch.zeros(1, 1, 5, 5), 2)), "shape.pool_pad_input", ["max_pool1d", "[1, 1, 5, 5]", "4 dimensions"]),
    # torch 0.4-1.x's THNN wordings, from the corpus (https://github.com/ckkelvinchan/BasicVSR_PlusPlus/issues/13,
    # https://github.com/mrlooi/rotated_maskrcnn/issues/39)
    (corpus_message("r14_a.yaml#59"), "shape.pool_pad_input", ["3D", "4D", "non-empty", "ndim: 4"]),
    (corpus_message("r14_a.yaml#58"), "shape.pool_pad_input", ["invalid argument 2", "[0 x 1 x 28 x 28]"]),
    (_live(lambda: F.adaptive_max_pool2d(torch.zeros(1, 3, 0, 4), 1)), "shape.pool_pad_input",
     ["adaptive_max_pool2d", "[1, 3, 0, 4]", "dimension 2"]),
    (_live(lambda: F.avg_pool3d(torch.zeros(1, 1, 0, 4, 4), 2)), "shape.pool_pad_input",
     ["avg_pool3d", "[1, 1, 0, 4, 4]", "non-batch dimension 0"]),
    (_live(lambda: F.max_unpool2d(torch.zeros(1, 1, 1, 4, 4), torch.zeros(1, 1, 1, 4, 4, dtype=torch.long), 2)),
     "shape.pool_pad_input", ["max_unpooling2d", "5 dimensions"]),
    ("RuntimeError: Non-empty 4D data tensor expected but got a tensor with sizes [1, 0, 4, 4]",
     "shape.interpolate_empty", ["4D", "[1, 0, 4, 4]"]),
    # convolution arguments
    ("RuntimeError: Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size "
     "[0, 32, 1, 1] instead", "shape.conv_arguments", ["groups=1", "[0, 32, 1, 1]", "no output channels"]),
    ("RuntimeError: Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size "
     "[[128, 1, 2, 2]] instead", "shape.conv_arguments", ["groups=3", "128, 1, 2, 2", "divisible by"]),
    (_live(lambda: F.conv2d(torch.zeros(1, 1, 5, 5), torch.zeros(2, 1, 3, 3), bias=torch.zeros(2, 1))),
     "shape.conv_arguments", ["[2, 1, 3, 3]", "2 elements", "[2, 1]"]),
    (_live(lambda: F.conv2d(torch.zeros(1, 1, 5, 5), torch.zeros(2, 1, 3, 3), stride=[1, 1, 1])),
     "shape.conv_arguments", ["stride", "2 value", "[1, 1, 1]"]),
    (_live(lambda: nn.Conv2d(3, 6, 3, groups=2)), "shape.conv_arguments", ["in_channels", "groups"]),
    (_live(lambda: nn.ConvTranspose2d(1, 1, 3, stride=2)(torch.zeros(1, 1, 5, 5), output_size=[20, 20])),
     "shape.conv_arguments", ["[20, 20]", "[11, 11]", "[12, 12]"]),
    # products of fixed rank
    ("RuntimeError: 1D tensors expected, but got 2D and 2D tensors", "shape.vector_op_operands",
     ["torch.dot", "2D and a 2D"]),
    (_live(lambda: torch.mv(torch.zeros(3, 3), torch.zeros(4))), "shape.vector_op_operands", ["3x3", "4"]),
    (_live(lambda: torch.tensordot(torch.zeros(3, 4), torch.zeros(5, 2), dims=([1], [0]))),
     "shape.vector_op_operands", ["tensordot", "size 4", "size 5"]),
    (_live(lambda: torch.cdist(torch.zeros(2, 3), torch.zeros(2, 4))), "shape.vector_op_operands",
     ["cdist", "3", "4"]),
    ("RuntimeError: matrices expected, got 1D, 2D tensors at /Users/soumith/miniconda2/conda-bld/"
     "pytorch_1493756739997/work/torch/lib/TH/generic/THTensorMath.c:1232", "shape.mm_rank", ["1D", "2D", "Linear"]),
    # complex views, dtype arguments, fairseq's nan gradients
    ("RuntimeError: view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
     "type: BFloat16", "dtype.complex_view", ["BFloat16", "half, float and double", "x.float()"]),
    (_live(lambda: torch.view_as_complex(torch.zeros(2, 3).t())), "dtype.complex_view",
     ["stride 1", ".contiguous()"]),
    ("RuntimeError: stft requires the return_complex parameter be given for real inputs, and will further require "
     "that return_complex=True in a future PyTorch release.", "dtype.complex_view", ["return_complex=True", "2.0"]),
    (_live(lambda: torch.istft(torch.zeros(33, 10), 64, window=torch.ones(64))), "dtype.complex_view", ["istft", "view_as_complex"]),
    ("TypeError: zeros(): argument 'dtype' must be torch.dtype, not str", "dtype.dtype_argument",
     ["zeros()", "str", "getattr(torch"]),
    (_live(lambda: torch.arange(5, dtype="float32")), "dtype.dtype_argument", ["arange()", "dtype=str"]),
    ("ValueError: invalid type: 'float16'", "dtype.dtype_argument", ["'float16'", "torch.float32"]),
    (_live(lambda: torch.cdist(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long))),
     "dtype.float_only_op",
     ["cdist", "Long"]),
    ("FloatingPointError: gradients are Nan/Inf", "numerics.nonfinite_grad_norm", ["fairseq", "gradients are Nan/Inf"]),
    # torchvision's nms
    ("RuntimeError: boxes should have 4 elements in dimension 1, got 5", "shape.nms_boxes", ["[N, 4]", "5 values", "dets[:, :4]"]),
    # sampling parameters, histc and arange bounds
    ("RuntimeError: normal expects all elements of std >= 0.0", "numerics.sampling_parameter",
     ["std", "softplus", "torch.randn"]),
    ("RuntimeError: normal_ expects std > 0.0, but found std=0", "numerics.sampling_parameter", ["std=0", "1.7"]),
    (_live(lambda: torch.histc(torch.tensor([float("nan")]))), "numerics.sampling_parameter",
     ["[nan, nan]", "nan values"]),
    (_live(lambda: torch.arange(float("nan"), float("nan"))), "numerics.sampling_parameter",
     ["nan -> nan", "arange"]),
    (_live(lambda: torch.zeros(2).uniform_(1, 0)),
     "numerics.sampling_parameter", ["from=1", "to=0"]),
    # a state_dict error whose key lists come before the size mismatch
    (_live(lambda: ResNet().load_state_dict({"conv1.weight": torch.zeros(64, 11, 7, 7), "fc.weight": torch.zeros(1)})),
     "shape.state_dict_size",
     ["ResNet", "conv1.weight", "64, 11, 7, 7", "64, 3, 7, 7"]),
    # autograd: optimizer arguments, retain_grad and resize_
    ("TypeError: params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
     "torch.FloatTensor", "autograd.optimizer_param_rejected", ["torch.FloatTensor", "[w]"]),
    ("RuntimeError: can't retain_grad on Tensor that has requires_grad=False", "autograd.hook_no_grad",
     ["retain_grad", "torch.no_grad()"]),
    ("RuntimeError: cannot resize variables that require grad", "autograd.leaf_inplace", ["resize_()", "torch.no_grad()"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


NEW_RULES = {"shape.pool_pad_input", "shape.conv_arguments", "shape.vector_op_operands", "dtype.complex_view",
             "dtype.dtype_argument", "numerics.sampling_parameter", "shape.nms_boxes"}


@pytest.mark.parametrize("text", [
    # Lua Torch's cat prints the same words without a PyTorch path
    "inconsistent tensor sizes\nstack traceback:\n        [C]: at 0x7f2d14c75440\n        [C]: in function 'cat'",
    # neighbouring wordings of other rules and libraries
    "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [28, 28]",
    "RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected input[8, 1, 28, 28] to have 3 channels, "
    "but got 1 channels instead",
    "RuntimeError: 1D target tensor expects 2D input tensors, but found inputs with sizes [46, 8, 50] and "
    "[46, 8, 50].",
    "TypeError: Got unsupported ScalarType BFloat16",
    _live(lambda: F.linear(np.zeros(3), torch.zeros(2, 3))),
    # another dtype wording, of numpy scalars (https://github.com/dmlguq456/SepReformer/issues/21)
    corpus_message("r10_a.yaml#75"),
    # a DDP wording about gradients, of another family (https://github.com/lucidrains/invariant-point-attention/issues/9)
    corpus_message("r4_a.yaml#80"),
    _live(lambda: torch.zeros(2).random_(5, 2)),
    "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)",
])
def test_near_misses_are_not_claimed_by_the_round11_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES | {"shape.cat_sizes"}]
    assert not claimed, (text, claimed)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/shape/pool_pad_input.py", "shape.pool_pad_input", ["[1, 1, 0]", "empty"]),
    ("fixtures/shape/interpolate_empty_input.py", "shape.interpolate_empty", ["[1, 0, 4, 4]"]),
    ("fixtures/shape/conv_arguments.py", "shape.conv_arguments", ["padding", "[1, 1]", "1 value"]),
    ("fixtures/shape/vector_op_operands.py", "shape.vector_op_operands", ["2D and a 1D"]),
    ("fixtures/dtype/view_as_complex_bf16.py", "dtype.complex_view", ["BFloat16"]),
    ("fixtures/dtype/dtype_as_string.py", "dtype.dtype_argument", ["zeros()", "str"]),
    ("fixtures/autograd/derivative_inplace.py", "autograd.derivative_not_implemented", ["inplace version of acosh"]),
    ("fixtures/numerics/normal_negative_std.py", "numerics.sampling_parameter", ["std"]),
    ("fixtures/autograd/optimizer_single_tensor.py", "autograd.optimizer_param_rejected", ["torch.FloatTensor"]),
    ("fixtures/autograd/retain_grad_no_grad.py", "autograd.hook_no_grad", ["retain_grad"]),
    ("fixtures/autograd/resize_requires_grad.py", "autograd.leaf_inplace", ["embedding.weight", "resize_"]),
])
def test_new_fixtures_are_claimed_with_their_values(fixture, rule, values):
    diagnosis = explain_fixture(fixture)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("call, rule", [
    (lambda: F.pad(torch.zeros(1, 0, 4, 4), [1, 1, 1, 1], mode="reflect"), "shape.pool_pad_input"),
    (lambda: F.max_pool2d(torch.zeros(1, 1, 1, 4, 4), 2), "shape.pool_pad_input"),
    (lambda: F.avg_pool2d(torch.zeros(1, 1, 1, 4, 4), 2), "shape.pool_pad_input"),
    (lambda: F.unfold(torch.zeros(1, 0, 4, 4), 2), "shape.pool_pad_input"),
    (lambda: F.adaptive_max_pool2d(torch.zeros(1, 3, 0, 4), 1), "shape.pool_pad_input"),
    (lambda: F.conv2d(torch.zeros(1, 4, 5, 5), torch.zeros(4, 4, 3, 3), groups=3), "shape.conv_arguments"),
    (lambda: F.conv2d(torch.zeros(1, 1, 5, 5), torch.zeros(2, 1, 3, 3), bias=torch.zeros(3)), "shape.conv_arguments"),
    (lambda: nn.Conv2d(4, 6, 3, groups=4), "shape.conv_arguments"),
    (lambda: F.conv_transpose2d(torch.zeros(1, 1, 5, 5), torch.zeros(1, 1, 3, 3), output_padding=2),
     "shape.conv_arguments"),
    (lambda: torch.mv(torch.zeros(3, 3), torch.zeros(4)), "shape.vector_op_operands"),
    (lambda: torch.outer(torch.zeros(3, 3), torch.zeros(3)), "shape.vector_op_operands"),
    (lambda: torch.trace(torch.zeros(3, 3, 3)), "shape.vector_op_operands"),
    (lambda: torch.linalg.cross(torch.zeros(3, 2), torch.zeros(3, 2)), "shape.vector_op_operands"),
    (lambda: torch.view_as_real(torch.zeros(3)), "dtype.complex_view"),
    (lambda: torch.view_as_complex(torch.zeros(2, 3).t()), "dtype.complex_view"),
    (lambda: torch.zeros(3).imag, "dtype.complex_view"),
    (lambda: torch.stft(torch.zeros(400), 64, window=torch.ones(64)), "dtype.complex_view"),
    (lambda: torch.tensor([1.0], dtype="float32"), "dtype.dtype_argument"),
    (lambda: torch.float32(3), "dtype.dtype_argument"),
    (lambda: torch.zeros(2).normal_(0, -1), "numerics.sampling_parameter"),
    (lambda: torch.histc(torch.tensor([float("nan")])), "numerics.sampling_parameter"),
    (lambda: torch.arange(0, float("nan")), "numerics.sampling_parameter"),
    (lambda: torch.zeros(2).exponential_(-1), "numerics.sampling_parameter"),
])
def test_real_torch_call_is_claimed_by_the_round11_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)


def test_embedding_table_size_is_read_as_size_minus_one():
    # torch 1.2-1.4's wording, which prints the last valid id as the row count (shape.yaml#143)
    diagnosis = explain_paste(corpus_message("shape.yaml#143"))
    assert diagnosis.rule == "shape.embedding_index"
    assert "300 rows" in diagnosis.summary and "0..299" in diagnosis.summary and "301" in diagnosis.summary
