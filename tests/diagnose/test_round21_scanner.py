"""Round 21, the engine: TorchScript's interpreter traceback inside a Python one (one record, the innermost scripted
frame as the scripted place), a YARN container's log prefix, an error line right under another record's traceback (a
chain whose "During handling" line was lost), a warning that explains a paste placed where the error under it was
raised, the torch call a code-less "<stdin>" frame entered, debugpy's note after VS Code's "Exception has occurred",
and code signs that fail for a rule's first matching pattern while a later one answers."""

from __future__ import annotations

import copy
import io

import pytest

from conftest import benchmark_module
from explainer.cli.explain import explain_stream
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logscan import scan
from explainer.diagnose.sourceplaces import script_source
from explainer.probes import load_builtin_probes
from explainer.rules.base import match_rule
from explainer.rules.rule import load_rule_file

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _answer(text: str):
    return next(d for d in explain_stream(io.StringIO(text)) if d.rule is not None)


# --- TorchScript's interpreter traceback under a Python traceback ------------------------------------------------------

def test_torchscript_interpreter_traceback_is_one_record_with_the_python_frames():
    entry = CORPUS["r21_a.yaml#38"]  # a Jupyter cell's frame, then TorchScript's frames, then the CUDA error it raised
    records = list(scan(entry.message.splitlines()))
    assert len(records) == 1
    assert "operation not permitted when stream is capturing" in records[0].text
    diagnosis = _answer(entry.message)
    assert diagnosis.rule == "device.cuda_runtime_error"
    assert (diagnosis.location.file, diagnosis.location.line) == ("Input In [26]", 9)  # the user's cell
    scripted = diagnosis.facts["script_source"]
    assert (scripted["file"].rsplit("/", 1)[-1], scripted["line"], scripted["function"]) == ("radius.py", 72, "radius")
    assert scripted["code"].startswith("return torch.ops.torch_cluster.radius(")


