"""Round 20, the engine: a traceback pasted after its error line (a type alone, its message on the next line, frames
innermost first), a paste whose every line carries Python's prompt, a ComfyUI node's title run together with its
message, code signs that gate one pattern of a rule (code_gates), and the user's outer line read by code signs where a
library frame raised the error."""

from __future__ import annotations

import io

import pytest
import torch

from conftest import benchmark_module
from explainer import explain
from explainer._errors import RuleError
from explainer.cli.explain import explain_stream
from explainer.cli.paste import unwrapped
from explainer.diagnose.explain import explain_text
from explainer.diagnose.logpatterns import comfyui_node
from explainer.diagnose.logscan import scan
from explainer.diagnose.textframes import Frame
from explainer.probes import load_builtin_probes
from explainer.rules.base import RuleBase
from explainer.rules.rule import load_rule_file

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _answer(text: str):
    return next(d for d in explain_stream(io.StringIO(text)) if d.rule)


def _judged(where: str):
    return COVERAGE.judge(CORPUS[where])


# --- a traceback pasted after its error line ---------------------------------------------------------------------------

def test_a_traceback_under_a_type_alone_and_its_message_is_the_errors_own_listed_innermost_first():
    # https://github.com/open-mmlab/mmrazor/issues/554: "TraceError:", its message on the next line, then the frames,
    # innermost first (trace <- _fx_trace <- analyze)
    diagnosis = _answer(CORPUS["r19_b.yaml#9"].message)
    assert diagnosis.rule == "compile.fx_trace_control_flow"
    assert not diagnosis.error.count("File ")  # the frames are not a part of the message
    assert (diagnosis.location.file.rsplit("\\", 1)[-1], diagnosis.location.line) == ("fx_tracer.py", 310)
    assert diagnosis.facts["called_from"]["line"] == 136
    assert _judged("r19_b.yaml#9").outcome == "explained"


def test_a_frame_under_a_two_line_message_that_is_not_a_bare_type_stays_in_the_message():
    # a TorchScript-like message of two lines, its second line indented: the frame line is a part of the message
    lines = ["RuntimeError: The following operation failed in the TorchScript interpreter.",
             "  Traceback of TorchScript (most recent call last):",
             '  File "code/__torch__/model.py", line 12, in forward']
    found = list(scan(lines))
    assert len(found) == 1 and "code/__torch__/model.py" in found[0].text and not found[0].frames


# --- Python's prompt on every line of a paste ----------------------------------------------------------------------------

def test_a_paste_whose_every_line_carries_the_prompt_is_read_as_the_record():
    # https://github.com/pytorch/pytorch/issues/4363: each line of the error prefixed with ">>> "
    entry = CORPUS["r19_b.yaml#69"]
    assert unwrapped(entry.message).startswith("RuntimeError: can't convert a given np.ndarray")
    diagnosis = _answer(entry.message)
    assert diagnosis.rule == "dtype.numpy_object_array" and "int64" in diagnosis.summary


def test_a_real_repl_session_keeps_its_statement_and_reads_the_error_under_it():
    # the interpreter prints no prompt before its own output: the prompts stay, the statement is the <stdin> frame's code
    text = (">>> torch.zeros(2, 3).view(4)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
            "RuntimeError: shape '[4]' is invalid for input of size 6\n")
    assert unwrapped(text) == text
    found = list(scan(text.splitlines()))
    assert found[-1].frames[-1].code == "torch.zeros(2, 3).view(4)"


def test_an_error_line_after_a_prompt_in_a_log_is_an_error_not_a_statement():
    found = list(scan(["some output", ">>> RuntimeError: shape '[4]' is invalid for input of size 6", ""]))
    assert [f.text for f in found] == ["RuntimeError: shape '[4]' is invalid for input of size 6"]


# --- a ComfyUI node's title run together with the message -------------------------------------------------------------

