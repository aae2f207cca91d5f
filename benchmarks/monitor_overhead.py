"""Per-step cost of TrainingMonitor against a plain training step and torch.autograd.detect_anomaly.

    python benchmarks/monitor_overhead.py --readme   # the README's numbers, written into it
    python benchmarks/monitor_overhead.py --tiny --steps 2 --repeats 1 --warmup 1   # smoke run
    python benchmarks/monitor_overhead.py --models small_mlp small_cnn small_transformer mlp transformer \
        --clock cpu --repeats 7 --cost-readme         # the fixed cost per step, small and larger models

Whole training steps (forward, backward, optimizer step, and mon.step for the monitor) are timed.
A fourth variant does after backward only what the monitor's NaN guarantee needs at least: one fused
norm over every gradient, read back with the loss (the "read alone" column), so the monitor's cost can
be told apart from the cost of reading every gradient every step.
The variants of each model are identical copies that take turns step by step; a round is
50 steps of each (one monitor sync); step times are medians over rounds of the mean step time in
the round, and each ratio is the median of the per-round ratios. The larger models (ResNet-18 on
CIFAR-sized images, a six-layer language model) run rounds of 10 steps with the monitor reading
its figures every 10 steps, and 7 rounds.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import warnings

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import explainer  # noqa: E402
from explainer.rules.base import default_rulebase  # noqa: E402


def mlp(tiny: bool):
    width = 32 if tiny else 512
    model = nn.Sequential(nn.Linear(784, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
    batch = (torch.randn(8 if tiny else 128, 784), torch.randint(0, 10, (8 if tiny else 128,)))
    return model, batch, nn.CrossEntropyLoss()


def cnn(tiny: bool):
    c = 4 if tiny else 16
    model = nn.Sequential(
        nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c, 2 * c, 3, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(2 * c, 4 * c, 3, padding=1), nn.BatchNorm2d(4 * c), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(4 * c, 10))
    n = 4 if tiny else 16
    return model, (torch.randn(n, 3, 32, 32), torch.randint(0, 10, (n,))), nn.CrossEntropyLoss()


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int, dim: int, layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=4 * dim, batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens))).flatten(0, 1)


def transformer(tiny: bool):
    vocab, dim, layers = (50, 16, 1) if tiny else (1000, 128, 2)
    batch, seq = (2, 8) if tiny else (8, 64)
    tokens = torch.randint(0, vocab, (batch, seq))
    return TinyTransformer(vocab, dim, layers), (tokens, torch.randint(0, vocab, (batch * seq,))), nn.CrossEntropyLoss()


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) \
            if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return torch.relu(self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))) + self.shortcut(x))


def resnet18(tiny: bool):
    """ResNet-18 as trained on CIFAR (3x3 stem, no max-pool): 11.2 M parameters in 62 tensors."""
    widths = (8, 16, 32, 64) if tiny else (64, 128, 256, 512)
    layers: list[nn.Module] = [nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU()]
    cin = widths[0]
    for i, cout in enumerate(widths):
        layers += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 100)]
    n = 2 if tiny else 8
    return nn.Sequential(*layers), (torch.randn(n, 3, 32, 32), torch.randint(0, 100, (n,))), nn.CrossEntropyLoss()


def gpt(tiny: bool):
    """A six-layer encoder language model, dim 384: 13.8 M parameters in 75 tensors."""
    vocab, dim, layers = (50, 16, 1) if tiny else (4096, 384, 6)
    batch, seq = (2, 8) if tiny else (4, 64)
    tokens = torch.randint(0, vocab, (batch, seq))
    return TinyTransformer(vocab, dim, layers), (tokens, torch.randint(0, vocab, (batch * seq,))), nn.CrossEntropyLoss()


def small_mlp(tiny: bool):
    """The review's small MLP (32 -> 64 -> 64 -> 64 -> 4, batch 32): a step of well under a millisecond."""
    layers: list[nn.Module] = []
    width = 32
    for _ in range(3):
        layers += [nn.Linear(width, 64), nn.ReLU()]
        width = 64
    model = nn.Sequential(*layers, nn.Linear(64, 4))
    return model, (torch.randn(32, 32), torch.randint(0, 4, (32,))), nn.CrossEntropyLoss()


