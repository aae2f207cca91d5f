"""Loss-curve diagnosis: healthy, overfitting, underfitting, unstable or non-finite, from logged losses.

Mini-batch losses are noisy, so the shape is read from block medians (robust to spikes), never from
single points. Spikes are sharp departures above a rolling median, judged against the local spread of
the residuals (their MAD), so neither a steady climb nor additive noise near a low floor counts.
Positions are training steps, not row indices: validation may be logged less often than training and
logging may be irregular; every position reported is a logged step.
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from explainer._diagnosis import Diagnosis

CURVES = ("healthy", "overfitting", "underfitting", "unstable", "non-finite")
MIN_TRAIN_POINTS = 12
MIN_VAL_POINTS = 5
TARGET_BLOCKS = 25
SPIKE_SIGMAS = 6.0          # a spike stands this many local robust standard deviations above the trend ...
SPIKE_FACTOR = 1.5          # ... at least this many times the trend's level ...
SPIKE_MIN_SHARE = 0.1       # ... and by at least this share of the starting loss
TREND_HALF = (3, 25)        # rolling-median half window: n // 50 points, within these bounds
MIN_SPIKES = 5              # fewer are a few hard batches, not instability
MIN_BUMPS = 2               # unstable when at least this many blocks climb back ...
BUMP_FACTOR = 1.3           # ... this many times above the lowest block before them ...
BUMP_SIGMAS = 3.0           # ... beyond what the block median's own noise explains ...
BUMP_MIN_SHARE = 0.1        # ... and by this share of the starting loss
DIVERGE_KEEP = 0.5          # unstable when the curve gives back this share of its drop ...
DIVERGE_RISE = 1.3          # ... and ends this many times above its best level
FIRST_RISE = 1.5            # unstable when a block median climbs this many times above the first logged loss ...
FIRST_RISE_SIGMAS = 3.0     # ... and beyond what that one point's noise explains
START_SIGMAS = 3.0          # the first logged loss is the start when it is this far from the next two's median
VAL_JUMP = 1.25             # unstable when one evaluation stands this many times above both its neighbours
UNDERFIT_DROP = 0.10        # a training loss that fell less than this fraction barely moved
OVERFIT_RISE = 0.15         # validation this far above its best (relative) ...
OVERFIT_SIGMAS = 3.0        # ... and beyond its own noise


@dataclass
class History:
    """Logged losses by step; validation has its own steps."""

    train_steps: list[float] = field(default_factory=list)
    train: list[float] = field(default_factory=list)
    val_steps: list[float] = field(default_factory=list)
    val: list[float] = field(default_factory=list)
    monitored: bool = False  # TrainingMonitor's figures (its history, or a log with its grad_norm column)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[float, float | None, float | None]], monitored: bool = False) -> "History":
        """rows of (step, train_loss or None, val_loss or None), sorted by step (stable)."""
        history = cls(monitored=monitored)
        for step, train, val in sorted(rows, key=lambda r: r[0]):
            if train is not None:
                history.train_steps.append(step)
                history.train.append(train)
            if val is not None:
                history.val_steps.append(step)
                history.val.append(val)
        return history


class CurveFileError(ValueError):
    """A curve file that cannot be read as step,train_loss[,val_loss] rows."""


def load_history(path: str | Path) -> History:
    """CSV with a header (step, train_loss, optional val_loss; empty cells allowed) or JSON lines."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    first = next((line for line in text.splitlines() if line.strip()), "")
    is_json = first.lstrip().startswith("{")
    rows = _json_rows(text) if is_json else _csv_rows(text)
    # The monitor's log is the only format here with a grad_norm figure: its curve needs no advice to use the monitor.
    monitored = '"grad_norm"' in first if is_json else "grad_norm" in first.split(",")
    return History.from_rows(rows, monitored=monitored)