def test_a_comfyui_title_glued_to_its_message_names_the_node():
    # https://github.com/Comfy-Org/ComfyUI/issues/8266: "KSampler Cannot find a working triton installation. ..."
    entry = CORPUS["r19_a.yaml#81"]
    assert comfyui_node(entry.message) == "KSampler"
    assert _answer(entry.message).facts["comfyui_node"] == "KSampler"
    # a message that begins with a name of torch's own is not a node's title: no capitalised sentence after it
    assert comfyui_node("DataLoader worker (pid 4242) is killed by signal: Killed.") == ""
    assert comfyui_node("RuntimeError: CUDA error: out of memory") == ""


# --- code signs: one pattern gated, and the user's outer line ----------------------------------------------------------

GATED_RULE = """\
---
id: test.gated_unpack
category: shape
title: A tensor's shape was unpacked into the wrong number of names
patterns:
  - 'too many values to unpack \\(expected (?P<expected>\\d+)\\)'
  - 'not enough values to unpack \\(expected (?P<expected>\\d+), got (?P<got>\\d+)\\)'
code:
  - '^(?P<names>\\w+(?:\\s*,\\s*\\w+)+)\\s*=\\s*(?P<tensor>[\\w.]+)\\.shape$'
code_gates: [0]
summary:
  - "{% if tensor is defined and names is defined %}`{{ names }} = {{ tensor }}.shape`{% else %}The unpacking{% endif %} expected {{ expected }}."
examples:
  - message: "  File \\"a.py\\", line 3, in f\\n    h, w = img.shape\\nValueError: too many values to unpack (expected 2)"
    source: https://github.com/LinghuiXia/GLCM/issues/4
---
## What it means
A shape had more or fewer dimensions than names.
"""


@pytest.fixture(scope="module")
def gated_rules(tmp_path_factory) -> RuleBase:
    path = tmp_path_factory.mktemp("rules") / "gated.md"
    path.write_text(GATED_RULE)
    return RuleBase([load_rule_file(path, known_probes=load_builtin_probes())])


def test_code_gates_make_the_sign_gate_one_pattern_only(gated_rules):
    signed = [Frame("a.py", 3, "f", code="h, w = img.shape")]
    unsigned = [Frame("a.py", 3, "f", code="a, b = get_pair()")]
    too_many = "ValueError: too many values to unpack (expected 2)"
    not_enough = "ValueError: not enough values to unpack (expected 3, got 2)"
    # pattern 0 is gated: it answers only with the sign in the code line
    assert explain_text(too_many, frames=signed, rulebase=gated_rules).summary == "`h, w = img.shape` expected 2."
    assert explain_text(too_many, frames=unsigned, rulebase=gated_rules).rule is None
    assert explain_text(too_many, rulebase=gated_rules).rule is None
    # pattern 1 is not: it answers without a sign, and reads the sign's values where there is one
    assert explain_text(not_enough, frames=unsigned, rulebase=gated_rules).summary == "The unpacking expected 3."
    assert explain_text(not_enough, rulebase=gated_rules).summary == "The unpacking expected 3."
    assert explain_text(not_enough, frames=signed, rulebase=gated_rules).facts["tensor"] == "img"


