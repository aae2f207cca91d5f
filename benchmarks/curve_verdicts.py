"""Curve verdicts against real training runs: per-regime precision/recall, macro-F1, healthy->overfitting.

    python benchmarks/curve_verdicts.py                      # 150 tuning + 150 held-out runs (cached)
    python benchmarks/curve_verdicts.py --count 20           # a quick look
    python benchmarks/curve_verdicts.py --split tuning       # while tuning: the held-out split stays unseen
    python benchmarks/curve_verdicts.py --readme             # both splits, and their row in README.md

Every curve is a small model trained now (fixtures/curves/generate.py: `scenario`, `run_scenario`), 50 to
5,000 steps, with varied batch size (noise), logging and validation frequency, validation-set size, and
sometimes no validation at all. Labels come from the run's own clean measurements (full training-set and
large held-out-set losses probed during training), never from the detector; runs inside a label's margin
are counted as ambiguous and left out, and so are overfitting runs that logged no validation loss
(nothing in their log can show it). Thresholds are chosen on the tuning split only; the held-out split
uses other seeds and other configuration ranges. Trained runs are cached under .cache/curves/ (git-ignored).
"""

from __future__ import annotations

import argparse
import collections
import runpy
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from explainer.signals.curves import CURVES, History, classify  # noqa: E402

CACHE = ROOT / ".cache" / "curves"


def observable(record: dict) -> bool:
    """Overfitting shows only in a validation curve: a run that logged none cannot be judged on it."""
    return not (record["label"] == "overfitting" and not record["config"]["val_every"])


def score(records: list[dict]) -> dict:
    """Confusion counts, per-regime precision/recall/F1, macro-F1 and the healthy->overfitting rate."""
    labelled = [r for r in records if r["label"] in CURVES and observable(r)]
    confusion: collections.Counter = collections.Counter()
    for record in labelled:
        verdict = classify(History.from_rows(record["rows"])).curve or "no verdict"
        confusion[(record["label"], verdict)] += 1
    per = {}
    for regime in CURVES:
        tp = confusion[(regime, regime)]
        predicted = sum(v for (_, p), v in confusion.items() if p == regime)
        actual = sum(v for (t, _), v in confusion.items() if t == regime)
        precision = tp / predicted if predicted else float("nan")
        recall = tp / actual if actual else float("nan")
        f1 = 2 * precision * recall / (precision + recall) if predicted and actual and tp else 0.0
        per[regime] = dict(n=actual, precision=precision, recall=recall, f1=f1)
    present = [r for r in CURVES if per[r]["n"]]
    healthy = per["healthy"]["n"]
    return dict(per=per, confusion=confusion, macro_f1=sum(per[r]["f1"] for r in present) / len(present),
                healthy_to_overfitting=confusion[("healthy", "overfitting")] / healthy if healthy else float("nan"),
                ambiguous=sum(r["label"] not in CURVES for r in records),
                unobservable=sum(r["label"] in CURVES and not observable(r) for r in records), total=len(records))


def report(name: str, result: dict) -> None:
    print(f"\n{name}: {result['total']} runs; left out: {result['ambiguous']} ambiguous, "
          f"{result['unobservable']} overfitting without a logged validation loss")
    print(f"  {'regime':<13} {'n':>4} {'precision':>9} {'recall':>7} {'F1':>6}")
    for regime, row in result["per"].items():
        print(f"  {regime:<13} {row['n']:>4} {row['precision']:>9.3f} {row['recall']:>7.3f} {row['f1']:>6.3f}")
    print(f"  macro-F1 {result['macro_f1']:.3f}   healthy called overfitting {result['healthy_to_overfitting']:.1%}")
    wrong = {k: v for k, v in result["confusion"].items() if k[0] != k[1]}
    if wrong:
        print("  confusions (label -> verdict): " + ", ".join(f"{t}->{p} {v}" for (t, p), v in sorted(wrong.items())))


README_ROW = "| `python benchmarks/curve_verdicts.py` "  # the README's row for this benchmark starts so


def readme_row(results: dict, lengths: list[int]) -> str:
    """The README's table row, from this run: both splits."""
    def cell(result: dict) -> str:
        unstable = result["per"]["unstable"]
        return (f"macro-F1 {result['macro_f1']:.3f}, unstable recall {unstable['recall']:.2f}, "
                f"healthy called overfitting {result['healthy_to_overfitting']:.0%}")
    count = results["tuning"]["total"]
    return (f"{README_ROW}({count} runs per set, {min(lengths)}-{max(lengths):,} steps, varied noise and validation "
            f"frequency) | {cell(results['tuning'])} | {cell(results['heldout'])} |")


def write_readme_row(row: str) -> None:
    """Replace this benchmark's one row in the README's training-signals table (a table has no room for the
    section markers benchmarks/readme.py writes between)."""
    from readme import README  # benchmarks/readme.py, beside this script

    lines = README.read_text(encoding="utf-8").split("\n")
    found = [i for i, line in enumerate(lines) if line.startswith(README_ROW)]
    if len(found) != 1:
        raise SystemExit(f"README.md has {len(found)} rows starting {README_ROW!r}; expected 1")
    lines[found[0]] = row
    README.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=150, help="runs per split")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--split", choices=("tuning", "heldout"), help="only this split (tune on 'tuning' alone)")
    parser.add_argument("--readme", action="store_true", help="also write the figures into README.md (both splits)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    generator = runpy.run_path(str(ROOT / "fixtures" / "curves" / "generate.py"), run_name="curves_generator")
    results, lengths = {}, []
    for split in (args.split,) if args.split else ("tuning", "heldout"):
        started = time.perf_counter()
        records = generator["sweep"](split, args.count, None if args.no_cache else CACHE)
        steps = sorted(r["config"]["steps"] for r in records)
        lengths += steps
        print(f"{split}: {len(records)} runs of {steps[0]}-{steps[-1]} steps "
              f"({time.perf_counter() - started:.0f} s incl. training)")
        results[split] = score(records)
        report(split, results[split])
    ok = all(r["macro_f1"] >= 0.9 and r["healthy_to_overfitting"] <= 0.02 for r in results.values())
    print(f"\ntargets (macro-F1 >= 0.9, healthy->overfitting <= 2%) on {' and '.join(results)}: "
          f"{'met' if ok else 'NOT met'}")
    if args.readme:
        if len(results) < 2:
            raise SystemExit("--readme needs both splits (no --split)")
        write_readme_row(readme_row(results, lengths))
        print("wrote the curve_verdicts row of README.md")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
