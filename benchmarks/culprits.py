"""Does the diagnosis name what explains the error? The live scenario suite in fixtures/scenarios/.

    python benchmarks/culprits.py            # per family: n, every culprit named, every field right
    python benchmarks/culprits.py --list     # the misses, with what each one lacked
    python benchmarks/culprits.py --record   # write the floors (both sets) that tests/probes/test_scenarios.py enforces
    python benchmarks/culprits.py --check    # only run the scripts: each must fail on its marked line
    python benchmarks/culprits.py --holdout  # the same on fixtures/scenarios_holdout/ (with any option above)

fixtures/scenarios_holdout/ is a second round written the same way and never tuned on: read its misses
to see what the tool lacks, but change the tool against fixtures/scenarios/ only, so that the held-out
figure keeps measuring generalisation.

Each scenario is a small broken training or inference script, fixtures/scenarios/<family>/<name>.py, whose
header says what a good diagnosis gives, written from reading the script (never from the tool's output):

    # expect:
    #   category: shape                        # the explainer's category (runbooks/ folder names)
    #   culprits: [model.features.4, x]        # names it must give; `a|b` when either name will do
    #   values: ["128", "64"]                  # sizes, dtypes, devices it must state; `a|b` likewise

and whose failing line ends with `# <- fails here`. Every script runs in this one process (runpy); its
exception goes to `explainer.explain`, and the diagnosis is judged on four fields:

- category: the expected one;
- location: the marked line of the script;
- culprits: each name is a culprit's name, or appears as a whole name in the summary or a fix
  (names of one or two characters only count as a culprit's name: a lone `x` in prose proves nothing);
- values: each is stated somewhere in what the text output shows (as benchmarks/coverage.py judges them).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import runpy
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "fixtures" / "scenarios"
HOLDOUT = ROOT / "fixtures" / "scenarios_holdout"
RECORD = Path(__file__).resolve().parent / "culprits.json"
MARK = "# <- fails here"
FIELDS = ("category", "location", "culprits", "values")
HEADER_LINE = re.compile(r"#\s+(category|culprits|values):(.*)")


def _coverage_benchmark():
    """benchmarks/coverage.py, loaded by path: `import coverage` could find coverage.py the package."""
    name = "coverage_benchmark"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("coverage.py"))
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@dataclass
class Scenario:
    path: Path
    categories: tuple[str, ...]
    culprits: tuple[str, ...]
    values: tuple[str, ...]
    line: int

    @property
    def family(self) -> str:
        return self.path.parent.name

    @property
    def name(self) -> str:
        return f"{self.family}/{self.path.stem}"


@dataclass
class Result:
    scenario: Scenario
    error: str  # "TypeName: first line", or why the script did not fail as marked
    raised_at: int | None  # the script's own innermost line in the traceback (read without the explainer)
    seconds: float
    missing: dict[str, str] = field(default_factory=dict)  # field -> what was missing or wrong

    @property
    def culprits_named(self) -> bool:
        return self.raised_at is not None and "culprits" not in self.missing

    @property
    def all_right(self) -> bool:
        return self.raised_at is not None and not self.missing


def _as_tuple(value) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(str(v) for v in (value if isinstance(value, list) else [value]))


def parse_scenario(path: Path) -> Scenario:
    """The `# expect:` header and the marked line; a malformed file raises ValueError naming it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "# expect:":
        raise ValueError(f"{path}: the first line must be '# expect:'")
    header = {}
    for text in lines[1:]:
        match = HEADER_LINE.match(text)
        if not match:
            break
        header[match.group(1)] = yaml.safe_load(match.group(2))
    marked = [n for n, text in enumerate(lines, start=1) if text.rstrip().endswith(MARK)]
    if len(marked) != 1 or "category" not in header or "culprits" not in header:
        raise ValueError(f"{path}: needs category and culprits in its header and exactly one '{MARK}' line")
    return Scenario(path, _as_tuple(header["category"]), _as_tuple(header["culprits"]),
                    _as_tuple(header.get("values")), marked[0])


def load_scenarios(folder: Path = SCENARIOS) -> list[Scenario]:
    return [parse_scenario(path) for path in sorted(folder.glob("*/*.py"))]


def _reset_process_state() -> None:
    # A scenario that fails after init_process_group leaves the default group behind; the next
    # scenario must start without one.
    if "torch.distributed" in sys.modules:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    # Each script starts with torch's defaults: argument validation of distributions is on unless
    # something in this process (torch.compile, a test) turned it off.
    if "torch.distributions" in sys.modules:
        sys.modules["torch.distributions"].Distribution.set_default_validate_args(__debug__)


def raise_scenario(path: Path) -> BaseException | None:
    """Run the script as __main__ in this process; its exception, with the traceback (frames live)."""
    saved = sys.argv[:], sys.path[0], sys.excepthook, threading.excepthook
    sys.argv, sys.path[0] = [str(path)], str(path.parent)
    _reset_process_state()
    try:
        runpy.run_path(str(path), run_name="__main__")
    except Exception as exc:  # noqa: BLE001 - the scenario's error is the point
        return exc
    finally:
        sys.argv, sys.path[0], sys.excepthook, threading.excepthook = saved
        _reset_process_state()
    return None


def script_line(exc: BaseException, path: Path) -> int | None:
    """The innermost line of the script itself in the exception's traceback."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _alternatives(expected: str) -> list[str]:
    return [a.strip() for a in expected.split("|") if a.strip()]


def name_named(name: str, culprit_names: list[str], prose: str) -> bool:
    """A culprit's name, or a whole name in the prose (`module.` in "prefix `module.`", not in `module.fc`)."""
    if name in culprit_names:
        return True
    return len(name) > 2 and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", prose) is not None