def small_cnn(tiny: bool):
    """The review's small CNN: two 3x3 convolutions (8, 16 channels) on 12x12 images, batch 32."""
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(16 * 3 * 3, 2))
    return model, (torch.randn(32, 1, 12, 12), torch.randint(0, 2, (32,))), nn.CrossEntropyLoss()


def small_transformer(tiny: bool):
    """The review's tiny transformer: vocabulary 20, dim 32, two encoder layers, sequences of 12, batch 32."""
    tokens = torch.randint(0, 20, (32, 12))
    return TinyTransformer(20, 32, 2), (tokens, torch.randint(0, 20, (32 * 12,))), nn.CrossEntropyLoss()


MODELS = {"small_mlp": small_mlp, "small_cnn": small_cnn, "small_transformer": small_transformer,
          "mlp": mlp, "cnn": cnn, "transformer": transformer, "resnet18": resnet18, "gpt": gpt}
# The larger models' steps take hundreds of ms on one thread: rounds of 10 steps with the monitor reading its
# figures every 10 steps (five times as often as its default, so its analysis weighs more, not less), fewer rounds.
LARGER = {"resnet18", "gpt"}
LARGER_SCHEDULE = {"steps": 10, "repeats": 7, "warmup": 3}
MODES = ("plain", "read", "monitor", "anomaly")
TARGET = 1.02  # the monitor's step against a plain one (issue 14)


def make_step(mode: str, model: nn.Module, batch, loss_fn, check_every: int):
    x, y = batch
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    monitor = explainer.TrainingMonitor(model, optimizer=optimizer, check_every=check_every, quiet=True) \
        if mode == "monitor" else None
    params = [p for p in model.parameters() if p.requires_grad]

    def step():
        optimizer.zero_grad(set_to_none=True)
        if mode == "anomaly":
            with torch.autograd.detect_anomaly(check_nan=True):
                loss = loss_fn(model(x), y)
                loss.backward()
        else:
            loss = loss_fn(model(x), y)
            loss.backward()
        if monitor is not None:
            monitor.step(loss)
        elif mode == "read":  # gradnorms.StepFigures.record's CPU read, alone
            torch.stack(torch._foreach_norm([p.grad for p in params if p.grad is not None])).tolist()
            loss.item()
        optimizer.step()

    return step, monitor


def bench(name: str, tiny: bool, steps: int, repeats: int, warmup: int, clock=time.perf_counter) -> dict[str, float]:
    """Median step time of each variant, and the median over rounds of each round's paired ratios."""
    torch.manual_seed(0)
    model, batch, loss_fn = MODELS[name](tiny)
    steppers, monitors = {}, []
    for mode in MODES:
        step, monitor = make_step(mode, copy.deepcopy(model), batch, loss_fn, check_every=min(steps, 50))
        steppers[mode] = step
        if monitor is not None:
            monitors.append(monitor)
        for _ in range(warmup):
            step()
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_ in range(repeats):
        spent = dict.fromkeys(MODES, 0.0)
        # The variants take turns step by step (rotating who goes first), so load from other jobs
        # hits all of them alike; a round includes one of the monitor's syncs.
        order = MODES[round_ % len(MODES):] + MODES[:round_ % len(MODES)]
        for _ in range(steps):
            for mode in order:
                start = clock()
                steppers[mode]()
                spent[mode] += clock() - start
        for mode in MODES:
            samples[mode].append(spent[mode] / steps)
    for monitor in monitors:
        monitor.close()
    out = {mode: statistics.median(values) for mode, values in samples.items()}
    out["cost"] = statistics.median(x - y for x, y in zip(samples["monitor"], samples["plain"]))
    for a, b in (("monitor", "plain"), ("read", "plain"), ("anomaly", "plain"), ("monitor", "anomaly")):
        out[f"{a}/{b}"] = statistics.median(x / y for x, y in zip(samples[a], samples[b]))
    return out


