"""First, do no harm: each case runs under plain Python and under the explainer, and the bytes Python
writes (stdout, the traceback on stderr) and the exit status must be the same; the diagnosis may only
follow them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

SHAPE_ERROR = "torch.nn.Linear(16, 4)(torch.randn(8, 32))"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXPLAINER_", "PYTHON"))}
    env.pop("NO_COLOR", None)
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path, stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=stderr,
                          timeout=180)


def side_by_side(script: Path, *args: str, python: tuple[str, ...] = (), hooked: str = "runner", **env: str):
    """(plain, explained): `python SCRIPT` against `python -m explainer SCRIPT` (or, with hooked='install',
    the script itself run twice, EXPLAINER_TEST_INSTALL telling it to call explainer.install())."""
    environment = _env(**env)
    plain = _run([*python, str(script), *args], environment, script.parent)
    if hooked == "runner":
        explained = _run([*python, "-m", "explainer", str(script), *args], environment, script.parent)
    else:
        explained = _run([*python, str(script), *args], {**environment, "EXPLAINER_TEST_INSTALL": "1"}, script.parent)
    return plain, explained


def assert_python_unchanged(plain, explained) -> bytes:
    """Same exit status, same stdout, Python's stderr first and unchanged; returns what follows it."""
    assert explained.returncode == plain.returncode, (plain.returncode, explained.returncode, explained.stderr[-2000:])
    assert explained.stdout == plain.stdout
    assert explained.stderr[:len(plain.stderr)] == plain.stderr, (
        "Python's own output differs under the explainer:\n"
        + plain.stderr.decode(errors="replace")[-1500:] + "\n-----\n" + explained.stderr.decode(errors="replace")[-1500:])
    return explained.stderr[len(plain.stderr):]


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def test_json_line_is_valid_json_under_an_ascii_stream(tmp_path):
    script = write(tmp_path, "cafe.py", """\
        import torch
        café = torch.randn(8, 32)
        torch.nn.Linear(16, 4)(café)
    """)
    plain, explained = side_by_side(script, PYTHONIOENCODING="ascii", EXPLAINER_FORMAT="json")
    assert "caf\\xe9".encode() in plain.stderr  # Python itself escapes the name on this stream
    extra = assert_python_unchanged(plain, explained)
    diagnosis = json.loads(extra.decode("ascii"))
    assert diagnosis["rule"] == "shape.matmul"
    assert diagnosis["location"]["code"] == "torch.nn.Linear(16, 4)(café)"


SLOW_STR = """\
    import sys, time
    import torch

    class SlowError(Exception):
        def __str__(self):
            with open(sys.argv[1], "a") as log:
                log.write("str\\n")
            time.sleep(0.5)
            return "mat1 and mat2 shapes cannot be multiplied (8x32 and 16x4)"

    try:
        {error}
    except RuntimeError as error:
        raise SlowError() from error
"""


def test_exception_str_runs_no_more_often_than_under_python(tmp_path):
    script = write(tmp_path, "slow_str.py", SLOW_STR.format(error=SHAPE_ERROR))
    calls_plain, calls_explained = tmp_path / "plain.log", tmp_path / "explained.log"
    plain = _run([str(script), str(calls_plain)], _env(), tmp_path)
    explained = _run(["-m", "explainer", str(script), str(calls_explained)], _env(), tmp_path)
    assert explained.returncode == plain.returncode == 1
    assert explained.stderr.startswith(plain.stderr.split(b"\n", 1)[0])
    assert calls_plain.read_text() == calls_explained.read_text() == "str\n"
    assert b"[shape.matmul]" in explained.stderr  # read from the text Python printed, not recomputed


def test_text_of_an_exception_nobody_printed_is_bounded_in_time():
    import explainer

    class HangingError(Exception):
        def __str__(self):
            time.sleep(4)
            return "never seen"

    started = time.monotonic()
    diagnosis = explainer.explain(HangingError())
    assert time.monotonic() - started < 3
    assert diagnosis.rule is None and diagnosis.error.endswith("HangingError")


@pytest.mark.parametrize("fixture,names", [
    ("core/recursive_forward.py", ["model.0 (Block) calls itself in forward", "`self.fc(x)` instead of `self(x)`"]),
    ("core/getattr_loop.py", ["Wrapper.__getattr__ looks up `self.model`", "super().__getattr__(name)"]),
])
def test_recursion_reaches_the_same_depth_and_names_the_module(fixture, names):
    plain, explained = side_by_side(FIXTURES / fixture)
    assert b"RecursionError: maximum recursion depth exceeded" in plain.stderr
    extra = assert_python_unchanged(plain, explained).decode()
    assert "[other.recursion]" in extra
    for name in names:
        assert name in extra


