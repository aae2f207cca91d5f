"""The explainer's cost, measured as whole-process ratios side by side in one run.

    python benchmarks/run.py            # full run (a few minutes), writes benchmarks/results.md
    python benchmarks/run.py --quick    # fewer repeats and a 10 MB log, for a smoke test

1. `python -m explainer broken.py` against `python broken.py`, for several broken scripts, run from the checkout
   (an editable install: the rule index is keyed by a stat of every rule file, which may be edited in place).
2. The same with 1,000 extra team rules loaded through EXPLAINER_RULES, and with the explainer installed from a
   wheel built from this tree (what `pip install torch-explainer` gives).
3. What `import explainer` adds on top of `import torch` (`python -X importtime`, and whole processes).
4. `explainer explain` on large training logs (100 MB and 1 GB) with a few errors in them, against
   `grep -E` for the same message families over the same log, both writing their output to a file
   (GNU grep writing to /dev/null stops at the first match): time and peak memory (the log is
   streamed, never loaded whole); the same on a 100 MB log with a warning that names an error word every
   1,000 lines ("... 0 errors so far, no RuntimeError"), and the first run with an empty cache (which builds
   the rule index). `python benchmarks/run.py --only-logs` measures this part alone (into --out, or
   benchmarks/results-logs.md; the README is left as it is).

Runs are interleaved (A, B, A, B, ...) so that drift in the machine's load hits both sides alike;
each figure is the median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [
    "fixtures/shape/linear_in_features.py",
    "fixtures/shape/conv_channels.py",
    "fixtures/device/input_not_moved.py",
    "fixtures/core/config_keyerror.py",
]
GREP_FAMILIES = (r"Traceback \(most recent call last\)|Error: |mat1 and mat2|out of memory|"
                 r"Expected all tensors|device-side assert|Watchdog caught")


def _env(**extra: str) -> dict[str, str]:
    # As users run Python: with bytecode caching on (some sandboxes turn it off), default settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXPLAINER_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def timed(cmd: list[str], env: dict[str, str] | None = None, stdout=subprocess.DEVNULL,
          cwd: Path = ROOT) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (KiB) of one whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env or _env(), stdout=stdout, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def side_by_side(a: list[str], b: list[str], repeat: int, env_a=None, env_b=None,
                 stdout=subprocess.DEVNULL, cwd: Path = ROOT) -> dict[str, tuple[float, float]]:
    """Medians for A and B, as {"wall": (a, b), "cpu": (a, b)}, and each side's peak RSS in KiB, as "rss"."""
    runs: dict[str, tuple[list[float], list[float]]] = {"wall": ([], []), "cpu": ([], []), "rss": ([], [])}
    timed(a, env_a, stdout, cwd)  # warm the page cache (and the rule cache) for both before measuring
    timed(b, env_b, stdout, cwd)
    for _ in range(repeat):
        for side, (cmd, env) in enumerate(((a, env_a), (b, env_b))):
            for key, value in zip(("wall", "cpu", "rss"), timed(cmd, env, stdout, cwd)):
                runs[key][side].append(value)
    medians = {k: (statistics.median(v[0]), statistics.median(v[1])) for k, v in runs.items() if k != "rss"}
    return {**medians, "rss": (max(runs["rss"][0]), max(runs["rss"][1]))}


# What `python -m explainer script.py` does at the crash, stage by stage: the hook (imported at start-up, its cost
# in the import row) works with the collector paused and the user's folders kept out of its imports.
CRASH_COST = """
import io, runpy, sys, time
import torch
from explainer.hook.install import paused_gc, installed_libraries_only
try:
    runpy.run_path(sys.argv[1], run_name="__main__")
except Exception as exc:
    error = exc
clock = time.process_time
with paused_gc(), installed_libraries_only():
    marks = [clock()]
    from explainer.diagnose import explain as _explain
    from explainer.diagnose import render as _render
    marks.append(clock())                                    # import
    rulebase = _explain.default_rulebase()
    marks.append(clock())                                    # load
    records = _explain.walk_traceback(error.__traceback__)  # the live path's match: the message, the raising line
    _explain._match_with_raising_frames(rulebase, _explain.with_failing_line(_explain.exception_text(error),
                                        records[-1].code if records else ""), records)
    marks.append(clock())                                    # match (patterns compiled on first use)
    diagnosis = _explain.explain(error, tb=error.__traceback__)
    marks.append(clock())                                    # probes and templates (the match again is cached)
    _render.render(diagnosis, "text", io.StringIO())
    marks.append(clock())                                    # render
print(" ".join(str(b - a) for a, b in zip(marks, marks[1:])))
"""
STAGES = ("import", "load", "match", "probes + templates", "render")


