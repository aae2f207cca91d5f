"""Round-13 rules and wordings for autograd, numerics, dtype and shape: each pasted message (verbatim from the thread
it cites) is claimed, from its text alone, by the right rule with the values it holds named; near misses stay
unclaimed; a real custom Function without backward is explained with both names torch accepts."""

from __future__ import annotations

import io

import pytest
import torch

from explainer import explain
from explainer.cli.explain import explain_stream
from explainer.probes import ProbeContext, load_builtin_probes

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said

DEEPSPEED_OVERFLOW_NAN = (  # https://github.com/fudan-generative-vision/hallo/issues/152
    "[2024-07-10 15:50:45,798] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
    "Attempted loss scale: 262144, reducing to 131072\n"
    "Steps:   0%|          | 1/2000 [00:14<8:16:07, 14.89s/it, lr=1e-5, step_loss=nan, td=2.85s][2024-07-10 "
    "15:50:50,576] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
    "loss scale: 131072, reducing to 65536")

STR_OCR_NAN = (  # https://github.com/clovaai/deep-text-recognition-benchmark/issues/66
    "[38/300000] lr: 0.1 0.1 single_train_elapsed_time: 0.22594 train_loss: nan\n"
    "[39/300000] lr: 0.1 0.1 single_train_elapsed_time: 0.23453 train_loss: nan")

SWIFT_GRAD_NAN = (  # https://github.com/modelscope/ms-swift/issues/2436
    '{"loss": 1.394207, "acc": 0.63822227, "grad_norm": 4.16534615, "learning_rate": 1.623e-05, "memory(GiB)": 19.54, '
    '"train_speed(iter/s)": 0.40806, "epoch": 0.74930955, "global_step/max_steps": "8275/11043", "percentage": '
    '"74.93%", "elapsed_time": "5h 37m 56s", "remaining_time": "1h 53m 2s"}\n'
    '{"loss": 2.23302879, "acc": 0.26443233, "grad_norm": NaN, "learning_rate": 1.617e-05, "memory(GiB)": 19.54, '
    '"train_speed(iter/s)": 0.408118, "epoch": 0.7497623, "global_step/max_steps": "8280/11043", "percentage": '
    '"74.98%", "elapsed_time": "5h 38m 5s", "remaining_time": "1h 52m 49s"}')

BEIT_GRAD_AVG_NAN = (  # https://github.com/microsoft/unilm/issues/598
    "Epoch: [115]  [1298/1299]  eta: 0:00:00  lr: 0.001435  min_lr: 0.001435  mlm_acc: 0.0333 (0.0344)  loss: 6.5993 "
    "(6.5971)  loss_scale: 8192.0000 (8646.0600)  weight_decay: 0.0500 (0.0500)  **grad_norm: 0.3922 (nan)**  "
    "time: 0.4944  data: 0.0001  max mem: 19152")

GLM_GRAD_NAN = (  # https://github.com/zai-org/GLM-4/issues/174
    # an excerpt, verbatim, of the corpus entry r13_a.yaml#98 (https://github.com/zai-org/GLM-4/issues/174)
    "{'loss': 0.1459, 'grad_norm': 5.28125, 'learning_rate': 0.000261, 'epoch': 5.36}\n"
    "{'loss': 0.2096, 'grad_norm': nan, 'learning_rate': 0.00026000000000000003, 'epoch': 5.38}")

OFA_FAIRSEQ_OVERFLOW = (  # https://github.com/OFA-Sys/OFA/issues/108
    # an excerpt, verbatim, of runbooks/numerics/amp_overflow_skip.md example #11
    # (https://github.com/OFA-Sys/OFA/issues/108)
    "2022-05-16 22:34:05 - trainer.py[line:945] - INFO: NOTE: gradient overflow detected, ignoring gradient, setting "
    "loss scale to: 64.0\n"
    "2022-05-16 22:34:07 - trainer.py[line:945] - INFO: NOTE: gradient overflow detected, ignoring gradient, setting "
    "loss scale to: 32.0\n"
    "2022-05-16 22:34:09 - trainer.py[line:945] - INFO: NOTE: gradient overflow detected, ignoring gradient, setting "
    "loss scale to: 16.0\n"
    "2022-05-16 22:34:12 - trainer.py[line:945] - INFO: NOTE: gradient overflow detected, ignoring gradient, setting "
    "loss scale to: 8.0")

