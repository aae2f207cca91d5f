"""dtype rules against errors raised by real torch calls (CPU), and against corpus wordings torch no
longer produces (legacy 'Expected object of type', CUDA-only ones)."""

from __future__ import annotations

import pytest
import torch

from explainer import explain
from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message, raised


def _live(call) -> str:
    """The error line a real torch call raises on this machine, as its traceback ends."""
    error = raised(call)
    return f"{type(error).__name__}: {error}"


def test_integer_parameter_names_the_tensor_and_its_dtype():
    def build():
        fg_mask = torch.zeros(3, 5, dtype=torch.long)
        return torch.nn.Parameter(fg_mask)

    diagnosis = explain(raised(build))
    assert diagnosis.rule == "dtype.requires_grad_integer"
    assert "`fg_mask` (int64, shape (3, 5))" in diagnosis.summary, diagnosis.summary
    assert any("register_buffer" in fix and "fg_mask" in fix for fix in diagnosis.fixes), diagnosis.fixes
    assert any(c["name"] == "fg_mask" and c["dtype"] == "int64" for c in diagnosis.culprits), diagnosis.culprits


def test_float8_promotion_names_both_dtypes():
    weight = torch.ones(4, dtype=torch.float8_e5m2)
    diagnosis = explain(raised(lambda: torch.ones(4) * weight))
    assert diagnosis.rule == "dtype.float8_promotion"
    assert "Float tensor and a Float8_e5m2 tensor" in diagnosis.summary, diagnosis.summary


def test_half_input_float_bias_conv_is_a_dtype_mismatch():
    conv = torch.nn.Conv2d(1, 1, 1)
    exc = raised(lambda: torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3, dtype=torch.float64), conv.weight.double(),
                                                     conv.bias))
    diagnosis = explain(exc)
    assert diagnosis.rule == "dtype.conv_input_type", (diagnosis.rule, str(exc))


@pytest.mark.parametrize("message, rule, values", [
    ("RuntimeError: Input type (struct c10::Half) and bias type (float) should be the same",
     "dtype.conv_input_type", ["struct c10::Half", "float"]),
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (CUDABFloat16Type) should be the same",
     "dtype.conv_input_type", ["torch.cuda.FloatTensor", "CUDABFloat16Type"]),
    ("RuntimeError: Expected tensor for argument #1 'grad_output' to have the same type as tensor for argument #2 "
     "'weight'; but type torch.cuda.HalfTensor does not equal torch.cuda.FloatTensor (while checking arguments for "
     "cudnn_convolution_backward_input)",
     "dtype.argument_type_mismatch", ["grad_output", "torch.cuda.HalfTensor", "torch.cuda.FloatTensor",
                                      "cudnn_convolution_backward_input"]),
    ("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #3 'index'",
     "dtype.argument_type_mismatch", ["'index'", "Long", "Float"]),
    ("RuntimeError: Expected object of scaLar type Long but got scalar type FLoat for argument #2 ' target' in call "
     "to_ thnn_ nLL Loss_ forward", "dtype.target_long", ["FLoat"]),
    # raised live: float32 + float8_e4m3fn
    (_live(lambda: torch.zeros(1) + torch.zeros(1, dtype=torch.float8_e4m3fn)),
     "dtype.float8_promotion", ["Float8_e4m3fn"]),
    (corpus_message("dtype_autograd.yaml#108"), "dtype.target_float", ["Double", "Float", "compute_types"]),
    ("RuntimeError: expected dtype Double but got dtype Float (validate_dtype at "
     "/pytorch/aten/src/ATen/native/TensorIterator.cpp:143)", "dtype.target_float", ["Double", "Float", "validate_dtype"]),
    ("Expected object of type torch.FloatTensor but found type torch.LongTensor for argument #2 'target'",
     "dtype.target_float", ["torch.FloatTensor", "torch.LongTensor", "'target'", "integer 0/1 labels"]),
    ("RuntimeError: expected backend CUDA and dtype Float but got backend CUDA and dtype Long",
     "dtype.legacy_mixed_operands", ["on CUDA", "Float", "Long"]),
    ("RuntimeError: expected device cuda:2 and dtype Float but got device cuda:2 and dtype Long",
     "dtype.legacy_mixed_operands", ["cuda:2", "Float", "Long"]),
    ("RuntimeError: expected Double tensor (got Float tensor)", "dtype.legacy_mixed_operands", ["Double", "Float"]),
    ("RuntimeError: Expected object of scalar type Double but got scalar type Float for sequence element 2 in "
     "sequence argument at position #1 'tensors'", "dtype.cat_mixed_dtypes", ["Sequence element 2", "'tensors'",
                                                                               "Double", "Float"]),
    # https://github.com/rusty1s/pytorch_cluster/issues/41
    (corpus_message("dtype_autograd.yaml#20"),
     "dtype.extension_data_ptr", ["`fps` in torch_cluster", "data_ptr<long int>", "Float", "Long"]),
    ("RuntimeError: Expected tensor for argument #1 'indices' to have s", "dtype.embedding_indices",
     ["'indices'", "cut off"]),
])
def test_message_only_dtype_summaries_name_the_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


