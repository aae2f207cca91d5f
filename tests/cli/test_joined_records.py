"""What a log prints with an error belongs to it: records a rule `joins` (shown with the error, as one
failure), an inner error announced by "raised:", the parts of a message after a blank line; a launcher's
report names the worker error before it even when no rule explains that error."""

import io
import traceback
import warnings

import pytest
import torch

from conftest import benchmark_module, run_python
from explainer.cli.explain import FOLD_LINES, explain_stream, ranks_note

coverage = benchmark_module("coverage")
CORPUS = {e.where: e for e in coverage.load_corpus() if not e.held_out}


def _printed_with_anomaly_warning(call, *, warning_first: bool = True, between: str = "") -> str:
    """stderr as Python prints it: anomaly mode's warning (via warnings) and the uncaught error."""
    with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
        warnings.simplefilter("always")
        try:
            call()
        except RuntimeError as exc:
            error = "".join(traceback.format_exception(exc))
        else:
            raise AssertionError("the call did not raise")
    [warning] = [w for w in caught if "Error detected in" in str(w.message)]
    printed = warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return printed + between + error if warning_first else error + between + printed


def _modify_saved_output():
    w = torch.randn(3, requires_grad=True)
    y = (w * 2).sigmoid()
    y.mul_(2)
    y.sum().backward()


def _log_of_zero():
    probs = torch.tensor([0.0, 0.5, 0.5], requires_grad=True)
    (probs * torch.log(probs)).sum().backward()


def test_anomaly_warning_before_the_error_is_shown_with_it():
    text = _printed_with_anomaly_warning(_modify_saved_output)
    [diagnosis] = explain_stream(io.StringIO(text))
    assert diagnosis.rule == "autograd.inplace_modified"
    [joined] = diagnosis.facts["printed_with"]
    assert joined["rule"] == "autograd.anomaly_error_detected" and "SigmoidBackward0" in joined["summary"]
    assert joined["location"]["code"] == "y = (w * 2).sigmoid()"
    assert "SigmoidBackward0" in coverage.what_was_said(diagnosis)


def test_anomaly_warning_printed_after_the_error_is_shown_with_it():
    text = _printed_with_anomaly_warning(_log_of_zero, warning_first=False)
    [diagnosis] = explain_stream(io.StringIO(text))
    assert diagnosis.rule == "numerics.anomaly_nan"
    assert "LogBackward0" in diagnosis.facts["printed_with"][0]["summary"]


def test_an_anomaly_warning_far_from_the_error_stays_a_record_of_its_own():
    filler = "".join(f"step {i}: loss 0.5\n" for i in range(FOLD_LINES + 5))
    text = _printed_with_anomaly_warning(_modify_saved_output, between=filler)
    rules = [d.rule for d in explain_stream(io.StringIO(text))]
    assert rules == ["autograd.anomaly_error_detected", "autograd.inplace_modified"]


def test_a_workers_collate_error_is_shown_with_the_stack_error_that_names_the_sizes():
    [diagnosis] = explain_stream(io.StringIO(CORPUS["r4_a.yaml#92"].message))
    assert diagnosis.rule == "shape.stack_sizes"
    assert "[3, 392, 392]" in diagnosis.summary
    assert [j["rule"] for j in diagnosis.facts["printed_with"]] == ["shape.collate_resize_storage"]


def test_a_spawned_process_error_is_shown_with_spawns_re_raise():
    printed = run_python("fixtures/distributed/spawn_child_error.py").stderr
    assert "-- Process 0 terminated with the following error:" in printed
    [diagnosis] = explain_stream(io.StringIO(printed))
    assert diagnosis.rule == "shape.matmul" and diagnosis.location.code == "head(torch.randn(4, 5))"
    [spawn] = diagnosis.facts["printed_with"]
    assert spawn["rule"] == "distributed.spawn_process_raised" and "Process 0" in spawn["summary"]
    assert spawn["location"]["code"] == "mp.spawn(train, nprocs=1)"


def test_torchruns_report_names_a_worker_error_no_rule_explains():
    worker, launcher = explain_stream(io.StringIO(CORPUS["dist2.yaml#3"].message))
    assert (worker.rule, launcher.rule) == (None, "distributed.child_failed")
    assert 'unexplained: "Exception: expected value at line 1 column 1"' in ranks_note(launcher)


def test_a_frame_line_cut_inside_a_code_fence_is_torchs_not_the_users():
    [diagnosis] = explain_stream(io.StringIO(CORPUS["r10_a.yaml#106"].message))
    assert diagnosis.rule == "autograd.checkpoint_meta_device"
    assert diagnosis.location is None


def test_an_inner_error_announced_by_raised_stays_in_its_record_under_log_prefixes():
    # dynamo's warning log prefixes every line; "backend='inductor' raised:" still goes on to the RuntimeError
    found = [d for d in explain_stream(io.StringIO(CORPUS["r10_b.yaml#35"].message)) if d.rule]
    assert [d.rule for d in found] == ["compile.triton_capability"]
    assert "NVIDIA GeForce GTX TITAN X" in found[0].summary


@pytest.mark.parametrize("where, rule, value", [
    ("r10_b.yaml#54", "other.build_isolation_no_torch", "flash-attn@2.8.1"),  # uv's hint after a blank line
    ("devmem.yaml#105", "device.cublas_status", "CUDA_R_16F"),  # cuBLAS's call, broken off after a blank line
])
def test_what_a_message_says_after_a_blank_line_stays_in_it(where, rule, value):
    [diagnosis] = [d for d in explain_stream(io.StringIO(CORPUS[where].message)) if d.rule]
    assert diagnosis.rule == rule and value in coverage.what_was_said(diagnosis)


def _scheduler_warning() -> str:
    """The warning a scheduler stepped before its optimizer issues, as Python prints it."""
    optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.step()
    [warning] = [w for w in caught if "lr_scheduler.step()" in str(w.message)]
    return warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno)


def _matmul_error() -> str:
    try:
        torch.nn.Linear(2048, 100)(torch.randn(64, 8192))
    except RuntimeError as exc:
        return "".join(traceback.format_exception(exc))
    raise AssertionError("the call did not raise")


def _training_log(lines: int) -> str:
    return "".join(f"2026-12-06 10:02:14,002 INFO step={i} loss=0.3\n" for i in range(lines))


def test_a_warning_printed_long_before_an_error_is_a_finding_of_its_own():
    text = _scheduler_warning() + _training_log(300) + "2026-12-06 10:02:22,771 ERROR Training failed\n" + _matmul_error()
    warning, error = explain_stream(io.StringIO(text))
    assert (warning.rule, error.rule) == ("other.lr_scheduler_before_optimizer", "shape.matmul")
    assert "printed_with" not in error.facts and warning.facts["input_line"] == 1


def test_a_warning_printed_right_before_an_error_in_a_long_log_is_shown_with_it():
    text = _training_log(300) + _scheduler_warning() + "2026-12-06 10:02:22,771 ERROR Training failed\n" + _matmul_error()
    [error] = explain_stream(io.StringIO(text))
    assert error.rule == "shape.matmul"
    assert [part["rule"] for part in error.facts["printed_with"]] == ["other.lr_scheduler_before_optimizer"]
