"""Round 16, the engine: a warning a paste holds above its error is context (the error is the record), a bare error's
failing line, the type IPython's header names in a traceback cut before its error line, Ray's named actors and vLLM's
worker ranks, the place of a worker's unexplained error in torchrun's report, and round 16's reading problems (the
traceback pasted under its error, a glog place under Ray's prefix, Spyder's and Python 2's IPython frames)."""

from __future__ import annotations

import io

from conftest import ROOT, benchmark_module, place as _place
from explainer._diagnosis import Diagnosis
from explainer.cli.explain import explain_stream, ranks_note
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text
from explainer.diagnose.textframes import frame_match

CORPUS = {e.where: e for e in benchmark_module("coverage").load_corpus() if not e.held_out}


def _pasted(where: str) -> list:
    return explain_stream(io.StringIO(CORPUS[where].message))


# --- a warning above the error is context ----------------------------------------------------------------------------

def test_unrelated_warning_above_an_error_is_not_the_answer():
    # https://github.com/2noise/ChatTTS/issues/657: torch's cuDNN warning, then torchaudio.save's ValueError
    diagnoses = _pasted("r16_b.yaml#24")
    first = diagnoses[0]
    assert first.facts["input_line"] == 13 and first.error.startswith("ValueError: Expected 2D Tensor, got 1D.")
    assert first.rule != "device.cudnn_status"
    assert [part["rule"] for part in first.facts["printed_with"]] == ["device.cudnn_status"]
    assert all(d.rule != "device.cudnn_status" for d in diagnoses)


def test_warning_that_explains_an_unexplained_error_stays_the_answer():
    # https://github.com/pytorch/pytorch/issues/27723: "export failed on ATen operator mv", then "KeyError: 'mv'"
    diagnoses = _pasted("r14_a.yaml#39")
    assert diagnoses[0].rule == "compile.onnx_unsupported_operator"
    assert any(d.rule is None and d.error == "KeyError: 'mv'" for d in diagnoses[1:])


def test_a_warning_that_predicts_the_error_after_it_stays_the_answer():
    # https://github.com/surajdakua/Crowd-Counting-Using-Pytorch/issues/5: MSELoss's target size warning, then the
    # broadcast error it predicted; the warning's rule ranks above the error's (written for that failure), so its
    # reading, which names the loss and both shapes, leads
    explained = [d for d in _pasted("r12_a.yaml#56") if d.rule]
    assert [d.rule for d in explained] == ["shape.loss_broadcast_warning", "shape.broadcast"]
    assert "[1, 1, 768, 1024]" in explained[0].summary


def test_a_warning_alone_is_still_answered():
    # r16_b.yaml#56: torch.cuda's warning that the GPU's compute capability is not in the build
    assert _pasted("r16_b.yaml#56")[0].rule == "device.capability_incompatible"


def test_unexplained_error_shows_the_warning_printed_with_it():
    # a renderer's test on a Diagnosis built by hand: the error is the last line of r16_b#24 (verbatim), printed under
    # cuDNN's warning there; the warning's summary is a placeholder for a rule's words, not a message
    diagnosis = Diagnosis(None, "", "No rule in the knowledge base matches", "",
                          error="ValueError: Expected 2D Tensor, got 1D.", facts={"printed_with": [{"rule": "device.cudnn_status", "summary": "cuDNN said no",
                                                               "location": None}]})
    text = render_text(diagnosis, colour=False)
    assert "(ValueError)" in text and "Expected 2D Tensor" not in text  # the type, never the message
    assert "with [device.cudnn_status] cuDNN said no" in text


# --- a bare error's failing line; the type IPython's header names ----------------------------------------------------

def test_bare_error_carries_its_failing_line():
    # https://github.com/FuxiCV/pt_mesh_renderer/issues/3: a C extension raised RuntimeError with no message
    found = list(scan(CORPUS["r15_a.yaml#95"].message.splitlines()))
    assert found[-1].text == ("RuntimeError\nbarycentric, triangle_ids, z_buffer = forward_function(vertices, triangles, "
                              "image_width, image_height)")


def test_bare_error_raised_by_a_raise_statement_is_left_alone():
    # https://github.com/ultralytics/ultralytics/issues/6206: queue.Empty, raised by `raise Empty`
    found = list(scan(CORPUS["r15_b.yaml#67"].message.splitlines()))
    assert found[0].text == "Empty:"