@pytest.mark.parametrize("message", [
    # a device mismatch in the same legacy wording: not a dtype problem
    "RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #2 'weight'",
    "RuntimeError: Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 'weight'; "
    "but type torch.FloatTensor does not equal torch.cuda.FloatTensor (while checking arguments for cudnn_convolution)",
    # the same wordings that legacy_mixed_operands and cat_mixed_dtypes read, with the device differing
    "RuntimeError: expected backend CUDA and dtype Float but got backend CPU and dtype Float",
    "RuntimeError: expected backend CUDA and dtype Float but got backend CPU and dtype Long",
    "RuntimeError: expected device cuda:0 and dtype Float but got device cpu and dtype Float",
    "RuntimeError: expected CPU tensor (got CUDA tensor)",
])
def test_legacy_device_mismatches_are_not_claimed_by_dtype_rules(message):
    rule = explain_text(message).rule
    assert rule is None or not rule.startswith("dtype."), rule


def test_torch_kernels_reading_data_ptr_are_not_taken_for_an_extension():
    # https://github.com/rusty1s/pytorch_cluster/issues/41 (dtype_autograd.yaml#20): an excerpt, its first two
    # lines, where the only frame is torch's own libc10.so, stays target_long; the whole message, whose next
    # frame is torch_cluster's fps_cpu, is the extension's
    whole = corpus_message("dtype_autograd.yaml#20")
    excerpt = "\n".join(whole.split("\n")[:2])
    assert "torch/lib/libc10.so" in excerpt and "torch_cluster" not in excerpt
    assert explain_text(excerpt).rule == "dtype.target_long"
    assert explain_text(whole).rule == "dtype.extension_data_ptr"


def test_legacy_half_overflow_names_the_value():
    diagnosis = explain_text("RuntimeError: value cannot be converted to type at::Half without overflow: -1e+09")
    assert diagnosis.rule == "numerics.half_overflow"
    assert "-1e+09" in diagnosis.summary and "at::Half" in diagnosis.summary, diagnosis.summary


def test_clip_grad_norm_future_warning_is_the_nonfinite_norm():
    diagnosis = explain_text(
        "FutureWarning: Non-finite norm encountered in torch.nn.utils.clip_grad_norm_; continuing anyway. Note that the "
        "default behavior will change in a future release to error out if a non-finite total norm is encountered. At "
        "that point, setting error_if_nonfinite=false will be required to retain the old behavior.")
    assert diagnosis.rule == "numerics.nonfinite_grad_norm"
    assert "clip_grad_norm_" in diagnosis.summary and "error_if_nonfinite=false" in diagnosis.summary, diagnosis.summary
    assert "went on" in diagnosis.summary, diagnosis.summary


def _index_put_half():
    scores = torch.zeros(2, 2, dtype=torch.float16)
    scores[torch.tensor([[True, False], [False, True]])] = torch.rand(2)


