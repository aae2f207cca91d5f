"""Round 17, the engine: context patterns read the failing frame's code line (pasted and live), pastes quoted or
URL-encoded as a whole, the user's outer line (called_from), the glog place of a paste read whole, IPython's cell
spelling in the coverage judge, guarded facts in the summary checker, and round 17's reading problems (a component
after a timestamp's level, an error line in quotes, a task list's boxes, a tab-indented code line, OpenCV's
lower-case `cv2.error`, torch's one frame over the standard library, a traceback run together on one line)."""

from __future__ import annotations

import io

import pytest
import torch

from conftest import benchmark_module, place as _place
from explainer import explain
from explainer._errors import RuleError
from explainer.cli.explain import explain_stream
from explainer.cli.paste import unwrapped
from explainer.diagnose.explain import explain_text
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logblocks import scan_blocks
from explainer.diagnose.logscan import Scanner, scan
from explainer.diagnose.render import render_text
from explainer.diagnose.textframes import glued_traceback
from explainer.probes import load_builtin_probes
from explainer.rules.base import RuleBase
from explainer.rules.rule import load_rule_file
from explainer.rules.templates import required_fields

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _pasted(where: str) -> list:
    return explain_stream(io.StringIO(CORPUS[where].message))


def _answer(where: str):
    return next(d for d in _pasted(where) if d.rule)


# --- context patterns read the failing frame's code line -------------------------------------------------------------

# A rule written the way the guide says (runbooks/guides/writing-rules.md): the message alone says how many names
# were expected; the frame's code line says which tensor's shape was unpacked.
UNPACK_RULE = """\
---
id: test.unpack_shape
category: shape
title: A tensor's shape was unpacked into the wrong number of names
patterns:
  - 'ValueError: too many values to unpack \\(expected (?P<expected>\\d+)\\)'
context:
  - '(?P<names>[A-Za-z_]\\w*(?:\\s*,\\s*[A-Za-z_]\\w*)+)\\s*=\\s*(?P<tensor>[\\w.]+)\\.shape\\b'
summary:
  - "{% if tensor is defined and names is defined %}`{{ names }} = {{ tensor }}.shape` expects {{ expected }} dimensions.{% else %}Expected {{ expected }} values.{% endif %}"
examples:
  - message: "ValueError: too many values to unpack (expected 4)"
    source: https://github.com/huggingface/transformers/pull/46802
---
## What it means
A shape had more dimensions than names.
"""


@pytest.fixture(scope="module")
def unpack_rules(tmp_path_factory) -> RuleBase:
    path = tmp_path_factory.mktemp("rules") / "unpack.md"
    path.write_text(UNPACK_RULE)
    return RuleBase([load_rule_file(path, known_probes=load_builtin_probes())])


def test_context_patterns_read_the_pasted_raising_frames_code_line(unpack_rules):
    # https://github.com/huggingface/transformers/pull/46802: the error line, then flex_attention's frame and its code
    scanner = Scanner()
    found = list(scan_blocks([CORPUS["r16_b.yaml#65"].message], scanner))[-1]
    frames = scanner.dangling  # (pasted under its error: the traceback the paste ends with)
    assert frames[-1].code == "B, H, Q, KV = mask.shape"
    diagnosis = explain_text(found.text, frames=frames, rulebase=unpack_rules)
    assert (diagnosis.facts["names"], diagnosis.facts["tensor"]) == ("B, H, Q, KV", "mask")
    assert diagnosis.summary == "`B, H, Q, KV = mask.shape` expects 4 dimensions."
    # without the frame, the message alone: the other template
    assert explain_text(found.text, rulebase=unpack_rules).summary == "Expected 4 values."


def _unpack(mask):
    B, H, Q, KV = mask.shape  # noqa: N806 - flex_attention's own spelling
    return B


def test_context_patterns_read_a_live_exceptions_failing_line(unpack_rules):
    try:
        _unpack(torch.zeros(1, 1, 1, 1, 1))
    except ValueError as exc:
        diagnosis = explain(exc, rulebase=unpack_rules)
    assert diagnosis.rule == "test.unpack_shape" and diagnosis.facts["tensor"] == "mask"
    assert diagnosis.summary == "`B, H, Q, KV = mask.shape` expects 4 dimensions."


# --- the summary checker: guarded facts and `set` names are not required -----------------------------------------------

def test_required_fields_leave_out_guarded_facts_and_set_names():
    assert required_fields("{% if ctx is defined %}A {{ ctx }}{% endif %} B {{ g }}") == {"g"}
    assert required_fields("{% set shown = ctx if ctx is defined else g %}{{ shown }}") == {"g"}
    assert required_fields("{{ ctx | default('x') }} {{ g }}") == {"g"}
    assert required_fields("{% if ctx %}{{ ctx }}{% endif %}") == {"ctx"}  # a truth test needs it
    assert required_fields("{% if a is defined and b is defined %}{{ a }}{{ b }}{% else %}{{ e }}{% endif %}") == {"e"}


