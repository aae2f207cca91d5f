"""How often TrainingMonitor's gradient signals are right, on small real training runs labelled from measurement.

    python benchmarks/gradient_signals.py                    # both splits with the shipped thresholds
    python benchmarks/gradient_signals.py --sweep            # thresholds tried on the tuning split only
    python benchmarks/gradient_signals.py --split tuning --limit 12 -v
    python benchmarks/gradient_signals.py --stalls           # stalls the learning rate does not explain

Scenarios and labels come from fixtures/gradients/generate.py: each run's label is what its own
per-layer gradient measurements show (never what the monitor said). Per label:

- vanishing: correct when `signal.vanishing_gradients` is raised by step 20;
- exploding: correct when `signal.exploding_gradients` is raised, or the NaN diagnosis says the
  gradients exploded first; "before NaN" counts the runs where it was said at a finite step;
- healthy, low_lr, small_even: a false alarm is any vanishing or exploding verdict (or a NaN one);
- borderline (a layer ratio between 1e-3 and 1e-2): listed, not scored.

`--stalls` runs fixtures/gradients/stalls.py instead (300-step runs, three seeds each, labelled from measured
weight changes and gradients): the optimizer holding other weights or lr 0 (`not_updated`), dead ReLU layers
(`dead`), `.grad` never zeroed (`accumulating`), a learning rate too low, healthy runs and an embedding model. Correct
is the label's own verdict, with no advice to raise the learning rate unless the label is `low_lr`; for healthy
runs, no alarm at all.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import explainer  # noqa: E402
from explainer.signals import monitor as _monitor  # noqa: E402

GEN = runpy.run_path(str(ROOT / "fixtures" / "gradients" / "generate.py"), run_name="gradients_generator")
QUIET = ("healthy", "low_lr", "small_even")
DEADLINE = 20


def evaluate(scenario, jump_factor: float = 100.0) -> dict:
    monitors = []

    def watch(model, optimizer):
        monitors.append(explainer.TrainingMonitor(model, optimizer=optimizer, jump_factor=jump_factor, quiet=True))
        return monitors[-1]

    measured = GEN["train"](scenario, watch=watch)
    diagnoses = monitors[0].diagnoses
    rules = [d.rule for d in diagnoses]
    vanish = next((d for d in diagnoses if d.rule == "signal.vanishing_gradients"), None)
    explode = next((d for d in diagnoses if d.rule == "signal.exploding_gradients"), None)
    nan = next((d for d in diagnoses if d.rule in ("signal.nan_located", "signal.non_finite")), None)
    label = measured.label
    said_explosion = explode is not None or (nan is not None and nan.facts.get("exploded_first"))
    before_nan = explode is not None and (measured.nonfinite_step is None
                                          or explode.facts["step"] < measured.nonfinite_step)
    if label == "vanishing":
        ok = vanish is not None and vanish.facts["step"] < DEADLINE
    elif label == "exploding":
        ok = bool(said_explosion)
    elif label in QUIET:
        ok = vanish is None and explode is None and nan is None
    else:
        ok = None
    return {"name": scenario.name, "label": label, "ok": ok, "rules": rules, "before_nan": before_nan,
            "ratio": measured.ratio, "growth": measured.growth,
            "vanish_step": vanish.facts["step"] if vanish else None,
            "explode_step": explode.facts["step"] if explode else None, "label_explode_step": measured.explode_step}


def run_split(split: str, limit: int, verbose: bool, jump_factor: float = 100.0) -> list[dict]:
    results = []
    for scenario in GEN["scenarios"](split)[:limit or None]:
        result = evaluate(scenario, jump_factor)
        results.append(result)
        if verbose or result["ok"] is False:
            mark = {True: "ok", False: "WRONG", None: "-"}[result["ok"]]
            print(f"  {mark:5s} {result['name']:34s} label={result['label']:10s} ratio={result['ratio']:.1e} "
                  f"growth={result['growth']:.1e} rules={','.join(result['rules']) or '-'}", flush=True)
    return results


def table(split: str, results: list[dict]) -> str:
    by_label: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_label[r["label"]].append(r)
    lines = [f"{split}: {len(results)} runs", "| label | runs | correct | false alarms | note |", "| --- | --- | --- | --- | --- |"]
    for label in GEN["LABELS"]:
        rows = by_label.get(label, [])
        if not rows:
            continue
        if label in QUIET:
            alarms = sum(1 for r in rows if not r["ok"])
            lines.append(f"| {label} | {len(rows)} | {len(rows) - alarms}/{len(rows)} quiet | {alarms} | |")
        elif label == "borderline":
            said = Counter(",".join(r["rules"]) or "nothing" for r in rows)
            lines.append(f"| {label} | {len(rows)} | not scored | - | monitor said: "
                         + "; ".join(f"{k} x{v}" for k, v in said.most_common()) + " |")
        else:
            good = sum(1 for r in rows if r["ok"])
            note = ""
            if label == "exploding":
                note = f"said at a finite step (before any NaN): {sum(r['before_nan'] for r in rows)}/{len(rows)}"
            if label == "vanishing":
                steps = sorted(r["vanish_step"] for r in rows if r["vanish_step"] is not None)
                note = f"verdict at step {steps[0]}-{steps[-1]}" if steps else ""
            lines.append(f"| {label} | {len(rows)} | {good}/{len(rows)} ({100 * good / len(rows):.0f}%) | - | {note} |")
    return "\n".join(lines)


def sweep(limit: int) -> None:
    """Thresholds tried on the tuning split only; the shipped ones are chosen from this table."""
    print("tuning split, threshold sweep: vanish ratio x jump factor")
    print("| vanish ratio | jump factor | vanishing correct | exploding correct | false alarms (quiet runs) |")
    print("| --- | --- | --- | --- | --- |")
    shipped = _monitor.VANISH_RATIO
    for ratio, jump in ((1e-2, 10.0), (3e-3, 30.0), (1e-3, 100.0), (3e-4, 300.0)):
        _monitor.VANISH_RATIO = ratio
        try:
            results = run_split("tuning", limit, False, jump)
        finally:
            _monitor.VANISH_RATIO = shipped
        vanish = [r for r in results if r["label"] == "vanishing"]
        explode = [r for r in results if r["label"] == "exploding"]
        quiet = [r for r in results if r["label"] in QUIET]
        print(f"| {ratio:g} | {jump:g} | {sum(r['ok'] for r in vanish)}/{len(vanish)} | "
              f"{sum(r['ok'] for r in explode)}/{len(explode)} | {sum(not r['ok'] for r in quiet)}/{len(quiet)} |",
              flush=True)


def review_cases(seeds: range, verbose: bool) -> tuple[int, int]:
    """Runs whose gradient norm is beyond max_grad_norm from the first step (measured here): an explosion must be
    said, never against a "healthy" median of those first steps nor with a clipping value scaled from them."""
    correct = total = 0
    for seed in seeds:
        torch.manual_seed(seed)
        model = GEN["ExplodingReluRNN"]()
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        mon = explainer.TrainingMonitor(model, optimizer=opt, quiet=True)
        gen = torch.Generator().manual_seed(3000 + seed)
        data = torch.randint(0, 20, (256, 12), generator=gen)
        first_norm = None
        for _ in range(6):
            idx = torch.randint(0, 256, (32,), generator=gen)
            loss = torch.nn.functional.cross_entropy(model(data[idx]), data[idx, 0] % 4)
            opt.zero_grad()
            loss.backward()
            if first_norm is None:
                first_norm = float(torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()])))
            mon.step(loss)
            opt.step()
        mon.close()
        if not first_norm > mon.max_grad_norm:
            continue
        said = [d for d in mon.diagnoses if d.rule == "signal.exploding_gradients" or d.facts.get("exploded_first")]
        text = " ".join(" ".join([d.summary, *d.fixes]) for d in said)
        ok = bool(said) and "healthy median" not in text and "healthy steps' norm" not in text
        correct, total = correct + ok, total + 1
        if verbose or not ok:
            print(f"  {'ok' if ok else 'WRONG':5s} review-rnn-1.6I-s{seed:<20d} first norm {first_norm:.3g} "
                  f"rules={','.join(d.rule for d in mon.diagnoses) or '-'}", flush=True)
    print(f"review cases (large from the first step): {correct}/{total} said without a healthy baseline")
    return correct, total


def stalls(verbose: bool) -> None:
    """The stall scenarios: one line per run when verbose, then a table by label."""
    fixture = runpy.run_path(str(ROOT / "fixtures" / "gradients" / "stalls.py"), run_name="stalls_fixture")
    by_label: dict[str, list[dict]] = defaultdict(list)
    for scenario in fixture["scenarios"]():
        result = fixture["evaluate"](scenario)
        by_label[result["label"]].append(result)
        if verbose or result["ok"] is False:
            mark = {True: "ok", False: "WRONG", None: "-"}[result["ok"]]
            print(f"  {mark:5s} {result['name']:28s} label={result['label']:13s} rules={','.join(result['rules']) or '-'}",
                  flush=True)
    print("| label | runs | correct | verdicts |", "| --- | --- | --- | --- |", sep="\n")
    for label, rows in by_label.items():
        good = sum(1 for r in rows if r["ok"])
        said = Counter(",".join(r["rules"]) or "nothing" for r in rows)
        scored = f"{good}/{len(rows)}" if all(r["ok"] is not None for r in rows) else "not scored"
        print(f"| {label} | {len(rows)} | {scored} | " + "; ".join(f"{k} x{v}" for k, v in said.most_common()) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", nargs="+", choices=("tuning", "heldout"), default=["tuning", "heldout"])
    parser.add_argument("--limit", type=int, default=0, help="first N scenarios of each split (a smoke run)")
    parser.add_argument("--sweep", action="store_true", help="try thresholds on the tuning split")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per run")
    parser.add_argument("--stalls", action="store_true", help="the stall scenarios (fixtures/gradients/stalls.py)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.stalls:
        stalls(args.verbose)
        return 0
    if args.sweep:
        sweep(args.limit)
        return 0
    print(f"torch {torch.__version__}; vanish ratio {_monitor.VANISH_RATIO:g}, jump factor 100")
    for split in args.split:
        start = time.perf_counter()
        results = run_split(split, args.limit, args.verbose)
        print(table(split, results))
        print(f"({time.perf_counter() - start:.0f} s)\n", flush=True)
        review_cases(range(3) if split == "tuning" else range(3, 6), args.verbose)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
