"""Round 12, the engine: how `explainer explain` finds an error's record in pasted text and which of its values
reach the diagnosis. A worker's re-raise without its "Original Traceback" line, an error inside torchelastic's
JSON report, std::terminate's empty what(), TorchScript quotes holding blank lines, interleaved copies of one
error, THC's check after a kernel's assertion, frames glued to their code and error line, only torch's frames
shown, a quoted ComfyUI report, IPython's cell frames and bare arrows, an indented paste, the scripted source a
TorchScript error points at."""

from __future__ import annotations

import io

import pytest

from conftest import benchmark_module, corpus_message, raise_fixture
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import script_source, torch_source
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text

CORPUS = {e.where: e for e in benchmark_module("coverage").load_corpus() if not e.held_out}


def _diagnoses(where: str):
    return explain_stream(io.StringIO(CORPUS[where].message))


def _ruled(where: str):
    found = [d for d in _diagnoses(where) if d.rule]
    assert found, f"no rule claimed {where}"
    return found


def _place(fact: dict | None) -> tuple:
    return None if fact is None else (fact["file"].replace("\\", "/").rsplit("/", 1)[-1], fact["line"],
                                      fact["function"], fact["code"])


def test_a_worker_re_raise_pasted_without_its_original_traceback_line_keeps_the_workers_error():
    # r11_a#51: "Caught ValueError in DataLoader worker process 0.", a blank line, the worker's cut frame and error
    [diagnosis] = _ruled("r11_a.yaml#51")
    assert diagnosis.rule == "data.worker_error"
    assert "ValueError: not enough values to unpack (expected 3, got 0)" in diagnosis.summary
    assert (diagnosis.location.file, diagnosis.location.line) == ("video_reader.py", 343)


def test_the_error_inside_torchelastics_json_report_is_read_and_joins_the_socket_timeout_before_it():
    # r4_b#56: the TCPStore client's timeout, then the error handler's JSON naming RendezvousConnectionError
    [diagnosis] = _diagnoses("r4_b.yaml#56")
    assert diagnosis.rule == "distributed.rendezvous_timeout"
    for value in ("60s", "(IP1, 2222)", "RendezvousConnectionError"):
        assert value in diagnosis.summary, value
    found = [f.text for f in scan(CORPUS["r4_b.yaml#56"].message.splitlines())]
    assert "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details." \
        in found


def test_a_short_paste_lends_its_other_lines_values_to_the_diagnosis_of_its_error():
    # r4_b#55: the JSON error is the record; the launch configuration above it names the rendezvous endpoint
    [diagnosis] = _ruled("r4_b.yaml#55")
    assert diagnosis.rule == "distributed.rendezvous_timeout"
    assert "10.28.1.16" in diagnosis.summary and diagnosis.facts["endpoint"] == "10.28.1.16"


def test_std_terminate_with_an_empty_what_keeps_the_torchscript_report_after_its_blank_line():
    # r11_b#43: "  what():" alone, then "arguments for call are not valid:", a blank line, the operator's schema
    [diagnosis] = _ruled("r11_b.yaml#43")
    assert diagnosis.rule == "compile.torchscript_call_arguments"
    assert "`aten::mean()`" in diagnosis.summary and "at most 1" in diagnosis.summary


def test_a_torchscript_quote_with_a_blank_line_stays_whole_down_to_its_here_marker():
    # r11_b#15: the quoted forward() has a blank line before the marked `outputs2 = torch.Tensor()`
    [found] = list(scan(CORPUS["r11_b.yaml#15"].message.splitlines()))
    assert found.text.endswith("outputs2 = torch.Tensor()\n               ~~~~~~~~~~~~ <--- HERE")
    [diagnosis] = _ruled("r11_b.yaml#15")
    assert "`outputs2 = torch.Tensor()`" in diagnosis.summary


def test_interleaved_copies_of_one_error_are_one_diagnosis_with_the_tracebacks_own_values():
    # shape#114: two processes' tracebacks interleaved; the paste ends with the traceback's own error line
    [diagnosis] = _diagnoses("shape.yaml#114")
    assert diagnosis.rule == "shape.loss_batch_size"
    assert "511 predictions but 23 targets" in diagnosis.summary
    assert diagnosis.facts["occurrences"] == 2
    assert _place(diagnosis.facts["raised_in"])[:3] == ("functional.py", 3053, "cross_entropy")


