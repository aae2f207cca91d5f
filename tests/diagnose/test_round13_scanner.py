"""Round 13, the engine: how `explainer explain` finds an error's record in pasted text and which of its values
reach the diagnosis. loguru's values under a frame's code, an error line indented by a space, a traceback pasted
after its error or innermost first, a logger's "<class 'X'> at f.py:N - text", pytest's report, the package a
library's helper raised in, vLLM's wrapper and log prefix, warnings of one rule at several places, the error a
wrapper was raised from, a warning's source line, Colab's linked cells, glog's and old TH's C++ places, a frame
line cut before its function, a translated traceback."""

from __future__ import annotations

import io
import pickle
import traceback

import pytest

from conftest import PYTEST_TERMINALS, ROOT, benchmark_module, run_explainer, run_python, place as _place, ruled_diagnoses as _ruled
from explainer.cli.explain import explain_stream
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text
from explainer.diagnose.textframes import Frame, in_call_order

CORPUS = {e.where: e for e in benchmark_module("coverage").load_corpus() if not e.held_out}


# --- loguru's (and better_exceptions') values under a frame's code ------------------------------------------------

def test_loguru_values_under_the_raising_frames_code_are_the_culprits_by_the_names_they_point_at():
    # devmem#108: `self.padding, self.dilation, self.groups)` with a "└ value" line under each name
    [diagnosis] = _ruled("devmem.yaml#108")
    culprits = {c["name"]: c["repr"] for c in diagnosis.culprits}
    assert culprits == {"self": "Conv2d(12, 24, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)",
                        "self.padding": "(1, 1)", "self.dilation": "(1, 1)", "self.groups": "1"}
    assert "self.padding   (1, 1)" in render_text(diagnosis)


def test_loguru_values_pasted_without_their_code_line_still_reach_the_diagnosis():
    # devmem#210: only the annotations and the error: the values, leftmost first, with no names
    [diagnosis] = _ruled("devmem.yaml#210")
    assert [c["name"] for c in diagnosis.culprits] == [""] * 6
    assert diagnosis.culprits[1]["repr"] == "<built-in method isin of type object at 0x7fdcf4e81760>"


# --- where a paste holds no error line at the left margin, or holds it first ---------------------------------------

def test_an_error_line_indented_by_a_space_keeps_the_statement_pasted_above_it():
    # modern#80: "self.accelerator.backward(loss)" then " RuntimeError: Expected is_sm80 to be true, but got false."
    [diagnosis] = _ruled("modern.yaml#80")
    assert diagnosis.rule == "device.flash_attn_arch"
    assert diagnosis.facts["raised_in"]["code"] == "self.accelerator.backward(loss)"


def test_a_traceback_pasted_after_its_error_line_places_that_error():
    # r4_b#39: the CUDA error first, then two processes' copies of its traceback, interleaved, with no error line
    [diagnosis] = _ruled("r4_b.yaml#39")
    assert diagnosis.rule == "device.invalid_ordinal"
    assert (diagnosis.location.file, diagnosis.location.line) == ("/workspace/SimpleTuner/train_sdxl.py", 156)
    assert "AcceleratorState" in diagnosis.location.code
    assert _place(diagnosis.facts["raised_in"])[:3] == ("state.py", 720, "__init__")


def test_a_cut_ipython_traceback_after_a_warning_is_the_warnings_place_in_the_users_cell():
    # modern#75: autocast's UserWarning (its source line under it), then Colab's traceback: "[<ipython-input-3-...>]
    # (https://localhost:8080/#) in <cell line: 1>()" and its arrow, cut before the error line
    [diagnosis] = _ruled("modern.yaml#75")
    assert diagnosis.rule == "dtype.autocast_cpu_dtype"
    assert _place(diagnosis.location) == ("<ipython-input-3-d2a33234ab60>", 1, "<cell line: 1>",
                                          "with torch.autocast(device_type='cpu', dtype=torch.float32):")
    assert _place(diagnosis.facts["raised_in"]) == ("autocast_mode.py", 216, "", "warnings.warn(error_message)")