# validate_args is passed to the distributions explicitly: torch.compile (used by other tests in the same process)
# turns the global default off.
@pytest.mark.parametrize("call, rule, values", [
    (_index_put_half, "dtype.index_source_dtype", ["Float values into a Half tensor"]),
    (lambda: torch.zeros(3).index_add_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64)),
     "dtype.index_source_dtype", ["`index_add_`", "Double", "Float"]),
    (lambda: torch.zeros(3).gather(0, torch.tensor([0.0])), "dtype.index_dtype", ["`gather()`"]),
    (lambda: torch.zeros(3)[torch.tensor([0.5])], "dtype.index_dtype", ["long, int, byte or bool"]),
    (lambda: torch.zeros(3).masked_fill(torch.tensor([1.0, 0.0, 1.0]), 0), "dtype.mask_not_bool",
     ["`masked_fill_`", "float mask"]),
    (lambda: torch.where(torch.tensor([1.0, 0.0]), torch.zeros(2), torch.ones(2)), "dtype.mask_not_bool",
     ["`where`", "Float"]),
    (lambda: torch.tensor([1, 2]).mean(), "dtype.float_only_op", ["`mean`", "Long"]),
    (lambda: torch.linalg.inv(torch.eye(2, dtype=torch.long)), "dtype.float_only_op", ["`linalg.inv`", "Long"]),
    (lambda: torch.zeros(2, dtype=torch.long).requires_grad_(), "dtype.requires_grad_integer", ["requires_grad_()"]),
    (lambda: torch.cat([torch.rand(2)], out=torch.empty(2, dtype=torch.long)), "dtype.result_cast",
     ["`torch.cat`", "Long"]),
    (lambda: torch.nn.functional.scaled_dot_product_attention(
        torch.zeros(1, 2, 2), torch.zeros(1, 2, 2), torch.zeros(1, 2, 2, dtype=torch.float64)),
     "dtype.sdpa_dtype", ["query.dtype: float", "value.dtype: double"]),
    (lambda: torch.nn.LayerNorm(4)(torch.zeros(2, 4, dtype=torch.float64)), "dtype.norm_mixed_cpu", ["CPU"]),
    (lambda: torch.tensor([True]) - torch.tensor([False]), "dtype.bool_arithmetic", ["Subtraction"]),
    (lambda: torch.distributions.Normal(torch.tensor([float("nan")]), torch.ones(1), validate_args=True),
     "numerics.distribution_invalid", ["loc of a Normal", "Real()", "contains nan"]),
    (lambda: torch.distributions.Normal(torch.zeros(1), -torch.ones(1), validate_args=True),
     "numerics.distribution_invalid", ["scale of a Normal", "GreaterThan(lower_bound=0.0)", "zero or negative"]),
    (lambda: torch.linalg.inv(torch.zeros(2, 3, 3)), "numerics.linalg_failed", ["batch element 0", "singular"]),
    (lambda: torch.linalg.svd(torch.full((3, 3), float("nan"))), "numerics.linalg_failed", ["nan or inf"]),
    (lambda: torch.linalg.eig(torch.tensor([[float("inf"), 1.0], [1.0, 1.0]])), "numerics.linalg_failed",
     ["`torch.linalg.eig`", "nan or inf"]),
    (lambda: torch.distributions.Bernoulli(probs=torch.tensor([1.5]), validate_args=True),
     "numerics.distribution_invalid", ["probs of a Bernoulli", "outside the allowed interval"]),
    (lambda: torch.std_mean(torch.tensor([1, 2])), "dtype.float_only_op", ["`std_mean`"]),
    (lambda: torch.tensor([1, 2]).nanmean(), "dtype.float_only_op", ["`nanmean`", "Long"]),
    (lambda: torch.quantile(torch.tensor([1, 2]), 0.5), "dtype.float_only_op", ["`quantile`"]),
    (lambda: torch.zeros(3).index_add_(0, torch.tensor([0.0]), torch.ones(1)), "dtype.index_dtype",
     ["`index_add_()`", "Float"]),
    (lambda: torch.zeros(3).index_fill_(0, torch.tensor([0.0]), 1), "dtype.index_dtype", ["`index_fill_()`"]),
    (lambda: torch.zeros(3).index_copy_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64)),
     "dtype.index_source_dtype", ["`index_copy_`", "Double values into a Float tensor"]),
    (lambda: torch.zeros(3).put_(torch.tensor([0]), torch.ones(1, dtype=torch.float64)),
     "dtype.index_source_dtype", ["`put_`", "Double values into a Float tensor"]),
    (lambda: torch.zeros(3).masked_scatter_(torch.tensor([True, False, True]), torch.ones(3, dtype=torch.float64)),
     "dtype.index_source_dtype", ["`masked_scatter`", "Double values into a Float tensor"]),
    (lambda: torch.zeros(3).masked_select(torch.tensor([1.0, 0.0, 1.0])), "dtype.mask_not_bool", ["`masked_select`"]),
    (lambda: torch.zeros(3).masked_scatter_(torch.tensor([1.0, 0.0, 1.0]), torch.ones(3)), "dtype.mask_not_bool",
     ["`masked_scatter_`", "Float mask"]),
])
def test_modern_dtype_and_numerics_errors_name_the_values(call, rule, values):
    assert_names(explain(raised(call)), rule, values)


@pytest.mark.parametrize("message", [
    # a value outside a distribution's support is not a parameter with invalid values
    "ValueError: Expected value argument (Tensor of shape ()) to be within the support (IntegerInterval(lower_bound=0, "
    "upper_bound=2)) of the distribution Categorical(logits: torch.Size([3])), but found invalid values:\n5",
    # Cholesky has its own rule
    "torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order 5 is not positive-definite).",
])
def test_neighbouring_numerics_messages_stay_with_their_rules(message):
    assert explain_text(message).rule not in ("numerics.distribution_invalid", "numerics.linalg_failed")