def test_thcs_check_after_a_kernels_assertion_is_the_same_failure_and_names_torchs_source():
    # r10_b#16: the kernel's assertion, then "THCudaCheck FAIL file=.../THCReduceAll.cuh line=317 error=59"
    [diagnosis] = _diagnoses("r10_b.yaml#16")
    assert diagnosis.rule == "device.device_assert"
    assert "srcIndex < srcSelectDimSize" in diagnosis.summary
    assert diagnosis.facts["torch_source"] == {"file": "aten/src/THC/THCReduceAll.cuh", "line": 317, "function": "",
                                               "code": "THCudaCheck FAIL error=59"}
    assert "in torch's C++ at aten/src/THC/THCReduceAll.cuh:317   THCudaCheck FAIL error=59" in render_text(diagnosis)


@pytest.mark.parametrize("where, rule, source", [
    # a Windows build's path, in lower case up to the file
    ("r12_b.yaml#6", "device.illegal_memory_access", ("THCReduceAll.cuh", 317, "", "THCudaCheck FAIL error=77")),
    # the reason THC printed on the next line: a compiled extension's check, or an unknown code
    ("devmem.yaml#41", "device.no_kernel_image", ("THCGeneral.cpp", 663, "", "THCudaCheck FAIL error=11")),
    # a compiled extension's file (THC's macro): the extension's C++, not torch's
    ("r11_b.yaml#4", "device.cuda_runtime_error", ("roi_align_kernel.cu", 139, "", "THCudaCheck FAIL error=98")),
])
def test_a_thc_check_line_keeps_the_lines_under_it_and_names_its_source(where, rule, source):
    diagnosis = _ruled(where)[0]
    assert diagnosis.rule == rule
    assert _place(diagnosis.facts.get("torch_source") or diagnosis.facts["extension_source"]) == source


@pytest.mark.parametrize("where, raised_in", [
    # a paste that lost its line breaks: the frame, its code and the error line on one line
    ("r12_a.yaml#6", ("functional.py", 2516, "group_norm",
                      "return torch.group_norm(input, num_groups, weight, bias, eps, torch.backends.cudnn.enabled)")),
    # the frame's beginning cut as well
    ("r11_b.yaml#49", ("rendezvous.py", 185, "_create_c10d_store", "return TCPStore(")),
])
def test_a_frame_glued_to_its_code_and_error_line_is_read_as_the_raising_frame(where, raised_in):
    diagnosis = _ruled(where)[0]
    assert _place(diagnosis.facts["raised_in"]) == raised_in
    assert not diagnosis.error.startswith("File")


def test_several_frames_run_together_on_one_line_are_each_read():
    # r4_b#40: two frames (and their code) per line
    [found] = list(scan(CORPUS["r4_b.yaml#40"].message.splitlines()))
    assert [(f.file.rsplit("/", 1)[-1], f.line, f.func) for f in found.frames] == [
        ("train.py", 182, "<module>"), ("train.py", 149, "validation"), ("train.py", 134, "eval_batch"),
        ("__init__.py", 178, "_lazy_init"), ("__init__.py", 108, "_check_driver")]
    assert found.frames[2].code == "target = target.cuda()"
    assert found.location().line == 134


def test_a_traceback_of_torchs_frames_alone_names_the_torch_function_the_caller_entered():
    # r12_a#96: hub.py's load_state_dict_from_url -> serialization.py's load -> _legacy_load
    [diagnosis] = _ruled("r12_a.yaml#96")
    assert diagnosis.location is None
    assert _place(diagnosis.facts["entered_via"]) == (
        "hub.py", 731, "load_state_dict_from_url", "return torch.load(cached_file, map_location=map_location)")
    assert _place(diagnosis.facts["raised_in"])[2] == "_legacy_load"
    assert "via /training/nong/app/miniconda3/envs/efficient-evolution/lib/python3.9/site-packages/torch/hub.py:731 " \
           "in load_state_dict_from_url" in render_text(diagnosis)