def test_frames_pasted_innermost_first_are_put_back_in_call_order():
    # dtype_autograd#67: main's frame first, then <module>'s, whose code calls main()
    [diagnosis] = _ruled("dtype_autograd.yaml#67")
    assert _place(diagnosis.location) == ("rl_training.py", 432, "main", "response_tensor = trainer.generate(")
    # and frames of a real traceback (this file's own functions), turned innermost first
    outer, inner = _live_frames(_calls_inner, {"_calls_inner", "_raises_inside"})
    assert _calls_inner.__name__ in outer.func and "_raises_inside(" in outer.code, outer
    assert in_call_order([inner, outer]) == [outer, inner]
    assert in_call_order([outer, inner]) == [outer, inner]
    recursive = _live_frames(lambda: _walk(3), {"_walk"})[:3]
    assert len(recursive) == 3 and len({(f.line, f.code) for f in recursive}) == 1, recursive
    assert in_call_order(recursive) == recursive


def _raises_inside():
    raise ValueError("inner")


def _calls_inner():
    return _raises_inside()


def _walk(depth):
    return _walk(depth - 1) if depth else 1 / 0


def _live_frames(call, functions: set[str]) -> list[Frame]:
    """The frames of `functions` in the traceback a real call raises, outermost first, as Frame objects."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the traceback is the point
        summary = traceback.extract_tb(exc.__traceback__)
    else:
        raise AssertionError("the call did not raise")
    return [Frame(f.filename, f.lineno, f.name, f.line) for f in summary if f.name in functions]


# --- one-line reports and other tools' reports -----------------------------------------------------------------------

def test_a_loggers_class_and_place_line_is_the_record_and_its_place():
    # r7_b#33: "06/26 18:54:31 [ERROR] trainer - <class 'RuntimeError'> at trainer.py:101 - CUDA error: ..."
    [found] = scan(CORPUS["r7_b.yaml#33"].message.splitlines())
    assert found.text.startswith("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel")
    [diagnosis] = _ruled("r7_b.yaml#33")
    assert diagnosis.rule == "device.illegal_memory_access"
    assert (diagnosis.location.file, diagnosis.location.line) == ("trainer.py", 101)


def test_pytests_e_column_is_taken_off_and_its_traceback_read():
    # r9_b#62: a traceback printed inside pytest's "E" column
    [diagnosis] = _ruled("r9_b.yaml#62")
    assert diagnosis.rule == "device.cuda_runtime_error"
    assert _place(diagnosis.location) == ("scatter.py", 74, "scatter",
                                          "return src.new_zeros(size).scatter_add_(dim, index, src)")


def test_pytests_closing_line_is_where_the_error_was_raised_even_with_the_error_line_cut():
    # r12_b#71: the message's tail under "E", then "/.../torch/serialization.py:1529: UnpicklingError"
    [diagnosis] = _ruled("r12_b.yaml#71")
    assert diagnosis.rule == "data.weights_only_load"
    assert _place(diagnosis.facts["raised_in"])[:2] == ("serialization.py", 1529)


@pytest.mark.parametrize("width", PYTEST_TERMINALS)  # the short summary's line cut, or whole: the same error again
def test_a_live_pytest_report_of_a_torch_error_is_read_with_the_place_torch_raised_it(width):
    result = run_python("-m", "pytest", "-q", "-p", "no:cacheprovider", "fixtures/shape/pytest_linear_width.py",
                        cwd=ROOT, env=PYTEST_TERMINALS[width])
    assert "E       RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)" in result.stdout
    [diagnosis] = explain_stream(io.StringIO(result.stdout))
    assert diagnosis.rule == "shape.matmul" and "512" in diagnosis.summary and "256" in diagnosis.summary
    assert "input_line" in diagnosis.facts  # the record itself, not the paste read whole
    assert _place(diagnosis.facts["raised_in"])[0] == "linear.py"


def test_vllms_log_prefix_is_taken_off_and_its_wrappers_dumped_input_is_said():
    # modern#27: "ERROR 01-11 13:09:40 engine.py:366] " on each line; "Error in model execution (input dumped to
    # /tmp/err_execute_model_input_20250111-130939.pkl): FlashAttention only supports Ampere GPUs or newer."
    [diagnosis] = _ruled("modern.yaml#27")
    assert diagnosis.rule == "device.flash_attn_arch"
    assert diagnosis.facts["input_dump"] == "/tmp/err_execute_model_input_20250111-130939.pkl"
    assert "vLLM saved the inputs of the failing step to /tmp/err_execute_model_input_20250111-130939.pkl" \
        in diagnosis.summary
    assert _place(diagnosis.location)[:3] == ("model_runner_base.py", 152, "_wrapper")


# --- which frames a diagnosis names -------------------------------------------------------------------------------

def test_where_a_librarys_helper_raised_the_function_entered_in_that_library_is_named():
    # r12_b#56: torch_geometric -> torch_scatter's scatter_max -> its helpers gen, maybe_dim_size (which raised)
    [diagnosis] = _ruled("r12_b.yaml#56")
    assert _place(diagnosis.location)[:3] == ("gen.py", 7, "maybe_dim_size")
    assert _place(diagnosis.facts["entered_via"])[:3] == ("max.py", 106, "scatter_max")


def test_a_frame_line_cut_before_its_function_is_joined_and_keeps_its_code():
    # r12_a#61: 'File ".../depthwise_conv2d_implicit_gemm.py", line 25' then ", in backward" on the next line
    [diagnosis] = _ruled("r12_a.yaml#61")
    assert _place(diagnosis.location) == ("depthwise_conv2d_implicit_gemm.py", 25, "backward",
                                          "dx = _extension.backward_data_fp32(grad, w)")


def test_a_traceback_ends_with_an_error_of_any_type_name():
    # modern#103: triton.runtime.errors.OutOfResources, no "Error" in its name, after "......." and bare frames
    [found] = scan(CORPUS["modern.yaml#103"].message.splitlines())
    assert found.text.startswith("triton.runtime.errors.OutOfResources: out of resource: shared memory")
    [diagnosis] = _ruled("modern.yaml#103")
    assert _place(diagnosis.location)[:3] == ("compiler.py", 374, "_init_handles")


def test_a_translated_traceback_and_a_label_before_the_error_line_are_read():
    # r13_b#34: '文件"/data3/.../evaluation.py", line 43, in <module>' and "报错：RuntimeError: CUDA error: out of memory"
    [diagnosis] = _ruled("r13_b.yaml#34")
    assert diagnosis.rule == "memory.cuda_error_oom"
    assert _place(diagnosis.location) == ("evaluation.py", 43, "<module>", "gaussian_kernel.cuda()")


# --- warnings -----------------------------------------------------------------------------------------------------

def test_a_warnings_source_line_is_its_frames_code():
    # dtype_autograd#88: "rnn.py:835: UserWarning: ..." then "  result = _VF.lstm(input, hx, ..."
    [diagnosis] = _ruled("dtype_autograd.yaml#88")
    assert _place(diagnosis.facts["raised_in"])[:2] == ("rnn.py", 835)
    assert diagnosis.facts["raised_in"]["code"].startswith("result = _VF.lstm(input, hx,")


def test_tracer_warnings_at_two_places_are_one_diagnosis_naming_both():
    # r10_b#84: a TracerWarning for a Python boolean at backends.py:43, one for a Python float at backends.py:78
    [diagnosis] = _ruled("r10_b.yaml#84")
    assert diagnosis.rule == "compile.tracer_warning" and diagnosis.location.line == 43
    assert [_place(p)[:2] for p in diagnosis.facts["also_at"]] == [("backends.py", 78)]
    assert diagnosis.facts["also_at"][0]["code"] == "keys_scaled = keys / math.sqrt(DH)"


def test_live_tracer_warnings_of_one_trace_are_one_diagnosis_with_every_place():
    stderr = run_python(str(ROOT / "fixtures" / "compile" / "trace_two_warnings.py")).stderr
    assert stderr.count("TracerWarning: Converting a tensor to a Python") == 2
    [diagnosis] = explain_stream(io.StringIO(stderr))
    assert diagnosis.rule == "compile.tracer_warning" and diagnosis.facts["occurrences"] == 2
    assert diagnosis.location.code == "if x.sum() > 0:  # a Python boolean from a tensor"
    [also] = diagnosis.facts["also_at"]
    assert also["code"] == "scale = float(x.abs().max())  # a Python float from a tensor"
    assert f"also at {also['file']}:{also['line']}" in render_text(diagnosis)


def test_glogs_prefix_names_the_cpp_source_that_logged_the_warning():
    # r12_b#90: "[W ..\torch\csrc\autograd\python_anomaly_mode.cpp:104] Warning: Error detected in TanhBackward."
    [diagnosis] = _ruled("r12_b.yaml#90")
    assert diagnosis.rule == "autograd.anomaly_error_detected"
    assert diagnosis.facts["torch_source"] == {"file": "torch/csrc/autograd/python_anomaly_mode.cpp", "line": 104,
                                               "function": "", "code": ""}
    assert diagnosis.location.file.endswith("bild-test.py") and diagnosis.location.line == 176


# --- the error a wrapper was raised from, C++ places ----------------------------------------------------------------

def test_a_wrapper_raised_from_another_error_names_it():
    # modern#64: RuntimeError (profiler::_record_function_enter ...), "The above exception was the direct cause",
    # then torchdynamo.exc.TorchRuntimeError with no message; "WON'T CONVERT forward_pass" logged above both
    [diagnosis] = _ruled("modern.yaml#64")
    assert diagnosis.rule == "compile.dynamo_user_code"
    assert diagnosis.facts["direct_cause"].startswith("RuntimeError: profiler::_record_function_enter() expected at most 2")
    assert "`RuntimeError: profiler::_record_function_enter() expected" in diagnosis.summary
    assert "`forward_pass`" in diagnosis.summary


def _lookup_then_fail():
    settings = {}
    try:
        return settings["k"]
    except KeyError:
        raise ValueError("v")  # noqa: B904 - the implicit chaining is the point


def test_an_error_during_handling_of_another_is_not_said_to_be_raised_from_it():
    # Python prints "During handling of the above exception, another exception occurred:" between the two (raised
    # live and printed by traceback)
    try:
        _lookup_then_fail()
    except ValueError as exc:
        text = "".join(traceback.format_exception(exc))
    assert "During handling of the above exception, another exception occurred:" in text, text
    first, second = scan(text.splitlines())
    assert first.text.startswith("KeyError: 'k'") and second.text.startswith("ValueError: v"), (first.text, second.text)
    assert first.direct_cause == "" and second.direct_cause == ""


def test_old_th_errors_name_the_cpp_place_they_end_with():
    # r12_b#84: "... arguments are located on different GPUs at C:/w/b/windows/pytorch/aten/src\THC/generic/
    # THCTensorMasked.cu:27", inside a DataParallel replica's re-raise
    [diagnosis] = _ruled("r12_b.yaml#84")
    assert diagnosis.facts["torch_source"]["file"] == "aten/src/THC/generic/THCTensorMasked.cu"
    assert diagnosis.facts["torch_source"]["line"] == 27


def test_thcs_check_is_quoted_as_the_log_printed_it():
    # r10_b#16: the kernel's assertion, then "THCudaCheck FAIL file=.../THCReduceAll.cuh line=317 error=59 : ..."
    [diagnosis] = _ruled("r10_b.yaml#16")
    assert "`THCudaCheck FAIL error=59 : device-side assert triggered`" in diagnosis.summary
    assert "cuda runtime error (59)" not in diagnosis.summary


def test_a_name_starting_with_an_underscore_is_not_read_as_markdown():
    # pickle's own error, raised live: its class prints with the module `_pickle`
    try:
        pickle.loads(b"\xba\x00")
    except pickle.UnpicklingError as exc:
        line = "".join(traceback.format_exception_only(exc)).strip()
    assert line.startswith("_pickle.UnpicklingError: invalid load key"), line
    [found] = scan([line])
    assert found.text.startswith("_pickle.UnpicklingError")
    [found] = scan(["**RuntimeError: DataLoader worker (pid 7579) is killed by signal: Bus error."])
    assert found.text.startswith("RuntimeError: DataLoader worker (pid 7579)")


def test_the_cli_reads_a_pytest_report_from_stdin():
    result = run_explainer("explain", "-", stdin=CORPUS["r12_b.yaml#71"].message)
    assert "raised in /Library/Frameworks/Python.framework/Versions/3.11/lib/python3.11/site-packages/torch/" \
           "serialization.py:1529" in result.stdout, result.stdout + result.stderr
