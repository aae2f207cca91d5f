"""Shared test helpers: run fixture scripts in this process and capture the real exception."""

from __future__ import annotations

import contextlib
import functools
import os
import runpy
import subprocess
import tempfile
import sys
import threading
from pathlib import Path

# numpy.random is imported here, before any fixture forks DataLoader workers: each worker seeds it, and an
# import inside a forked child of this many-threaded process can fail in CPython 3.11's import locks
# (`KeyError` in importlib's `_blocking_on`), which kills the worker instead of raising the fixture's error.
import numpy.random  # noqa: F401
import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# The rule cache of this test session (and of the subprocesses it starts) lives in a fresh folder:
# no state leaks in from earlier runs, and nothing is left in the user's ~/.cache.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="explainer-test-cache-")


def benchmark_module(name: str):
    """benchmarks/<name>.py imported as '<name>_benchmark' (a plain 'coverage' would be coverage.py's)."""
    import importlib.util

    module_name = f"{name}_benchmark"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, ROOT / "benchmarks" / f"{name}.py")
        sys.modules[module_name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def _shut_down_loader_workers() -> None:
    """Stop the worker processes of the DataLoader iterators a fixture's error left alive, now. Left to be collected
    with the traceback, torch's shutdown waits its 5 s status interval for each (measured: 5.1 s per fixture)."""
    import gc

    from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

    for obj in gc.get_objects():
        if issubclass(type(obj), _MultiProcessingDataLoaderIter):  # (isinstance would raise on a dead weakref proxy)
            obj._shutdown_workers()


def raise_fixture(relative: str) -> BaseException:
    """Run fixtures/<relative> as __main__ in this process and return the exception it raises.

    The exception keeps its traceback, so live probes see the fixture's real frames.
    """
    path = ROOT / relative if not relative.startswith("/") else Path(relative)
    saved_argv, saved_path0 = sys.argv[:], sys.path[0]
    sys.argv = [str(path)]
    sys.path[0] = str(path.parent)
    source = path.read_text(encoding="utf-8", errors="replace")
    with hooks_kept(relative if "init_process_group" in source else ""):
        try:
            runpy.run_path(str(path), run_name="__main__")
        except BaseException as exc:  # noqa: BLE001 - the fixture's error is the point
            if "num_workers" in source:
                _shut_down_loader_workers()
            return exc
        finally:
            sys.argv, sys.path[0] = saved_argv, saved_path0
    raise AssertionError(f"{relative} did not raise: the fixture no longer reproduces its error")


@contextlib.contextmanager
def hooks_kept(process_group: str = ""):
    """Code run in this process may install hooks of its own (torch.distributed's init_process_group wraps
    sys.excepthook with a "[rankN]: " one that outlives the group): undone after it. Code that starts a process group
    names itself, so that its objects are collected after the test (_collect_process_groups)."""
    saved_hooks = sys.excepthook, threading.excepthook
    if process_group:
        _process_group_fixtures.append(process_group)
    try:
        with torch_settings_kept():
            yield
    finally:
        sys.excepthook, threading.excepthook = saved_hooks


@contextlib.contextmanager
def torch_settings_kept():
    """torch's process-wide switches a fixture may turn (torch.use_deterministic_algorithms(True), a default dtype,
    anomaly mode, warn_always): put back, so the tests that run after it see torch's defaults."""
    import torch

    deterministic = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    dtype, anomaly, warn_always = torch.get_default_dtype(), torch.is_anomaly_enabled(), torch.is_warn_always_enabled()
    grad = torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])
        torch.set_default_dtype(dtype)
        torch.autograd.set_detect_anomaly(anomaly)
        torch.set_warn_always(warn_always)
        torch.set_grad_enabled(grad)


def explain_paste(text: str):
    """The first diagnosis with a rule for a pasted message, as `explainer explain -` gives it."""
    import io

    from explainer.cli.explain import explain_stream

    found = [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]
    assert found, f"no rule claimed {text[:120]!r}"
    return found[0]


def rules_of(text: str) -> list[str | None]:
    """The rule of each diagnosis of a pasted message (None where no rule claims a record), as `explainer explain -`."""
    import io

    from explainer.cli.explain import explain_stream

    return [d.rule for d in explain_stream(io.StringIO(text))]


def claimed_by(text: str) -> list[str]:
    """The rules that claim a record of a pasted message, as `explainer explain -` gives them."""
    return [rule for rule in rules_of(text) if rule is not None]


def assert_left_alone(text: str, rule: str) -> None:
    """No diagnosis of a pasted message is `rule`'s; rule "*": no rule claims any of it (a negative control)."""
    rules = rules_of(text)
    if rule == "*":
        assert all(r is None for r in rules), rules
    else:
        assert all(r != rule for r in rules), text


def said(diagnosis) -> str:
    """Everything a diagnosis says in words: title, summary and fixes."""
    return " ".join([diagnosis.title, diagnosis.summary, *diagnosis.fixes])


def explain_fixture(relative: str):
    """The diagnosis of the exception a fixture script raises."""
    import explainer

    return explainer.explain(raise_fixture(relative))


