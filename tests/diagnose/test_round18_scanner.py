"""Round 18, the engine: rules that require a sign in the raising frame's code line (`code:`), the place torch's C++
raised a marker record, copies of one worker error kept as the first one, IPython's separator line outside what the
rules' context reads, and round 18's reading problems (a paste's last line holding the only trigger, a glog line and
its copy with "Exception raised from", Android's and Triton's wrappers, a frame glued after another process's text)."""

from __future__ import annotations

import io
import sys
import textwrap
import traceback

import pytest
import torch

from conftest import corpus_message, explain_fixture, place as _place, ruled_diagnoses, run_python
from explainer._errors import RuleError
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text
from explainer.diagnose.logscan import scan
from explainer.rules.base import default_rulebase, match_rule, pasted_code_line
from explainer.rules.rule import load_rule_file



def _pasted(where: str) -> list:
    return explain_stream(io.StringIO(corpus_message(where)))


# --- `code:` patterns: a rule that requires a sign in the raising frame's code line ----------------------------------

UNPACK = default_rulebase().by_id["shape.shape_unpack_count"]


def test_the_message_alone_does_not_answer_a_rule_that_requires_a_code_line():
    # the same words under `env.step(action)` or with no frame at all say nothing about a tensor's rank
    # (https://github.com/higgsfield/RL-Adventure/issues/35: the message and the code line it was raised on)
    assert match_rule(UNPACK, "ValueError: too many values to unpack (expected 4)") is None
    assert explain_text("ValueError: too many values to unpack (expected 4)").rule is None
    assert match_rule(UNPACK, "ValueError: too many values to unpack (expected 4)",
                      code="next_state, reward, done, _ = env.step(action)") is None


def test_the_code_line_given_by_the_caller_decides_and_its_groups_are_facts():
    found = match_rule(UNPACK, "ValueError: too many values to unpack (expected 4)", code="B, H, Q, KV = mask.shape")
    assert found is not None
    assert (found.groups["names"], found.groups["tensor"], found.groups["expected"]) == ("B, H, Q, KV", "mask", 4)


def _unpack_height_width(img):
    h, w = img.shape
    return h * w


def test_a_paste_read_whole_gives_the_line_above_its_error():
    # the line just above the error, in a traceback raised here and printed by Python (3.11 and later print carets
    # under `h, w`: they are skipped)
    with pytest.raises(ValueError) as raised:
        _unpack_height_width(torch.zeros(3, 32, 32))
    text = "".join(traceback.format_exception(raised.value))
    if sys.version_info >= (3, 11):
        assert text.rstrip().splitlines()[-2].strip().startswith("^")
    assert pasted_code_line(text, text.index("ValueError: too many")) == "h, w = img.shape"


@pytest.mark.parametrize("where, code", [
    # an error pasted first, its traceback under it: the last line, under the last frame (huggingface/transformers#46802)
    ("r16_b.yaml#65", "B, H, Q, KV = mask.shape"),
])
def test_an_error_pasted_over_its_traceback_gives_the_last_line(where, code):
    text = corpus_message(where)
    assert pasted_code_line(text, text.index("ValueError")) == code


def test_an_error_without_a_frame_gives_no_code_line():
    # https://github.com/higgsfield/RL-Adventure/issues/35 (runbooks/shape/shape_unpack_count.md's counter-example)
    text = "ValueError: too many values to unpack (expected 4)"
    assert pasted_code_line(text, 0) == ""


def test_r16_b65_a_shape_unpacked_into_four_names_is_explained_with_the_names_and_the_tensor():
    # the error pasted first, then the frame of torch's flex_attention and its code line
    diagnosis = ruled_diagnoses("r16_b.yaml#65")[0]
    assert diagnosis.rule == "shape.shape_unpack_count"
    assert "`B, H, Q, KV = mask.shape` unpacks the shape into 4 names" in diagnosis.summary
    assert "mask has more than 4 dimensions" in diagnosis.summary


def test_a_call_unpacked_into_names_is_not_read_as_a_shape():
    # https://github.com/graphdeco-inria/gaussian-splatting/issues/952 (a control until round 52, when the thread's
    # cause, another diff-gaussian-rasterization build, was read: now its own rule's, never shape_unpack_count's)
    [diagnosis] = _pasted("r10_a.yaml#42")
    assert diagnosis.rule == "other.gaussian_rasterizer_return_count"
    assert diagnosis.location.code == "rendered_image, radii, depth_image = rasterizer("


def test_a_live_unpacking_of_a_shape_is_read_from_the_raising_frames_code():
    diagnosis = explain_fixture("fixtures/shape/shape_unpack_count.py")
    assert diagnosis.rule == "shape.shape_unpack_count"
    assert diagnosis.facts["names"] == "batch, channels, height, width"
    assert "images has 3 dimensions (expected 4, got 3)" in diagnosis.summary