BCE_NELEMENT = (  # https://github.com/LeeJunHyun/Image_Segmentation/issues/76
    '  File "/home/rahul/.local/lib/python3.8/site-packages/torch/nn/functional.py", line 2069, in '
    "binary_cross_entropy\n"
    '    raise ValueError("Target and input must have the same number of elements. target nelement ({}) "\n'
    "ValueError: Target and input must have the same number of elements. target nelement (147456) != input nelement "
    "(49152)")

THNN_NLL = (  # https://github.com/pytorch/pytorch/issues/1258
    "TypeError: FloatClassNLLCriterion_updateOutput received an invalid combination of arguments - got (int, "
    "torch.FloatTensor, torch.DoubleTensor, torch.FloatTensor, bool, NoneType, torch.FloatTensor), but expected (int "
    "state, torch.FloatTensor input, torch.LongTensor target, torch.FloatTensor output, bool sizeAverage, "
    "[torch.FloatTensor weights or None], torch.FloatTensor total_weight)")

TCNN_INPUT_DIMS = (  # https://github.com/nerfstudio-project/nerfstudio/issues/843
    # an excerpt, verbatim, of r13_b.yaml#18
    # (https://github.com/nerfstudio-project/nerfstudio/issues/843)
    '  File "/root/anaconda3/envs/nerfstudio/lib/python3.8/site-packages/tinycudann/modules.py", line 57, in forward\n'
    "    native_ctx, output = native_tcnn_module.fwd(input, params)\n"
    "RuntimeError: /tiny-cuda-nn/bindings/torch/tinycudann/bindings.cpp:88 check failed input.size(1) == "
    "n_input_dims()")

