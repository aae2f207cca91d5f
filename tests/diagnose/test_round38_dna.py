"""Round-38 wordings for dtype, numerics and autograd (sequence models, libraries that reach into autograd, the tools
around a model): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r38_a.yaml#26", "dtype.mask_not_bool", ["LegacyDefinitions.cpp:19", "masked_fill_", "torch.uint8", "torch.bool"]),
    ("r38_a.yaml#35", "dtype.sdpa_dtype", ["query.dtype: float", "key.dtype: struct c10::Half"]),
    ("r38_a.yaml#36", "numerics.loss_nan_log", ["tr_real_loss: -inf", "8, 133, 365", "input_lengths", "label_lengths"]),
    ("r38_a.yaml#52", "dtype.returnn_raw_tensor_dtype", ["float32", "float16", "tensor_raw_tensor_setter"]),
    ("r38_a.yaml#51", "dtype.cat_mixed_dtypes", ["Float", "Half", "element 2", "#1 'tensors'"]),
    ("r38_b.yaml#7", "autograd.no_grad_fn", ["adversary.perturb", "perturb_iterative", "loss.backward()"]),
    ("r38_b.yaml#9", "autograd.view_inplace", ["BackwardHookFunctionBackward"]),
    ("r38_b.yaml#14", "autograd.opacus_unsupported_module", ["BatchNorm2d"]),
    ("r38_b.yaml#15", "autograd.opacus_unsupported_module", ["_module (ViT)", "IncompatibleModuleException"]),
    ("r38_b.yaml#55", "autograd.grad_none_attribute", ["param.grad.data", "'NoneType'"]),
    ("r38_b.yaml#76", "autograd.captum_deeplift_module_reused", ["LeakyReLU(negative_slope=0.1, inplace=True)"]),
    ("r38_c.yaml#81", "numerics.linalg_failed", ["THCTensorMathBlas.cu:811", "THTensorLapack.c:1020", "batch element 0"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the uint8 mask deprecation in glog's prefix (numnet_plus#16) and for masked_select (MORL#3)
    ("[W LegacyDefinitions.cpp:28] Warning: masked_fill_ received a mask with dtype torch.uint8, this behavior is now "
     "deprecated,please use a mask with dtype torch.bool instead. (function masked_fill__cuda)",
     "dtype.mask_not_bool", ["LegacyDefinitions.cpp:28", "masked_fill_", "torch.uint8", "torch.bool"]),
    ("../aten/src/ATen/native/LegacyDefinitions.cpp:67: UserWarning: masked_select received a mask with dtype "
     "torch.uint8, this behavior is now deprecated,please use a mask with dtype torch.bool instead.",
     "dtype.mask_not_bool", ["LegacyDefinitions.cpp:67", "masked_select", "torch.uint8"]),
    # the full backward hook's view with the custom-Function explanation (yolov5-gradcam#7)
    ("RuntimeError: Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace. This view was "
     "created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle "
     "view+inplace would override the custom backward associated with the custom Function, leading to incorrect "
     "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.",
     "autograd.view_inplace", ["BackwardHookFunctionBackward", "register_full_backward_hook"]),
    # a .grad read before the first backward (generative-models#26), in an update loop (learn2learn#428)
    ('Traceback (most recent call last):\n  File "infogan_pytorch.py", line 119, in <module>\n    reset_grad()\n'
     '  File "infogan_pytorch.py", line 86, in reset_grad\n    p.grad.data.zero_()\n'
     "AttributeError: 'NoneType' object has no attribute 'data'",
     "autograd.grad_none_attribute", ["p.grad.data", "'NoneType' object has no attribute 'data'"]),
    ("Error message:  p.grad.data.mul_(1.0 / meta_batch_size)\nAttributeError: 'NoneType' object has no attribute 'data'",
     "autograd.grad_none_attribute", ["p.grad.data"]),
    # opacus 0.x refusing a GRU model (opacus#205)
    ("I have tried to use Gated Recurrent Unit (GRU) with opacus. However, getting `IncompatibleModuleException: Model "
     "contains incompatible modules.`.", "autograd.opacus_unsupported_module", ["IncompatibleModuleException"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_full_backward_hook_with_inplace_relu_raised_live():
    assert_names(explain_fixture("fixtures/autograd/full_backward_hook_inplace_relu.py"), "autograd.view_inplace",
                 ["BackwardHookFunction"])


def test_grad_of_unused_parameter_raised_live():
    assert_names(explain_fixture("fixtures/autograd/grad_none_unused_param.py"), "autograd.grad_none_attribute",
                 ["param.grad.data"])


@pytest.mark.parametrize("text, not_rule", [
    # a hook-filled attribute of a Grad-CAM tool, not a tensor's .grad (pytorch-cnn-visualizations#92)
    ("`guided_grads = GBP.generate_gradients(preprocessed_img, target_class)\n"
     "gradients_as_array = self.gradients.data.cpu().numpy()[0]\n`\nAnd the terminal outputs the following error\":\n"
     "AttributeError: 'NoneType' object has no attribute 'data'", "autograd.grad_none_attribute"),
    # the uint8 deprecation of an 'out' tensor, no mask (CPNDet#10)
    ("/opt/conda/conda-bld/pytorch_1565272279342/work/aten/src/ATen/native/cuda/LegacyDefinitions.cpp:114: "
     "UserWarning: torch.gt received 'out' parameter with dtype torch.uint8, this behavior is now deprecated,please use "
     "'out' parameter with dtype torch.bool instead.", "dtype.mask_not_bool"),
    # opacus' step-time check of a parameter without per-sample gradient (opacus#433)
    ("ValueError: Per sample gradient is not initialized. Not updated in backward pass?",
     "autograd.opacus_unsupported_module"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
