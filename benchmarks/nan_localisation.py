"""Does TrainingMonitor name where a NaN/Inf was made? Measured labels against the monitor's diagnosis.

    python benchmarks/nan_localisation.py                 # tuning and held-out sets, rates per kind
    python benchmarks/nan_localisation.py --split tuning --limit 20 -v

Each scenario of fixtures/nan_injections/scenarios.py is trained twice from the same seed: once with
the labeller's hooks (where the first non-finite value really appears), once under
`explainer.TrainingMonitor` exactly as a user runs it. A forward injection is localised when
`facts.module` is the labelled module and the summary's source (made in the module, or carried in by
the data) agrees; a backward-only NaN when `facts.backward_module` is the labelled module; a bad loss
when the monitor says the forward was finite and names no module. Localisation has no threshold to
tune; the two sets are reported apart all the same (different seeds, depths, positions, optimizers).
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import explainer  # noqa: E402

GEN = runpy.run_path(str(ROOT / "fixtures" / "nan_injections" / "scenarios.py"), run_name="nan_injections")


def detect(scenario) -> tuple[int | None, dict | None, str | None]:
    """(bad step, facts, rule) from the monitor's first diagnosis in a plain run of the scenario."""
    box: dict = {}

    def attach(model, optimizer):
        box["mon"] = explainer.TrainingMonitor(model, optimizer=optimizer, quiet=True)

    def on_step(step, loss):
        box["mon"].step(loss)

    _, step = GEN["train"](scenario, on_step=on_step, model_hook=attach)
    mon = box["mon"]
    mon.close()
    located = [d for d in mon.diagnoses if d.rule in ("signal.nan_located", "signal.non_finite")]
    if not located:
        return step, None, None
    return step, located[0].facts, located[0].rule


def judge(label: dict, facts: dict | None, rule: str | None) -> tuple[bool, str]:
    if facts is None:
        return False, "no NaN diagnosis"
    if facts.get("step") != label["step"]:
        return False, f"step {facts.get('step')} != {label['step']}"
    display = GEN["display"]
    if label["stage"] == "forward":
        got = (facts.get("module"), facts.get("source"))
        want = (display(label["module"]), label["source"])
        return got == want, f"module/source {got} != {want}"
    if label["stage"] == "loss":
        ok = rule == "signal.non_finite" and facts.get("forward_finite") is True and "module" not in facts
        return ok, f"rule {rule}, module {facts.get('module')}, forward_finite {facts.get('forward_finite')}"
    want = display(label["module"]) if label["module"] is not None else None
    got = facts.get("backward_module")
    if want is None:
        return facts.get("backward_source") == "loss", f"backward_source {facts.get('backward_source')}"
    return got == want and "module" not in facts, f"backward_module {got} != {want}"


def run(split: str, limit: int | None, verbose: bool) -> tuple[int, int]:
    scenarios = GEN["scenario_set"](split)[:limit]
    by_kind: dict[str, list[bool]] = defaultdict(list)
    skipped = 0
    for scenario in scenarios:
        label = GEN["measure"](scenario)
        if label is None:
            skipped += 1
            if verbose:
                print(f"  skip {scenario.name}: never went non-finite")
            continue
        step, facts, rule = detect(scenario)
        ok, why = judge(label, facts, rule)
        by_kind[scenario.kind].append(ok)
        if verbose or not ok:
            print(f"  {'ok  ' if ok else 'MISS'} {scenario.name}: label {label}" + ("" if ok else f"; {why}"))
    total = sum(len(v) for v in by_kind.values())
    correct = sum(sum(v) for v in by_kind.values())
    print(f"{split}: {correct}/{total} localised ({100 * correct / max(total, 1):.1f}%), {skipped} never non-finite")
    for kind, results in sorted(by_kind.items()):
        print(f"  {kind:20s} {sum(results):3d}/{len(results):3d}  {100 * sum(results) / len(results):5.1f}%")
    return correct, total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("tuning", "held_out", "both"), default="both")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    splits = ("tuning", "held_out") if args.split == "both" else (args.split,)
    results = [run(split, args.limit, args.verbose) for split in splits]
    correct = sum(c for c, _ in results)
    total = sum(t for _, t in results)
    print(f"all: {correct}/{total} ({100 * correct / max(total, 1):.1f}%) in {time.perf_counter() - start:.0f}s")
    return 0 if total and correct / total >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