def test_a_summary_that_guards_its_context_fact_fills_from_the_message(tmp_path):
    path = tmp_path / "unpack.md"
    path.write_text(UNPACK_RULE)
    assert load_rule_file(path, known_probes=load_builtin_probes()).id == "test.unpack_shape"
    # the same template without its guard needs the context fact: still refused
    path.write_text(UNPACK_RULE.replace("{% if tensor is defined and names is defined %}", "{% if true %}"))
    with pytest.raises(RuleError, match="no summary template can be filled from the message alone"):
        load_rule_file(path, known_probes=load_builtin_probes())


# --- pastes quoted or URL-encoded as a whole ------------------------------------------------------------------------

def test_url_encoded_paste_is_decoded():
    # https://github.com/turboderp-org/exllamav2/issues/530
    diagnosis = _answer("r16_b.yaml#11")
    assert diagnosis.rule == "other.undefined_symbol"
    assert (diagnosis.facts["symbol"], diagnosis.facts["library"]) == ("ncclCommRegister", "libtorch_cuda.so")
    assert unwrapped("100%20 done and more") == "100%20 done and more"  # spaces: not a URL-encoded paste


def test_quoted_paste_is_read_as_printed():
    # https://github.com/facebookresearch/InferSent/issues/11: an IPython traceback quoted with "> " on every line
    message = CORPUS["r17_b.yaml#61"].message
    assert not any(line.startswith(">") for line in unwrapped(message).splitlines())
    diagnosis = _answer("r17_b.yaml#61")
    assert diagnosis.rule == "other.unpickle_module_missing"
    assert diagnosis.location.code == "infersent = torch.load('infersent.allnli.pickle')"
    # one level only: Python's prompt, quoted, stays a prompt (https://github.com/pytorch/pytorch/issues/3345)
    assert _answer("r11_a.yaml#18").location.code == "import torch"


# --- the user's outer line --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("where", "file", "line", "code"), [
    # https://github.com/pytorch/functorch/issues/747: IPython's outer cell line over the function it defines
    ("r16_b.yaml#69", "<ipython-input-3-8b227da701ad>", 7, "print(vmap(f)(y))"),
    # https://github.com/sgl-project/sglang/issues/7918: the library that called the kernel library
    ("r16_b.yaml#94", "/opt/conda/lib/python3.10/site-packages/sglang/srt/layers/moe/topk.py", 322,
     "topk_weights, topk_ids = moe_fused_gate("),
    # https://github.com/pytorch/examples/issues/599: the script's line over its model's forward
    ("r17_b.yaml#93", "super_resolve.py", 29, "out = model(input)"),
    # https://github.com/PlayVoice/whisper-vits-svc/issues/44: the line naming the checkpoint
    ("r17_a.yaml#33", "prepare/preprocess_ppg.py", 56, 'whisper = load_model(os.path.join("whisper_pretrain", "medium.pt"))'),
])
def test_outer_caller_is_named(where, file, line, code):
    diagnosis = _answer(where)
    outer = diagnosis.facts["called_from"]
    assert (outer["file"], outer["line"], outer["code"]) == (file, line, code)
    assert f"called from {file}:{line}" in render_text(diagnosis, colour=False)


def test_no_outer_caller_for_a_one_frame_traceback():
    # https://github.com/huggingface/transformers/pull/46802: flex_attention's frame alone
    assert all("called_from" not in d.facts for d in _pasted("r16_b.yaml#65"))


# --- the glog place of a paste read whole -----------------------------------------------------------------------------

@pytest.mark.parametrize(("where", "source", "logged"), [
    # https://github.com/vllm-project/vllm/issues/18362: vLLM's DEBUG lines first, then TCPStore's glog line
    ("r4_b.yaml#99", ("Utils.hpp", 676), ("TCPStore.cpp", 125)),
    # https://github.com/hao-ai-lab/FastVideo/issues/1008: a tqdm bar, then ProcessGroupNCCL's line naming CUDAException.cpp
    ("r4_b.yaml#87", ("CUDAException.cpp", 43), ("ProcessGroupNCCL.cpp", 1899)),
])
def test_glog_place_of_the_line_holding_the_error_is_kept_with_the_messages_own(where, source, logged):
    diagnosis = _answer(where)
    assert _place(diagnosis.facts["torch_source"])[:2] == source
    assert _place(diagnosis.facts["logged_from"])[:2] == logged


# --- the coverage judge reads IPython's cell in both spellings ------------------------------------------------------

def test_coverage_reads_a_cells_place_in_both_spellings():
    assert COVERAGE.value_named("Cell In[14], line 1", "at Cell In[14]:1 in <module>")
    assert not COVERAGE.value_named("Cell In[14], line 1", "at Cell In[14]:2")
    assert COVERAGE.value_named('model.py", line 75', "at /x/model.py:75")
    # https://github.com/ultralytics/ultralytics/issues/6206
    assert COVERAGE.judge(CORPUS["r15_b.yaml#67"]).outcome == "explained"