def verdict(ratios: dict[str, float]) -> str:
    """One sentence on the target, from the figures of this run."""
    met = [name for name, ratio in ratios.items() if ratio <= TARGET]
    missed = [f"{name} ({ratio:.3f})" for name, ratio in ratios.items() if ratio > TARGET]
    said = f"Target (monitor / plain at most {TARGET}) met in this run by: {', '.join(met) or 'none'}"
    return said + (f"; missed by: {', '.join(missed)}." if missed else ".")


def fixed_cost(costs: dict[str, float], ratios: dict[str, float]) -> str:
    """What the monitor adds per step, in ms, from this run: a fixed cost, so a short step pays more in ratio."""
    small = [name for name in costs if name.startswith("small_")]
    said = (f"The monitor's cost per step in this run: up to {max(costs.values()) * 1e3:.2f} ms (monitor minus plain, "
            "median over rounds; the column above per model, where a figure under 0 is the measure's noise)")
    if small:
        said += ("; on the small models, whose steps are short, that is a ratio of "
                 + ", ".join(f"{name} {ratios[name]:.3f}" for name in small))
    return said + "."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS),
                        default=[name for name in MODELS if not name.startswith("small_")])
    parser.add_argument("--steps", type=int, default=50, help="steps per timed round (default 50 = one monitor sync)")
    parser.add_argument("--repeats", type=int, default=21, help="timed rounds per variant; the median is reported")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps per variant first")
    parser.add_argument("--tiny", action="store_true", help="tiny models (a smoke run, not a measurement)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: steadier timings on a shared machine)")
    parser.add_argument("--readme", action="store_true", help="also write the table into README.md")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: the thread's CPU time (time.thread_time), steadier than wall time on a loaded machine")
    parser.add_argument("--cost-readme", action="store_true",
                        help="write the table and the fixed cost per step into README.md's cost section instead")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    default_rulebase()  # loaded once per process on the first diagnosis: not a per-step cost
    larger = ", ".join(sorted(LARGER & set(args.models)))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.steps} steps x {args.repeats} rounds"
          f" per variant, warm-up {args.warmup}" + (f" ({larger}: at most {LARGER_SCHEDULE['steps']} steps x "
          f"{LARGER_SCHEDULE['repeats']} rounds, warm-up {LARGER_SCHEDULE['warmup']}, a monitor read every round)"
          if larger else "") + "; medians (ratios: median of per-round ratios)")
    lines = ["| model | plain step | with monitor | monitor's cost per step | with detect_anomaly | monitor / plain "
             "| read alone / plain | anomaly / plain | monitor / anomaly |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    print(*lines, sep="\n")
    ratios, costs = {}, {}
    for name in args.models:
        schedule = {"steps": args.steps, "repeats": args.repeats, "warmup": args.warmup}
        if name in LARGER and not args.tiny:
            schedule = {key: min(value, LARGER_SCHEDULE[key]) for key, value in schedule.items()}
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
            t = bench(name, args.tiny, **schedule, clock=time.thread_time if args.clock == "cpu" else time.perf_counter)
        ratios[name] = t["monitor/plain"]
        costs[name] = t["cost"]
        lines.append(f"| {name} | {t['plain'] * 1e3:.2f} ms | {t['monitor'] * 1e3:.2f} ms | {t['cost'] * 1e3:.3f} ms "
                     f"| {t['anomaly'] * 1e3:.2f} ms "
                     f"| {t['monitor/plain']:.3f} | {t['read/plain']:.3f} | {t['anomaly/plain']:.2f} "
                     f"| {t['monitor/anomaly']:.3f} |")
        print(lines[-1], flush=True)
    lines += ["", verdict(ratios), "", fixed_cost(costs, ratios)]
    print(*lines[-3:], sep="\n")
    if args.readme or args.cost_readme:
        from readme import replace_section  # benchmarks/readme.py, beside this script

        if args.cost_readme:
            lines.insert(0, f"Clock: {'CPU time of the thread' if args.clock == 'cpu' else 'wall time'}; "
                            f"{args.steps} steps x {args.repeats} rounds per variant.\n")
        replace_section(f"benchmarks/monitor_overhead.py {'--cost-readme' if args.cost_readme else '--readme'}",
                        "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