def test_ipython_method_frames_read_as_python_names_them():
    # the same paste: IPython 8 names "_MultiProcessingDataLoaderIter._try_get_data", Python "_try_get_data"
    first = next(d for d in _pasted("r15_b.yaml#67") if d.rule)
    assert first.rule == "data.worker_queue_empty" and first.facts["loader_line"] == 1132


# --- prefixes ------------------------------------------------------------------------------------------------------

def test_glog_place_under_a_ray_named_actor_prefix():
    # https://github.com/Chengsong-Huang/R-Zero/issues/21: "(qORZMeWorkerDict_0:0 WorkerDict pid=798105) [W1110 ...]"
    message = CORPUS["r16_b.yaml#13"].message
    line, rank, _, source, _ = clean_line_record(message.splitlines()[0])
    assert rank is None and source == "TCPStore.cpp:125" and line.startswith("[c10d] recvValue failed")
    first = next(d for d in explain_stream(io.StringIO(message)) if d.rule)
    # the message names where it was raised (Utils.hpp:671); the prefix, where it was logged
    assert _place(first.facts["torch_source"])[:2] == ("Utils.hpp", 671)
    assert _place(first.facts["logged_from"])[:2] == ("TCPStore.cpp", 125)


# --- torchrun's report names the unexplained worker error's place ---------------------------------------------------

def test_launcher_report_names_where_the_unexplained_worker_error_was_raised():
    # a real torchrun run (torch 2.13, fixtures/distributed/torchrun_unexplained_worker_error.py): the worker's bare
    # KeyError, which no rule explains, then the agent's "failed (exitcode: 1)" and its ChildFailedError
    text = (ROOT / "fixtures/logs/torchrun_unexplained_worker_error.log").read_text(encoding="utf-8")
    report = next(d for d in explain_stream(io.StringIO(text)) if d.rule == "distributed.child_failed")
    cause = report.facts["consequence_of"]
    assert cause["rule"] is None and cause["error"] == "KeyError: 'batch_size'"
    assert _place(cause["error_at"])[:2] == ("torchrun_unexplained_worker_error.py", 8)
    assert "raised at /work/main/fixtures/distributed/torchrun_unexplained_worker_error.py:8" in ranks_note(report)


def test_launcher_report_names_the_rule_of_the_worker_error_it_follows():
    # r14_b.yaml#42 (kohya_ss): an IndexError in the worker, then torchrun's ChildFailedError; round 41's
    # other.kohya_sd_unet_head_dims explains the worker's error, and the report names that rule
    report = next(d for d in _pasted("r14_b.yaml#42") if d.rule == "distributed.child_failed")
    assert report.facts["consequence_of"]["rule"] == "other.kohya_sd_unet_head_dims"
    assert "consequence of the failure (other.kohya_sd_unet_head_dims at line 14)" in ranks_note(report)


# --- round 16's reading problems -----------------------------------------------------------------------------------

def test_traceback_pasted_under_its_error():
    # https://github.com/huggingface/transformers/pull/46802: the error line first, then its frame
    diagnoses = _pasted("r16_b.yaml#65")
    assert diagnoses[0].error == "ValueError: too many values to unpack (expected 4)"
    raised = diagnoses[0].facts["raised_in"]
    assert _place(raised) == ("flex_attention.py", 1330, "_convert_mask_to_block_mask", "B, H, Q, KV = mask.shape")


def test_spyder_and_python2_ipython_frames():
    # r16_a.yaml#90 (Spyder: no comma before "in"), r16_a.yaml#48 (Python 2's IPython names the .pyc)
    spyder = frame_match(CORPUS["r16_a.yaml#90"].message.splitlines()[0])
    assert (spyder.file.rsplit("\\", 1)[-1], spyder.line, spyder.func) == ("functional.py", 3127, "binary_cross_entropy")
    found = list(scan(CORPUS["r16_a.yaml#48"].message.splitlines()))
    assert found[0].text == "ValueError: lengths array has to be sorted in decreasing order"
    assert found[0].frames[-1].file.endswith("rnn.pyc")


def test_comprehension_frame_is_placed_in_its_function():
    # r16_a.yaml#15 (yolact): Python 3.11's "<listcomp>" frame under draw_img's, at the same line
    first = next(d for d in _pasted("r16_a.yaml#15") if d.rule)
    assert (first.location.file, first.location.line, first.location.function) == \
        ("/yolact/utils/output_utils.py", 257, "draw_img")