def raised(call) -> BaseException:
    """The exception a real torch call raises, with its traceback (its frames stay live for the probes)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the error is the point
        return exc
    raise AssertionError("the call did not raise")


def run_explainer(*args: str, env: dict | None = None, cwd: Path | None = None, stdin: str | None = None,
                  timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m explainer ARGS` in a subprocess, as a user would run it."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EXPLAINER_")}
    full_env.pop("NO_COLOR", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "explainer", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=full_env, input=stdin, timeout=timeout)


def run_python(*args: str, env: dict | None = None, cwd: Path | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EXPLAINER_")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          env=full_env, timeout=timeout)


# pytest keeps its short summary's lines whole where CI or BUILD_NUMBER is set (non-empty) and cuts them to the
# terminal's width elsewhere: a test that reads pytest's report names its terminal instead of inheriting the runner's.
PYTEST_TERMINALS = {
    "80": {"COLUMNS": "80", "CI": "", "BUILD_NUMBER": ""},
    "250": {"COLUMNS": "250", "CI": "", "BUILD_NUMBER": ""},
    "ci": {"COLUMNS": "80", "CI": "true"},
}


# Fixtures that started a process group: after their test, their objects (a DDP reducer held by the
# exception's frames, gloo's threads) are collected at once, so that no gloo thread is alive when a later
# fixture forks DataLoader workers (a fork of a process whose threads hold locks can hang the worker).
_process_group_fixtures: list[str] = []


@pytest.fixture(autouse=True)
def _collect_process_groups():
    yield
    if _process_group_fixtures:
        import gc

        _process_group_fixtures.clear()
        gc.collect()


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    for name in list(os.environ):
        if name.startswith("EXPLAINER_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def one_thread():
    """Tiny models train faster on one thread, and the machine is shared: the training tests use this."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def assert_names(diagnosis, rule: str, values, text: str | None = None) -> None:
    """The diagnosis is `rule`'s, and every value is named in text (its summary unless given)."""
    assert diagnosis.rule == rule, (diagnosis.rule, diagnosis.summary)
    text = diagnosis.summary if text is None else text
    missing = [value for value in values if value not in text]
    assert not missing, (missing, text)


def shown(diagnosis) -> str:
    """What the text output shows of a diagnosis: its words and the places it names."""
    places = [diagnosis.location.to_dict()] if diagnosis.location else []
    places += [v for v in diagnosis.facts.values() if isinstance(v, dict) and "file" in v]
    return " ".join([said(diagnosis), *(f"{p['file']}:{p['line']}" for p in places)])


def assert_shows(text: str, rule: str, values) -> None:
    """The paste's diagnosis is `rule`'s, and every value is in its words or the places it names."""
    diagnosis = explain_paste(text)
    assert diagnosis.rule == rule, (diagnosis.rule, diagnosis.summary)
    missing = [value for value in values if value not in shown(diagnosis)]
    assert not missing, (missing, shown(diagnosis))


def assert_explained(diagnosis, rule: str, values) -> None:
    """The diagnosis is `rule`'s and names every value the way benchmarks/coverage.py judges it (title, summary,
    places, fixes, culprits)."""
    coverage = benchmark_module("coverage")
    assert diagnosis.rule == rule, (diagnosis.rule, diagnosis.summary)
    text = coverage.what_was_said(diagnosis)
    missing = [value for value in values if not coverage.value_named(value, text)]
    assert not missing, (missing, text)


def corpus_message(where: str) -> str:
    """A message of the opened corpus, verbatim: 'r14_a.yaml#7' is the 7th entry of fixtures/real/r14_a.yaml.
    A held-out round is refused: tests are written from opened rounds only."""
    name, index = where.split("#")
    coverage = benchmark_module("coverage")
    assert name not in coverage.held_out_files(), f"{name} is held out"
    return _corpus_messages()[where]


@functools.cache
def _corpus_messages() -> dict[str, str]:
    return {entry.where: entry.message for entry in benchmark_module("coverage").load_corpus()}


def ruled_diagnoses(where: str) -> list:
    """The diagnoses with a rule that `explainer explain` gives for a pasted corpus message (at least one)."""
    import io

    from explainer.cli.explain import explain_stream

    found = [d for d in explain_stream(io.StringIO(corpus_message(where))) if d.rule]
    assert found, f"no rule claimed {where}"
    return found


def place(fact) -> tuple:
    """A place fact (or Location) as (file name, line, function, code)."""
    fact = fact if isinstance(fact, dict) else fact.to_dict()
    return fact["file"].replace("\\", "/").rsplit("/", 1)[-1], fact["line"], fact["function"], fact["code"]


def logged_records(*records: tuple[int, str]) -> str:
    """What Python's logging writes for (level, message) records with the common "%(asctime)s - %(name)s -
    %(levelname)s - %(message)s" format: real log lines, written live."""
    import io
    import logging

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    log = logging.getLogger("explainer.test.train")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        for level, message in records:
            log.log(level, message)
    finally:
        log.removeHandler(handler)
    return stream.getvalue()
