"""Round 8 rules and wordings for dtype, autograd, numerics and shape: each pasted message is claimed,
from its text alone, by the right rule with the values it holds named; near misses (healthy loss-scale
messages, other frameworks, other families) stay unclaimed; real torch calls raise what the new rules
claim."""

from __future__ import annotations

import io

import pytest
import torch

from explainer import explain
from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, raised, said

CASES = [
    # torch 0.4 backend tensor types on both sides of a conv: a dtype clash, not a device one
    ("RuntimeError: Input type (CUDAFloatTensor) and weight type (CUDAHalfTensor) should be the same",
     "dtype.conv_input_type", ["CUDAFloatTensor", "CUDAHalfTensor"]),
    # a page that shows the UTF-8 bytes of the curly quotes as escapes
    ("RuntimeError: Function \\xe2\\x80\\x98StdBackward1\\xe2\\x80\\x99 returned nan values in its 0th output",
     "numerics.anomaly_nan", ["StdBackward1", "0th output"]),
    ("RuntimeError: index out of range: Tried to access index 2 out of table with 1 rows. at "
     "/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/TH/generic/THTensorEvenMoreMath.cpp:418",
     "shape.embedding_index", ["index 2", "1 rows"]),
    ("RuntimeError: invalid argument 0: Sizes of tensors must match except in dimension 3. Got 2 and 1 in dimension 0 "
     "at /pytorch/aten/src/TH/generic/THTensor.cpp:711", "shape.cat_sizes", ["got 2 and 1", "dimension 3"]),
    ("RuntimeError: Invalid index in scatterAdd at /opt/conda/conda-bld/pytorch_1565287124314/work/aten/src/TH/generic/"
     "THTensorEvenMoreMath.cpp:536", "shape.index_out_of_bounds", ["scatterAdd", "scatter_add_"]),
    ("    self.alpha = self.alpha.gather(0,labels.view(-1))\nRuntimeError: Invalid index in gather at "
     "C:\\w\\1\\s\\windows\\pytorch\\aten\\src\\TH/generic/THTensorEvenMoreMath.cpp:657",
     "shape.index_out_of_bounds", ["gather", "x.size(dim)"]),
    # loss scalers of apex, DeepSpeed and fairseq, below the thousands where dynamic scaling settles
    ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 256.0",
     "numerics.amp_overflow_skip", ["256.0", "loss scaler 0"]),
    ("“OVERFLOW! Skipping step. Attempted loss scale: 1.0, reducing to 1”", "numerics.amp_overflow_skip",
     ["1.0", "reducing to 1", "DeepSpeed"]),
    ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1",
     "numerics.amp_overflow_skip", ["rank 0", "2", "1"]),
    ("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
     "numerics.amp_overflow_skip", ["DeepSpeed", "min_loss_scale", "bf16"]),
    ("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the "
     "learning rate, using gradient clipping or increasing the batch size.", "numerics.amp_overflow_skip",
     ["fairseq", "0.0001"]),
    ("| WARNING: overflow detected, setting loss scale to: 0.0001220703125", "numerics.amp_overflow_skip",
     ["0.0001220703125"]),
    # gradcheck's whole family
    ("raise GradcheckError('Backward is not reentrant, i.e., running backward with '\n"
     "torch.autograd.gradcheck.GradcheckError: Backward is not reentrant, i.e., running backward with same input and "
     "grad_output multiple times gives different values, although analytical gradient matches numerical gradient.The "
     "tolerance for nondeterminism was 0.001.", "autograd.gradcheck_failed", ["0.001", "nondeterministic"]),
    ("RuntimeError: Jacobian mismatch for output 0 with respect to input 1,", "autograd.gradcheck_failed",
     ["output 0", "input 1", "float64"]),
    ("torch.autograd.gradcheck.GradcheckError: Jacobian computed with forward mode mismatch for output 0 with respect "
     "to input 2,", "autograd.gradcheck_failed", ["forward-mode", "input 2"]),
    ("torch.autograd.gradcheck.GradcheckError: While considering the imaginary part of complex outputs only, Jacobian "
     "mismatch for output 0 with respect to input 0,", "autograd.gradcheck_failed", ["imaginary"]),
    ("torch.autograd.gradcheck.GradcheckError: backward not multiplied by grad_output", "autograd.gradcheck_failed",
     ["backward not multiplied by grad_output"]),
    ("RuntimeError: grad is incorrect size", "autograd.gradcheck_failed", ["size"]),
    ("RuntimeError: gradcheck expects at least one input tensor to require gradient, but none of the them have "
     "requires_grad=True.", "autograd.gradcheck_failed", ["requires_grad=True"]),
    # torchmetrics
    ("Predictions and targets are expected to have the same shape, but got torch.Size([8, 400]) and torch.Size([8]).",
     "shape.metric_input_shape", ["[8, 400]", "[8]", "argmax", "num_classes=400"]),
    ("RuntimeError: Predictions and targets are expected to have the same shape, but got torch.Size([6322]) and "
     "torch.Size([6322, 4]).", "shape.metric_input_shape", ["[6322]", "[6322, 4]", "target has one dimension more"]),
    ("ValueError: ('The `preds` and `target` should have the same shape,', ' got `preds` with shape=torch.Size([2, 5, "
     "64, 64]) and `target` with shape=torch.Size([2, 1, 64, 64]).')", "shape.metric_input_shape",
     ["[2, 5, 64, 64]", "[2, 1, 64, 64]"]),
    ("ValueError: Either `preds` and `target` both should have the (same) shape (N, ...), or `target` should be "
     "(N, ...) and `preds` should be (N, C, ...).", "shape.metric_input_shape", ["(N, C, ...)"]),
    ("ValueError: If `preds` have one dimension more than `target`, `preds.shape[1]` should be equal to number of "
     "classes.", "shape.metric_input_shape", ["num_classes"]),
    ("ValueError: Expected both `target.shape[1]` and `preds.shape[1]` to be equal to the number of labels but got 5 "
     "and expected 3", "shape.metric_input_shape", ["5", "3", "num_labels"]),
    # einops
    ("einops.EinopsError:  Error while processing rearrange-reduction pattern \"b (r h) l -> b l h r\".\n Input tensor "
     "shape: torch.Size([16, 11, 11]). Additional info: {'r': 2}.\n Shape mismatch, can't divide axis of length 11 in "
     "chunks of 2", "shape.einops_pattern", ["b (r h) l -> b l h r", "[16, 11, 11]", "{'r': 2}", "11", "2"]),
    ("einops.EinopsError:  Error while processing rearrange-reduction pattern \"b h (x y) d -> b h x y d\".\n Input "
     "tensor shape: torch.Size([2, 4, 900, 128]). Additional info: {'x': 26, 'y': 26}.\n Shape mismatch, 900 != 676",
     "shape.einops_pattern", ["900", "676", "[2, 4, 900, 128]"]),
    ("    einops.EinopsError:  Error while processing rearrange-reduction pattern \"(b f) c h w -> b c f h w\".\n     "
     "Input tensor shape: torch.Size([2, 320, 16, 64, 64]). Additional info: {'b': 2}.\n     Expected 4 dimensions, "
     "got 5", "shape.einops_pattern", ["4 dimensions", "got 5", "(b f) c h w -> b c f h w"]),
    ("einops.EinopsError:  Error while processing rearrange-reduction pattern \"B N (A T) -> B N A T\".\n Input tensor "
     "shape: torch.Size([23, 2000]). Additional info: {'T': 200}.\n Wrong shape: expected 3 dims. Received 2-dim "
     "tensor.", "shape.einops_pattern", ["3 dimensions", "2-dim", "[23, 2000]"]),
    # timm's PatchEmbed
    ("AssertionError: Input image height (736) doesn't match model (224).", "shape.vit_image_size",
     ["height", "736", "224"]),
    ("AssertionError: Input image size (32*32) doesn't match model (224*224).", "shape.vit_image_size",
     ["32x32", "224x224"]),
    ("AssertionError: Input height (512) doesn't match model (224).", "shape.vit_image_size", ["512", "224"]),
    # diffusers
    ("ValueError: `height` and `width` have to be divisible by 16 but are 1920 and 1080.You can use height 1920 and "
     "width 1072.", "shape.diffusers_size_multiple", ["16", "1920", "1080", "1072"]),
    ("!!! Exception during processing !!! `height` and `width` have to be divisible by 8 but are 325 and 325.",
     "shape.diffusers_size_multiple", ["8", "325"]),
    # mixed precision and attention kernels
    ("RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\nMany models "
     "use a sigmoid layer right before the binary cross entropy layer.", "dtype.bce_autocast",
     ["binary_cross_entropy_with_logits", "BCEWithLogitsLoss"]),
    ("RuntimeError: FlashAttention only support fp16 and bf16 data type", "dtype.flash_attn_dtype",
     ["fp16 and bf16", "float32", "torch_dtype=torch.bfloat16"]),
    ("RuntimeError: query and key must have the same dtype", "dtype.flash_attn_dtype", ["query and key"]),
    ("Input and parameter tensors are not the same dtype, found input tensor with Double and parameter tensor with "
     "Float", "dtype.rnn_input", ["Double", "Float"]),
    ("RuntimeError: \"bitwise_and_cpu\" not implemented for 'Float'", "dtype.not_implemented",
     ["bitwise_and_cpu", "Float", "integer (or bool)"]),
    ("RuntimeError: grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>",
     "autograd.func_transform_output", ["<class 'float'>", ".item()"]),
    ("RuntimeError: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True",
     "autograd.func_transform_output", ["has_aux=True", "(output, aux)"]),
    ("invalid argument 2: pad should be smaller than half of kernel size, but got padW = 1, padH = 2, kW = 14, kH = 3 "
     "at /pytorch/torch/lib/THCUNN/generic/SpatialDilatedMaxPooling.cu:39", "shape.pool_padding",
     ["padW = 1, padH = 2", "kW = 14, kH = 3"]),
    ("RuntimeError: pad should be at most half of effective kernel size, but got pad=3, kernel_size=3 and dilation=2",
     "shape.pool_padding", ["padding=3", "dilation=2", "2 here"]),
    ("RuntimeError: self and mat2 must have the same dtype, but got Half and Float", "dtype.matmul_mixed",
     ["Half", "Float"]),
    ("RuntimeError: scatter_add_(): Expected self.dtype to be equal to src.dtype", "dtype.index_source_dtype",
     ["scatter_add"]),
    # detectron2 and Lightning stopping on non-finite values
    ("AssertionError: Box tensor contains infinite or NaN!", "numerics.detection_boxes_nonfinite",
     ["Box tensor contains infinite or NaN"]),
    ("FloatingPointError: Predicted boxes or scores contain Inf/NaN. Training has diverged.",
     "numerics.detection_boxes_nonfinite", ["Training has diverged"]),
    ("Monitored metric val_rec_loss = nan is not finite. Previous best value was 0.045. Signaling Trainer to stop.",
     "numerics.loss_nan_stop", ["val_rec_loss", "nan", "0.045", "EarlyStopping"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


NEW_RULES = {"autograd.gradcheck_failed", "shape.metric_input_shape", "shape.einops_pattern", "shape.vit_image_size",
             "shape.diffusers_size_multiple", "dtype.bce_autocast", "dtype.flash_attn_dtype",
             "numerics.detection_boxes_nonfinite", "numerics.amp_overflow_skip", "dtype.numpy_torch_dtype",
             "autograd.func_transform_output", "shape.zero_dim_dimension",
             "shape.pool_padding"}


@pytest.mark.parametrize("text", [
    # dynamic loss scaling finding its level: healthy
    "Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 32768.0",
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1024.0",
    "[2023-05-01 10:00:00,000] [INFO] [stage_1_and_2.py:1672:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
    "Attempted loss scale: 65536, reducing to 32768",
    "| WARNING: overflow detected, setting loss scale to: 64.0",
    # other families that share words
    "RuntimeError: Function 'LogBackward0' returned nan values in its 0th output.",
    "ValueError: Target size (torch.Size([16])) must be the same as input size (torch.Size([16, 1]))",
    "RuntimeError: Expected query, key, and value to have the same dtype, but got query.dtype: struct c10",
    "RuntimeError: all elements of input should be between 0 and 1",
    "IndexError: index 4 is out of bounds for axis 0 with size 4",
    "ValueError: Predictions and targets are expected to have the same shape, but got [8, 400] and [8].",  # Paddle
    "RuntimeError: Calculated padded input size per channel: (3 x 3). Kernel size: (4 x 4). Kernel size can't be "
    "greater than actual input size",
])
def test_near_misses_are_not_claimed_by_the_round8_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in NEW_RULES]
    assert not claimed, (text, claimed)


def test_the_gradcheck_fixture_is_claimed_with_its_output_and_input():
    diagnosis = explain_fixture("fixtures/autograd/gradcheck_jacobian.py")
    assert_names(diagnosis, "autograd.gradcheck_failed", ["output 0", "input 0"])


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/dtype/numpy_torch_dtype.py", "dtype.numpy_torch_dtype", ["torch.float32"]),
    ("fixtures/autograd/func_grad_non_scalar.py", "autograd.func_transform_output", ["1 dims", "grad_and_value"]),
    ("fixtures/shape/zero_dim_dimension.py", "shape.zero_dim_dimension", ["Dimension 0", "0-dimensional"]),
    ("fixtures/shape/pool_padding_too_large.py", "shape.pool_padding", ["padding=3", "kernel_size=4", "2 here"]),
])
def test_new_fixtures_are_claimed_with_their_values(fixture, rule, values):
    diagnosis = explain_fixture(fixture)
    assert_names(diagnosis, rule, values)


def _gradcheck_without_grad_inputs():
    torch.autograd.gradcheck(torch.sin, (torch.randn(3, dtype=torch.double),))


@pytest.mark.parametrize("call, rule", [
    (_gradcheck_without_grad_inputs, "autograd.gradcheck_failed"),
    (lambda: torch.rand(4, 3).gather(1, torch.tensor([[5]])), "shape.index_out_of_bounds"),
    (lambda: torch.tensor(1.0).chunk(2), "shape.zero_dim_dimension"),
    (lambda: torch.tensor(1.0).narrow(0, 0, 1), "shape.zero_dim_dimension"),
    (lambda: torch.tensor(1.0)[0], "other.zero_dim_index"),
    (lambda: torch.nn.MaxPool1d(2, padding=2)(torch.randn(1, 1, 8)), "shape.pool_padding"),
])
def test_real_torch_call_is_claimed_by_the_round8_rule(call, rule):
    exc = raised(call)
    diagnosis = explain(exc)
    assert diagnosis.rule == rule, (str(exc)[:200], diagnosis.rule)