def _number(value: Any, where: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return float(value)  # 'nan', 'inf' and '-inf' parse: non-finite losses are evidence
    except (TypeError, ValueError):
        raise CurveFileError(f"{where}: {str(value)[:40]!r} is not a number") from None


def _csv_rows(text: str) -> list[tuple[float, float | None, float | None]]:
    reader = csv.DictReader(text.splitlines())
    fields = [f.strip() for f in (reader.fieldnames or [])]
    if "train_loss" not in fields:
        raise CurveFileError(f"the CSV header must name step,train_loss[,val_loss]; it has {','.join(fields)}")
    rows = []
    for index, raw in enumerate(reader):
        row = {(k or "").strip(): v for k, v in raw.items()}
        where = f"line {index + 2}"
        step = _number(row.get("step"), where)
        rows.append((index if step is None else step, _number(row.get("train_loss"), where),
                     _number(row.get("val_loss"), where)))
    return rows


def _json_rows(text: str) -> list[tuple[float, float | None, float | None]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CurveFileError(f"line {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise CurveFileError(f"line {number}: each line must be a JSON object")
        where = f"line {number}"
        step = _number(record.get("step"), where)
        rows.append((len(rows) if step is None else step, _number(record.get("train_loss"), where),
                     _number(record.get("val_loss"), where)))
    return rows


@dataclass
class CurveReport:
    """The classification and its evidence; `curve` is None when there is not enough data."""

    curve: str | None
    rule: str
    facts: dict[str, Any]
    smooth_steps: list[float] = field(default_factory=list)
    smooth: list[float] = field(default_factory=list)
    spike_steps: list[float] = field(default_factory=list)
    val_smooth: list[float] = field(default_factory=list)


def classify(history: History) -> CurveReport:
    """Read the curve's shape; the first problem found wins: non-finite, unstable, overfitting, underfitting."""
    facts: dict[str, Any] = {"train_points": len(history.train), "val_points": len(history.val)}
    if not history.val:
        facts["no_validation"] = True
    if history.monitored:
        facts["monitored"] = True
    bad = _first_non_finite(history)
    if bad is not None:
        step, series, value = bad
        finite = [v for s, v in zip(history.train_steps, history.train) if s < step and math.isfinite(v)]
        facts.update(curve="non-finite", first_nonfinite_step=_num(step), nonfinite_series=series,
                     nonfinite_value=value, finite_steps_before=len(finite))
        if len(finite) >= 2 and min(finite) > 0 and finite[-1] > DIVERGE_RISE * min(finite):
            facts["growth_before"] = significant(finite[-1] / min(finite))
            facts["last_finite_loss"] = significant(finite[-1])
        return CurveReport("non-finite", "signal.non_finite", facts)

    steps, losses = history.train_steps, history.train
    if len(losses) < MIN_TRAIN_POINTS:
        facts.update(curve=None, needed_points=MIN_TRAIN_POINTS)
        return CurveReport(None, "signal.not_enough_data", facts)

    width = max(3, len(losses) // TARGET_BLOCKS)
    blocks = _blocks(steps, losses, width)
    smooth_steps = [b[0] for b in blocks]
    smooth = [b[1] for b in blocks]
    relative = min(losses) > 0
    levels = _rolling_median(losses, min(max(TREND_HALF[0], len(losses) // 50), TREND_HALF[1]), shrink=True)
    residuals = _residuals(losses, levels, relative)
    sigma = 1.4826 * statistics.median(abs(r) for r in residuals)
    start = _start_level(losses, sigma, relative)
    best_index = min(range(len(smooth)), key=smooth.__getitem__)
    best, end = smooth[best_index], smooth[-1]
    scale = max(abs(start), 1e-12)
    drop = (start - end) / scale
    spikes = _spikes(steps, losses, levels, residuals, start)
    facts.update(first_step=_num(steps[0]), last_step=_num(steps[-1]), start_loss=significant(start),
                 final_loss=significant(end), best_loss=significant(best), best_step=_num(smooth_steps[best_index]),
                 relative_drop_pct=_pct(drop), spikes=len(spikes),
                 noise_pct=_pct(sigma if relative else sigma / max(abs(end), 1e-12)))
    if spikes:
        facts["spike_steps"] = [_num(s) for s in spikes[:5]]
    report = CurveReport(None, "", facts, smooth_steps, smooth, spikes)

    if _unstable(history, report, sigma if relative else None, width, start):
        facts["curve"] = "unstable"
        report.curve, report.rule = "unstable", "signal.unstable"
        return report

    overfit = _overfitting(history, steps, losses, facts, report)
    if overfit:
        facts["curve"] = "overfitting"
        report.curve, report.rule = "overfitting", "signal.overfitting"
        return report

    if drop < UNDERFIT_DROP:
        facts["curve"] = "underfitting"
        report.curve, report.rule = "underfitting", "signal.underfitting"
        return report
    facts["curve"] = "healthy"
    report.curve, report.rule = "healthy", "signal.curve_healthy"
    return report


def _start_level(losses: list[float], sigma: float, relative: bool) -> float:
    """Where the loss began: the median of the first three logged losses, unless the first one differs from it
    by more than the noise explains; then the loss moved within those points (it blew up, or it fell to its
    floor while logging is sparse) and the first one, logged before most of that move, is the start."""
    first, median = losses[0], statistics.median(losses[:3])
    if relative:
        moved = abs(math.log(first / median)) > START_SIGMAS * sigma
    else:
        moved = abs(first - median) > START_SIGMAS * sigma
    return first if moved else median


def _unstable(history: History, report: CurveReport, sigma: float | None, width: int, start: float) -> bool:
    """Spikes throughout, a climb back after falling, whole blocks back up, a climb well above the first logged
    loss, or a validation loss that jumps up between evaluations and comes back down. Records the evidence."""
    facts, smooth, losses = report.facts, report.smooth, history.train
    best_index = min(range(len(smooth)), key=smooth.__getitem__)
    best, end = smooth[best_index], smooth[-1]
    fell = start - best
    gave_back = (end - best) / fell if fell > 0 else 0.0
    # Climbed back after falling, or ended well above where it started (it blew up within the first block).
    climbed_back = best_index < len(smooth) - 2 and best > 0 and end > DIVERGE_RISE * best and (
        fell <= 0 or gave_back >= DIVERGE_KEEP)
    rose = start > 0 and end > DIVERGE_RISE * start
    if climbed_back or rose:
        facts.update(_rise_facts(start, best, end, climbed_back))
    diverging = climbed_back or rose
    bumps = _bumps(report.smooth_steps, smooth, sigma, width, start)
    if bumps:
        facts["bump_steps"] = [_num(s) for s in bumps[:5]]
    peak = _rise_over_first(report.smooth_steps, smooth, losses[0], sigma)
    if peak is not None:
        facts.update(first_loss=significant(losses[0]), peak_loss=significant(peak[1]), peak_step=_num(peak[0]),
                     rise_over_first=significant(peak[1] / losses[0]))
    jumps = _val_jumps(history.val_steps, history.val, start)
    if jumps:
        facts["val_jump_steps"] = [_num(s) for s, _, _ in jumps[:5]]
        facts.update(val_jump_before=significant(jumps[0][1]), val_jump_to=significant(jumps[0][2]))
    spiky = len(report.spike_steps) >= max(MIN_SPIKES, len(losses) // 100)
    return spiky or diverging or len(bumps) >= MIN_BUMPS or peak is not None or bool(jumps)


def _rise_facts(start: float, best: float, end: float, climbed_back: bool) -> dict[str, Any]:
    """How far a diverging curve ended above its best level: a percentage when it climbed back part of the way,
    a factor when it grew by orders of magnitude, and, when its best is at its end (it rose from the start), the
    factor over where it started (a rise "0% above its best" says nothing)."""
    if not climbed_back:
        return {"rise_from_start_x": significant(end / start)}
    if end >= 10 * best:
        return {"rise_from_best_x": significant(end / best)}
    return {"rise_from_best_pct": _pct(end / best - 1)}


def _rise_over_first(steps: list[float], smooth: list[float], first: float,
                     sigma: float | None) -> tuple[float, float] | None:
    """(step, level) of the highest block when it stands well above the first logged loss: training that
    works never climbs far above where it began, while too large a step often throws the loss up within its
    first updates (before the first block's median can see the start). The bar allows for the noise of that
    single first point (sigma, in log space)."""
    if sigma is None or first <= 0:
        return None
    top = max(range(len(smooth)), key=smooth.__getitem__)
    if math.log(smooth[top] / first) > max(math.log(FIRST_RISE), FIRST_RISE_SIGMAS * sigma):
        return steps[top], smooth[top]
    return None


def _val_jumps(steps: list[float], vals: list[float], start: float) -> list[tuple[float, float, float]]:
    """(step, level before, value) of evaluations far above both neighbours: the validation set is fixed, so
    its loss moves only when the weights do; up and straight back down is a model thrown off and recovering,
    which overfitting (a steady climb) and mini-batch noise (not in validation) never show."""
    out = []
    for i in range(1, len(vals) - 1):
        around = max(vals[i - 1], vals[i + 1])
        if around > 0 and vals[i] > VAL_JUMP * around and vals[i] - around > BUMP_MIN_SHARE * abs(start):
            out.append((steps[i], vals[i - 1], vals[i]))
    return out


def _overfitting(history: History, steps: list[float], losses: list[float], facts: dict[str, Any],
                 report: CurveReport) -> bool:
    """Training still falls while validation bottomed out and rose again, beyond its own noise."""
    if len(history.val) < MIN_VAL_POINTS:
        return False
    vsteps, vals = history.val_steps, history.val
    smooth = [statistics.median(vals[max(0, i - 1): i + 2]) for i in range(len(vals))]
    report.val_smooth = smooth
    best_index = min(range(len(smooth)), key=smooth.__getitem__)
    best, final = smooth[best_index], smooth[-1]
    # Report the raw minimum among the points the smoothed minimum was taken from.
    best_step = vsteps[min(range(max(0, best_index - 1), min(len(vals), best_index + 2)), key=vals.__getitem__)]
    sigma = 1.4826 * statistics.median(abs(v - s) for v, s in zip(vals, smooth))
    rise = (final - best) / max(abs(best), 1e-12)
    facts.update(best_val_step=_num(best_step), best_val_loss=significant(best), final_val_loss=significant(final),
                 val_rise_pct=_pct(rise))
    if best_index >= len(smooth) - 1 or rise < OVERFIT_RISE or final - best < OVERFIT_SIGMAS * sigma:
        return False
    # Training must keep falling after validation's best: otherwise both are stuck or both got worse.
    width = max(3, len(losses) // TARGET_BLOCKS)
    # Training's level then is read from the losses logged up to that step: a model that memorised a small
    # set between two evaluations is already at its floor in the points just after.
    at_best = [v for s, v in zip(steps, losses) if s <= best_step][-width:] or losses[:1]
    later = [v for s, v in zip(steps, losses) if s > best_step][-width:]
    if len(later) < 2:
        return False
    train_then, train_now = statistics.median(at_best), statistics.median(later)
    facts["train_drop_after_best_pct"] = _pct((train_then - train_now) / max(abs(train_then), 1e-12))
    facts["gap"] = significant(final - train_now)
    return train_now < train_then


def _bumps(steps: list[float], smooth: list[float], sigma: float | None, width: int, start: float) -> list[float]:
    """Blocks whose median jumped well above the lowest block before them: the loss went back up for a
    whole block, not for one batch. The bar is a factor (BUMP_FACTOR) and, for noisy short curves, the
    spread a median of `width` noisy points has (BUMP_SIGMAS of it), in log space when losses are positive."""
    if sigma is None or len(smooth) < 4:
        return []
    bar = max(math.log(BUMP_FACTOR), BUMP_SIGMAS * 1.2533 * sigma / math.sqrt(width))
    # Both sides are medians of three neighbouring blocks: one low or high block is noise, not a level.
    levels = _rolling_median(smooth, 1, shrink=True)
    out, lowest = [], levels[0]
    for step, level in zip(steps[1:], levels[1:]):
        if lowest > 0 and level > 0 and math.log(level / lowest) > bar and level - lowest > BUMP_MIN_SHARE * abs(start):
            out.append(step)
        lowest = min(lowest, level)
    return out


def _first_non_finite(history: History) -> tuple[float, str, str] | None:
    found = []
    for name, steps, values in (("train_loss", history.train_steps, history.train),
                                ("val_loss", history.val_steps, history.val)):
        for step, value in zip(steps, values):
            if not math.isfinite(value):
                found.append((step, name, "nan" if math.isnan(value) else "inf"))
                break
    return min(found, key=lambda f: f[0]) if found else None


def _blocks(steps: list[float], losses: list[float], width: int) -> list[tuple[float, float]]:
    """(middle logged step, median loss) of consecutive blocks of width points; a short tail joins the last block."""
    bounds = list(range(0, len(losses), width))
    if len(bounds) > 1 and len(losses) - bounds[-1] < width:
        bounds.pop()
    out = []
    for i, lo in enumerate(bounds):
        hi = bounds[i + 1] if i + 1 < len(bounds) else len(losses)
        out.append((statistics.median_low(steps[lo:hi]), statistics.median(losses[lo:hi])))
    return out


def _rolling_median(values: list[float], half: int, *, shrink: bool = False) -> list[float]:
    """Centred median of 2*half+1 points. With shrink the window stays centred near the ends (so a steady
    climb is its own trend there); without it the window is cut at the ends.

    Both ends of the window only move forward, so one sorted window is kept and updated by bisection
    instead of sorting every window again (the training monitor runs this on the whole history at each
    check, so this loop is its largest cost)."""
    n, out = len(values), []
    window: list[float] = []
    insort, bisect_left = bisect.insort, bisect.bisect_left
    lo = hi = 0
    for i in range(n):
        h = half
        if shrink and (i < half or i + half >= n):
            h = i if i < n - 1 - i else n - 1 - i
        new_lo = i - h if i > h else 0
        new_hi = i + h + 1 if i + h < n else n
        while hi < new_hi:
            insort(window, values[hi])
            hi += 1
        while lo < new_lo:
            del window[bisect_left(window, values[lo])]
            lo += 1
        middle = len(window) >> 1
        out.append(window[middle] if len(window) & 1 else (window[middle - 1] + window[middle]) / 2)
    return out


def _residuals(losses: list[float], levels: list[float], relative: bool) -> list[float]:
    """Distance from the trend: in log space when every loss is positive, since mini-batch noise often scales
    with the loss (and additive noise near a floor is then compressed upwards, not amplified)."""
    if relative:
        return [math.log(v / level) for v, level in zip(losses, levels)]
    return [v - level for v, level in zip(losses, levels)]


def _spikes(steps: list[float], losses: list[float], levels: list[float], residuals: list[float],
            start: float) -> list[float]:
    """Points far above the trend: beyond the local noise (the MAD of nearby residuals), a multiple of the
    trend, and a visible share of the starting loss."""
    half = 2 * min(max(TREND_HALF[0], len(losses) // 50), TREND_HALF[1])
    spread = _rolling_median([abs(r) for r in residuals], half)
    out = []
    for step, value, level, residual, mad in zip(steps, losses, levels, residuals, spread):
        if (residual > max(SPIKE_SIGMAS * 1.4826 * mad, 1e-12) and value - level > SPIKE_MIN_SHARE * abs(start)
                and (level <= 0 or value > SPIKE_FACTOR * level)):
            out.append(step)
    return out


def analyze_history(history: History) -> Diagnosis:
    """The curve's Diagnosis (rule signal.*), with facts['curve'] one of CURVES or None."""
    from explainer.diagnose.explain import diagnose_signal

    report = classify(history)
    return diagnose_signal(report.rule, report.facts)


class Figure(float):
    """A measured figure: a float to JSON and arithmetic, shown in exponent form when large or small
    (`1.743e+08`, not `174300000.0`)."""

    __slots__ = ()

    def __str__(self) -> str:
        value = float(self)
        return f"{value:.4g}" if value and not 1e-4 <= abs(value) < 1e6 else repr(value)


def significant(value: float) -> float:
    """Four significant digits: evidence for people, not a copy of the log."""
    if not math.isfinite(value) or value == 0:
        return value
    return Figure(round(value, 3 - int(math.floor(math.log10(abs(value))))))


def _pct(fraction: float) -> float:
    return round(100 * fraction, 1)


def _num(step: float) -> int | float:
    return int(step) if float(step).is_integer() else step


def plot(history: History, report: CurveReport, out: str | Path, *, title: str | None = None) -> None:
    """A PNG of the curve with the diagnosis marked (matplotlib's Agg backend, no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5), dpi=100)
    axes = figure.subplots()
    finite = [(s, v) for s, v in zip(history.train_steps, history.train) if math.isfinite(v)]
    if finite:
        axes.plot([s for s, _ in finite], [v for _, v in finite], color="tab:blue", alpha=0.3 if report.smooth else 1.0,
                  lw=0.8, label="train loss")
    if report.smooth:
        axes.plot(report.smooth_steps, report.smooth, color="tab:blue", lw=2, label="train (block median)")
    vfinite = [(s, v) for s, v in zip(history.val_steps, history.val) if math.isfinite(v)]
    if vfinite:
        axes.plot([s for s, _ in vfinite], [v for _, v in vfinite], "o-", color="tab:orange", ms=3,
                  label="validation loss")
    facts = report.facts
    if report.spike_steps:
        lookup = dict(zip(history.train_steps, history.train))
        axes.plot(report.spike_steps, [lookup[s] for s in report.spike_steps], "x", color="red", ms=7,
                  label=f"spikes ({len(report.spike_steps)})")
    if "first_nonfinite_step" in facts:
        axes.axvline(facts["first_nonfinite_step"], color="red", ls="--",
                     label=f"first {facts['nonfinite_value']} at step {facts['first_nonfinite_step']}")
    if report.curve == "overfitting":
        axes.axvline(facts["best_val_step"], color="tab:orange", ls="--",
                     label=f"validation best at step {facts['best_val_step']}")
    values = [v for _, v in finite + vfinite]
    if values and min(values) > 0 and max(values) / min(values) > 30:
        axes.set_yscale("log")
    axes.set_xlabel("step")
    axes.set_ylabel("loss")
    word = report.curve or "not enough data"
    axes.set_title(title or f"loss curve: {word}")
    axes.grid(alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    figure.savefig(str(out), format="png", metadata={"Software": None})