# --- round 17's reading problems --------------------------------------------------------------------------------------

def test_component_after_a_timestamps_level_is_a_prefix():
    # https://github.com/Megvii-BaseDetection/YOLOX/issues/1474: "2022-08-11 16:58:36.000 [INFO] [Driver] File ..."
    line = CORPUS["r17_a.yaml#64"].message.splitlines()[0]
    assert clean_line_record(line)[0].startswith('File "/opt/conda/lib/python3.7/site-packages/torch/distributed/')
    diagnosis = _answer("r17_a.yaml#64")
    assert _place(diagnosis.facts["raised_in"])[:3] == ("distributed_c10d.py", 358, "_get_default_group")
    assert diagnosis.facts["entered_via"]["function"] == "_get_group_size"
    assert clean_line_record("2022-08-11 16:58:36 INFO [rank1]: x")[:2] == ("x", 1)  # a rank is not a component


def test_error_line_in_double_quotes_ends_its_traceback():
    # https://github.com/mousecpn/Joint-Bilateral-Learning/issues/3
    diagnosis = _answer("r17_b.yaml#67")
    assert diagnosis.rule == "shape.conv_input_rank"
    assert _place(diagnosis.location)[:2] == ("test.py", 42)
    assert clean_line_record('"not an error: a quoted line"')[0] == '"not an error: a quoted line"'


def test_markdown_task_list_boxes_are_a_prefix():
    # https://github.com/jankolf/ser-fiq-pytorch/issues/3: "- [ ] " before every line of the traceback
    diagnosis = _answer("r17_b.yaml#94")
    assert diagnosis.rule == "shape.matmul"
    assert _place(diagnosis.location)[:2] == ("iresnet.py", 205)


def test_tab_indented_code_line_stays_in_its_traceback():
    # https://blog.csdn.net/TracelessLe/article/details/122180304: "\traise RuntimeError(...)"; the record is explained
    # only with the raise statement's words, read whole: its frame still places it
    found = list(scan(CORPUS["r17_b.yaml#73"].message.splitlines()))
    assert found[-1].frames[-1].code == 'raise RuntimeError("Ninja is required to load C++ extensions")'
    diagnosis = _answer("r17_b.yaml#73")
    assert _place(diagnosis.facts["raised_in"])[:3] == ("cpp_extension.py", 752, "verify_ninja_availability")


def test_lower_case_exception_type_ends_a_traceback():
    # https://github.com/chensong1995/HybridPose/issues/58: "cv2.error: Caught error in DataLoader worker process 0."
    diagnosis = _answer("r17_b.yaml#88")
    assert diagnosis.rule == "data.worker_error" and diagnosis.facts["input_line"] == 12
    assert _place(diagnosis.location)[:2] == ("coretrainer.py", 36)


def test_torchs_one_frame_over_the_standard_library_is_the_entry():
    # https://github.com/CASIA-IVA-Lab/DANet/issues/46: cpp_extension's _build_extension_module over subprocess
    diagnosis = _answer("r17_b.yaml#75")
    assert _place(diagnosis.facts["entered_via"])[:3] == ("cpp_extension.py", 739, "_build_extension_module")


def test_traceback_run_together_after_a_label():
    # https://github.com/voice-cloning-app/Voice-Cloning-App/issues/29: "Full: Traceback (most recent call last): File
    # "flask\\app.py", line 1950, in full_dispatch_request File ..." on one line
    diagnosis = _answer("r17_a.yaml#76")
    assert diagnosis.rule == "dtype.conv_input_type"
    assert (diagnosis.location.file, diagnosis.location.line) == ("synthesis\\hifigan_model.py", 110)
    assert _place(diagnosis.facts["raised_in"])[:2] == ("conv.py", 258)


@pytest.mark.parametrize("where", [
    "r25_a.yaml#33",  # https://github.com/baoguangsheng/fast-detect-gpt/issues/15: a runpod job's JSON error
    "r32_a.yaml#13",  # https://github.com/huggingface/diffusers/issues/6079: the same JSON, quoted once more
])
def test_glued_traceback_needs_a_frame_after_the_title(where):
    # a one-line JSON error whose "error_traceback" holds the title and then an escaped "\n", not a frame: the line
    # holds ", in " and the title, so it is tried as a glued traceback, and is not one
    [line] = CORPUS[where].message.splitlines()
    assert ", in " in line and "Traceback (most recent call last):" in line
    assert glued_traceback(line) is None
    assert not any(found.frames for found in scan([line]))
    # the run-together traceback of test_traceback_run_together_after_a_label is one
    glued = next(line for line in CORPUS["r17_a.yaml#76"].message.splitlines() if "Full: Traceback" in line)
    assert glued_traceback(glued)[:2] == ["Traceback (most recent call last):",
                                          'File "flask\\app.py", line 1950, in full_dispatch_request']
