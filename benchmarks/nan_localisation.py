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


# -- the second new user's review cases (defects 3 and 5): layers with no forward of the user's, a NaN made by the
# loss's forward, weights so large that the outputs overflow the loss. Each seed trained twice, as above: once with
# the labeller's hooks, once under the monitor.

def _review_model(kind: str, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        model[2].weight.mul_({"seq_overflow": 3e37, "weights_1e38": 1e38}.get(kind, 1.0))
    return model


def _review_loss(kind: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if kind == "loss_div0":  # the review's div0: a std multiplied by 0 in the loss expression
        return torch.nn.functional.cross_entropy(out / (out.std(1, keepdim=True) * 0), y)
    return torch.nn.functional.cross_entropy(out, y)


def _review_train(kind: str, seed: int, on_step, hook) -> int | None:
    model = _review_model(kind, seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hook(model, opt)
    gen = torch.Generator().manual_seed(seed)
    for step in range(4):
        x, y = torch.randn(32, 8, generator=gen), torch.randint(0, 4, (32,), generator=gen)
        loss = _review_loss(kind, model(x), y)
        opt.zero_grad()
        loss.backward()
        on_step(step, loss)
        if not torch.isfinite(loss) or any(not bool(torch.isfinite(p.grad).all()) for p in model.parameters()):
            return step
        opt.step()
    return None


def review_cases(seeds: range, verbose: bool) -> tuple[int, int]:
    """Localised as above, and said right: the place is never the monitor's own `step` line, a loss made non-finite
    by its forward is not blamed on a backward, and an overflow is never told to add an eps."""
    correct = total = 0
    for kind in ("seq_overflow", "loss_div0", "weights_1e38"):
        for seed in seeds:
            labeller, box = GEN["Labeller"](), {}

            def on_label_step(step, loss):
                box["loss_finite"] = bool(torch.isfinite(loss))

            step = _review_train(kind, seed, on_label_step, labeller.attach)
            if step is None:
                continue
            if labeller.forward is not None:
                label = dict(step=step, stage="forward", **labeller.forward)
            else:
                label = dict(step=step, stage="loss" if not box["loss_finite"] else "backward", module=None)
            _review_train(kind, seed, lambda _, loss: box["mon"].step(loss),
                          lambda model, opt: box.update(mon=explainer.TrainingMonitor(model, optimizer=opt, quiet=True)))
            box["mon"].close()
            d = next((d for d in box["mon"].diagnoses if d.rule in ("signal.nan_located", "signal.non_finite")), None)
            ok, why = judge(label, d.facts if d else None, d.rule if d else None) if label["stage"] != "backward" \
                else (d is not None, "backward")
            if ok and d is not None:
                text = " ".join([d.summary, *d.fixes])
                if ".step(loss)" in str(d.facts.get("op_place", "")):
                    ok, why = False, f"op_place is the monitor's step line: {d.facts['op_place']}"
                elif label["stage"] == "loss" and ("loss's backward" in text or "backward pass made it" in text):
                    ok, why = False, "a non-finite loss blamed on a backward"
                elif "Guard" in text and "eps" in text and (d.facts.get("op_overflow") or d.facts.get("loss_overflow")
                                                            or d.facts.get("backward_overflow")):
                    ok, why = False, "an overflow told to add an eps"
            correct, total = correct + ok, total + 1
            if verbose or not ok:
                print(f"  {'ok  ' if ok else 'MISS'} review-{kind}-s{seed}: label {label}" + ("" if ok else f"; {why}"))
    print(f"review cases: {correct}/{total}")
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
    results.append(review_cases(range(4) if args.split != "held_out" else range(4, 8), args.verbose))
    correct = sum(c for c, _ in results)
    total = sum(t for _, t in results)
    print(f"all: {correct}/{total} ({100 * correct / max(total, 1):.1f}%) in {time.perf_counter() - start:.0f}s")
    return 0 if total and correct / total >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