CASES = [
    # autograd
    ("RuntimeError: Trying to backward through the graph second time, but the buffers have already been freed. Please "
     "specify retain_variables=True when calling backward for the first time.",  # pytorch/examples#151
     "autograd.backward_twice", ["retain_variables=True", "retain_graph=True", "0.2"]),
    ("> NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function "
     "to use it with backward mode AD.", "autograd.function_not_implemented", ["`backward`", "`vjp`"]),
    # numerics
    (DEEPSPEED_OVERFLOW_NAN, "numerics.amp_overflow_skip", ["262144", "65536", "step_loss=nan", "at any scale"]),
    (STR_OCR_NAN, "numerics.loss_nan_log", ["train_loss: nan", "[38/300000] lr: 0.1"]),
    (SWIFT_GRAD_NAN, "numerics.grad_norm_log", ["grad_norm: NaN", "2.23302879", "step 8280/11043", "ms-swift"]),
    (BEIT_GRAD_AVG_NAN, "numerics.grad_norm_log",
     ["grad_norm: 0.3922 (nan)", "running average", "loss_scale: 8192.0000", "not a failure"]),
    (GLM_GRAD_NAN, "numerics.grad_norm_log", ["grad_norm: nan", "0.2096", "epoch 5.38"]),
    ("grad_norm: 1.8438 (inf) in epoch0 ,is this correct?",  # lsa1997/CARIS#5
     "numerics.grad_norm_log", ["grad_norm: 1.8438 (inf)", "running average is inf"]),
    (OFA_FAIRSEQ_OVERFLOW, "numerics.amp_overflow_skip", ["64.0", "8.0", "fairseq starts the scale at 128"]),
    # shape
    (BCE_NELEMENT, "shape.loss_target_size", ["147456", "49152", "3 times", "binary_cross_entropy"]),
    (TCNN_INPUT_DIMS, "shape.tcnn_size_check", ["input.size(1) == n_input_dims()", "bindings.cpp:88", "n_input_dims="]),
    ("/bindings/torch/tinycudann/bindings.cpp:88 check failed input.size(1) == n_input_dims()",  # city-super/GSDF#8
     "shape.tcnn_size_check", ["input.size(1) == n_input_dims()", "2-D"]),
    # legacy convolution wordings (torch 0.1-1.1)
    ("RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got input of size [2, 10, "
     "3, 320, 320] instead",  # fanq15/FSOD-code#60
     "shape.conv_input_rank", ["[64, 3, 7, 7]", "[2, 10, 3, 320, 320]", "4-dimensional input"]),
    ("RuntimeError: Need input of dimension 4 and input.size[1] == 1 but got input to be of shape: [3 x 3 x 7 x 7]",
     "shape.conv_channels", ["expects 1 input channels", "[3 x 3 x 7 x 7]", "has 3 channels"]),  # pytorch#1406
    ("RuntimeError: Given groups=2 and weights of shape: [4, 2, 3, 3, 3] , so expected input ([1, 2, 5, 5, 5])  to "
     "have 4 channels, but got 2 channels instead",  # pytorch#2865
     "shape.conv_channels", ["[4, 2, 3, 3, 3]", "expects 4 input channels", "[1, 2, 5, 5, 5] has 2 channels"]),
    ("RuntimeError: Expected tensor for argument #1 'input' to have the same dimension as tensor for 'result'; but 4 "
     "does not equal 3 (while checking arguments for cudnn_convolution)",  # ChenRocks/fast_abs_rl#56
     "shape.conv_kernel_size", ["cudnn_convolution", "4-D input", "3-D result", "smaller than the kernel"]),
    ("RuntimeError(Calculated input size: (3 x 7). Kernel size: (4 x 4). Kernel size can't greater than actual input "
     "size at /home/ssnl/sftp/pytorch/aten/src/THCUNN/generic/SpatialConvolutionMM.cu:48)",  # pytorch#4884
     "shape.conv_kernel_size", ["(4 x 4)", "(3 x 7)"]),
    ("RuntimeError: weight should have at least three dimensions",  # haotian-liu/LLaVA#1082
     "shape.conv_weight_rank", ["fewer than 3 dimensions", "ZeRO-3", "torch.Size([0])"]),
    ("RuntimeError: invalid argument 5: 2D or 4D weight tensor expected, but got: [1 x 3 x 3]",  # pytorch#3141
     "shape.conv_weight_rank", ["[1 x 3 x 3]", "view(1, 1, kH, kW)"]),
    # dtype
    (THNN_NLL, "dtype.thnn_argument_types",
     ["FloatClassNLLCriterion_updateOutput", "torch.DoubleTensor", "`target`", "torch.LongTensor target", ".long()"]),
]