def crash_cost(script: str, repeat: int, env: dict[str, str] | None = None, cwd: Path = ROOT) -> list[float]:
    """The explainer's own CPU time at the crash by stage (first call), medians over repeat processes."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", CRASH_COST, script], cwd=cwd, env=env or _env(),
                              capture_output=True, text=True)
        runs.append([float(v) for v in done.stdout.strip().splitlines()[-1].split()])
    return [statistics.median(stage) for stage in zip(*runs)]


def make_team_pack(folder: Path, count: int) -> Path:
    pack = folder / "bench_pack"
    pack.mkdir(parents=True, exist_ok=True)
    (pack / "pack.yaml").write_text("prefix: bench\nname: benchmark pack\n")
    for i in range(count):
        (pack / f"rule_{i:04d}.md").write_text(
            "---\n"
            f"id: bench.rule_{i:04d}\n"
            "category: other\n"
            f"title: In-house failure number {i}\n"
            "patterns:\n"
            f"  - 'BenchFailure{i:04d}: worker (?P<worker>\\d+) gave up after (?P<seconds>\\d+)s'\n"
            "summary:\n"
            "  - \"Worker {{ worker }} gave up after {{ seconds }} s.\"\n"
            "fixes:\n"
            "  - \"Raise the timeout above {{ seconds }} s.\"\n"
            "examples:\n"
            f"  - message: \"BenchFailure{i:04d}: worker 3 gave up after 60s\"\n"
            "    source: benchmarks/run.py\n"
            "---\n"
            "## What it means\n\nA generated rule for the benchmark.\n")
    return pack


# Warnings that name an error word in passing, as a training job logs them (the review of 2026-12-07, defect 8: one
# every 1,000 lines made the scan 11x grep's CPU).
MENTIONS = ("{time} WARNING dataloader.py:88] worker 3 slow: batch took 2.1s (0 errors so far, errors=0, "
            "no RuntimeError)\n",
            "{time} WARNING grad_scaler.py:211] skipped step {step}: found inf (not an Exception, 2 skipped so far)\n")


def make_log(path: Path, megabytes: int, mentions: bool = False) -> Path:
    """A training log of the given size with a handful of real-looking failures in it; mentions: with a warning that
    names an error word every 1,000 lines."""
    if path.exists() and path.stat().st_size >= megabytes * 1_000_000:
        return path
    failure = (
        "[rank{rank}]: Traceback (most recent call last):\n"
        '[rank{rank}]:   File "/home/user/train.py", line 88, in <module>\n'
        "[rank{rank}]:     logits = model(batch)\n"
        "[rank{rank}]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)\n"
    )
    oom = ("2024-05-01 10:00:00,123 - trainer - ERROR - torch.OutOfMemoryError: CUDA out of memory. Tried to "
           "allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.42 GiB already allocated; 0 bytes free; "
           "3.48 GiB reserved in total by PyTorch)\n")
    with open(path, "w") as out:
        written, step = 0, 0
        target = megabytes * 1_000_000
        marks = {target // 4, target // 2, 3 * target // 4}
        while written < target:
            line = (f"2024-05-01 10:{step // 6000 % 60:02d}:{step // 100 % 60:02d},{step % 1000:03d} - trainer - INFO - "
                    f"epoch {step // 5000} step {step} loss {1.0 / (1 + step % 977):.5f} lr 0.00030 "
                    f"grad_norm {0.5 + (step % 13) / 10:.3f} throughput 812.4 samples/s\n")
            if mentions and step % 1000 == 1:
                line += MENTIONS[step // 1000 % 2].format(time=line[:23], step=step)
            out.write(line)
            written += len(line)
            step += 1
            if any(written - len(line) < m <= written for m in marks):
                chunk = "".join(failure.format(rank=r) for r in range(4)) + oom
                out.write(chunk)
                written += len(chunk)
    return path


def build_wheel(folder: Path) -> Path:
    """A wheel of this tree, built in folder from a copy of its sources (setuptools writes build/ and egg-info beside
    the sources it builds): what `pip install torch-explainer` installs. tests/test_packaging.py checks it too."""
    source = folder / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    for name in ("explainer", "runbooks"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                           "--wheel-dir", str(folder), str(source)], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"pip wheel failed:\n{done.stderr}")
    (wheel,) = folder.glob("torch_explainer-*.whl")
    return wheel


def install_wheel(folder: Path) -> tuple[dict[str, str], Path]:
    """The explainer as `pip install torch-explainer` puts it: build_wheel's wheel unpacked into folder/site-packages
    (first on the path), and a working folder outside the checkout with copies of SCRIPTS (`python -m` puts the
    working folder first on sys.path). Returns the environment and the working folder."""
    site, work = folder / "site-packages", folder / "work"
    zipfile.ZipFile(build_wheel(folder)).extractall(site)
    work.mkdir()
    for script in SCRIPTS:
        shutil.copy(ROOT / script, work)
    env = _env(PYTHONPATH=str(site))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(site)], check=True, env=env)  # as pip does
    return env, work


RESULTS = ROOT / "benchmarks" / "results.md"


def update_readme(report: str) -> None:
    from readme import replace_section  # benchmarks/readme.py, beside this script

    replace_section("benchmarks/run.py", report.split("\n", 2)[2].strip())  # without the '# Benchmark results' title


def _cost_row(label: str, stages: list[float], plain_cpu: float) -> str:
    total = sum(stages)
    parts = " | ".join(f"{stage * 1000:.0f} ms" for stage in stages)
    return f"| {label} | {total * 1000:.0f} ms | {parts} | {plain_cpu:.3f} s | {1 + total / plain_cpu:.3f} |"


CRASH_TARGET_MS = 30
CRASH_TARGET_TEAM_MS = 50
LOG_TARGET_RATIO = 3


def _verdict(target: str, measured: list[tuple[str, float, float]], shown: str) -> str:
    """'TARGET met in this run by: ...; missed by: ...' from (label, figure, limit) triples."""
    met = [label for label, figure, limit in measured if figure <= limit]
    missed = [f"{label} ({shown.format(figure)})" for label, figure, limit in measured if figure > limit]
    return (f"{target} met in this run by: {', '.join(met) or 'none'}; "
            f"missed by: {', '.join(missed) or 'none'}.")


def measure_logs(log_sizes: list[int], repeat: int, row,
                 verdicts: list[tuple[str, float, float]]) -> tuple[list[str], str]:
    """The log rows (row(label, measured, target)): each size's log, and one of the first size with warnings that name
    error words (MENTIONS); their verdicts; each log's peak memory; and what the first run with an empty cache costs."""
    python, memory = sys.executable, []
    logs = [(make_log(Path(tempfile.gettempdir()) / f"explainer-bench-{size}mb.log", size), "") for size in log_sizes]
    size = log_sizes[0]
    logs.append((make_log(Path(tempfile.gettempdir()) / f"explainer-bench-{size}mb-warnings.log", size, mentions=True),
                 " with a warning naming an error word every 1,000 lines"))
    for log, kind in logs:
        with tempfile.TemporaryFile() as sink:  # not /dev/null: GNU grep stops at the first match there
            measured = side_by_side([shutil.which("grep") or "grep", "-E", GREP_FAMILIES, str(log)],
                                    [python, "-m", "explainer", "explain", "--format", "json", str(log)], repeat,
                                    stdout=sink)
        size = f"{log.stat().st_size / 1e6:.0f} MB"
        row(f"`explainer explain` vs `grep -E` on a {size} log{kind}", measured, "<= 3")
        verdicts.append((size + kind, measured["cpu"][1] / measured["cpu"][0], LOG_TARGET_RATIO))
        memory.append(f"explainer {measured['rss'][1] / 1024:.0f} MiB, grep {measured['rss'][0] / 1024:.0f} MiB "
                      f"(log {size}{kind})")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryFile() as sink:
        _, cpu, rss = timed([python, "-m", "explainer", "explain", "--format", "json", str(logs[0][0])],
                            _env(XDG_CACHE_HOME=cache), stdout=sink)
    size = logs[0][0].stat().st_size / 1e6
    first_run = (f"The first run with an empty cache (XDG_CACHE_HOME) builds the rule index before it scans: "
                 f"{cpu:.2f} s of CPU and {rss / 1024:.0f} MiB at its peak on the {size:.0f} MB log, whatever the "
                 "log's size; later runs read the index.")
    return memory, first_run


