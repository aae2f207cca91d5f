"""TrainingMonitor: cheap per-step figures (loss, gradient norms by layer) and diagnoses from them.

    mon = explainer.TrainingMonitor(model, optimizer=opt)
    for x, y in loader:
        loss = loss_fn(model(x), y)
        opt.zero_grad(); loss.backward()
        mon.step(loss)                  # after backward, before opt.step()
        opt.step()
    mon.diagnoses                       # Diagnosis objects so far

Per step: one fused gradient-norm read (see `_gradnorms`); on CPU it is read at once, which is also
the finiteness check, so a NaN is localised at the step that made it, before the optimizer writes it
into the weights. The analysis runs when the figures are read, every `check_every` steps.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from explainer._diagnosis import Diagnosis

from .curves import History, classify, significant
from .explosion import EXPLODE_SINCE_FACTOR, NORM_WINDOW, ExplosionChecks, _healthy, _lr
from .gradnorms import SPARSE_TYPES, LayerGroups, StepFigures
from .monitor_log import FigureLog
from .places import user_caller
from .stalls import accumulating, dead_facts, model_activations, optimizer_gap

if TYPE_CHECKING:
    import torch

VANISH_RATIO = 1e-3       # early layers' gradient RMS this far below the later layers' ...
EARLY_SYNCS = (20,)       # an extra read of the figures, so a short run gets its gradient verdict by step 20
MIN_VANISH_ROWS = 3       # steps of per-layer norms a vanishing verdict needs
MIN_WEIGHT_LAYERS = 3     # a verdict about "early against late" layers needs at least this many
MIN_UPDATE_RATIO = 1e-4   # ... or updates this small against the weights: the loss is stuck for a reason
HEALTHY_UPDATE_RATIO = 1e-3
GROUP_WINDOW = 200


class TrainingMonitor(ExplosionChecks):
    """Watches a training loop through `step(loss)` calls and raises Diagnosis objects.

    The monitor keeps a reference to the latest inputs of `model`'s forward with gradients enabled (a
    forward pre-hook on the root module, no copies) so that on a non-finite step it can re-run that forward with temporary
    hooks and name the first module whose output is NaN/Inf. The latest batch therefore stays alive
    until the next forward; pass `capture_inputs=False` to turn this off.
    """

    def __init__(self, model: torch.nn.Module, *, optimizer: torch.optim.Optimizer | None = None,
                 check_every: int = 50, log_path: str | Path | None = None,
                 on_diagnosis: Callable[[Diagnosis], Any] | None = None, max_grad_norm: float = 1e3,
                 jump_factor: float = 100.0, patience: int = 200, capture_inputs: bool = True,
                 measure_updates: bool = True, quiet: bool = False):
        import torch

        if check_every < 1:
            raise ValueError("check_every must be at least 1")
        self.model = model
        self.optimizer = optimizer
        self.check_every = int(check_every)
        self.on_diagnosis = on_diagnosis
        self.quiet = quiet
        self.max_grad_norm = float(max_grad_norm)
        self.jump_factor = float(jump_factor)
        self.patience = int(patience)
        self.measure_updates = measure_updates
        self.diagnoses: list[Diagnosis] = []

        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._modules = dict(model.named_modules())
        layers = LayerGroups.of(named, self._modules)
        self.group_names, self.group_types, self.group_params = layers.names, layers.types, layers.params
        self._group_of, self._group_numel, self._weight_groups = layers.group_of, layers.numel, layers.weight_groups
        device = self._params[0].device if self._params else torch.device("cpu")
        self._figures = StepFigures(self._params, layers.group_of, len(layers.names), self.check_every, device)
        self._pending_steps: list[int] = []
        self._count = 0

        self.steps: list[int] = []
        self.losses: list[float] = []
        self.grad_norms: list[float] = []
        self.val_steps: list[int] = []
        self.val_losses: list[float] = []
        self._new_val: list[tuple[int, float]] = []
        self._group_window: deque[list[float]] = deque(maxlen=GROUP_WINDOW)
        self._recent_sq: deque[float] = deque(maxlen=NORM_WINDOW)  # eager path: squared total norms
        self._early_syncs = {n for n in EARLY_SYNCS if n < self.check_every}
        self._snapshot: list[torch.Tensor] | None = None
        self._update_sq: tuple[torch.Tensor, torch.Tensor] | None = None
        self.update_ratio: float | None = None
        # The parameter change costs a copy of the weights: measured only once the loss looks stuck.
        self._want_update = False
        self._raised: set[str] = set()
        self._stopped = False
        self._analysed_at = 0

        self._inputs: tuple[tuple, dict] | None = None
        self._call_site: tuple[str, int] | None = None  # (file, line) of the user's code that called the model
        self._hook = model.register_forward_pre_hook(self._capture, with_kwargs=True) if capture_inputs else None
        self._log = FigureLog(Path(log_path)) if log_path is not None else None

    # -- hot path -------------------------------------------------------------------------------

    def _capture(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        import torch

        # Evaluation forwards run under no_grad: the step to re-check is the last one that trains.
        if torch.is_grad_enabled():
            self._inputs = (args, kwargs)
            self._call_site = user_caller(sys._getframe(1))

    def step(self, loss: torch.Tensor | float, step: int | None = None) -> None:
        """Record this step's loss and gradient norms; call after `loss.backward()`."""
        current = self._count if step is None else int(step)
        self._count = current + 1
        row = self._figures.record(loss)
        self._pending_steps.append(current)
        if self._snapshot is not None:
            self._measure_update()
        # Reads stay on the multiples of check_every after the early ones, so the schedule is the same
        # for every run length.
        if self._figures.pending == self.check_every or self._count % self.check_every == 0 \
                or self._count in self._early_syncs or (row is not None and self._suspicious(row)):
            self._sync()
        if self._want_update and not self._stopped and (self._figures.pending == self.check_every - 1
                                                        or (self._count + 1) % self.check_every == 0):
            import torch

            with torch.no_grad():
                self._snapshot = torch._foreach_mul([p.detach() for p in self._params], 1.0)

    def _suspicious(self, row: list[float]) -> bool:
        """On CPU, this step's figures just read: non-finite, or a total norm far above the recent ones."""
        total_sq = math.fsum(row[1:])
        if not math.isfinite(row[0] + total_sq):
            return True
        recent = self._recent_sq
        jump = False
        factor = min(self.jump_factor, EXPLODE_SINCE_FACTOR) ** 2
        # The median is at least the minimum: most steps are settled by the minimum alone.
        if recent and total_sq > factor * min(recent) and "signal.exploding_gradients" not in self._raised:
            jump = total_sq > factor * _healthy(list(recent))
        recent.append(total_sq)
        return jump

    def _measure_update(self) -> None:
        """Parameter change over the last optimizer step, against the weights: squared norms by group."""
        import torch

        with torch.no_grad():
            current = [p.detach() for p in self._params]
            deltas = torch._foreach_sub(current, self._snapshot)
            delta_sq = torch.stack(torch._foreach_norm(deltas)).to(torch.float64).square()
            weight_sq = torch.stack(torch._foreach_norm(self._snapshot)).to(torch.float64).square()
            self._update_sq = (self._figures.fold(delta_sq), self._figures.fold(weight_sq))
        self._snapshot = None

    def validation(self, val_loss: torch.Tensor | float, step: int | None = None) -> None:
        """Record a validation loss (at the last training step unless step is given)."""
        import torch

        value = float(val_loss.detach()) if isinstance(val_loss, torch.Tensor) else float(val_loss)
        at = max(self._count - 1, 0) if step is None else int(step)
        self._new_val.append((at, value))

    # -- analysis at sync ----------------------------------------------------------------------

    def check(self) -> list[Diagnosis]:
        """Read the figures now and run every check; returns the diagnoses raised by this call."""
        before = len(self.diagnoses)
        self._sync(force_curve=True)
        return self.diagnoses[before:]

    def _sync(self, force_curve: bool = False) -> None:
        rows = self._figures.take()
        steps, self._pending_steps = self._pending_steps, []
        update = None
        if self._update_sq is not None:
            delta_sq, weight_sq = (t.tolist() for t in self._update_sq)
            self._update_sq = None
            if sum(weight_sq) > 0:
                update = math.sqrt(sum(delta_sq) / sum(weight_sq))
        if update is not None:
            self.update_ratio = update
            self._want_update = False
            force_curve = True
        chunk_start = len(self.steps)
        chunk_squares = [row[1:] for row in rows]
        for step, row, squares in zip(steps, rows, chunk_squares):
            total = math.sqrt(sum(squares)) if all(math.isfinite(s) for s in squares) else _bad(squares)
            self.steps.append(step)
            self.losses.append(row[0])
            self.grad_norms.append(total)
            self._group_window.append(squares)
        new_val, self._new_val = self._new_val, []
        for step, value in new_val:
            self.val_steps.append(step)
            self.val_losses.append(value)
        if self._log is not None:
            self._log.write(self.steps[chunk_start:], self.losses[chunk_start:], self.grad_norms[chunk_start:],
                            new_val)
        if self._stopped:
            return
        for i in range(chunk_start, len(self.steps)):
            if not (math.isfinite(self.losses[i]) and math.isfinite(self.grad_norms[i])):
                if i == len(self.steps) - 1 and self._norm_overflowed(i, chunk_squares[i - chunk_start]):
                    break  # the gradients are finite, only their float32 norm was not: an explosion
                self._non_finite(i, chunk_squares[i - chunk_start], detected_at=steps[-1])
                return
        self._check_exploding(chunk_start, chunk_squares)
        self._check_vanishing(chunk_squares)
        due = len(self.steps) - self._analysed_at >= max(self.check_every, len(self.steps) // 20)
        if force_curve or due:
            self._analysed_at = len(self.steps)
            self._check_curve()

    def _norm_overflowed(self, index: int, squares: list[float]) -> bool:
        """A finite loss with every gradient finite but a non-finite float32 norm: recompute the norms in
        float64 (once, on this step) and keep them."""
        import torch

        if not math.isfinite(self.losses[index]):
            return False
        grads = [(n, p.grad) for n, p in zip(self._names, self._params)]
        with torch.no_grad():
            # Element-wise, not through a float32 norm (which is what overflowed).
            if not all(bool(torch.isfinite(g).all()) for _, g in grads if g is not None):
                return False
            exact = [float(g.detach().double().norm()) ** 2 if g is not None else 0.0 for _, g in grads]
        group = [0.0] * len(self.group_names)
        for layer, value in zip(self._group_of, exact):
            group[layer] += value
        squares[:] = group
        self.grad_norms[index] = math.sqrt(sum(group))
        self._group_window[-1] = group
        return math.isfinite(self.grad_norms[index])

    def _non_finite(self, index: int, squares: list[float], detected_at: int) -> None:
        from .nanloc import locate

        step, loss, total = self.steps[index], self.losses[index], self.grad_norms[index]
        bad_loss, bad_grad = not math.isfinite(loss), not math.isfinite(total)
        what = "loss and gradients" if bad_loss and bad_grad else "loss" if bad_loss else "gradients"
        value = loss if bad_loss else total
        facts: dict[str, Any] = {"step": step, "what": what, "value": "nan" if math.isnan(value) else "inf"}
        if detected_at != step:
            facts["detected_at_step"] = detected_at
        if bad_grad and not bad_loss:
            bad_groups = [self.group_names[g] for g, s in enumerate(squares) if not math.isfinite(s)]
            if bad_groups:
                facts["nonfinite_groups"] = bad_groups[:10]
        found = locate(self.model, *(self._inputs if self._inputs else (None, None)), loss_finite=not bad_loss,
                       call_site=self._call_site)
        facts.update(found["facts"], monitored=True)
        if self.optimizer is not None:
            facts["lr"] = _lr(self.optimizer)
        self._stopped = True
        rule_id = "signal.nan_located" if "module" in facts else "signal.non_finite"
        exploded = self._exploded_before(index, squares)
        if exploded is None:
            self._raise(rule_id, facts, found["culprits"])
            return
        self._raise_after_explosion(rule_id, facts, found["culprits"], exploded)

    def _check_vanishing(self, chunk_squares: list[list[float]]) -> None:
        """Early layers' gradient RMS orders of magnitude below the last layers', from the steps just read."""
        if self._raised & STUCK or len(self._weight_groups) < MIN_WEIGHT_LAYERS:
            return
        if len(self.steps) - len(chunk_squares) >= EARLY_SYNCS[-1]:
            return  # later on, vanishing is judged with the loss (`_stuck`): a dying layer is not always this
        recent = list(self._group_window)[-max(len(chunk_squares), EARLY_SYNCS[-1]):]
        rows = [r for r in recent if all(math.isfinite(v) for v in r)]
        if len(rows) < MIN_VANISH_ROWS:
            return
        rms = [math.sqrt(statistics.fmean(r[g] for r in rows) / max(self._group_numel[g], 1))
               for g in self._weight_groups]
        found = vanishing_layers(rms)
        if found is None:
            return
        low, late = found
        groups = self._weight_groups
        early, last = groups[low[0]], groups[late]
        facts: dict[str, Any] = {
            "step": self.steps[-1], "steps_measured": len(rows),
            "early_group": self.group_names[early] or "(root)", "early_type": self.group_types[early],
            "early_grad_rms": significant(rms[low[0]]), "late_group": self.group_names[last] or "(root)",
            "late_type": self.group_types[last], "late_grad_rms": significant(rms[late]),
            "grad_ratio": significant(rms[low[0]] / rms[late]), "orders": round(math.log10(rms[late] / min(rms[i] for i in low if rms[i] > 0)), 1),
            "vanishing_count": len(low), "weight_layers": len(groups),
            "vanishing_layers": ", ".join(self.group_names[groups[i]] or "(root)" for i in low[:6])
                                + (", ..." if len(low) > 6 else ""),
            "vanishing_params": ", ".join(n for i in low[:3] for n in self.group_params[groups[i]])
                                + (", ..." if len(low) > 3 else ""),
            "recurrent": any(self.group_types[groups[i]] in RECURRENT_TYPES for i in low),
            **model_activations(self._modules)}
        if self.optimizer is not None:
            facts["lr"] = _lr(self.optimizer)
        self._raise("signal.vanishing_gradients", facts)

    def _check_curve(self) -> None:
        report = classify(self.history)
        facts = dict(report.facts)
        if report.curve in ("unstable", "overfitting") and report.rule not in self._raised:
            if self.optimizer is not None:
                facts["lr"] = _lr(self.optimizer)
            if report.curve == "unstable" and self._accumulating(facts):
                self._raised.add(report.rule)  # the swings are the accumulated gradient's: said once, as that
                return
            self._raise(report.rule, facts)
        elif report.curve == "underfitting" and len(self.steps) >= self.patience and not self._raised & STUCK:
            self._stuck(facts)

    def _stuck(self, facts: dict[str, Any]) -> None:
        """The loss barely moves: weights the optimizer cannot move, dead layers, accumulating gradients, vanishing
        gradients, a learning rate too low, or neither (capacity, signal)."""
        if self.optimizer is not None:
            facts["lr"] = _lr(self.optimizer)
        if self.update_ratio is not None:
            facts["update_ratio"] = significant(self.update_ratio)
        if self._not_updated(facts) or self._dead(facts) or self._accumulating(facts):
            return
        rms = self.group_grad_rms()
        types = dict(zip(self.group_names, self.group_types))
        # Embedding tables get a gradient on the rows a batch used only: their per-element RMS is not comparable.
        flowing = [(name, value) for name, value in rms.items() if value > 0 and types[name] not in SPARSE_TYPES]
        if len(flowing) >= 2:
            early_name, early = flowing[0]
            late_name, late = max(flowing[max(1, len(flowing) // 2):], key=lambda item: item[1])
            ratio = early / late
            facts.update(early_group=early_name or "(root)", early_type=types[early_name],
                         early_grad_rms=significant(early), late_group=late_name or "(root)",
                         late_type=types[late_name], late_grad_rms=significant(late), grad_ratio=significant(ratio))
            if ratio < VANISH_RATIO:
                facts["orders"] = round(math.log10(late / early), 1)
                facts.update(model_activations(self._modules))
                self._raise("signal.vanishing_gradients", facts)
                return
        if self.update_ratio is None and self.measure_updates:
            self._want_update = True  # decide at the next check, with the update measured
            return
        if self.update_ratio is not None and self.update_ratio < MIN_UPDATE_RATIO:
            factor = min(1000.0, HEALTHY_UPDATE_RATIO / max(self.update_ratio, 1e-12))
            facts["lr_factor"] = _round1(factor)
            if facts.get("lr"):
                facts["suggested_lr"] = _round1(facts["lr"] * factor)
            self._raise("signal.lr_too_low", facts)
            return
        self._raise("signal.underfitting", facts)

    def _not_updated(self, facts: dict[str, Any]) -> bool:
        """The optimizer cannot move the watched weights (holds none of them, or at lr 0), or they did not move."""
        gap = optimizer_gap(self.optimizer, self._names, self._params) if self.optimizer is not None else None
        if gap is None and self.update_ratio != 0.0:
            return False
        facts.update(gap or {"case": "no_change"})
        self._raise("signal.weights_not_updated", facts)
        return True

    def _dead(self, facts: dict[str, Any]) -> bool:
        """Early layers whose gradient is exactly zero while later ones get one: dead or saturated units."""
        found = dead_facts(self.group_grad_rms(), self.group_types, self._group_of, self._names, self._params)
        if found is None:
            return False
        facts.update(found)
        self._raise("signal.dead_layers", facts)
        return True

    def _accumulating(self, facts: dict[str, Any]) -> bool:
        """The gradient norm climbs about linearly step after step: `.grad` is never zeroed."""
        if "signal.grad_accumulation" in self._raised:
            return True
        found = accumulating(self.steps, self.grad_norms)
        if found is None:
            return False
        facts.update(found)
        self._raise("signal.grad_accumulation", facts)
        return True

    def _raise(self, rule_id: str, facts: dict[str, Any], culprits: list[dict[str, Any]] | None = None) -> None:
        from explainer.diagnose.explain import diagnose_signal

        self._raised.add(rule_id)
        self._emit(diagnose_signal(rule_id, facts, culprits=culprits))

    def _emit(self, diagnosis: Diagnosis) -> None:
        """Keep a new diagnosis and hand it on: to on_diagnosis, else printed once to stderr as a crash's is."""
        self.diagnoses.append(diagnosis)
        if self.on_diagnosis is not None:
            self.on_diagnosis(diagnosis)
        elif not self.quiet:
            _print(diagnosis)

    # -- reading back --------------------------------------------------------------------------

    @property
    def history(self) -> History:
        """Everything synced so far, in the shape `explainer curves` reads."""
        return History(list(self.steps), list(self.losses), list(self.val_steps), list(self.val_losses), monitored=True)

    def group_grad_rms(self) -> dict[str, float]:
        """Mean gradient RMS per element, by layer (the module owning the parameters), over recent steps."""
        rows = [r for r in self._group_window if all(math.isfinite(v) for v in r)]
        if not rows:
            return {}
        means = [sum(r[g] for r in rows) / len(rows) for g in range(len(self.group_names))]
        return {name: math.sqrt(m / max(n, 1)) for name, m, n in zip(self.group_names, means, self._group_numel)}

    def curve(self) -> Diagnosis:
        """The loss curve's diagnosis so far (healthy included), after reading the figures."""
        from .curves import analyze_history

        self._sync()
        return analyze_history(self.history)

    def close(self) -> None:
        """Read the last figures, close the log file and remove the input hook; the monitor stays readable
        (`curve()`, `diagnoses`) and later calls do not raise."""
        self._sync(force_curve=True)
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        self._inputs = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "TrainingMonitor":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


STUCK = {"signal.vanishing_gradients", "signal.lr_too_low", "signal.underfitting", "signal.weights_not_updated",
         "signal.dead_layers", "signal.grad_accumulation"}
RECURRENT_TYPES = {"RNN", "LSTM", "GRU"}


def vanishing_layers(rms: list[float], ratio: float = VANISH_RATIO) -> tuple[list[int], int] | None:
    """Given weight layers' gradient RMS in model order: (the layers at or below ratio x the largest of the last
    third, that largest one) when the first layer is among them; None when the gradient is even enough."""
    late_start = len(rms) - max(1, len(rms) // 3)
    late = max(range(late_start, len(rms)), key=rms.__getitem__)
    top = rms[late]
    low = [i for i in range(late_start) if rms[i] <= ratio * top]
    # An exactly-zero gradient counts (it underflowed) only next to layers that show the decay: a first layer
    # that no gradient reaches at all (unused, detached) is another problem.
    if not (top > 0 and low and low[0] == 0 and any(rms[i] > 0 for i in low)):
        return None
    return low, late


def _print(diagnosis: Diagnosis) -> None:
    import sys

    from explainer.diagnose.render import choose_format, format_notice, internal_failure_line, render

    stream = sys.stderr
    try:
        try:
            text = render(diagnosis, choose_format(None), stream) + format_notice(None)
        except Exception as exc:  # the explainer's own failure: one line, and training goes on
            text = internal_failure_line(exc, "diagnosis kept in mon.diagnoses, not printed")
        stream.write(text)
        stream.flush()
    except (AttributeError, OSError, ValueError):
        pass  # no usable stderr (closed, None): it stays in mon.diagnoses


def _round1(value: float) -> float:
    """One significant digit: a suggested setting, not a measurement."""
    rounded = float(f"{value:.0e}")
    return int(rounded) if rounded >= 1 else rounded


def _bad(squares: list[float]) -> float:
    return math.nan if any(math.isnan(s) for s in squares) else math.inf