def missing_fields(scenario: Scenario, diagnosis) -> dict[str, str]:
    """What the diagnosis got wrong or left out, by field."""
    value_named, what_was_said = _coverage_benchmark().value_named, _coverage_benchmark().what_was_said
    missing = {}
    if diagnosis.category not in scenario.categories:
        missing["category"] = f"{diagnosis.category} (rule {diagnosis.rule})"
    location = diagnosis.location
    if location is None or Path(location.file).resolve() != scenario.path.resolve() or location.line != scenario.line:
        missing["location"] = f"{Path(location.file).name}:{location.line}" if location else "none"
    names = [str(c.get("name")) for c in diagnosis.culprits]
    prose = " ".join([diagnosis.summary, *diagnosis.fixes])
    absent = [c for c in scenario.culprits if not any(name_named(a, names, prose) for a in _alternatives(c))]
    if absent:
        missing["culprits"] = f"{absent} (named: {names})"
    said = what_was_said(diagnosis)
    unstated = [v for v in scenario.values if not any(value_named(a, said) for a in _alternatives(v))]
    if unstated:
        missing["values"] = str(unstated)
    return missing


def run_scenario(scenario: Scenario) -> tuple[Result, BaseException | None]:
    """Run the script; its result so far, and its exception when it failed on the marked line."""
    started = time.perf_counter()
    exc = raise_scenario(scenario.path)
    seconds = time.perf_counter() - started
    if exc is None:
        return Result(scenario, "did not raise", None, seconds), None
    error = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:160]}"
    raised_at = script_line(exc, scenario.path)
    if raised_at != scenario.line:
        return Result(scenario, f"{error} (raised at line {raised_at}, marked {scenario.line})", None, seconds), None
    return Result(scenario, error, raised_at, seconds), exc


def check(scenario: Scenario) -> Result:
    """Run the script only (no explainer): does it fail, on its marked line, quickly?"""
    return run_scenario(scenario)[0]


def judge(scenario: Scenario) -> Result:
    import explainer

    result, exc = run_scenario(scenario)
    if exc is not None:
        result.missing = missing_fields(scenario, explainer.explain(exc))
    return result


def summarise(results: list[Result]) -> dict[str, float]:
    total = max(len(results), 1)
    return {
        "scenarios": len(results),
        "culprits_named": round(100 * sum(r.culprits_named for r in results) / total, 1),
        "all_fields": round(100 * sum(r.all_right for r in results) / total, 1),
    }


def table(results: list[Result]) -> str:
    by_family: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_family[result.scenario.family].append(result)
    lines = [f"{'family':<12} {'n':>4} {'culprits named':>15} {'every field':>12} " +
             " ".join(f"{f + ' wrong':>15}" for f in FIELDS)]
    for family, chosen in sorted(by_family.items()):
        wrong = [sum(f in r.missing for r in chosen) for f in FIELDS]
        lines.append(f"{family:<12} {len(chosen):>4} {sum(r.culprits_named for r in chosen):>15} "
                     f"{sum(r.all_right for r in chosen):>12} " + " ".join(f"{w:>15}" for w in wrong))
    figures = summarise(results)
    broken = sum(r.raised_at is None for r in results)
    lines += ["", f"{figures['scenarios']} scenarios: every culprit named {figures['culprits_named']}%, "
                  f"every field right {figures['all_fields']}%" +
              (f"; {broken} did not fail on their marked line" if broken else "")]
    return "\n".join(lines)


def listing(results: list[Result]) -> str:
    lines = []
    for r in results:
        if r.raised_at is None:
            lines.append(f"{r.scenario.name}: SCRIPT PROBLEM {r.error}\n")
        elif r.missing:
            detail = "".join(f"    {f}: {r.missing[f]}\n" for f in FIELDS if f in r.missing)
            lines.append(f"{r.scenario.name}:{r.scenario.line}  {r.error}\n{detail}")
    return "".join(lines) or "(no misses)\n"


def record(results: list[Result], holdout: list[Result]) -> dict:
    """The floors: the main set's figures at the top level (as before), the held-out set's under "holdout"."""
    figures = {**summarise(results), "holdout": summarise(holdout)}
    RECORD.write_text(json.dumps(figures, indent=2) + "\n")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print each miss and what it lacked")
    parser.add_argument("--record", action="store_true", help=f"write the figures of both sets to {RECORD.name}")
    parser.add_argument("--check", action="store_true", help="only run the scripts (no explainer)")
    parser.add_argument("--holdout", action="store_true", help=f"judge {HOLDOUT.relative_to(ROOT)}/ instead")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    scenarios = load_scenarios(HOLDOUT if args.holdout else SCENARIOS)
    started = time.perf_counter()
    if args.check:
        [check(s) for s in scenarios]  # first pass pays for the imports; the second is timed
        started = time.perf_counter()
        results = [check(s) for s in scenarios]
        elapsed = time.perf_counter() - started
        problems = [r for r in results if r.raised_at is None or r.seconds > 1.0]
        for r in problems:
            print(f"{r.scenario.name}: {r.error} ({r.seconds:.2f} s, marked line {r.scenario.line})")
        print(f"{len(results)} scenarios run in {elapsed:.1f} s; {len(problems)} problems")
        return 1 if problems else 0
    results = [judge(s) for s in scenarios]
    elapsed = time.perf_counter() - started
    print(table(results))
    print(f"({elapsed:.1f} s)")
    if args.list:
        print()
        print(listing(results), end="")
    if args.record:
        other = [judge(s) for s in load_scenarios(SCENARIOS if args.holdout else HOLDOUT)]
        figures = record(*((other, results) if args.holdout else (results, other)))
        print(f"\nrecorded in {RECORD.relative_to(ROOT)}: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