def test_the_torch_entry_skips_nn_modules_call_machinery_and_is_absent_where_the_users_code_shows():
    # shape#115: module.py's _call_impl -> loss.py's forward -> functional.py's cross_entropy
    [diagnosis] = _ruled("shape.yaml#115")
    assert _place(diagnosis.facts["entered_via"])[:3] == ("loss.py", 1293, "forward")
    # r12_a#104: the user's WeightedRandomSampler(...) line is shown: nothing more to name
    [with_user] = _ruled("r12_a.yaml#104")
    assert with_user.location.file == "loc2vec.py" and "entered_via" not in with_user.facts


def test_a_comfyui_error_report_quoted_in_markdown_still_names_the_node():
    # r12_b#85: every line of the report behind "> "
    diagnosis = _ruled("r12_b.yaml#85")[0]
    assert diagnosis.facts["comfyui_node"] == "WanVideoSampler"


@pytest.mark.parametrize("where, file, line, code", [
    # IPython 8.0-8.3's cell frame, its line given by the arrow
    ("modern.yaml#59", "Input In [99]", 87, 'hij = hij[sm["L"][0],sm["L"][1]]'),
    # IPython 8.4 and later
    ("modern.yaml#72", "Cell In[3]", 1, "a.cumsum(-1)"),
])
def test_ipythons_cell_frames_are_the_users_location(where, file, line, code):
    diagnosis = _ruled(where)[0]
    assert (diagnosis.location.file, diagnosis.location.line, diagnosis.location.code) == (file, line, code)


def test_an_indented_ipython_paste_with_arrows_but_no_frame_lines_names_the_innermost_arrow():
    # modern#61: the whole paste indented four spaces; the frames' header lines left out ("...")
    [diagnosis] = _ruled("modern.yaml#61")
    assert diagnosis.rule == "autograd.vmap_unsupported"
    assert diagnosis.facts["raised_in"] == {"file": "", "line": 2, "function": "", "code": "for i in torch.arange(x):"}
    assert "raised at   for i in torch.arange(x):" in render_text(diagnosis)


@pytest.mark.parametrize("where, place", [
    ("r12_a.yaml#29", ("kwargs.py", 5, "fn", "def fn(**kwargs):")),
    # pytest's "E" column before every line
    ("r12_a.yaml#30", ("data.py", 735, "__call__", "def __call__(self, *args: List[str]) -> Iterable:")),
    # torch <= 1.4's "at file:line:column"
    ("r10_b.yaml#64", ("data_parallel.py", 138, "forward", "def forward(self, *inputs, **kwargs):")),
    ("r10_b.yaml#65", ("performer_pytorch.py", 576, "forward", "def forward(self, x, **kwargs):")),
    ("r5_b.yaml#16", ("model.py", 75, "_device", "return next(self.head.parameters(recurse=False)).device")),
])
def test_the_scripted_source_a_torchscript_error_points_at_is_named(where, place):
    diagnosis = _ruled(where)[0]
    assert _place(diagnosis.facts["script_source"]) == place


def test_the_scripted_source_of_a_live_torchscript_error_is_its_marked_line():
    import explainer

    diagnosis = explainer.explain(raise_fixture("fixtures/compile/torchscript_argument_missing.py"))
    found = diagnosis.facts["script_source"]
    assert (found["file"].rsplit("/", 1)[-1], found["line"], found["function"], found["code"]) == (
        "torchscript_argument_missing.py", 18, "forward", "return scale(x)")
    assert diagnosis.location.line == 21  # the user's torch.jit.script(forward) call, still the location
    assert "in the scripted code at " in render_text(diagnosis)


def test_the_source_readers_find_nothing_where_the_message_names_no_place():
    # TorchScript's pointer at the code, with no "at file:line" above it (r28_b#48, r13_a#48)
    assert script_source(corpus_message("r28_b.yaml#48")) is None
    assert script_source(corpus_message("r13_a.yaml#48")) is None
    assert torch_source("RuntimeError: CUDA error: device-side assert triggered") is None