def test_script_sees_and_sets_the_recursion_limit_as_under_python(tmp_path):
    script = write(tmp_path, "limits.py", """\
        import sys

        def depth(n=0):
            try:
                return depth(n + 1)
            except RecursionError:
                return n

        print(sys.getrecursionlimit(), depth())
        sys.setrecursionlimit(2500)
        print(sys.getrecursionlimit(), depth())
        sys.setrecursionlimit(0)
    """)
    plain, explained = side_by_side(script)
    assert plain.stdout.split()[0::2] == [b"1000", b"2500"]
    assert_python_unchanged(plain, explained)
    assert b"ValueError: recursion limit must be greater or equal than 1" in plain.stderr


def test_error_in_a_spawned_pool_child_names_the_childs_line():
    plain, explained = side_by_side(FIXTURES / "core/pool_child.py", EXPLAINER_FORMAT="json")
    diagnosis = json.loads(assert_python_unchanged(plain, explained))
    assert diagnosis["rule"] == "shape.matmul"
    assert diagnosis["location"]["line"] == 12 and "layer(batch)" in diagnosis["location"]["code"]
    assert diagnosis["facts"]["reraised_at"]["line"] == 17


def test_torch_error_in_an_asyncio_task_group(tmp_path):
    script = write(tmp_path, "task_group.py", f"""\
        import asyncio
        import torch

        async def step():
            return {SHAPE_ERROR}

        async def main():
            async with asyncio.TaskGroup() as group:
                group.create_task(asyncio.sleep(0))
                group.create_task(step())

        asyncio.run(main())
    """)
    plain, explained = side_by_side(script)
    assert b"ExceptionGroup: unhandled errors in a TaskGroup" in plain.stderr
    extra = assert_python_unchanged(plain, explained).decode()
    assert "[shape.matmul]" in extra and "32" in extra


def test_torch_error_deep_in_a_chain_under_dev_mode_and_warnings_as_errors(tmp_path):
    script = write(tmp_path, "chain.py", f"""\
        import torch

        def load():
            try:
                {SHAPE_ERROR}
            except RuntimeError:
                raise KeyError("batch")

        try:
            try:
                load()
            except KeyError as error:
                raise ValueError("could not build the batch") from error
        except ValueError:
            raise SystemError("training step failed")
    """)
    plain, explained = side_by_side(script, python=("-X", "dev", "-W", "error"))
    extra = assert_python_unchanged(plain, explained).decode()
    assert "[shape.matmul]" in extra


HOOK_ORDER = """\
    import os, sys
    import torch

    def install_team_hook():
        previous = sys.excepthook  # a well-behaved hook chains to the one it found

        def team_hook(etype, value, tb):
            print("team hook:", etype.__name__, file=sys.stderr)
            previous(etype, value, tb)

        sys.excepthook = team_hook

    ours = bool(os.environ.get("EXPLAINER_TEST_INSTALL"))
    if ours and {explainer_first}:
        import explainer
        explainer.install()
    install_team_hook()
    if ours and not {explainer_first}:
        import explainer
        explainer.install()
    {error}
"""


@pytest.mark.parametrize("explainer_first", [True, False], ids=["ours-then-theirs", "theirs-then-ours"])
def test_another_excepthook_before_or_after_ours(tmp_path, explainer_first):
    script = write(tmp_path, "hooks.py", HOOK_ORDER.format(explainer_first=explainer_first, error=SHAPE_ERROR))
    plain, explained = side_by_side(script, hooked="install")
    assert plain.stderr.startswith(b"team hook: RuntimeError")
    extra = assert_python_unchanged(plain, explained).decode()
    assert "[shape.matmul]" in extra


def test_rich_traceback_installed_before_ours(tmp_path):
    script = write(tmp_path, "rich_hook.py", f"""\
        import os
        import torch
        from rich.traceback import install as rich_install

        rich_install(width=100)
        if os.environ.get("EXPLAINER_TEST_INSTALL"):
            import explainer
            explainer.install()
        {SHAPE_ERROR}
    """)
    plain, explained = side_by_side(script, hooked="install", COLUMNS="100", TERM="dumb")
    assert b"Traceback" in plain.stderr and b"mat1 and mat2" in plain.stderr
    extra = assert_python_unchanged(plain, explained).decode()
    assert "[shape.matmul]" in extra


