"""TrainingMonitor's exploding-gradient checks: a total norm far above its recent healthy level, and the facts
about the climb (since when, the norm history, the layer growing fastest, a clipping value)."""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, Any

from .curves import significant

if TYPE_CHECKING:
    import torch

EXPLODE_SINCE_FACTOR = 10.0   # an explosion is dated from the first step at 10x the healthy norm
EXPLODE_REF_SKIP = 3      # the healthy reference leaves out the latest steps, so a climb over a few steps shows
NORM_WINDOW = 20          # steps of total norm in the healthy reference
USUAL_CLIP = 1.0          # the clipping value advised where the run shows no healthy norm to scale one from


class ExplosionChecks:
    """Methods of TrainingMonitor (a mixin): they read its figures (steps, grad_norms, _group_window, ...)."""

    def _exploded_before(self, index: int, squares: list[float]) -> dict[str, Any] | None:
        """Facts about an explosion that led to the non-finite step: the norm climbed 10x+ over its healthy
        level in the steps just before (or was already reported)."""
        baseline = self._reference(index - 1) if index >= 2 else None
        last = self.grad_norms[index - 1] if index else math.nan
        reported = "signal.exploding_gradients" in self._raised
        climbed = baseline and math.isfinite(last) and last > EXPLODE_SINCE_FACTOR * baseline
        huge = math.isfinite(last) and last > self.max_grad_norm
        if not (reported or climbed or huge):
            return None
        facts = self._explosion_facts(index, baseline, squares)
        if "since_step" not in facts:
            since = index - 1
            while since > 0 and self.max_grad_norm < self.grad_norms[since - 1] < math.inf:
                since -= 1
            facts["since_step"] = self.steps[since]
        facts["max_grad_norm"] = significant(self.max_grad_norm)
        return facts

    def _raise_after_explosion(self, rule_id: str, facts: dict[str, Any], culprits: list[dict[str, Any]],
                               exploded: dict[str, Any]) -> None:
        """The NaN diagnosis, led by what the exploding-gradients rule says about the climb before it."""
        from explainer.diagnose.explain import diagnose_signal

        explosion = diagnose_signal("signal.exploding_gradients",
                                    dict(exploded, nan_step=facts["step"], step=facts["step"]))
        facts.update({f"exploded_{k}" if k in ("since_step", "norm_history", "median_grad_norm", "clip_to") else k:
                      v for k, v in exploded.items() if k not in facts})
        facts["exploded_first"] = True
        self._raised.add(rule_id)
        diagnosis = diagnose_signal(rule_id, facts, culprits=culprits)
        diagnosis.summary = f"{explosion.summary} {diagnosis.summary}"
        # The NaN rule leaves out its learning-rate and clipping advice under exploded_first: the explosion's says it.
        diagnosis.fixes = explosion.fixes + [f for f in diagnosis.fixes if f not in explosion.fixes]
        self._emit(diagnosis)

    def _reference(self, index: int) -> float | None:
        """The healthy total norm before step `index`: the median of the recent finite norms, leaving out the
        last few so that a climb over a few steps is measured against where it started."""
        window = [g for g in self.grad_norms[max(0, index - NORM_WINDOW):index] if math.isfinite(g)]
        return _healthy(window) if window else None

    def _check_exploding(self, start: int, chunk_squares: list[list[float]]) -> None:
        if "signal.exploding_gradients" in self._raised:
            return
        factor = min(self.jump_factor, EXPLODE_SINCE_FACTOR)
        for i in range(start, len(self.steps)):
            total = self.grad_norms[i]
            window = [g for g in self.grad_norms[max(0, i - NORM_WINDOW):i] if math.isfinite(g)]
            # Both tests below need total above factor x the median, which is at least the minimum.
            if not (window and total > factor * min(window)):
                continue
            baseline = _healthy(window)
            if not baseline > 0:
                continue
            # Large but steady norms are a scale, not an explosion: the absolute threshold needs a climb too.
            over = total > self.max_grad_norm and total > EXPLODE_SINCE_FACTOR * baseline
            jump = total > self.jump_factor * baseline
            if not (over or jump):
                continue
            facts = self._explosion_facts(i, baseline, chunk_squares[i - start])
            facts.update(step=self.steps[i], grad_norm=significant(total), max_grad_norm=significant(self.max_grad_norm))
            self._raise("signal.exploding_gradients", {k: v for k, v in facts.items() if v is not None})
            return

    def _explosion_facts(self, index: int, baseline: float | None, squares: list[float]) -> dict[str, Any]:
        """Since when the norm climbs, its recent history, the layer growing fastest and a clipping value."""
        # No healthy norm to scale a clipping value from (none logged, or large from the first step): a usual one.
        facts: dict[str, Any] = {"clip_to": USUAL_CLIP}
        first = max(0, index - 5)
        facts["norm_history"] = ", ".join(f"{self.steps[j]}: {significant(self.grad_norms[j])}" for j in range(first, index + 1))
        if self.optimizer is not None:
            facts["lr"] = _lr(self.optimizer)
        if baseline is None or baseline <= 0:
            return facts
        if baseline > self.max_grad_norm and index <= NORM_WINDOW:
            # The reference holds the run's first steps and is already beyond the threshold: it was never healthy.
            facts.update(start_grad_norm=significant(self.grad_norms[0]), first_step=self.steps[0])
        else:
            facts.update(median_grad_norm=significant(baseline), clip_to=significant(baseline * 2))
        total = self.grad_norms[index]
        if math.isfinite(total):
            facts["jump_orders"] = round(math.log10(total / baseline), 1)
        since = index
        while since > 0 and math.isfinite(self.grad_norms[since - 1]) and \
                self.grad_norms[since - 1] > EXPLODE_SINCE_FACTOR * baseline:
            since -= 1
        facts["since_step"] = self.steps[since]
        rows = list(self._group_window)
        offset = len(self.steps) - len(rows)
        reference = [r for r in rows[max(0, index - NORM_WINDOW - offset):max(0, since - offset)]
                     if all(math.isfinite(v) for v in r)]
        if not (squares and reference):
            largest = max(range(len(squares)), key=squares.__getitem__) if squares else None
            growth = None
        else:
            before = [statistics.median(col) for col in zip(*reference)]
            growth = [s / b if b > 0 else (math.inf if s > 0 else 0.0) for s, b in zip(squares, before)]
            # Among the layers carrying a real share of the norm, the one whose norm grew the most.
            share = [g for g in range(len(squares)) if squares[g] >= 1e-2 * max(squares)]
            largest = max(share, key=lambda g: growth[g]) if share else None
        if largest is not None:
            facts["largest_group"] = self.group_names[largest] or "(root)"
            facts["largest_type"] = self.group_types[largest]
            facts["largest_group_norm"] = significant(math.sqrt(squares[largest])) if math.isfinite(squares[largest]) else None
            facts["largest_params"] = ", ".join(self.group_params[largest][:4])
            if growth is not None and math.isfinite(growth[largest]) and growth[largest] > 0:
                facts["largest_growth_orders"] = round(0.5 * math.log10(growth[largest]), 1)
        return facts


def _healthy(values: list[float]) -> float:
    """Median of a window of norms, leaving out its latest few when there are enough before them."""
    if len(values) > EXPLODE_REF_SKIP + 1:
        values = values[:-EXPLODE_REF_SKIP]
    return statistics.median(values)


def _lr(optimizer: torch.optim.Optimizer) -> float | None:
    groups = getattr(optimizer, "param_groups", None) or []
    value = groups[0].get("lr") if groups else None
    try:
        return float(value)  # a float, or a 0-d tensor for a tensor learning rate
    except (TypeError, ValueError, RuntimeError):
        return None