def test_a_code_pattern_that_does_not_compile_keeps_the_rule_from_loading(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text(textwrap.dedent("""\
        ---
        id: test.bad_code
        category: shape
        title: A rule whose code pattern is broken
        patterns:
          - 'too many values to unpack'
        code:
          - '(unclosed'
        summary:
          - "Too many values."
        examples:
          - message: "ValueError: too many values to unpack"
            source: https://example.invalid/1
        ---
        ## What it means
        x
        """), encoding="utf-8")
    with pytest.raises(RuleError) as failed:
        load_rule_file(path, pack="test", known_probes=None)
    assert any(problem.field == "code[0]" for problem in failed.value.problems)


# --- a marker record keeps the place torch's C++ raised it -----------------------------------------------------------

def test_r12_b103_the_watchdogs_marker_keeps_the_exception_raised_from_line_under_it():
    [found] = list(scan(corpus_message("r12_b.yaml#103").splitlines()))
    assert found.text.endswith("Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/"
                               "ProcessGroupNCCL.cpp:781 (most recent call first):")
    diagnosis = ruled_diagnoses("r12_b.yaml#103")[0]
    assert diagnosis.facts["torch_source"] == {"file": "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "line": 781,
                                               "function": "checkTimeout", "code": ""}
    assert _place(diagnosis.facts["logged_from"])[:2] == ("ProcessGroupNCCL.cpp", 1454)


def test_a_marker_record_with_no_source_line_under_it_ends_at_its_line():
    # https://github.com/huggingface/picotron_tutorial/issues/6: the watchdog's line, then C++'s "terminate called
    # after throwing" (no "Exception raised from" line under the marker)
    found = list(scan(corpus_message("data_dist.yaml#177").splitlines()))
    assert found[0].text.startswith("[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, ")
    assert found[0].text.endswith("ran for 120822 milliseconds before timing out.")
    assert "\n" not in found[0].text
    assert found[1].text.startswith("terminate called after throwing an instance of 'std::runtime_error'")


# --- copies of one worker error: the first one is kept --------------------------------------------------------------

def test_r17_b78_three_workers_copies_of_one_argparse_error_are_one_diagnosis_led_by_the_first():
    [diagnosis] = _pasted("r17_b.yaml#78")
    assert "`--local_rank=2`" in diagnosis.summary  # the first worker's, printed first
    assert diagnosis.facts["occurrences"] == 3
    assert _place(diagnosis.facts["raised_in"])[1:3] == (260, "<module>")  # the launcher's traceback under them


# --- IPython's separator line is not one of the lines printed before the error ---------------------------------------

def test_ipythons_dashes_take_no_place_among_the_lines_printed_before_the_error(tmp_path):
    # printed live by a real IPython shell (the installed one, a test dependency): the cell's print, IPython's line of
    # dashes, "EOFError   Traceback (most recent call last)", "Cell In[1], line 4", torch.load's frames
    cell = ("import torch\nopen('model_best.pth', 'wb').close()\nprint(\"=> loading checkpoint 'model_best.pth'\")\n"
            "state = torch.load('model_best.pth', weights_only=False)")
    printed = run_python("-m", "IPython", "--colors=NoColor", "--no-banner", f"--ipython-dir={tmp_path}", "-c", cell,
                         cwd=tmp_path).stdout
    lines = printed.splitlines()
    assert lines[1] == "-" * 75 and lines[2].startswith("EOFError ")
    [found] = list(scan(lines))
    assert found.before == ["=> loading checkpoint 'model_best.pth'"]
    diagnosis = explain_stream(io.StringIO(printed))[0]
    assert diagnosis.rule == "data.pickle_ran_out_of_input"
    assert diagnosis.facts["logged_checkpoint"] == "model_best.pth"


# --- round 18's reading problems ------------------------------------------------------------------------------------

def test_r18_b8_pytests_short_frames_over_a_last_line_that_holds_the_only_trigger():
    # no newline after the error line: the frames above it are read with it
    diagnosis = ruled_diagnoses("r18_b.yaml#8")[0]
    assert diagnosis.rule == "memory.windows_paging_file"
    assert _place(diagnosis.location)[:2] == ("test_fqf.py", 7)
    assert _place(diagnosis.facts["raised_in"])[1] == 124


def test_r18_b41_a_glog_line_and_its_copy_with_the_place_torch_raised_it_are_one_diagnosis():
    [diagnosis] = _pasted("r18_b.yaml#41")
    assert diagnosis.facts["torch_source"]["function"] == "throwTimeoutError"
    assert diagnosis.facts["torch_source"]["line"] == 1013
    assert _place(diagnosis.facts["logged_from"])[:2] == ("socket.cpp", 1011)


def test_r18_a42_androids_wrapper_names_the_app_and_its_activity():
    diagnosis = ruled_diagnoses("r18_a.yaml#42")[0]
    assert diagnosis.facts["android_app"] == "org.pytorch.demo.objectdetection"
    assert "Android stopped the app org.pytorch.demo.objectdetection while it started " \
           "org.pytorch.demo.objectdetection.MainActivity" in diagnosis.summary


def test_r18_a14_tritons_model_repository_names_the_model_it_failed_to_load():
    diagnosis = ruled_diagnoses("r18_a.yaml#14")[0]
    assert "loading the model hrnet_libtorch (version 1)" in diagnosis.summary


def test_r18_b57_a_frame_glued_after_another_processs_text_is_read_as_a_frame():
    diagnosis = ruled_diagnoses("r18_b.yaml#57")[0]
    assert _place(diagnosis.location)[1:3] == (175, "update_scale")  # deepspeed's frame: no user code in the paste
