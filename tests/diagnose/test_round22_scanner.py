"""Round 22, the engine: each line of a paste in inline code with mpirun's tag inside the backticks, two frameless
copies of one error with other values (two ranks), the place a warning was issued at read by rules' context patterns,
and which match a context pattern gives (the first printed; `(?r)` for the last)."""

from __future__ import annotations

import io
import types

from conftest import benchmark_module, corpus_message
from explainer.cli.explain import explain_found, explain_stream
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text
from explainer.rules.base import context_facts

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _answers(text: str):
    return [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]


# --- each line in backticks, mpirun's tag inside them ------------------------------------------------------------------

def test_a_line_in_inline_code_loses_the_backticks_before_its_rank_tag_is_read():
    line = "`[1,0]<stderr>:  File \"test.py\", line 104, in <module>`"  # r21_b#34 (horovod/horovod#1475)
    cleaned, rank, *_ = clean_line_record(line)
    assert (cleaned, rank) == ('  File "test.py", line 104, in <module>', 0)
    # a line that only opens or closes an inline span is left to the markdown reading
    # (https://github.com/yangjianxin1/Firefly/issues/256: "`ValueError: You can't train a model ...", no closing tick)
    opened = corpus_message("r14_b.yaml#94").splitlines()[0]
    assert opened.startswith("`ValueError: ") and "`" not in opened[1:]
    assert clean_line_record(opened)[0] == opened[1:]


def test_a_traceback_pasted_line_by_line_in_inline_code_under_mpirun_tags_is_placed_in_the_users_code():
    entry = CORPUS["r21_b.yaml#34"]
    diagnosis = _answers(entry.message)[0]
    assert diagnosis.rule == "device.driver_too_old"
    assert (diagnosis.location.file, diagnosis.location.line) == ("test.py", 104)
    assert diagnosis.location.code == "hvd.broadcast_parameters(model.state_dict(), root_rank=0)"  # no "[1,0]<stderr>:"
    assert diagnosis.facts["raised_in"]["code"].startswith("tensor, output, root_rank")
    assert diagnosis.facts["ranks"] == [0]


# --- two frameless copies of one error, with other values --------------------------------------------------------------

def test_frameless_copies_of_one_error_with_other_values_are_one_diagnosis_naming_both():
    entry = CORPUS["r20_a.yaml#98"]  # two processes' view errors, each with its own shape and size
    diagnoses = _answers(entry.message)
    assert len(diagnoses) == 1
    first = diagnoses[0]
    assert first.rule == "shape.view_size" and "4194304" in first.summary
    assert first.facts["occurrences"] == 2
    (other,) = first.facts["printed_with"]
    assert "[1, 2048, 64, 128]" in other["summary"] and "2097152" in other["summary"]
    text = render_text(first, colour=False)
    assert "also A view/reshape to [1, 2048, 64, 128]" in text
    assert COVERAGE.judge(entry).outcome == "explained"


def test_frameless_errors_of_other_wordings_are_not_folded():
    # two different errors (two rules), each without frames: two diagnoses, nothing printed with either
    # a log holding two real messages, one under the other: r20_a.yaml#98's first line
    # (https://github.com/lm-sys/FastChat/issues/2316) and r12_b.yaml#66
    # (https://github.com/shayneobrien/coreference-resolution/issues/9)
    text = corpus_message("r20_a.yaml#98").splitlines()[0] + "\n" + corpus_message("r12_b.yaml#66") + "\n"
    assert text.endswith("RuntimeError: CUDA error: out of memory\n")
    diagnoses = _answers(text)
    assert [d.rule for d in diagnoses] == ["shape.view_size", "memory.cuda_error_oom"]
    assert all("printed_with" not in d.facts for d in diagnoses)


# --- the place a warning was issued at, for context patterns -----------------------------------------------------------

def test_a_logged_warnings_place_is_read_by_its_rules_context_patterns():
    # https://github.com/cornellius-gp/gpytorch/issues/1822: a progress bar's lines, then the warning (its first 5 lines)
    lines = corpus_message("r22_b.yaml#45").splitlines()[:5]
    assert lines[0] == "`(Epoch 1) Minibatch: 0%"
    records = list(scan(lines))
    assert records[0].text.startswith("NumericalWarning: A not p.d.")  # the place is not in the record's text
    assert records[0].issued.startswith("/home/j/") and "cholesky.py:44: NumericalWarning" in records[0].issued
    (diagnosis,) = explain_found(records)
    assert diagnosis.rule == "numerics.cholesky_jitter_warning"
    assert diagnosis.facts["warn_place"] == "cholesky.py:44"
    assert "(cholesky.py:44)" in diagnosis.summary


def test_an_error_records_issued_line_is_empty():
    (record,) = scan(["RuntimeError: shape '[4, 1024, 64, 128]' is invalid for input of size 4194304"])
    assert record.issued == ""


# --- which match a context pattern gives -------------------------------------------------------------------------------

def test_a_context_pattern_gives_the_first_match_and_a_reverse_one_the_last():
    # The lines are read in print order: the first match is the earliest log line, the outermost frame of a traceback.
    # A pattern that wants the innermost frame (the line printed nearest the error) searches backwards with (?r).
    lines = [clean_line_record(line)[0] for line in CORPUS["r21_b.yaml#34"].message.splitlines()]
    text = "\n".join(lines)
    place = r'(?P<file>[\w.]+\.py)", line (?P<line>\d+)'
    from explainer.rules.engine import compile_pattern

    # a stand-in for a rule with one context pattern (Rule.compiled builds it, here from its source alone)
    first = context_facts(types.SimpleNamespace(context_sources=[place], compiled=compile_pattern), text)
    last = context_facts(types.SimpleNamespace(context_sources=["(?r)" + place], compiled=compile_pattern), text)
    assert (first["file"], first["line"]) == ("test.py", 104)
    assert (last["file"], last["line"]) == ("mpi_ops.py", 297)
