"""Shape messages as people paste them (wordings old and new, wrapped and decorated): each is explained
from its text alone, by the right rule, with the values the message holds in the summary."""

from __future__ import annotations

import io

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import corpus_message, raised

CASES = [
    # (pasted text, rule, values the summary must repeat)
    ("RuntimeError: Calculated padded input size per channel: (258 x 2). Kernel size: (3 x 3). "
     "Kernel size can't be greater than the actual input size.",
     "shape.conv_kernel_size", ["(258 x 2)", "(3 x 3)"]),
    ("RuntimeError: Calculated padded input size per channel: (2). Kernel size: (3). "
     "Kernel size can't be greater than actual input size",
     "shape.conv_kernel_size", ["(2)", "(3)"]),
    ("```\nRuntimeError: output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]\n```",
     "shape.inplace_broadcast", ["[1, 28, 28]", "[3, 28, 28]"]),
    ('"RuntimeError: output with shape [] doesn\'t match the broadcast shape [3, 189, 275]"',
     "shape.inplace_broadcast", ["[]", "[3, 189, 275]"]),
    ("IndexError: index 0 is out of bounds for dimension 0 with size 0.",
     "shape.index_out_of_bounds", ["index 0", "dimension 0", "size 0"]),
    ("RuntimeError: only batches of spatial targets supported (3D tensors) but got targets of size: : [8, 1, 224, 224]",
     "shape.loss_spatial_target", ["3D", "[8, 1, 224, 224]"]),
    ("RuntimeError: input and target batch or spatial sizes don't match: target [4, 31, 31], input [4, 31, 10000, 31]",
     "shape.loss_spatial_target", ["[4, 31, 31]", "[4, 31, 10000, 31]"]),
    ("AssertionError: embed_dim must be divisible by num_heads", "shape.attention_heads", ["embed_dim", "num_heads"]),
    (" UserWarning: Using a target size (torch.Size([1, 3, 1356, 204\n0])) that is different to the input size "
     "(torch.Size([1, 3, 1224, 2040])). This will likely lead to incorrect results due to broadcasting. "
     "Please ensure they have the same size.\n  \nreturn F.l1_loss(input, target, reduction=self.reduction)",
     "shape.loss_broadcast_warning", ["torch.Size([1, 3, 1356, 2040])", "torch.Size([1, 3, 1224, 2040])"]),
    ("ValueError: Using a target size (torch.Size([16])) that is different to the input size (torch.Size([16, 1])) "
     "is deprecated. Please ensure they have the same size.",
     "shape.loss_target_size", ["torch.Size([16])", "torch.Size([16, 1])"]),
    # an excerpt, without the code fence (https://github.com/ctallec/world-models/issues/5)
    ("RuntimeError: invalid argument 2: size '[-1 x 3 x 96 x 96]' is invalid\nfor input with 6291456 elements "
     "at /pytorch/aten/src/TH/THStorage.c", "shape.view_size", ["[-1 x 3 x 96 x 96]", "6291456"]),
    # an excerpt, without the source location (https://github.com/facebookresearch/fairseq/issues/2154)
    ("RuntimeError: index out of range: Tried to access index 300 out of table with 299 rows.",
     "shape.embedding_index", ["300", "299"]),
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (2×1568 and 1050×10)", "shape.matmul", ["1568", "1050"]),
    ("RuntimeError: Error(s) in loading state_dict for hierarchical_transformer:\n\tsize mismatch for "
     "block_level.position_enc.weight: copying a param of torch.Size([51, 30]) from checkpoint, where the shape is "
     "torch.Size([18290, 30]) in current model.", "shape.state_dict_size",
     ["hierarchical_transformer", "torch.Size([51, 30])", "torch.Size([18290, 30])"]),
    # https://github.com/ucbdrive/hd3/issues/30: two "size mismatch" lines without the header above them
    (corpus_message("r10_a.yaml#25"), "shape.state_dict_size",
     ["2 parameters", "module.hd3net.Decoder_1.cls.2.bias", "torch.Size([81, 128, 1, 1])"]),
    ("RuntimeError: Given input size: (1280x1x7). Calculated output size: (1280x0x1). Output size is too small at "
     "/opt/conda/conda-bld/pytorch-cpu_1518281700712/work/torch/lib/THNN/generic/SpatialAveragePooling.c:64",
     "shape.pool_output_size", ["(1280x0x1)", "SpatialAveragePooling"]),
    ("RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got 3-dimensional input "
     "of size [3, 224, 224] instead.", "shape.conv_input_rank", ["[64, 3, 7, 7]", "[3, 224, 224]"]),
    ("RuntimeError: multi-target not supported at /pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu:18",
     "shape.loss_target_dims", ["ClassNLLCriterion"]),
    # https://github.com/meetps/pytorch-semseg/issues/116
    (corpus_message("r12_a.yaml#19"), "shape.cat_sizes", ["dimension 1", "24 and 23", "dimension 2"]),
    ("`\nRuntimeError: mat2 must be a matrix, got 1-D tensor\n`", "shape.mm_rank", ["mat2", "1-D"]),
    # Wrapped where the poster's terminal or editor broke the line.
    ("RuntimeError: stack expects each tensor to be equal size, but \ngot [1, 2] at entry 0 and [1, 3] at entry 1",
     "shape.stack_sizes", ["[1, 2]", "[1, 3]"]),
    ("RuntimeError: Calculated padded input size per channel: (3 x 3). \nKernel size: (3 x 3). \n"
     "Kernel size can't be greater than actual input size", "shape.conv_kernel_size", ["(3 x 3)"]),
    # The warning comes first; sizes that do not broadcast at all then fail in the loss
    # (https://github.com/CanisW/TF3P/issues/4, the poster's paste as printed, the loss line between the two).
    (corpus_message("r3_shape_autograd.yaml#26"),
     "shape.loss_broadcast_warning", ["[27, 2, 50, 50, 50]", "[9, 2, 50, 50, 50]", "9 vs 27", "do not even broadcast"]),
    # torch 0.4 to 1.1: the index_select kernel (also behind nn.Embedding then), no sizes in the message.
    # an excerpt: the error line of https://github.com/ayooshkathuria/YOLO_v3_tutorial_from_scratch/issues/19
    ("RuntimeError: index out of range at /opt/conda/conda-bld/pytorch_1524584710464/work/aten/src/TH/generic/"
     "THTensorMath.c:343", "shape.embedding_index", ["index_select", "THTensorMath.c"]),
    # https://github.com/itberrios/3D/issues/6 (runbooks/shape/pool_output_size.md's example)
    ("max_pool1d() Invalid computed output size: 0", "shape.pool_output_size", ["max_pool1d", "would be 0"]),
    # index_select's kernel message, raised live: the index one past the end of a 1026-wide dimension
    (f"RuntimeError: {raised(lambda: torch.index_select(torch.zeros(2, 1026), 1, torch.tensor([1026])))}",
     "shape.embedding_index", ["index 1026", "1026 entries", "0..1025", "just past the end"]),
    # Wrapped at a space inside a sentence, as the poster's terminal printed it (pytorch/pytorch#32931):
    # each literal space in the shape patterns takes a line break.
    (corpus_message("r3_shape_autograd.yaml#19"), "shape.cat_sizes", ["2 and 3", "dimension 2"]),
    # The pool's dimensionality follows from the number of spatial sizes in the message.
    # an excerpt: the error line of https://github.com/mindee/doctr/issues/1868
    ("RuntimeError: Given input size: (128x1x16). Calculated output size: (128x0x8). Output size is too small",
     "shape.pool_output_size", ["max_pool2d or avg_pool2d", "1d pool"]),
    ("RuntimeError: Given input size: (64x64x64x1). Calculated output size: (64x32x32x0). Output size is too small",
     "shape.pool_output_size", ["max_pool3d or avg_pool3d"]),
    ("RuntimeError: Given groups=1, weight of size [64, 64, 1, 1], expected input[1, 32, 200, 320] to have 64 channels, "
     "but got 32 channels instead", "shape.conv_channels", ["64 input channels", "has 32 channels in dimension 1"]),
    # round 5: index_put_ and boolean-mask shapes, scalar conversion, padding, indices
    ("RuntimeError: shape mismatch: value tensor of shape [31564, 128] cannot be broadcast to indexing result of "
     "shape [128, 31564]", "shape.index_put_shape", ["[31564, 128]", "[128, 31564]", "transposed"]),
    (" shape mismatch: value tensor of shape [128, 4096] cannot be broadcast to indexing result of shape [0, 4096]",
     "shape.index_put_shape", ["[128, 4096]", "[0, 4096]", "selected nothing"]),
    ("IndexError: shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
     "shape.index_put_shape", ["[2], [3]"]),
    # https://github.com/marvis/pytorch-yolo2/issues/157
    (corpus_message("r33_a.yaml#31"), "shape.mask_shape", ["[845]", "[5, 13, 13]", "flat mask"]),
    ("IndexError: too many indices for tensor of dimension 1", "shape.too_many_indices", ["1 dimension", "vector"]),
    ("IndexError: too many indices for tensor of dimension 0", "shape.too_many_indices", ["0-dim"]),
    # https://github.com/santi-pdp/pase/issues/95 (runbooks/shape/reflect_pad_size.md's example)
    ("Argument #4: Padding size should be less than the corresponding input dimension, but got: "
     "padding (0, 10416) at dimension 2 of input [1, 1, 5584]", "shape.reflect_pad_size",
     ["(0, 10416)", "dimension 2", "[1, 1, 5584]"]),
    ("RuntimeError: a Tensor with 6 elements cannot be converted to Scalar", "shape.scalar_conversion", ["6 elements"]),
    ("ValueError: only one element tensors can be converted to Python scalars", "shape.scalar_conversion",
     ["torch.stack"]),
    ("RuntimeError: einsum(): subscript w has size 137 for operand 1 which does not broadcast with previously seen "
     "size 321", "shape.einsum_operands", ["`w`", "321", "137", "operand 1"]),
    # an excerpt: the error line of https://github.com/vvvb-github/AVSegFormer/issues/9
    ("RuntimeError: einsum(): the number of subscripts in the equation (2) does not match the number of dimensions "
     "(1) for operand 1 and no ellipsis was given", "shape.einsum_operands", ["equation (2)", "1 dimension", "squeeze"]),
    ("RuntimeError: split_with_sizes expects split_sizes to sum exactly to 1 (input tensor's size at dimension 0), "
     "but got split_sizes=[748]", "shape.split_sizes", ["[748]", "dimension 0", "size is 1"]),
    # an excerpt: the error line of https://github.com/wvangansbeke/Sparse-Depth-Completion/issues/38
    ("RuntimeError: Trying to create tensor with negative dimension -2: [-2, 34, 3, 3]", "shape.negative_dimension",
     ["[-2, 34, 3, 3]", "-2"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnoses = explain_stream(io.StringIO(text))
    assert diagnoses and diagnoses[0].rule == rule, f"{text[:80]!r} -> {[d.rule for d in diagnoses]}"
    said = " ".join([diagnoses[0].title, diagnoses[0].summary, *diagnoses[0].fixes])
    for value in values:
        assert value.lower() in said.lower(), f"{value!r} not named for {rule}: {said}"


@pytest.mark.parametrize("text", [
    "IndexError: index 4 is out of bounds for axis 0 with size 4",   # NumPy, not a tensor
    "RuntimeError: CUDA error: device-side assert triggered",
    "IndexError: list index out of range",
    "RuntimeError: index out of range",
    "ValueError: shape mismatch: value array of shape (136,) could not be broadcast to indexing result of shape (135,)",
    "IndexError: too many indices for array: array is 1-dimensional, but 2 were indexed",
    "TypeError: only size-1 arrays can be converted to Python scalars",
])
def test_near_misses_are_not_claimed_by_the_new_shape_rules(text):
    new = {"shape.index_out_of_bounds", "shape.inplace_broadcast", "shape.conv_kernel_size",
           "shape.loss_spatial_target", "shape.attention_heads", "shape.loss_broadcast_warning",
           "shape.embedding_index", "shape.index_put_shape", "shape.too_many_indices", "shape.scalar_conversion"}
    assert not any(d.rule in new for d in explain_stream(io.StringIO(text)))


def test_torch04_state_dict_wording_reads_its_first_shape_as_the_models():
    """torch 0.4 formatted (key, the model's shape, the checkpoint's shape) under "copying a param of A from checkpoint,
    where the shape is B in current model" (torch/nn/modules/module.py of 0.4.1): A is the model's, B the checkpoint's."""
    (diagnosis,) = [d for d in explain_stream(io.StringIO(corpus_message("shape.yaml#169"))) if d.rule]
    assert diagnosis.rule == "shape.state_dict_size"
    assert ("block_level.position_enc.weight: checkpoint torch.Size([18290, 30]) vs model torch.Size([51, 30])"
            in diagnosis.summary), diagnosis.summary
    assert "the other way round" in diagnosis.summary
    # torch 1.x's wording says what it prints: its first shape is the checkpoint's
    (newer,) = [d for d in explain_stream(io.StringIO(corpus_message("r10_a.yaml#25"))) if d.rule]
    assert "the other way round" not in newer.summary