@pytest.mark.parametrize("message, rule, values", [
    # raised live: .numpy() of float8 and complex32 tensors, addcdiv on integers, an int probability target
    (_live(lambda: torch.zeros(1, dtype=torch.float8_e4m3fn).numpy()), "dtype.numpy_unsupported_dtype",
     ["Float8_e4m3fn"]),
    (_live(lambda: torch.zeros(1, dtype=torch.complex32).numpy()), "dtype.numpy_unsupported_dtype", ["ComplexHalf"]),
    (_live(lambda: torch.addcdiv(*[torch.ones(2, dtype=torch.long)] * 3)), "dtype.integer_division", ["`addcdiv`"]),
    (_live(lambda: torch.nn.functional.cross_entropy(torch.randn(2, 3), torch.ones(2, 3, dtype=torch.int))),
     "dtype.cross_entropy_prob_target", ["Int target", "cross_entropy_loss"]),
    ("ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32",
     "dtype.fsdp_uniform_dtype", ["torch.float16", "torch.float32"]),
    # the CUDA kernel's assertion in ATen's Loss.cu (torch 1.x and 2.x), from the corpus
    (corpus_message("r22_a.yaml#40"), "numerics.bce_input_range",
     ["Loss.cu:102", "input_val >= zero && input_val <= one", "binary_cross_entropy"]),
    # raised live: the CPU check of binary_cross_entropy on a nan prediction
    (_live(lambda: torch.nn.functional.binary_cross_entropy(torch.tensor([float("nan")]), torch.tensor([0.5]))),
     "numerics.bce_input_range", ["between 0 and 1", "outputs nan"]),
    # detectron2's anomaly guard, from the corpus
    (corpus_message("r15_b.yaml#59"), "numerics.loss_nan_stop", ["iteration=27", "loss_cls (nan on cuda:1)"]),
    ("RuntimeError: Can't detach views in-place. Use detach() instead", "autograd.detach_view_inplace",
     ["`detach_()`", "view"]),
])
def test_round4_dtype_numerics_autograd_wordings_name_the_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


def test_detach_view_names_ddp_bucket_views_only_when_the_message_does():
    short = explain_text("RuntimeError: Can't detach views in-place. Use detach() instead")
    assert "gradient_as_bucket_view" not in short.summary, short.summary
    live = explain(raised(lambda: (torch.randn(4, 3, requires_grad=True) * 1)[:, :2].detach_()))
    assert live.rule == "autograd.detach_view_inplace"
    assert "gradient_as_bucket_view=True" in live.summary, live.summary


def test_one_hot_long_target_names_both_shapes_live():
    logits, labels = torch.randn(4, 3), torch.nn.functional.one_hot(torch.tensor([0, 2, 1, 0]), 3)
    diagnosis = explain(raised(lambda: torch.nn.functional.cross_entropy(logits, labels)))
    assert diagnosis.rule == "dtype.cross_entropy_prob_target", diagnosis.rule
    assert "(int64, shape (4, 3))" in diagnosis.summary and "shape (4, 3))" in diagnosis.summary, diagnosis.summary


def test_bfloat16_numpy_names_the_dtype_live():
    diagnosis = explain(raised(lambda: torch.ones(2, dtype=torch.bfloat16).numpy()))
    assert diagnosis.rule == "dtype.numpy_unsupported_dtype"
    assert "BFloat16 tensor" in diagnosis.summary and any(".float().numpy()" in f for f in diagnosis.fixes)


@pytest.mark.parametrize("message", [
    # other distributions checks and other CUDA assertions stay with their rules
    "/pytorch/aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: "
    "[0,0,0] Assertion `t >= 0 && t < n_classes` failed.",
    "ValueError: Expected value argument (Tensor of shape (3,)) to be within the support (Interval(lower_bound=0.0, "
    "upper_bound=1.0)) of the distribution Beta(), but found invalid values:\ntensor([1.5, 0.2, 0.3])",
])
def test_neighbours_of_the_round4_numerics_rules_are_not_claimed(message):
    assert explain_text(message).rule not in ("numerics.bce_input_range", "numerics.distribution_invalid")


