"""Round-41 wordings for device, distributed, compile, numerics, autograd and checkpoint warnings: each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    # the kernel's assertion hard-wrapped inside "srcSelectDimSize"
    ("r41_a.yaml#27", "device.device_assert", ["indexSelectLargeIndex", "Indexing.cu:1292", "srcIndex < srcSelectDimSize"]),
    ("r41_b.yaml#52", "device.device_assert", ["copy_if", "cudaErrorAssert"]),
    ("r41_b.yaml#37", "device.mismatch", ["Expected all tensors to be on the same device"]),
    # the parenthesis broken before the argument's name
    ("r41_c.yaml#73", "device.mismatch", ["cuda:1", "cpu", "wrapper__index_select", "`index`"]),
    # the user line of Unsloth's compiled copy, its place and function on the lines under it
    ("r41_a.yaml#35", "compile.data_dependent",
     ["u0 > 1", "if frames > 1:", "unsloth_compiled_module_muse_glimmer.py:722", "get_vision_pixel_shuffle_index"]),
    ("r41_b.yaml#74", "compile.fake_tensor_failed", ["getitem", "BatchedTensor", ".item()", "size=(2, 10)"]),
    ("r41_b.yaml#8", "autograd.double_backward_unsupported", ["ConvBackward"]),
    ("r41_b.yaml#73", "other.unknown_tensor_type_id", ["Batched", "TensorOptions.h:693"]),
    ("r41_b.yaml#89", "numerics.numpy_linalg_nonfinite", ["numpy.linalg", "LinAlgError"]),
    ("r41_c.yaml#70", "numerics.loss_nan_stop", ["NaN or Inf encountered", "monitor.py:932"]),
    ("r41_c.yaml#50", "distributed.dtensor_cross_mesh", ["aten._foreach_mul_.Scalar", "('dp', 'tp')", "('dp',)"]),
    # the FutureWarning pasted outside a code block: markdown took the backticks around torch.load and weights_only
    ("r41_b.yaml#69", "data.torch_load_weights_only_warning", ["weights_only=False"]),
    ("r41_c.yaml#76", "data.torch_load_weights_only_warning", ["weights_only=False"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, file, line", [
    # the warning's own place (the torch.load call), and the user's frame that entered the training loop
    ("r41_b.yaml#69", "ssl4eo_mae_encoder.py", 160),
    ("r41_c.yaml#76", "torch_utils.py", 521),
    ("r41_c.yaml#70", "train.py", 87),
])
def test_corpus_message_is_placed(where, file, line):
    location = explain_paste(corpus_message(where)).location
    assert location is not None and location.file.endswith(file) and location.line == line, location


@pytest.mark.parametrize("text, rule, values", [
    # an old-style Function's backward in torch 0.4-1.x (CharlesShang/DCNv2#30), once_differentiable with torch 1.x's
    # missing space (NVlabs/tiny-cuda-nn#50), torch 0.2's THNN layers (the title of pytorch/pytorch#2210)
    ("RuntimeError: DCNv2FunctionLegacyBackward is not differentiable twice", "autograd.double_backward_unsupported",
     ["DCNv2FunctionLegacyBackward", "old-style"]),
    ("RuntimeError: trying to differentiate twice a function that was markedwith @once_differentiable",
     "autograd.double_backward_unsupported", ["@once_differentiable"]),
    ("\"LogSoftmax can only be differentiated once\"", "autograd.double_backward_unsupported", ["LogSoftmax"]),
    # NumPy >= 2.0 names the class without the inner module (SJ001/AI-Feynman#93), and IPython prints it bare
    # (SJ001/AI-Feynman#56, its title)
    ("numpy.linalg.LinAlgError: Array must not contain infs or NaNs", "numerics.numpy_linalg_nonfinite",
     ["numpy.linalg", "LinAlgError"]),
    ("LinAlgError: Array must not contain infs or NaNs", "numerics.numpy_linalg_nonfinite", ["LinAlgError"]),
    # a fused optimizer's step over parameters on two meshes (pytorch/pytorch#153268)
    ("`[rank8]: ValueError: Could not run pointwise computation across different mesh: Found DeviceMesh('cuda', "
     "[0, 8, 16, 24, 32, 40], mesh_dim_names=('dp_shard',)) and DeviceMesh('cuda', [[0, 1, 2, 3, 4, 5, 6, 7], "
     "[8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23], [24, 25, 26, 27, 28, 29, 30, 31], "
     "[32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47]], mesh_dim_names=('dp_shard', 'tp'))!`",
     "distributed.dtensor_cross_mesh", ["('dp_shard',)", "('dp_shard', 'tp')", "fused"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # pytest quoting the device check's words inside its own failure (pytest's _pytest/_code/code.py wording)
    ("AssertionError: Regex pattern did not match.\n Regex: 'expected tensors'\n Input: 'Expected all tensors to be on "
     "the same device'", "device.mismatch"),
    # an argument autograd never differentiates (pytorch/pytorch#60610), and torch.compile's own refusal of double
    # backward (PINA-org/PINA#621): not a backward differentiated twice
    ("RuntimeError: The function 'binary_cross_entropy' is not differentiable with respect to argument 'weight'. This "
     "input cannot have requires_grad True. ", "autograd.double_backward_unsupported"),
    ("RuntimeError: torch.compile with aot_autograd does not currently support double backward",
     "autograd.double_backward_unsupported"),
    # functorch's own internal assert under vmap (pytorch/pytorch#60365): not TensorOptions' table
    ("RuntimeError: batched == nullptrINTERNAL ASSERT FAILED at \"/tmp/pip-req-build-ym9h0m9k/functorch/csrc/"
     "DynamicLayer.cpp\":250, please report a bug to PyTorch. ", "other.unknown_tensor_type_id"),
    # eager vmap refusing .item() (pytorch/functorch#747): no torch.compile in sight
    ("RuntimeError: vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
     "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
     "inside PyTorch internals, please file a bug report.", "compile.fake_tensor_failed"),
    # scikit-learn's check of an array (mims-harvard/Raindrop#4), not NumPy's linear algebra
    ("Traceback (most recent call last):\n    File \"Raindrop.py\", line 336, in <module>\n    train_auroc = "
     "roc_auc_score(train_y, train_probs[:, 1])\nValueError: Input contains NaN. ", "numerics.numpy_linalg_nonfinite"),
    # a DTensor op with no mesh at all (pytorch/pytorch#117126): not two meshes
    ("AssertionError: found no DeviceMesh from dtensor args for c10d.broadcast_.default!",
     "distributed.dtensor_cross_mesh"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