@pytest.mark.parametrize("text, rule, values", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


def test_a_legacy_signature_with_torch_0_3_marks_names_the_marked_argument():
    """torch 0.2-0.3 mark the argument that does not fit with `!...!`; the probe trusts the marks. The two lists are
    torch 0.3's message as a user kept it, verbatim, in a comment of weights/test_weighted_loss.py
    (https://github.com/OpenNMT/OpenNMT-py/blob/8867ca956e7bf15aa4736f1b8586fc4eaa5421d1/weights/test_weighted_loss.py),
    the expected list's comment line break joined."""
    probe = load_builtin_probes()["legacy_argument_mismatch"]
    evidence = probe.function(ProbeContext(None, [], {
        "got_args": "int, torch.FloatTensor, !torch.FloatTensor!, torch.FloatTensor, bool, NoneType, "
                    "torch.FloatTensor, int",
        "expected_args": "int state, torch.FloatTensor input, torch.LongTensor target, torch.FloatTensor output, bool "
                         "sizeAverage, [torch.FloatTensor weights or None], torch.FloatTensor total_weight, int "
                         "ignore_index"}))
    assert evidence is not None
    assert (evidence.facts["bad_argument"], evidence.facts["bad_got"], evidence.facts["bad_expected"]) == (
        "target", "torch.FloatTensor", "torch.LongTensor")
    assert evidence.facts["bad_count"] == 1


def test_an_optional_argument_given_as_none_is_not_a_mismatch():
    # THNN_NLL's own lists (pytorch#1258): `weights` is given as NoneType where `[torch.FloatTensor weights or None]`
    # is expected; only the target is a mismatch
    got = THNN_NLL.split(" - got (", 1)[1].split("), but expected (", 1)[0]
    expected = THNN_NLL.split("), but expected (", 1)[1].removesuffix(")")
    assert "NoneType" in got and "[torch.FloatTensor weights or None]" in expected
    probe = load_builtin_probes()["legacy_argument_mismatch"]
    evidence = probe.function(ProbeContext(None, [], {"got_args": got, "expected_args": expected}))
    assert evidence is not None and evidence.facts["bad_count"] == 1, evidence and evidence.facts
    assert evidence.facts["bad_argument"] == "target" and "weights" not in evidence.facts["bad_list"], evidence.facts


def test_an_overflow_run_without_a_nan_loss_is_read_as_calibration_not_as_a_nan_forward():
    # DeepSpeed's scaler halving from 65536 to 8192, no loss printed (https://github.com/deepspeedai/DeepSpeed/issues/931)
    text = corpus_message("r21_b.yaml#55")
    assert "nan" not in text.lower()
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "numerics.amp_overflow_skip"
    assert "nan_loss" not in diagnosis.facts and "65536" in diagnosis.summary, diagnosis.summary
    assert "loss scaling at work" in diagnosis.summary, diagnosis.summary


@pytest.mark.parametrize("text", [
    # a finite Trainer line and the same macro's device check (another family)
    "{'loss': 2.0154, 'grad_norm': 5.275798320770264, 'learning_rate': 0.0037466063348416292, 'epoch': 0.06}",
    "RuntimeError: tinycudann/bindings.cpp:81 check failed params.device().is_cuda()",
    # constructors with several signatures (torch 0.4+), not a THNN kernel
    "TypeError: new() received an invalid combination of arguments - got (float, int, int, int), but expected one of:",
    "TypeError: torch.zeros received an invalid combination of arguments - got (int, int, float, float), but expected "
    "one of:",
    # fairseq halving its scale once, still well above its minimum: loss scaling at work
    "`NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 4.0`",  # fairseq#4755
    # a bare NameError says nothing about where it came from
    "NameError: name 'fn' is not defined",
])
def test_near_misses_are_not_claimed_by_the_round13_rules(text):
    rules = {"numerics.grad_norm_log", "shape.tcnn_size_check", "dtype.thnn_argument_types", "shape.rnn_input_size",
             "numerics.amp_overflow_skip"}
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in rules]
    assert not claimed, (text, claimed)


class _ForwardOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2


def test_a_real_function_without_backward_is_explained_with_both_names():
    x = torch.ones(3, requires_grad=True)
    exc = raised(lambda: _ForwardOnly.apply(x).sum().backward())
    assert "vjp" in str(exc)
    diagnosis = explain(exc)
    assert_names(diagnosis, "autograd.function_not_implemented", ["`backward`", "`vjp`"], said(diagnosis))


def test_a_bare_kernel_given_to_conv2d_is_named_with_its_shape():
    diagnosis = explain_fixture("fixtures/shape/conv_weight_rank.py")
    assert_names(diagnosis, "shape.conv_weight_rank", ["`F.conv2d`", "`sobel_x`", "(3, 3)", "sobel_x.view(1, 1"],
                 said(diagnosis))