def only_logs(args: argparse.Namespace) -> int:
    """--only-logs: the log measurements alone, into args.out (default benchmarks/results-logs.md)."""
    rows: list[str] = []
    verdicts: list[tuple[str, float, float]] = []

    def row(label: str, measured: dict[str, tuple[float, float]], target: str) -> None:
        (cpu_a, cpu_b), (wall_a, wall_b) = measured["cpu"], measured["wall"]
        rows.append(f"| {label} | {cpu_a:.3f} s | {cpu_b:.3f} s | {cpu_b / cpu_a:.3f} | {wall_b / wall_a:.3f} | "
                    f"{target} |")
        print(rows[-1], flush=True)

    repeat = args.repeat or (3 if args.quick else 9)
    memory, first_run = measure_logs(args.log_mb or ([10] if args.quick else [100, 1000]), repeat, row, verdicts)
    report = "\n".join([
        f"# Log benchmark ({time.strftime('%Y-%m-%d %H:%M')}, median of {repeat}, load average "
        f"{os.getloadavg()[0]:.2f})", "",
        "| measurement | grep -E CPU | torch-explainer CPU | CPU ratio | wall ratio | target |",
        "| --- | --- | --- | --- | --- | --- |", *rows, "",
        f"Peak memory: {'; '.join(memory)}.", first_run, "",
        _verdict(f"Log scan target (at most {LOG_TARGET_RATIO}x the CPU of `grep -E`)", verdicts, "{:.2f}x"), ""])
    Path(args.out or RESULTS.with_name("results-logs.md")).write_text(report)
    print(report)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a 10 MB log")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--log-mb", type=int, nargs="+", default=None, help="log sizes (default 100 1000)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the results go (the default one also updates the README)")
    parser.add_argument("--only-logs", action="store_true", help="the log measurements alone (not into the README)")
    args = parser.parse_args()
    if args.only_logs:
        return only_logs(args)
    args.out = args.out or RESULTS
    repeat = args.repeat or (3 if args.quick else 9)
    log_sizes = args.log_mb or ([10] if args.quick else [100, 1000])
    python = sys.executable
    rows: list[str] = []

    def row(label: str, measured: dict[str, tuple[float, float]], target: str) -> None:
        (cpu_a, cpu_b), (wall_a, wall_b) = measured["cpu"], measured["wall"]
        rows.append(f"| {label} | {cpu_a:.3f} s | {cpu_b:.3f} s | {cpu_b / cpu_a:.3f} | "
                    f"{wall_b / wall_a:.3f} | {target} |")
        print(rows[-1], flush=True)

    load_at_start = os.getloadavg()[0]  # other jobs on the machine: said in the report
    print(f"repeats: {repeat}, logs: {log_sizes} MB, python: {sys.version.split()[0]}, "
          f"load average {load_at_start:.2f}", flush=True)
    header = ["| measurement | baseline CPU | torch-explainer CPU | CPU ratio | wall ratio | target |",
              "| --- | --- | --- | --- | --- | --- |"]
    costs: list[str] = []
    verdicts: dict[str, list[tuple[str, float, float]]] = {"crash": [], "log": []}
    plain_cpu = []
    for script in SCRIPTS:
        measured = side_by_side([python, script], [python, "-m", "explainer", script], repeat)
        row(f"`python -m explainer {Path(script).name}` vs `python {Path(script).name}`", measured, "<= 1.05")
        plain_cpu.append(measured["cpu"][0])
        stages = crash_cost(script, repeat)
        costs.append(_cost_row(Path(script).name, stages, measured["cpu"][0]))
        verdicts["crash"].append((Path(script).name, sum(stages) * 1000, CRASH_TARGET_MS))

    with tempfile.TemporaryDirectory() as tmp:
        pack = make_team_pack(Path(tmp), 1000)
        env_rules = _env(EXPLAINER_RULES=str(pack))
        for script in SCRIPTS[:2]:
            measured = side_by_side([python, script], [python, "-m", "explainer", script], repeat, env_b=env_rules)
            row(f"same, with 1,000 team rules: {Path(script).name}", measured, "<= 1.10")
            stages = crash_cost(script, repeat, env_rules)
            costs.append(_cost_row(f"{Path(script).name}, 1,000 team rules", stages, measured["cpu"][0]))
            verdicts["crash"].append((f"{Path(script).name} with team rules", sum(stages) * 1000,
                                      CRASH_TARGET_TEAM_MS))

    with tempfile.TemporaryDirectory() as tmp:
        env_wheel, work = install_wheel(Path(tmp))
        for script, plain in zip(SCRIPTS, plain_cpu):
            name = Path(script).name
            if script == SCRIPTS[0]:
                measured = side_by_side([python, name], [python, "-m", "explainer", name], repeat, env_a=env_wheel,
                                        env_b=env_wheel, cwd=work)
                row(f"same, installed from a wheel: {name}", measured, "<= 1.05")
            stages = crash_cost(name, repeat, env_wheel, cwd=work)
            costs.append(_cost_row(f"{name}, installed from a wheel", stages, plain))
            verdicts["crash"].append((f"{name} installed from a wheel", sum(stages) * 1000, CRASH_TARGET_MS))

    measured = side_by_side([python, "-c", "import torch"], [python, "-c", "import torch, explainer"], repeat)
    row("`import torch, explainer` vs `import torch`", measured, "-")
    importtime = subprocess.run([python, "-X", "importtime", "-c", "import torch, explainer"], cwd=ROOT,
                                capture_output=True, text=True, env=_env()).stderr
    cumulative = {}
    for line in importtime.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            cumulative[parts[2]] = int(parts[1])
    explainer_ms = cumulative.get("explainer", 0) / 1000
    torch_ms = cumulative.get("torch", 0) / 1000

    memory, first_run = measure_logs(log_sizes, repeat, row, verdicts["log"])

    report = "\n".join([
        "# Benchmark results",
        "",
        f"Measured by `python benchmarks/run.py` on {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, median of {repeat} interleaved runs. CPU is the whole process's "
        "user + system time, wall is elapsed time; on a shared 2-core machine both move by several percent "
        "from run to run, so the in-process figures further down are the precise ones. Load average "
        f"(1 minute) at the start {load_at_start:.2f}, at the end {os.getloadavg()[0]:.2f}.",
        "",
        *header, *rows,
        "",
        "The explainer's own CPU time at the crash, measured inside the process (first call: imports, rule",
        "loading, probes, rendering), against the CPU time of the plain script; the ratio this implies is",
        "the same comparison without the run-to-run noise of two separate processes:",
        "",
        "| script | explainer at the crash | " + " | ".join(STAGES) + " | plain script CPU | implied ratio |",
        "| --- | --- | " + "--- | " * len(STAGES) + "--- | --- |",
        *costs,
        "",
        f"`python -X importtime`: `import explainer` {explainer_ms:.1f} ms cumulative, on top of "
        f"`import torch` {torch_ms:.1f} ms.",
        f"Peak memory on the logs (target: under 64 MiB whatever the size): {'; '.join(memory)}.",
        first_run,
        "",
        _verdict(f"Crash-time target (at most {CRASH_TARGET_MS} ms, {CRASH_TARGET_TEAM_MS} ms with 1,000 team "
                 "rules)", verdicts["crash"], "{:.0f} ms"),
        "",
        _verdict(f"Log scan target (at most {LOG_TARGET_RATIO}x the CPU of `grep -E`)", verdicts["log"],
                 "{:.2f}x"),
        "",
    ])
    Path(args.out).write_text(report)
    if Path(args.out) == RESULTS:
        update_readme(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
