"""compile rules written from round 12's misses and the wording families found beyond the corpus: real torch
calls where torch 2.x on CPU raises the error (an operator schema the parser rejects, a trace whose check
fails, printed as a log), and the wordings copied from public threads where it cannot (Inductor on a small
GPU, CUDA graph trees, Dynamo's own asserts, e3nn, SD.Next, an OpenMP kernel's aborts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said

ROOT = Path(__file__).resolve().parents[2]


# --- raised by real torch calls --------------------------------------------------------------------

def test_schema_with_a_trailing_comma_names_the_token_and_the_schema():
    diagnosis = explain_fixture("fixtures/compile/schema_parse_error.py")
    assert_names(diagnosis, "compile.torchscript_parse_error",
                 ["expected ident but found ')'", "an ident is a name", "`scale(Tensor x, float factor, ) -> Tensor`",
                  "trailing comma"])


def test_truncated_schema_says_the_text_ended_early():
    import explainer

    diagnosis = explainer.explain(raised(lambda: torch._C.parse_schema("mylib::scale(Tensor x) ->")))
    assert_names(diagnosis, "compile.torchscript_parse_error", ["expected ident but found 'eof'", "end of the text", "ended too early", "`mylib::scale"])


def test_torchscript_source_parse_error_names_file_and_line():
    import explainer

    diagnosis = explainer.explain(raised(lambda: torch.jit.CompilationUnit("def f(x):\n    return torch.neg(x,\n")))
    assert_names(diagnosis, "compile.torchscript_parse_error", ["'eof'", "<string>, line 3"])


def test_trace_check_log_keeps_the_error_lines_of_tracing_check_error():
    # the check's findings are printed as "ERROR: ..." lines, which a log scanner must not read as a new record
    run = subprocess.run([sys.executable, str(ROOT / "fixtures/compile/trace_graphs_differ.py")],
                         capture_output=True, text=True, timeout=300)
    assert "ERROR: Graphs differed across invocations!" in run.stderr, run.stderr[-2000:]
    diagnosis = explain_paste(run.stderr)
    assert_names(diagnosis, "compile.trace_check_failed", ["Graphs differed across invocations", "`aten::mul`"])


# --- round 12's messages, as pasted ----------------------------------------------------------------

def test_not_enough_sms_warning_names_mode_and_threshold():
    diagnosis = explain_paste("W0903 20:13:19.043000 55763 torch/_inductor/utils.py:1436] [0/0] "
                              "Not enough SMs to use max_autotune_gemm mode")
    assert_names(diagnosis, "compile.inductor_not_enough_sms", ["`max_autotune_gemm`", "68", "not an error"])


def test_torch_2_0_cuda_cores_wording_names_its_own_threshold():
    # an excerpt, verbatim, of r12_b.yaml#17
    # (https://github.com/d8ahazard/sd_dreambooth_extension/issues/1120)
    diagnosis = explain_paste("[2023-05-09 11:00:21,743] torch._inductor.utils: [WARNING] not enough cuda cores to use "
                              "max_autotune mode")
    assert_names(diagnosis, "compile.inductor_not_enough_sms", ["`max_autotune`", "80"])


def test_cudagraph_input_deallocated_names_the_event():
    diagnosis = explain_paste("`RuntimeError: TODO: graph recording observed an input tensor deallocate during graph "
                              "recording that did not occur during replay.`")
    assert_names(diagnosis, "compile.cudagraph_input_liveness", ["deallocate during graph recording", "checkpoint"])
    assert any("max-autotune-no-cudagraphs" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_e3nn_unsupported_module_names_the_module():
    diagnosis = explain_paste(
        '> File "/home/giga/soft/mambaforge/envs pt21/lib/python3.9/site-packages/e3nn/util/jit.py", line 89, in '
        'compile\n    raise NotImplementedError(f"{type(mod).__name__} does not support TorchScript compilation")\n'
        "NotImplementedError: BatchNorm does not support TorchScript compilation")
    assert_names(diagnosis, "compile.jit_compile_mode_unsupported", ["`BatchNorm`", "e3nn.util.jit.compile"])


def test_sdnext_triton_test_names_the_exception_class():
    # SD.Next's rich-printed start-up test (https://github.com/vladmandic/sdnext/issues/4355)
    diagnosis = explain_paste(corpus_message("r4_b.yaml#78"))
    assert_names(diagnosis, "compile.sdnext_triton_test", ["InductorError", "test_triton"])


def test_dynamo_assert_under_wont_convert_names_function_and_check():
    diagnosis = explain_paste(
        "[2023-05-09 11:00:22,573] torch._dynamo.convert_frame: [ERROR] WON'T CONVERT get_rng_state "
        "/home/admin/anaconda3/envs/sd/lib/python3.10/site-packages/torch/random.py line 21\n"
        "due to:\nTraceback (most recent call last):\n"
        '  File "/home/admin/anaconda3/envs/sd/lib/python3.10/site-packages/torch/_dynamo/variables/builder.py", '
        "line 812, in wrap_fx_proxy_cls\n"
        '    assert "source" in options and options["source"] is not None\nAssertionError:')
    assert_names(diagnosis, "compile.dynamo_internal_error",
                 ["`get_rng_state`", "AssertionError", "builder.py:812", "`wrap_fx_proxy_cls`", "`assert \"source\""])
    assert any("torch.compiler.disable" in fix and "get_rng_state" in fix for fix in diagnosis.fixes), diagnosis.fixes


def _forward_asserting_four_rows(x):
    assert x.shape[0] == 4
    return x * 2


def test_user_assert_under_dynamo_frames_is_not_called_a_dynamo_bug():
    # Dynamo's eval_frame calls the user's function: the innermost frame is the user's own assert (raised live, the
    # traceback printed as Python prints it)
    import io
    import traceback

    from explainer.cli.explain import explain_stream

    exc = raised(lambda: torch.compile(_forward_asserting_four_rows, backend="eager")(torch.zeros(3)))
    assert isinstance(exc, AssertionError), exc
    text = "".join(traceback.format_exception(exc))
    assert "torch/_dynamo/eval_frame.py" in text.replace("\\", "/"), text
    rules = [d.rule for d in explain_stream(io.StringIO(text))]
    assert rules and "compile.dynamo_internal_error" not in rules, rules


def test_torchdynamo_bare_torch_runtime_error_points_at_its_cause():
    diagnosis = explain_paste(
        # an excerpt, verbatim, of the corpus entry modern.yaml#64 (https://github.com/pytorch/torchdynamo/issues/1065)
        "Traceback (most recent call last):\n"
        '  File "/home/jansel/torchdynamo/torchdynamo/variables/tensor.py", line 146, in create\n'
        "    raise TorchRuntimeError() from e\ntorchdynamo.exc.TorchRuntimeError")
    assert_names(diagnosis, "compile.dynamo_user_code", ["empty message", "direct cause"])


def test_comfyui_report_quoted_in_a_comment_still_names_the_node():
    diagnosis = explain_paste(
        # an excerpt, verbatim, of r12_b.yaml#85
        # (https://github.com/kijai/ComfyUI-WanVideoWrapper/issues/408)
        "> # ComfyUI Error Report\n> ## Error Details\n> - **Node ID:** 27\n> - **Node Type:** WanVideoSampler\n"
        "> - **Exception Type:** torch._inductor.exc.InductorError\n"
        "> - **Exception Message:** RuntimeError: PassManager::run failed")
    assert diagnosis.rule == "compile.triton_passmanager", diagnosis.rule
    assert diagnosis.facts.get("comfyui_node") == "WanVideoSampler", diagnosis.facts


def test_lowering_exception_names_the_benchmark_model_printed_before_it():
    diagnosis = explain_paste(
        "loading model: 0it [00:00, ?it/s]cpu  eval  pyhpc_isoneutral_mixing            \n\n"
        "ERROR:common:backend='inductor' raised:\nLoweringException: AssertionError: \n"
        "  target: aten.slice_scatter.default\n  args[0]: TensorBox(\n    ReinterpretView(\n      StorageBox(\n"
        "        InputBuffer(name='arg19_1', layout=FixedLayout('cpu', torch.float64, size=[2, 2, 1, 2, 2], "
        "stride=[8, 4, 4, 2, 1]))\n      ),\n      FixedLayout('cpu', torch.float64, size=[0, 2, 1, 2, 2], "
        "stride=[8, 4, 4, 2, 1]),\n      origins={slice_229}\n    )\n  )")
    assert_names(diagnosis, "compile.inductor_lowering",
                 ["`aten.slice_scatter.default`", "size=[0, 2, 1, 2, 2]", "pyhpc_isoneutral_mixing"])


def test_lowering_wrapper_assert_names_the_dispatch_in_graph_py():
    diagnosis = explain_paste(
        "Traceback (most recent call last):\n"
        '  File "/fsx/users/binbao/pytorch/torch/_inductor/graph.py", line 241, in call_function\n'
        "    out = lowerings[target](*args, **kwargs)\n"
        '  File "/fsx/users/binbao/pytorch/torch/_inductor/lowering.py", line 168, in wrapped\n'
        "    assert not any(isinstance(x, TensorBox) for x in kwargs.values())\nAssertionError")
    assert_names(diagnosis, "compile.inductor_lowering", ["`wrapped`", "`lowerings[target](*args, **kwargs)`"])


def test_openmp_threads_aborting_on_c10_error_names_the_exception():
    diagnosis = explain_paste(
        "terminate called after throwing an instance of 'c10::Error'\n"
        "terminate called after throwing an instance of 'c10::Error'\n"
        "terminate called after throwing an instance of 'c10::Error'\n"
        "terminate called recursively\n[1]    2964411 IOT instruction (core dumped)")
    assert_names(diagnosis, "compile.inductor_cpp_check_abort", ["c10::Error", "terminate called recursively"])
    assert any("OMP_NUM_THREADS=1" in fix for fix in diagnosis.fixes), diagnosis.fixes


@pytest.mark.parametrize("text", [
    "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: initialization error",
    "terminate called without an active exception\nterminate called recursively",
])
def test_a_single_terminate_or_one_without_c10_error_is_not_an_openmp_abort(text):
    from explainer.diagnose.explain import explain_text

    assert explain_text(text).rule != "compile.inductor_cpp_check_abort"


def test_trace_check_exception_line_before_a_range_check_names_index_and_size():
    diagnosis = explain_paste(
        "Exception:\nvector::_M_range_check: __n (which is 18446744073709551615) >= this->size() (which is 2)")
    assert_names(diagnosis, "compile.torchscript_range_check", ["18446744073709551615", "2 elements", "-1",
                                                               "check_trace"])


def test_inference_tensor_inside_a_compiled_graph_names_the_fx_node():
    diagnosis = explain_paste(
        "RuntimeError: Inference tensors do not track version counter.\n\nWhile executing %getitem_4 : [#users=1] = "
        "call_function[target=operator.getitem](args = (%attention_mask, (slice(None, None, None), None, None, "
        "slice(None, None, None))), kwargs = {})")
    assert_names(diagnosis, "autograd.inference_tensor", ["%getitem_4", "`operator.getitem`"])


def test_libtorch_schema_parse_abort_names_the_uncaught_exception():
    diagnosis = explain_paste("`terminate called after throwing an instance of 'std::runtime_error'  what():  "
                              "expected ident but found 'eof' here:`")
    assert_names(diagnosis, "compile.torchscript_parse_error", ["'eof'", "std::runtime_error", "TORCH_LIBRARY"],
                 said(diagnosis))
