"""Round 20, the engine: a traceback pasted after its error line (a type alone, its message on the next line, frames
innermost first), a paste whose every line carries Python's prompt, a ComfyUI node's title run together with its
message, code signs that gate one pattern of a rule (code_gates), and the user's outer line read by code signs where a
library frame raised the error."""

from __future__ import annotations

import io
import traceback

import pytest
import torch

from conftest import benchmark_module, corpus_message
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
    # a TorchScript message of two lines: the serialized-code frame line under it is a part of the message
    # (an excerpt, lines 6-8 of https://github.com/prairie-schooner/wav2vec-vc/issues/1 as r32_a.yaml#43 holds it)
    lines = corpus_message("r32_a.yaml#43").splitlines()[5:8]
    assert lines[0].startswith("RuntimeError: The following operation failed in the TorchScript interpreter.")
    found = list(scan(lines))
    assert len(found) == 1 and "code/__torch__/models/universal_vocoder.py" in found[0].text and not found[0].frames


# --- Python's prompt on every line of a paste ----------------------------------------------------------------------------

def test_a_paste_whose_every_line_carries_the_prompt_is_read_as_the_record():
    # https://github.com/pytorch/pytorch/issues/4363: each line of the error prefixed with ">>> "
    entry = CORPUS["r19_b.yaml#69"]
    assert unwrapped(entry.message).startswith("RuntimeError: can't convert a given np.ndarray")
    diagnosis = _answer(entry.message)
    assert diagnosis.rule == "dtype.numpy_object_array" and "int64" in diagnosis.summary


def test_a_real_repl_session_keeps_its_statement_and_reads_the_error_under_it():
    # the interpreter prints no prompt before its own output: the prompts stay, the statement is the <stdin> frame's code
    # (https://github.com/microsoft/WSL/issues/5598: ">>> torch.randn(5).to(2)" over its traceback)
    text = corpus_message("r11_b.yaml#34") + "\n"
    assert text.startswith(">>> torch.randn(5).to(2)\nTraceback (most recent call last):\n")
    assert unwrapped(text) == text
    found = list(scan(text.splitlines()))
    assert found[-1].frames[-1].code == "torch.randn(5).to(2)"


def test_an_error_line_after_a_prompt_in_a_log_is_an_error_not_a_statement():
    # https://github.com/pytorch/pytorch/issues/4363: the error line pasted with ">>> " before it (its first line)
    line = corpus_message("r19_b.yaml#69").splitlines()[0]
    assert line.startswith(">>> RuntimeError: ")
    found = list(scan([line, ""]))
    assert [f.text for f in found] == ["RuntimeError: can't convert a given np.ndarray to a tensor - it has an invalid type."]


# --- a ComfyUI node's title run together with the message -------------------------------------------------------------

def test_a_comfyui_title_glued_to_its_message_names_the_node():
    # https://github.com/Comfy-Org/ComfyUI/issues/8266: "KSampler Cannot find a working triton installation. ..."
    entry = CORPUS["r19_a.yaml#81"]
    assert comfyui_node(entry.message) == "KSampler"
    assert _answer(entry.message).facts["comfyui_node"] == "KSampler"
    # a message that begins with a name of torch's own is not a node's title: no capitalised sentence after it
    # (https://github.com/TorchSSL/TorchSSL/issues/4: "DataLoader worker (pid 12847) is killed by signal: Killed")
    assert comfyui_node(corpus_message("r8_a.yaml#86")) == ""
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
    # the paste of a live error, formatted as Python prints it: the user's frames, then torch's (module.py, linear.py)
    head = torch.nn.Linear(5, 3)
    try:
        _step(head, torch.zeros(4, 7))
    except RuntimeError as exc:
        text = "".join(traceback.format_exception(exc))
    found = list(scan(text.splitlines()))[-1]
    assert found.frames[-1].file.endswith(("linear.py", "module.py"))
    diagnosis = explain_text(found.text, frames=found.frames, rulebase=linear_rules, location=found.location())
    assert diagnosis.summary == "`head(features)` got 7 features where it takes 5."
    assert diagnosis.location.line == _step.__code__.co_firstlineno + 1
    # torch's frames alone (no user frame pasted): no sign, no answer
    user = max(i for i, f in enumerate(found.frames) if f.code == "logits = head(features)")
    assert explain_text(found.text, frames=found.frames[user + 1:], rulebase=linear_rules).rule is None


# --- round 20's reading problems -----------------------------------------------------------------------------------------

def test_an_error_line_two_processes_wrote_at_once_is_read_as_one_of_theirs():
    # https://github.com/RLHFlow/RLHF-Reward-Modeling/issues/6: "KeyErrorKeyError: : 'input_ids_j'"
    found = list(scan(CORPUS["r20_a.yaml#7"].message.splitlines()))
    assert [f.text for f in found] == ["KeyError: 'input_ids_j'"]
    # a doubled type with a message of its own (no second colon) is left alone
    # (https://github.com/OpenGVLab/LLaMA-Adapter/issues/152, its first line)
    line = corpus_message("devmem.yaml#167").splitlines()[0]
    assert line.startswith("RuntimeErrorRuntimeError: don't know how")
    assert [f.text for f in scan([line])] == [line]


def test_pdshs_node_prefix_is_taken_off_each_line():
    # https://github.com/StarsfieldAI/R1-V/pull/44: DeepSpeed's pdsh puts the node's address before the rank's prefix
    found = list(scan(CORPUS["r20_a.yaml#9"].message.splitlines()))
    assert [(f.text, f.ranks) for f in found] == [
        ("AttributeError: 'Qwen2VLGRPOVLLMTrainer' object has no attribute '_last_loaded_step'", [0])]
    assert found[0].before[0] == "if self.state.global_step != self._last_loaded_step:"
    # a host's name that ends in its number, its traceback read whole
    # (https://github.com/THUDM/SwissArmyTransformer/issues/149: "worker0: " on every line but the first)
    (record,) = scan(corpus_message("r5_b.yaml#90").splitlines())
    assert record.text.startswith("ValueError: LOCAL_RANK")
    assert [(f.line, f.code) for f in record.frames] == [(173, "args = get_args(args_list)"), (360, "raise ValueError(")]