@pytest.mark.parametrize("message, rule, values", [
    ("RuntimeError: Function MmBackward returned an invalid gradient at index 0 - got [1, 1024] but expected shape "
     "compatible with [1, 4096]", "autograd.invalid_gradient_shape", ["MmBackward", "[1, 1024]", "[1, 4096]", "hook"]),
    ("RuntimeError: Function _RasterizeGaussiansBackward returned an invalid gradient at index 5 - got [231550, 2] "
     "but expected shape compatible with [231550, 3]", "autograd.invalid_gradient_shape",
     ["input 5", "[231550, 2]", "custom `torch.autograd.Function`"]),
    ("Exception in main training loop: invalid gradient at index 0 - expected shape [2] but got [4]",
     "autograd.invalid_gradient_shape", ["shape [4]", "shape [2]"]),
    ("RuntimeError: cudnn RNN backward can only be called in training mode", "autograd.cudnn_rnn_backward_eval",
     ["cudnn RNN backward", "training mode", "model.train()"]),
    ("RuntimeError: backward_input can only be called in training mode", "autograd.cudnn_rnn_backward_eval",
     ["backward_input", "cuDNN"]),
    ("`RuntimeError: Unexpected floating ScalarType in at::autocast::prioritize`", "dtype.autocast_prioritize",
     ["at::autocast::prioritize", "float16", "bfloat16"]),
    ("AssertionError: No inf checks were recorded prior to update.", "autograd.amp_no_inf_checks",
     ["prior to update", "scaler.step(optimizer)"]),
    ("> Only Variables created explicitly by the user (graph leaves) support the deepcopy protocol at the moment",
     "autograd.deepcopy_nonleaf", ["deepcopy"]),
    ("RuntimeError: \"LayerNormKernelImpl\" not implemented for 'Half", "dtype.not_implemented",
     ["LayerNormKernelImpl", "layer_norm", "Half"]),
    ("RuntimeError: Input type (Byte) and weight type (Float) should be the same", "dtype.conv_input_type",
     ["Byte", "Float"]),
    ("RuntimeError: Function 'All2All_Seq_Req_WaitBackward' returned nan values in its 0th output; num_outputs = 1; "
     "num_inputs = 0; outputs[0].shape = [1, ]; outputs[i] = nan", "numerics.anomaly_nan",
     ["All2All_Seq_Req_WaitBackward", "[1, ]"]),
    ("RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([1]) and output[0] has a shape of "
     "torch.Size([]).", "autograd.backward_gradient_shape", ["torch.Size([1])", "torch.Size([])", "torch.tensor(1.0)"]),
    ("RuntimeError: Legacy autograd function with non-static forward method is deprecated. Please use new-style "
     "autograd function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html"
     "#torch.autograd.Function)", "autograd.legacy_function", ["instance method", "removed in 1.5"]),
    ("RuntimeError: element 0 of variables does not require grad and does not have a grad_fn", "autograd.no_grad_fn",
     ["element 0"]),
    ("RuntimeError: cholesky_cuda: For batch 6: U(1,1) is zero, singular U.", "numerics.cholesky_not_pd",
     ["batch 6", "order 1"]),
    ("RuntimeError: One of the differentiated Tensors does not require grad", "autograd.grad_input_no_grad",
     ["torch.autograd.grad", "frozen parameter"]),
    ("ValueError: too many dimensions 'str'", "dtype.tensor_from_strings", ["`str`", "label"]),
    (_live(lambda: torch.tensor([None])), "dtype.tensor_from_strings", ["`NoneType`", "None"]),
    ("UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
     "won't be populated during autograd.backward().", "autograd.nonleaf_grad_access", ["not a leaf", "None"]),
    ("RuntimeError: cannot register a hook on a tensor that doesn't require gradient", "autograd.hook_no_grad",
     ["register_hook", "frozen parameter", "torch.no_grad()"]),
])
def test_round5_dtype_numerics_autograd_wordings_name_the_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


@pytest.mark.parametrize("message", [
    # a CUDA/CPU pair is a device problem; mixed devices never go to the dtype rule
    "RuntimeError: Input type (CUDAFloatType) and weight type (CPUFloatType) should be the same",
    # the dtype and device variants of the invalid-gradient check are not shape problems
    "RuntimeError: Function CudnnConvolutionBackward returned an invalid gradient at index 1 - expected type "
    "TensorOptions(dtype=float, device=cuda:0, layout=Strided, requires_grad=false) but got "
    "TensorOptions(dtype=c10::Half, device=cuda:0, layout=Strided, requires_grad=false)",
])
def test_neighbours_of_the_round5_rules_are_not_claimed(message):
    rule = explain_text(message).rule
    assert rule not in ("dtype.conv_input_type", "autograd.invalid_gradient_shape"), rule
