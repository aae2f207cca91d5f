"""Round 23, the engine: loguru's layout ("time | LEVEL | module:function:line - message"): its prefix is taken off
the line, and the place it names is kept as a glog prefix's is (logged_from, shown as loguru printed it), with what
the app's line said before the error it logged."""

from __future__ import annotations

import io

from conftest import benchmark_module
from explainer.cli.explain import explain_stream
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.render import render_text
from explainer.diagnose.sourceplaces import logged_source

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _answers(text: str):
    return [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]


# --- loguru ------------------------------------------------------------------------------------------------------------

def test_loguru_default_layout_prefix_is_taken_off_and_its_place_kept():
    line = CORPUS["r22_a.yaml#77"].message.splitlines()[0]  # cokeshao/HoliTom#14 (lmms-eval)
    cleaned, rank, new_record, source, _ = clean_line_record(line)
    assert cleaned.startswith("Error during evaluation: selected index k out of range.")
    assert (rank, new_record, source) == (None, True, "__main__:cli_evaluate:348")


def test_loguru_layout_without_time_or_line_is_read_too():
    line = CORPUS["r22_a.yaml#25"].message.splitlines()[0]  # CVHub520/X-AnyLabeling-Server#7
    cleaned, _, new_record, source, _ = clean_line_record(line)
    assert cleaned == "Failed to load model [yolo11n_seg]: Torch not compiled with CUDA enabled"
    assert (new_record, source) == (True, "app.core.registry:load_all_models")


def test_loguru_place_is_a_logged_from_place_as_printed_and_a_glog_place_is_unchanged():
    assert logged_source("__main__:cli_evaluate:348") == (
        "logged_from", {"file": "__main__:cli_evaluate", "line": 348, "function": "", "code": ""})
    assert logged_source("app.core.registry:load_all_models")[1]["line"] is None
    assert logged_source("ProcessGroupNCCL.cpp:607")[0] == "torch_source"  # (not a module:function)
    assert logged_source("torch/_inductor/select_algorithm.py:1905")[1]["file"] == "torch/_inductor/select_algorithm.py"


def test_a_loguru_logged_error_names_where_it_was_logged_and_what_the_app_was_doing():
    diagnosis = _answers(CORPUS["r22_a.yaml#25"].message)[0]
    assert diagnosis.rule == "device.no_cuda_build"
    assert diagnosis.facts["logged_from"] == {"file": "app.core.registry:load_all_models", "line": None,
                                              "function": "", "code": "Failed to load model [yolo11n_seg]"}
    text = render_text(diagnosis)
    assert "logged from app.core.registry:load_all_models   Failed to load model [yolo11n_seg]" in text
    assert ":None" not in text


def test_the_place_of_loguru_default_layout_reaches_the_diagnosis():
    diagnosis = _answers(CORPUS["r22_a.yaml#77"].message)[0]
    assert diagnosis.rule == "shape.topk_k_range"
    assert diagnosis.facts["logged_from"]["file"] == "__main__:cli_evaluate"
    assert diagnosis.facts["logged_from"]["line"] == 348
    assert "logged from __main__:cli_evaluate:348" in render_text(diagnosis)


def test_a_pipe_in_a_message_is_not_a_loguru_prefix():
    # nvidia-smi's table (https://github.com/CompVis/stable-diffusion/issues/485) and a log whose fields are
    # split by pipes with no place in them (https://github.com/chatchat-space/Langchain-Chatchat/issues/3137)
    table = [x for x in CORPUS["r4_a.yaml#52"].message.splitlines() if x.startswith("|")]
    assert len(table) > 3
    logged = next(x for x in CORPUS["r29_b.yaml#53"].message.splitlines() if " | ERROR | " in x)
    for line in table + [logged]:
        assert clean_line_record(line)[3] == ""
