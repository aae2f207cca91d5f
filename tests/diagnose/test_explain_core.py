"""The explain pipeline's own behaviour: where a diagnosis points, ordering, and honest fallbacks."""

from __future__ import annotations

import io

import explainer
from explainer.cli.explain import explain_stream
from explainer.diagnose.render import render_text

from conftest import corpus_message, raise_fixture


def test_worker_error_without_user_frames_points_at_the_loop_in_the_main_process():
    diagnosis = explainer.explain(raise_fixture("fixtures/data/collate_variable_length.py"))
    assert diagnosis.rule == "data.collate_variable_length"
    assert diagnosis.location is not None
    assert diagnosis.location.code == "for batch in loader:"


def test_log_errors_are_reported_in_the_order_they_began():
    # a rank's NCCL error, then torchrun's report of the failed child
    # (https://github.com/Tencent-Hunyuan/HunyuanVideo/issues/114 as r14_b.yaml#1 holds it)
    log = corpus_message("r14_b.yaml#1")
    diagnoses = list(explain_stream(io.StringIO(log)))
    lines = [d.facts["input_line"] for d in diagnoses]
    assert lines == sorted(lines) and len(lines) == 2
    assert [d.rule for d in diagnoses] == ["distributed.nccl_error", "distributed.child_failed"]


def test_unknown_error_line_names_the_type_never_the_message():
    # a 323-character error line no rule claims (https://github.com/Physical-Intelligence/openpi/issues/607, its last)
    message = corpus_message("r13_b.yaml#52").splitlines()[-1]
    assert len(message) > 300 and message.startswith("ValueError: One of device_put args")
    text = render_text(explainer.explain_text(message))
    assert text == "torch-explainer: no known pytorch failure matches this error (ValueError).\n"


def test_another_frameworks_message_is_said_to_be_foreign_not_matched_as_pytorch():
    # Copied from https://github.com/PaddlePaddle/PaddleSeg/issues/159: Paddle reuses cuDNN's status names.
    paddle = ("Error Message Summary:\n----------------------\n"
              "Error: CUDNN_STATUS_EXECUTION_FAILED at (/paddle/paddle/fluid/operators/conv_cudnn_op.cu:288)\n"
              "  [operator < conv2d > error]")
    assert explainer.explain_text("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED").rule == \
        "device.cudnn_status"
    assert explainer.explain_text(paddle.splitlines()[2]).rule is None
    diagnosis = explainer.explain_text(paddle)
    assert diagnosis.rule is None and "PaddlePaddle" in diagnosis.title and "conv2d" in diagnosis.summary
    assert diagnosis.runbook.endswith("other.not_pytorch_paddle.html")
    text = render_text(diagnosis)
    assert "Not a PyTorch error" in text and "runbook:" in text


def test_a_pasted_glog_check_of_caffe_or_mxnet_is_said_to_be_foreign():
    # Copied from https://github.com/CMU-Perceptual-Computing-Lab/openpose/issues/1708 (Caffe, in openpose):
    # no 'Error:' line, so it is read as one pasted message; a PyTorch rule for the CUDA status must not claim it.
    pasted = "Check failed: error == cudaSuccess (48 vs. 0) no kernel image is available for execution on the device."
    [diagnosis] = explain_stream(io.StringIO(pasted))
    assert diagnosis.rule is None and diagnosis.runbook.endswith("other.not_pytorch_caffe_mxnet.html")
    assert "status 48" in diagnosis.summary and "no kernel image" in diagnosis.summary


def test_a_pytorch_error_from_an_environment_named_tensorflow_is_still_pytorch():
    # torch installed in a conda env named "tensorflow_p36" (https://github.com/yunjey/stargan/issues/107)
    message = corpus_message("r16_a.yaml#88")
    assert "/envs/tensorflow_p36/lib/python3.6/site-packages/torch/" in message
    assert explainer.explain_text(message).rule == "shape.loss_target_size"


def test_a_rule_without_probes_still_names_the_tensors_of_the_failing_line():
    # numerics.bernoulli_probability reads no live state itself: the operands come from the failing line.
    diagnosis = explainer.explain(raise_fixture("fixtures/numerics/bernoulli_probability.py"))
    assert diagnosis.rule == "numerics.bernoulli_probability"
    assert [(c["name"], c["shape"], c["dtype"]) for c in diagnosis.culprits] == [("probs", [3], "float32")]


def test_a_live_bare_assertion_is_matched_with_the_statement_that_failed(tmp_path):
    # fairscale's FSDP asserts `self.has_full_params` with no message; the statement is all there is to match.
    script = tmp_path / "sharded.py"
    script.write_text("class Shard:\n    has_full_params = False\n\n    def forward(self):\n"
                      "        assert self.has_full_params\n\n\nShard().forward()\n", encoding="utf-8")
    import runpy

    try:
        runpy.run_path(str(script), run_name="__main__")
    except AssertionError as exc:
        diagnosis = explainer.explain(exc)
    assert diagnosis.rule == "distributed.fsdp_full_params_missing"
