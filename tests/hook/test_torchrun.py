"""Under torchrun: the hook's diagnosis per rank, in the elastic error file the agent reads, and
`explainer explain` on the combined log (one diagnosis per distinct failure, the root-cause rank,
the other ranks' errors as its consequences).

In rank1-shape, rank 1 stays up a second after its error is recorded: torchrun ranks root causes by the error
files' whole-second timestamps, a tie going to rank 0.
The end-to-end runs launch `torchrun --nproc_per_node=2` with gloo on CPU; the three runs start
together (each costs a few seconds of torch imports per rank). The agent polls its workers every
2 s (`--monitor-interval`), so a rank whose Gloo connection closed has printed its own diagnosis
before the agent stops it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ErrorHandler, ProcessFailure

from explainer import explain
from explainer.hook.elastic import rank_facts, record_diagnosis
from explainer.diagnose.render import render_text
from tests.conftest import ROOT, run_explainer

SCRIPT = "fixtures/distributed/torchrun_two_ranks.py"
MODES = ("rank1-shape", "both-shape", "hang")
SHAPE_ERROR = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x6 and 8x4)"
HOST = socket.gethostname()


class Run:
    def __init__(self, mode: str, log_dir: Path, proc: subprocess.Popen, log_path: Path):
        self.mode, self.log_dir, self.proc, self.log_path = mode, log_dir, proc, log_path
        self.log = ""

    def error_file(self, local_rank: int) -> Path | None:
        found = sorted(self.log_dir.glob(f"*/attempt_0/{local_rank}/error.json"))
        return found[0] if found else None

    def rank_lines(self, rank: int) -> list[str]:
        prefix = f"[rank{rank}]: "
        return [line[len(prefix):] for line in self.log.splitlines() if line.startswith(prefix)]

    def hook_json(self, rank: int) -> list[dict]:
        return [json.loads(line) for line in self.rank_lines(rank) if line.startswith("{")]

    def explained(self) -> list[dict]:
        result = run_explainer("explain", "--format", "json", str(self.log_path))
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in result.stdout.splitlines()]

    def host(self) -> str:
        """The host column of the agent's summary (torchrun's own name for this machine)."""
        return re.search(r"host\s*: (\S+)", self.log.split("ChildFailedError:", 1)[1]).group(1)

    def root_cause_section(self) -> str:
        summary = self.log.split("ChildFailedError:", 1)[1]
        return summary.split("Root Cause (first observed failure):", 1)[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Run]:
    base = tmp_path_factory.mktemp("torchrun")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXPLAINER_", "TORCHELASTIC_"))}
    env.pop("NO_COLOR", None)
    env["OMP_NUM_THREADS"] = "1"
    started = {}
    for mode in MODES:
        log_dir, log_path = base / mode, base / f"{mode}.log"
        run_env = dict(env, EXPLAINER_FORMAT="json") if mode == "rank1-shape" else env
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                 "--monitor-interval=2", "--log-dir", str(log_dir), "-m", "explainer", SCRIPT, mode],
                cwd=ROOT, env=run_env, stdout=log, stderr=subprocess.STDOUT)
        started[mode] = Run(mode, log_dir, proc, log_path)
    for run in started.values():
        try:
            run.proc.wait(timeout=180)
        finally:
            if run.proc.poll() is None:
                run.proc.kill()
        run.log = run.log_path.read_text(encoding="utf-8", errors="replace")
        assert run.proc.returncode == 1, f"torchrun {run.mode} exited {run.proc.returncode}:\n{run.log}"
    return started


def _by_rule(diagnoses: list[dict]) -> dict[str, dict]:
    rules = [d["rule"] for d in diagnoses]
    assert len(rules) == len(set(rules)), f"a failure was reported more than once: {rules}"
    return {d["rule"]: d for d in diagnoses}


# --- rank 1 raises a shape error, rank 0 loses its Gloo connection ----------------------------------

def test_each_rank_says_which_rank_it_is(runs):
    run = runs["rank1-shape"]
    (rank1,) = run.hook_json(1)
    assert rank1["rule"] == "shape.matmul" and rank1["error"] == SHAPE_ERROR
    assert rank1["facts"]["process"] == {"rank": 1, "world_size": 2, "local_rank": 1, "host": HOST}
    (rank0,) = run.hook_json(0)
    assert rank0["rule"] == "distributed.gloo_connection", rank0
    assert "Connection closed by peer" in rank0["error"]
    assert rank0["facts"]["process"] == {"rank": 0, "world_size": 2, "local_rank": 0, "host": HOST}


def test_error_file_keeps_elastic_layout_and_adds_the_diagnosis(runs):
    run = runs["rank1-shape"]
    path = run.error_file(1)
    assert path is not None, f"no error file for local rank 1 under {run.log_dir}"
    data = json.loads(path.read_text())
    assert set(data) == {"message"} and data["message"]["message"] == SHAPE_ERROR
    info = data["message"]["extraInfo"]
    assert set(info) == {"py_callstack", "timestamp", "explainer"}
    assert info["timestamp"].isdigit()
    callstack = info["py_callstack"]
    assert callstack.startswith("Traceback (most recent call last):\n")
    assert f"{SHAPE_ERROR}\ntorch-explainer [shape.matmul] Matrix multiply" in callstack
    assert re.search(r"\n  runbook: \S+/shape\.matmul\b", callstack), callstack
    assert info["explainer"]["rule"] == "shape.matmul"
    assert info["explainer"]["facts"]["process"]["rank"] == 1
    # Read back the way the agent reads it.
    failure = ProcessFailure(local_rank=1, pid=1, exitcode=1, error_file=str(path))
    assert failure.timestamp == int(info["timestamp"])
    assert "[shape.matmul]" in ChildFailedError("train.py", {1: failure}).format_msg()


def test_agent_summary_names_the_root_cause_diagnosis(runs):
    root = runs["rank1-shape"].root_cause_section()
    assert re.search(r"rank\s*: 1 \(local_rank: 1\)\s*\n\s*exitcode\s*: 1 ", root), root
    assert "torch-explainer [shape.matmul] Matrix multiply with mismatched inner dimensions" in root
    assert re.search(r"\n\s+runbook: \S+/shape\.matmul\b", root), root


def test_explain_names_rank1_as_root_cause_and_rank0_as_consequence(runs):
    found = _by_rule(runs["rank1-shape"].explained())
    assert set(found) == {"shape.matmul", "distributed.gloo_connection", "distributed.child_failed"}
    shape = found["shape.matmul"]
    assert shape["facts"]["ranks"] == [1] and shape["facts"]["root_cause_rank"] == 1
    assert shape["location"]["file"].endswith(SCRIPT) and "consequence_of" not in shape["facts"]
    gloo = found["distributed.gloo_connection"]
    assert gloo["facts"]["ranks"] == [0] and "root_cause_rank" not in gloo["facts"]
    expected = {"rank": 1, "rule": "shape.matmul", "input_line": shape["facts"]["input_line"]}
    assert gloo["facts"]["consequence_of"] == expected
    assert found["distributed.child_failed"]["facts"]["consequence_of"] == expected
    # the summary's fields read, and its entry quoted as torchrun printed it (the review of 2026-12-07);
    # the error file was set and held the traceback: no advice to get one with @record
    summary = found["distributed.child_failed"]
    assert f"rank 1 on host {runs['rank1-shape'].host()} failed first" in summary["summary"], summary
    assert "with exit code 1: a Python exception" in summary["summary"]
    assert "(its entry, as torchrun printed it: `rank      : 1 (local_rank: 1)`, `exitcode  : 1 (pid: " in summary["summary"]
    assert "error.json), and the summary's traceback field shows the traceback it holds" in summary["summary"]
    assert not any("@record" in fix or "errors.record" in fix for fix in summary["fixes"]), summary["fixes"]


# --- both ranks raise the same error ------------------------------------------------------------------

def test_same_error_on_both_ranks_is_one_diagnosis_with_both_ranks(runs):
    run = runs["both-shape"]
    for rank in (0, 1):
        lines = run.rank_lines(rank)
        assert SHAPE_ERROR in lines and any(line.startswith("torch-explainer [shape.matmul]") for line in lines)
        assert run.error_file(rank) is not None
    first = next(line for line in run.log.splitlines() if line.endswith(SHAPE_ERROR))
    first_rank = int(re.match(r"\[rank(\d)\]", first).group(1))
    found = _by_rule(run.explained())
    shape = found["shape.matmul"]
    assert shape["facts"]["ranks"] == [0, 1] and shape["facts"]["occurrences"] == 2
    assert shape["facts"]["root_cause_rank"] == first_rank
    text = run_explainer("explain", str(run.log_path)).stdout
    assert text.count("torch-explainer [shape.matmul]") == 1
    # torchrun's own report of the failure (its agent's "failed (exitcode: 1)") is named with the root cause
    assert f"(ranks 0, 1; root cause: rank {first_rank} failed first; torchrun then reported: " in text


# --- rank 1 never joins the collective, rank 0 times out ------------------------------------------------

def test_hang_times_out_on_the_waiting_rank(runs):
    run = runs["hang"]
    lines = run.rank_lines(0)
    assert any(re.search(r"Timed out waiting 2000ms for recv operation", line) for line in lines)
    assert any(line.startswith("torch-explainer [distributed.gloo_collective_timeout]") for line in lines)
    assert not any(line.startswith("torch-explainer") for line in run.rank_lines(1))  # it was stopped, silent
    data = json.loads(run.error_file(0).read_text())
    assert data["message"]["extraInfo"]["explainer"]["rule"] == "distributed.gloo_collective_timeout"
    assert run.error_file(1) is None
    root = run.root_cause_section()
    assert re.search(r"rank\s*: 0 \(local_rank: 0\)", root) and "[distributed.gloo_collective_timeout]" in root
    found = _by_rule(run.explained())
    timeout = found["distributed.gloo_collective_timeout"]
    assert timeout["facts"]["ranks"] == [0] and timeout["facts"]["root_cause_rank"] == 0
    assert found["distributed.child_failed"]["facts"]["consequence_of"]["rank"] == 0
    text = run_explainer("explain", str(run.log_path)).stdout
    assert "rank 0 failed first, but by waiting on another rank" in text


# --- the error file, in process ---------------------------------------------------------------------

def _shape_error() -> BaseException:
    import torch

    try:
        torch.nn.Linear(8, 4)(torch.randn(2, 6))
    except RuntimeError as exc:
        ErrorHandler().record_exception(exc)  # what @record does, inside the except block
        return exc
    raise AssertionError("Linear(8, 4) accepted 6 features")


def test_file_written_by_record_is_extended_not_replaced(tmp_path, monkeypatch):
    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    exc = _shape_error()
    recorded = json.loads(path.read_text())
    diagnosis = explain(exc)
    assert record_diagnosis(diagnosis, render_text(diagnosis), printed=None)
    data = json.loads(path.read_text())
    before, after = recorded["message"], data["message"]
    assert after["message"] == before["message"] == SHAPE_ERROR
    assert after["extraInfo"]["timestamp"] == before["extraInfo"]["timestamp"]
    assert after["extraInfo"]["py_callstack"] == before["extraInfo"]["py_callstack"].rstrip("\n") + "\n" \
        + render_text(diagnosis)
    assert after["extraInfo"]["explainer"]["rule"] == "shape.matmul"
    assert record_diagnosis(diagnosis, "again", printed=None)  # a second call changes nothing
    assert json.loads(path.read_text()) == data


def test_file_in_another_layout_is_left_alone(tmp_path):
    path = tmp_path / "error.json"
    path.write_text(json.dumps({"message": "a newer layout", "timestamp": "1"}))
    diagnosis = explain(_shape_error())
    assert not record_diagnosis(diagnosis, "text", None, environ={"TORCHELASTIC_ERROR_FILE": str(path)})
    assert json.loads(path.read_text()) == {"message": "a newer layout", "timestamp": "1"}
    assert not record_diagnosis(diagnosis, "text", None, environ={})


def test_rank_facts_need_rank_and_world_size():
    assert rank_facts({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}) == \
        {"rank": 3, "world_size": 4, "local_rank": 1, "host": HOST}
    assert rank_facts({"RANK": "3"}) is None and rank_facts({}) is None


# --- the rank hook's buffer, in process -------------------------------------------------------------

def test_the_traceback_reaches_stderr_before_the_diagnosis_starts_under_the_rank_hook(monkeypatch):
    """init_process_group wraps our hook in torch's `_distributed_excepthook`, which buffers everything until ours
    returns: a slow first diagnosis left the traceback where torchrun's SIGTERM could lose it (review of 2026-12-07)."""
    import io

    import torch
    import torch.distributed as dist

    import explainer
    from explainer.hook import install as hook_install
    from tests.conftest import hooks_kept

    seen_at_diagnosis = []
    real_report = hook_install.report

    def report(*args, **kwargs):
        seen_at_diagnosis.append(stream.getvalue())
        return real_report(*args, **kwargs)

    monkeypatch.setattr(hook_install, "report", report)
    monkeypatch.setenv("NO_COLOR", "1")
    stream = io.StringIO()
    with hooks_kept("rank hook buffer"):
        explainer.install()
        try:
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                torch.nn.Linear(8, 4)(torch.randn(2, 6))
            except RuntimeError as exc:
                error = exc
            monkeypatch.setattr("sys.stderr", stream)
            sys.excepthook(type(error), error, error.__traceback__)
            monkeypatch.undo()
        finally:
            if dist.is_initialized():
                dist.destroy_process_group()
            explainer.uninstall()
    [before] = seen_at_diagnosis
    assert before.startswith("[rank0]: Traceback (most recent call last):\n") and before.endswith(f"[rank0]: {SHAPE_ERROR}\n")
    printed = stream.getvalue()
    assert printed.startswith(before) and "[rank0]: torch-explainer [shape.matmul]" in printed[len(before):]
    assert all(line.startswith("[rank0]: ") for line in printed.splitlines() if line), printed