def test_code_gates_must_name_patterns_of_a_rule_with_code(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text(GATED_RULE.replace("code_gates: [0]", "code_gates: [2]"))
    with pytest.raises(RuleError, match="code_gates"):
        load_rule_file(path, known_probes=load_builtin_probes())
    path.write_text(GATED_RULE.replace("code:\n  - '^(?P<names>", "context:\n  - '^(?P<names>"))
    with pytest.raises(RuleError, match="no `code`"):
        load_rule_file(path, known_probes=load_builtin_probes())


LINEAR_RULE = """\
---
id: test.head_call
category: shape
title: A layer called on features of the wrong width
patterns:
  - 'mat1 and mat2 shapes cannot be multiplied \\((?P<rows>\\d+)x(?P<cols>\\d+) and (?P<in_features>\\d+)x(?P<out_features>\\d+)\\)'
code:
  - '^(?P<result>\\w+)\\s*=\\s*(?P<layer>[\\w.]+)\\((?P<argument>\\w+)\\)$'
summary:
  - "`{{ layer }}({{ argument }})` got {{ cols }} features where it takes {{ in_features }}."
examples:
  - message: "  File \\"train.py\\", line 9, in step\\n    logits = head(features)\\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (4x7 and 5x3)"
    source: fixtures/shape/linear_in_features.py
---
## What it means
The layer's in_features differ from the input's last dimension.
"""


@pytest.fixture(scope="module")
def linear_rules(tmp_path_factory) -> RuleBase:
    path = tmp_path_factory.mktemp("rules") / "linear.md"
    path.write_text(LINEAR_RULE)
    return RuleBase([load_rule_file(path, known_probes=load_builtin_probes())])


def _step(head, features):
    logits = head(features)
    return logits


def test_a_live_errors_code_sign_is_read_in_the_users_line_over_the_library_frame_that_raised(linear_rules):
    # raised in torch/nn/modules/linear.py (`return F.linear(input, self.weight, self.bias)`): the sign is in the
    # user's line that called the layer
    head = torch.nn.Linear(5, 3)
    try:
        _step(head, torch.zeros(4, 7))
    except RuntimeError as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        assert tb.tb_frame.f_code.co_filename.endswith(("linear.py", "module.py"))  # a frame of torch's raised it
        diagnosis = explain(exc, rulebase=linear_rules)
    assert diagnosis.rule == "test.head_call"
    assert diagnosis.summary == "`head(features)` got 7 features where it takes 5."
    assert diagnosis.location is not None and diagnosis.location.code == "logits = head(features)"


def test_a_pasted_errors_code_sign_is_read_in_the_users_line_over_the_library_frame_that_raised(linear_rules):
    text = ("Traceback (most recent call last):\n"
            '  File "/home/me/train.py", line 9, in step\n    logits = head(features)\n'
            '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl\n'
            "    return forward_call(*args, **kwargs)\n"
            '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward\n'
            "    return F.linear(input, self.weight, self.bias)\n"
            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x7 and 5x3)\n")
    found = list(scan(text.splitlines()))[-1]
    diagnosis = explain_text(found.text, frames=found.frames, rulebase=linear_rules, location=found.location())
    assert diagnosis.summary == "`head(features)` got 7 features where it takes 5."
    assert diagnosis.location.line == 9
    # the torch frame alone (no user frame pasted): no sign, no answer
    assert explain_text(found.text, frames=found.frames[1:], rulebase=linear_rules).rule is None


# --- round 20's reading problems -----------------------------------------------------------------------------------------

def test_an_error_line_two_processes_wrote_at_once_is_read_as_one_of_theirs():
    # https://github.com/RLHFlow/RLHF-Reward-Modeling/issues/6: "KeyErrorKeyError: : 'input_ids_j'"
    found = list(scan(CORPUS["r20_a.yaml#7"].message.splitlines()))
    assert [f.text for f in found] == ["KeyError: 'input_ids_j'"]
    # a type that only looks doubled, or a doubled type with a message of its own, is left alone
    assert [f.text for f in scan(["ErrorError: : x"])] == ["ErrorError: : x"]
    assert [f.text for f in scan(["KeyErrorKeyError: 'a'"])] == ["KeyErrorKeyError: 'a'"]


def test_pdshs_node_prefix_is_taken_off_each_line():
    # https://github.com/StarsfieldAI/R1-V/pull/44: DeepSpeed's pdsh puts the node's address before the rank's prefix
    found = list(scan(CORPUS["r20_a.yaml#9"].message.splitlines()))
    assert [(f.text, f.ranks) for f in found] == [
        ("AttributeError: 'Qwen2VLGRPOVLLMTrainer' object has no attribute '_last_loaded_step'", [0])]
    assert found[0].before[0] == "if self.state.global_step != self._last_loaded_step:"
    # a host's name that ends in its number (r5_b.yaml#90's "worker0: "), its traceback read whole
    lines = ["worker0: Traceback (most recent call last):", 'worker0:   File "finetune.py", line 173, in <module>',
             "worker0:     args = get_args(args_list)", "worker0: ValueError: LOCAL_RANK (default 0) and args.device"]
    (record,) = scan(lines)
    assert record.text.startswith("ValueError: LOCAL_RANK") and record.frames[-1].code == "args = get_args(args_list)"
    # not a name with no number, nor a compute capability
    assert [f.text for f in scan(["sm_80: RuntimeError: x"])] == []