def test_a_hook_that_replaces_ours_without_chaining_is_followed_by_the_diagnosis(tmp_path):
    # rich.traceback.install() after ours calls no hook it found: at exit, the diagnosis of the exception that ended
    # the script follows rich's traceback, once (the new user's review of 2026-12-07 got rich's alone).
    script = write(tmp_path, "rich_after.py", """\
        import os
        if os.environ.get("EXPLAINER_TEST_INSTALL"):
            import explainer
            explainer.install()
        from rich.traceback import install as rich_install
        rich_install(width=100)
        batch = {"image": [0.5]}
        batch["label"]
    """)
    plain, explained = side_by_side(script, hooked="install", COLUMNS="100", TERM="dumb")
    assert b"KeyError: 'label'" in plain.stderr and b"Traceback (most recent call last)" in plain.stderr
    extra = assert_python_unchanged(plain, explained).decode()
    assert extra.startswith("torch-explainer [data.") and extra.count("torch-explainer [") == 1, extra
    assert f"at {script}:8   batch[\"label\"]" in extra


def test_stderr_closed(tmp_path):
    script = write(tmp_path, "closed.py", f"""\
        import torch
        print("before")
        {SHAPE_ERROR}
    """)
    environment = _env()
    plain = subprocess.run(f"{sys.executable} {script} 2>&-", shell=True, env=environment, capture_output=True)
    explained = subprocess.run(f"{sys.executable} -m explainer {script} 2>&-", shell=True, env=environment,
                               capture_output=True)
    assert explained.returncode == plain.returncode == 1
    assert explained.stdout == plain.stdout == b"before\n"


def _status_into_pipe(script: Path, reader: str, runner: str = "") -> bytes:
    shell = f"{sys.executable} {runner} {script} 2>&1 >/dev/null | {reader}; echo ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], env=_env(), capture_output=True, timeout=180)
    assert b"internal error" not in done.stderr
    return done.stdout.strip()


def test_stderr_into_a_pipe_that_closes_after_pythons_traceback(tmp_path):
    script = write(tmp_path, "pipe.py", f"""\
        import torch
        {SHAPE_ERROR}
    """)
    traceback_bytes = len(_run([str(script)], _env(), tmp_path).stderr)
    # The reader takes exactly Python's traceback and leaves: the diagnosis meets a closed pipe.
    reader = f"head -c {traceback_bytes} >/dev/null"
    assert _status_into_pipe(script, reader) == _status_into_pipe(script, reader, "-m explainer") == b"1"


def test_stderr_into_a_pipe_closed_before_anything(tmp_path):
    script = write(tmp_path, "pipe.py", f"""\
        import time
        import torch
        time.sleep(0.5)
        {SHAPE_ERROR}
    """)
    plain = _status_into_pipe(script, "true")
    assert plain == _status_into_pipe(script, "true", "-m explainer")


# Scripts Python cannot compile: it prints the error with no traceback (the compiler ran, not the script) and no
# diagnosis may follow. Python's file reader, unlike compile(), reads line by line: what it reports for a script
# that is not UTF-8, holds a null byte or names an unknown encoding, and on which line, is its own.
UNCOMPILABLE = {
    "syntax": b"def f(:\n  pass\n",
    "indentation": b"import torch\nif torch.cuda.is_available():\nx = 1\n",
    "tab": b"if 1:\n\tx = 1\n        y = 2\n",
    "not-utf8": b"# caf\xe9\nx = 1\n",
    "not-utf8-after-a-syntax-error": b"def f(:\n  pass\n# caf\xe9\n",
    "not-utf8-after-an-unterminated-string": b'x = "abc\n# caf\xe9\n',
    "not-utf8-inside-a-docstring": b'def f():\n    """caf\n    \xe9"""\n',
    "utf8-declared-not-utf8": b'# coding: utf-8\nx = "\xe9"\n',
    "null-byte": b"x = 1\n\ty = 2\x00\n",
    "unknown-encoding": b"#!/usr/bin/env python\n# -*- coding: klingon -*-\nx = 1\n",
    "bom-and-latin-1": b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
}


@pytest.mark.parametrize("source", UNCOMPILABLE.values(), ids=UNCOMPILABLE)
def test_a_script_python_cannot_compile_fails_exactly_as_under_python(tmp_path, source):
    script = tmp_path / "broken.py"
    script.write_bytes(source)
    plain, explained = side_by_side(script)
    assert plain.returncode == 1 and b"Error" in plain.stderr and not plain.stderr.startswith(b"Traceback")
    assert (explained.returncode, explained.stdout, explained.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_a_syntax_error_the_script_raises_keeps_its_traceback(tmp_path):
    script = write(tmp_path, "late.py", """\
        import torch
        torch.zeros(1)
        exec("def f(:")
    """)
    plain, explained = side_by_side(script)
    assert plain.stderr.startswith(b"Traceback") and b'late.py", line 3' in plain.stderr
    extra = assert_python_unchanged(plain, explained)
    assert extra.startswith(b"torch-explainer: ")