def test_the_scripted_place_of_an_interpreter_traceback_is_its_innermost_frame(tmp_path, monkeypatch):
    # two marked frames, most recent call last: radius_graph (line 118) called radius (line 72), which raised
    scripted = script_source(CORPUS["r21_a.yaml#39"].message)
    assert (scripted["line"], scripted["function"]) == (72, "radius")
    # a compilation error marks its own line first, then its callers' ("is being compiled since it was called from"):
    # raised live by torch.jit.script of `outer`, whose callee `inner` (line 5) calls a method an int does not have
    import importlib
    import warnings

    import torch

    (tmp_path / "ts_callee_first.py").write_text(
        "import torch\n\n\ndef inner(x: int):\n    return x.relu()\n\n\ndef outer(y):\n    return inner(y)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("ts_callee_first")
    monkeypatch.delitem(__import__("sys").modules, "ts_callee_first")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            torch.jit.script(module.outer)
        except RuntimeError as exc:
            compiled = str(exc)
    assert "'inner' is being compiled since it was called from 'outer'" in compiled
    assert script_source(compiled)["line"] == 5


# --- log prefixes --------------------------------------------------------------------------------------------------------

def test_a_yarn_containers_prefix_is_taken_off_after_the_timestamp():
    lines = CORPUS["r21_a.yaml#18"].message.splitlines()
    frame_line = next(line for line in lines if "rmi_loss.py" in line)
    cleaned = clean_line_record(frame_line)[0]
    assert cleaned.lstrip().startswith('File "/teamdrive/yuyua/code/segmentation/mmsegmentation/mmseg/models/losses/rmi_loss.py", line 118')
    error_line = next(line for line in lines if line.endswith(": RuntimeError: cholesky_cuda: For batch 0: U(1,1) is zero, singular U."))
    assert clean_line_record(error_line)[0] == "RuntimeError: cholesky_cuda: For batch 0: U(1,1) is zero, singular U."


# --- where the error happened ----------------------------------------------------------------------------------------------

def test_an_error_line_right_under_a_traceback_is_the_next_of_its_chain():
    entry = CORPUS["r20_b.yaml#23"]  # KeyError's traceback, then allennlp's ConfigurationError with no line between
    diagnosis = _answer(entry.message)
    assert diagnosis.rule == "other.allennlp_configuration_error"
    assert (diagnosis.location.file.rsplit("/", 1)[-1], diagnosis.location.line) == ("params.py", 238)
    assert COVERAGE.judge(entry).outcome == "explained"


def test_an_error_after_a_blank_line_does_not_take_the_traceback_above_it():
    text = CORPUS["r20_b.yaml#23"].message.replace("\nallennlp.common", "\n\nallennlp.common")
    records = list(scan(text.splitlines()))
    assert [bool(r.frames) for r in records] == [True, False]


def test_a_warning_that_explains_a_paste_is_placed_where_its_unexplained_error_was_raised():
    entry = CORPUS["r20_a.yaml#64"]  # bitsandbytes' warning, then transformers' ValueError and its traceback
    diagnosis = _answer(entry.message)
    assert diagnosis.rule == "other.bnb_cpu_library_loaded"
    assert (diagnosis.location.file.rsplit("\\", 1)[-1], diagnosis.location.line) == ("chat_gradio.py", 86)
    assert (diagnosis.facts["raised_in"]["file"].rsplit("\\", 1)[-1], diagnosis.facts["raised_in"]["line"]) == ("modeling_utils.py", 2842)
    assert diagnosis.facts["logged_from"]["line"] == 34  # the warning's own place, cextension.py:34
    assert COVERAGE.judge(entry).outcome == "explained"


@pytest.mark.parametrize(("where", "entered"), [("r21_b.yaml#98", ("variable.py", 322, "add_")),
                                               ("r21_b.yaml#31", ("tensor.py", 93, "backward"))])
def test_a_stdin_frame_with_no_code_shows_the_torch_call_it_entered(where, entered):
    diagnosis = _answer(CORPUS[where].message)  # "<stdin>", line 1 (no statement pasted), then torch's frames
    assert diagnosis.location.file == "<stdin>"
    via = diagnosis.facts["entered_via"]
    assert (via["file"].rsplit("/", 1)[-1], via["line"], via["function"]) == entered


def test_vscode_exception_with_debugpys_note_reads_its_frames_innermost_first():
    entry = CORPUS["r21_a.yaml#70"]  # "Exception has occurred: RuntimeError       (note: full exception trace ...)"
    diagnosis = _answer(entry.message)
    assert diagnosis.rule == "other.extension_not_compiled_gpu"
    assert (diagnosis.location.file.rsplit("/", 1)[-1], diagnosis.location.line) == ("rasterize_meshes.py", 189)


# --- code signs: a later pattern is tried where the first matching one fails its sign ------------------------------------

RULE = """\
---
id: test.unpack_signs
category: shape
title: A tensor's shape was unpacked into the wrong number of names
patterns:
  - 'too many values to unpack \\(expected (?P<expected>\\d+)\\)'
  - 'values to unpack \\(expected (?P<expected>\\d+)'
code:
  - '^(?P<names>\\w+(?:\\s*,\\s*\\w+)+)\\s*=\\s*(?P<tensor>[\\w.]+)\\.shape$'
code_gates: [0]
summary:
  - "The unpacking expected {{ expected }}."
examples:
  - message: "  File \\"a.py\\", line 3, in f\\n    h, w = img.shape\\nValueError: too many values to unpack (expected 2)"
    source: https://github.com/LinghuiXia/GLCM/issues/4
---
## What it means
A shape had more or fewer dimensions than names.
"""


@pytest.fixture(scope="module")
def signed_rule(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "signed.md"
    path.write_text(RULE)
    return load_rule_file(path, known_probes=load_builtin_probes())


def test_a_pattern_that_fails_its_code_sign_lets_the_next_pattern_answer(signed_rule):
    text = "ValueError: too many values to unpack (expected 2)"
    signed = match_rule(signed_rule, text, code="h, w = img.shape")
    assert (signed.pattern_index, signed.groups["tensor"]) == (0, "img")
    unsigned = match_rule(signed_rule, text, code="a, b = get_pair()")
    assert unsigned is not None and unsigned.pattern_index == 1 and unsigned.groups["expected"] == 2
    # with every pattern gated, a failed sign ends the rule
    gated = copy.copy(signed_rule)
    gated.code_gates = []
    assert match_rule(gated, text, code="a, b = get_pair()") is None


# --- mpirun's --tag-output prefix -----------------------------------------------------------------------------------

def test_mpiruns_tag_output_prefix_is_read_as_the_rank_that_printed_the_line():
    # https://github.com/ChenRocks/UNITER/issues/31: horovodrun's lines tagged "[1,1]<stderr>:"
    tagged = next(x for x in CORPUS["r21_b.yaml#6"].message.splitlines() if x.startswith("[1,1]<stderr>:  File "))
    line, rank, *_ = clean_line_record(tagged)
    assert (line, rank) == (tagged[len("[1,1]<stderr>:"):], 1)
    diagnosis = _answer(CORPUS["r21_b.yaml#35"].message)  # horovodrun's traceback, every line tagged [1,1]<stderr>:
    assert diagnosis.rule == "other.extension_not_compiled_gpu" and diagnosis.facts["ranks"] == [1]
    assert (diagnosis.location.file.rsplit("/", 1)[-1], diagnosis.location.line) == ("distributed_run_manager.py", 183)
