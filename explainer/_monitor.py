"""TrainingMonitor: cheap per-step figures (loss, gradient norms by layer) and diagnoses from them.

    mon = explainer.TrainingMonitor(model, optimizer=opt)
    for x, y in loader:
        loss = loss_fn(model(x), y)
        opt.zero_grad(); loss.backward()
        mon.step(loss)                  # after backward, before opt.step()
        opt.step()
    mon.diagnoses                       # Diagnosis objects so far

The hot path is a handful of tensor operations and no host sync: gradient norms come from one
fused `torch._foreach_norm`, are folded into per-layer squared norms with one matrix-vector product
and written into a device buffer; the buffer is read every `check_every` steps. On CPU, where a read
costs no device sync, the monitor also checks finiteness every step, so a NaN is localised at the
step that made it, before the optimizer writes it into the weights.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ._curves import History, _sig, classify
from ._diagnosis import Diagnosis

if TYPE_CHECKING:
    import torch

VANISH_RATIO = 1e-3       # early layers' gradient RMS this far below the later layers' ...
MIN_UPDATE_RATIO = 1e-4   # ... or updates this small against the weights: the loss is stuck for a reason
HEALTHY_UPDATE_RATIO = 1e-3
GROUP_WINDOW = 200


class TrainingMonitor:
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
                 measure_updates: bool = True):
        import torch

        from ._nanloc import param_owner

        if check_every < 1:
            raise ValueError("check_every must be at least 1")
        self.model = model
        self.optimizer = optimizer
        self.check_every = int(check_every)
        self.on_diagnosis = on_diagnosis
        self.max_grad_norm = float(max_grad_norm)
        self.jump_factor = float(jump_factor)
        self.patience = int(patience)
        self.measure_updates = measure_updates
        self.diagnoses: list[Diagnosis] = []

        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self.group_names: list[str] = []
        group_of: list[int] = []
        for name in self._names:
            owner = param_owner(name)
            if owner not in self.group_names:
                self.group_names.append(owner)
            group_of.append(self.group_names.index(owner))
        modules = dict(model.named_modules())
        self.group_types = [type(modules[name]).__name__ if name in modules else "?" for name in self.group_names]
        self._device = self._params[0].device if self._params else torch.device("cpu")
        groups = len(self.group_names)
        onehot = torch.zeros(groups, len(self._params), dtype=torch.float64)
        if self._params:
            onehot[group_of, list(range(len(self._params)))] = 1.0
        self._onehot = onehot.to(self._device)
        self._subset_onehots: dict[tuple[bool, ...], torch.Tensor] = {}
        self._group_numel = [0] * groups
        for index, param in zip(group_of, self._params):
            self._group_numel[index] += param.numel()
        # Row layout: loss, then each group's squared gradient norm.
        self._buffer = torch.zeros(self.check_every, 1 + groups, dtype=torch.float64, device=self._device)
        self._pos = 0
        self._pending_steps: list[int] = []
        self._count = 0
        self._eager_finite_check = self._device.type == "cpu"

        self.steps: list[int] = []
        self.losses: list[float] = []
        self.grad_norms: list[float] = []
        self.val_steps: list[int] = []
        self.val_losses: list[float] = []
        self._new_val: list[tuple[int, float]] = []
        self._group_window: deque[list[float]] = deque(maxlen=GROUP_WINDOW)
        self._snapshot: list[torch.Tensor] | None = None
        self._update_sq: tuple[torch.Tensor, torch.Tensor] | None = None
        self.update_ratio: float | None = None
        # The parameter change costs a copy of the weights: measured only once the loss looks stuck.
        self._want_update = False
        self._raised: set[str] = set()
        self._stopped = False
        self._analysed_at = 0

        self._inputs: tuple[tuple, dict] | None = None
        self._hook = model.register_forward_pre_hook(self._capture, with_kwargs=True) if capture_inputs else None
        self._log = _Log(Path(log_path)) if log_path is not None else None

    # -- hot path -------------------------------------------------------------------------------

    def _capture(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        import torch

        # Evaluation forwards run under no_grad: the step to re-check is the last one that trains.
        if torch.is_grad_enabled():
            self._inputs = (args, kwargs)

    def step(self, loss: torch.Tensor | float, step: int | None = None) -> None:
        """Record this step's loss and gradient norms; call after `loss.backward()`."""
        import torch

        current = self._count if step is None else int(step)
        self._count = current + 1
        grads = [p.grad for p in self._params]
        present = [g for g in grads if g is not None]  # `None in grads` would call Tensor.__eq__ per item
        onehot = self._onehot
        if len(present) != len(grads):
            onehot = self._subset(grads)
        grads = present
        row = self._buffer[self._pos]
        value = loss.detach() if isinstance(loss, torch.Tensor) else torch.tensor(float(loss))
        row[0].copy_(value.reshape(()))
        if grads:
            squares = torch.stack(torch._foreach_norm(grads)).to(torch.float64).square()
            torch.mv(onehot, squares, out=row[1:])
        else:
            row[1:].zero_()
        self._pending_steps.append(current)
        self._pos += 1
        if self._snapshot is not None:
            self._measure_update()
        if self._pos == self.check_every or (self._eager_finite_check and not math.isfinite(row.sum().item())):
            self._sync()
        if self._want_update and self._pos == self.check_every - 1 and not self._stopped:
            with torch.no_grad():
                self._snapshot = torch._foreach_mul([p.detach() for p in self._params], 1.0)

    def _subset(self, grads: list[torch.Tensor | None]) -> torch.Tensor:
        """Some parameters got no gradient this step (unused branch): fold only the others."""
        import torch

        mask = tuple(g is not None for g in grads)
        onehot = self._subset_onehots.get(mask)
        if onehot is None:
            onehot = self._onehot[:, torch.tensor(mask, device=self._device)].contiguous()
            self._subset_onehots[mask] = onehot
        return onehot

    def _measure_update(self) -> None:
        """Parameter change over the last optimizer step, against the weights: squared norms by group."""
        import torch

        with torch.no_grad():
            current = [p.detach() for p in self._params]
            deltas = torch._foreach_sub(current, self._snapshot)
            delta_sq = torch.stack(torch._foreach_norm(deltas)).to(torch.float64).square()
            weight_sq = torch.stack(torch._foreach_norm(self._snapshot)).to(torch.float64).square()
            self._update_sq = (self._onehot @ delta_sq, self._onehot @ weight_sq)
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
        count = self._pos
        rows = self._buffer[:count].tolist() if count else []
        steps, self._pending_steps = self._pending_steps, []
        self._pos = 0
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
        previous = [g for g in self.grad_norms[-GROUP_WINDOW:] if math.isfinite(g)]
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
                self._non_finite(i, chunk_squares[i - chunk_start], detected_at=steps[-1])
                return
        self._check_exploding(chunk_start, chunk_squares, previous)
        due = len(self.steps) - self._analysed_at >= max(self.check_every, len(self.steps) // 20)
        if force_curve or due:
            self._analysed_at = len(self.steps)
            self._check_curve()

    def _non_finite(self, index: int, squares: list[float], detected_at: int) -> None:
        from ._nanloc import locate

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
        found = locate(self.model, *(self._inputs if self._inputs else (None, None)))
        facts.update(found["facts"])
        if self.optimizer is not None:
            facts["lr"] = _lr(self.optimizer)
        self._stopped = True
        self._raise("signal.nan_located" if "module" in facts else "signal.non_finite", facts, found["culprits"])

    def _check_exploding(self, start: int, chunk_squares: list[list[float]], previous: list[float]) -> None:
        if "signal.exploding_gradients" in self._raised:
            return
        baseline = statistics.median(previous) if len(previous) >= 10 else None
        for i in range(start, len(self.steps)):
            total = self.grad_norms[i]
            over = total > self.max_grad_norm
            jump = baseline is not None and baseline > 0 and total > self.jump_factor * baseline
            if not (over or jump):
                continue
            squares = chunk_squares[i - start]
            largest = max(range(len(squares)), key=squares.__getitem__) if squares else None
            facts: dict[str, Any] = {"step": self.steps[i], "grad_norm": _sig(total),
                                     "max_grad_norm": _sig(self.max_grad_norm),
                                     "clip_to": _sig(baseline * 2 if baseline else self.max_grad_norm / 10)}
            if baseline is not None:
                facts["median_grad_norm"] = _sig(baseline)
                facts["jump_orders"] = round(math.log10(total / baseline), 1) if baseline > 0 else None
            if largest is not None:
                facts["largest_group"] = self.group_names[largest] or "(root)"
                facts["largest_type"] = self.group_types[largest]
                facts["largest_group_norm"] = _sig(math.sqrt(squares[largest]))
            if self.optimizer is not None:
                facts["lr"] = _lr(self.optimizer)
            facts = {k: v for k, v in facts.items() if v is not None}
            self._raise("signal.exploding_gradients", facts)
            return

    def _check_curve(self) -> None:
        report = classify(self.history)
        facts = dict(report.facts)
        if report.curve in ("unstable", "overfitting") and report.rule not in self._raised:
            if self.optimizer is not None:
                facts["lr"] = _lr(self.optimizer)
            self._raise(report.rule, facts)
        elif report.curve == "underfitting" and len(self.steps) >= self.patience and not self._raised & STUCK:
            self._stuck(facts)

    def _stuck(self, facts: dict[str, Any]) -> None:
        """The loss barely moves: vanishing gradients, a learning rate too low, or neither (capacity, signal)."""
        rms = self.group_grad_rms()
        flowing = [(name, value) for name, value in rms.items() if value > 0]
        if self.optimizer is not None:
            facts["lr"] = _lr(self.optimizer)
        if self.update_ratio is not None:
            facts["update_ratio"] = _sig(self.update_ratio)
        if flowing:
            early_name, early = flowing[0]
            late_name, late = max(flowing[len(flowing) // 2:], key=lambda item: item[1])
            ratio = early / late
            types = dict(zip(self.group_names, self.group_types))
            facts.update(early_group=early_name or "(root)", early_type=types[early_name], early_grad_rms=_sig(early),
                         late_group=late_name or "(root)", late_type=types[late_name], late_grad_rms=_sig(late),
                         grad_ratio=_sig(ratio))
            if ratio < VANISH_RATIO:
                facts["orders"] = round(math.log10(late / early), 1)
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

    def _raise(self, rule_id: str, facts: dict[str, Any], culprits: list[dict[str, Any]] | None = None) -> None:
        from ._explain import diagnose_signal

        self._raised.add(rule_id)
        diagnosis = diagnose_signal(rule_id, facts, culprits=culprits)
        self.diagnoses.append(diagnosis)
        if self.on_diagnosis is not None:
            self.on_diagnosis(diagnosis)

    # -- reading back --------------------------------------------------------------------------

    @property
    def history(self) -> History:
        """Everything synced so far, in the shape `explainer curves` reads."""
        return History(list(self.steps), list(self.losses), list(self.val_steps), list(self.val_losses))

    def group_grad_rms(self) -> dict[str, float]:
        """Mean gradient RMS per element, by layer (the module owning the parameters), over recent steps."""
        rows = [r for r in self._group_window if all(math.isfinite(v) for v in r)]
        if not rows:
            return {}
        means = [sum(r[g] for r in rows) / len(rows) for g in range(len(self.group_names))]
        return {name: math.sqrt(m / max(n, 1)) for name, m, n in zip(self.group_names, means, self._group_numel)}

    def curve(self) -> Diagnosis:
        """The loss curve's diagnosis so far (healthy included), after reading the figures."""
        from ._curves import analyze_history

        self._sync()
        return analyze_history(self.history)

    def close(self) -> None:
        """Read the last figures, close the log file and remove the input hook."""
        self._sync(force_curve=True)
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        self._inputs = None
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> "TrainingMonitor":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


STUCK = {"signal.vanishing_gradients", "signal.lr_too_low", "signal.underfitting"}


class _Log:
    """The figures as CSV (step,train_loss,val_loss,grad_norm) or JSON lines (.jsonl/.json): `explainer curves` reads both."""

    def __init__(self, path: Path):
        self.json = path.suffix in (".jsonl", ".json", ".ndjson")
        self.handle = open(path, "w", encoding="utf-8", newline="")
        if not self.json:
            self.writer = csv.writer(self.handle)
            self.writer.writerow(["step", "train_loss", "val_loss", "grad_norm"])

    def write(self, steps: list[int], losses: list[float], norms: list[float], vals: list[tuple[int, float]]) -> None:
        for step, loss, norm in zip(steps, losses, norms):
            self._row(step, loss, None, norm)
        for step, value in vals:
            self._row(step, None, value, None)
        self.handle.flush()

    def _row(self, step: int, train: float | None, val: float | None, norm: float | None) -> None:
        if self.json:
            record = {"step": step, "train_loss": train, "val_loss": val, "grad_norm": norm}
            self.handle.write(json.dumps({k: v for k, v in record.items() if v is not None}) + "\n")
        else:
            self.writer.writerow([step] + ["" if v is None else repr(v) for v in (train, val, norm)])

    def close(self) -> None:
        if not self.handle.closed:
            self.handle.close()


def _round1(value: float) -> float:
    """One significant digit: a suggested setting, not a measurement."""
    rounded = float(f"{value:.0e}")
    return int(rounded) if rounded >= 1 else rounded


def _bad(squares: list[float]) -> float:
    return math.nan if any(math.isnan(s) for s in squares) else math.inf


def _lr(optimizer: torch.optim.Optimizer) -> float | None:
    groups = getattr(optimizer, "param_groups", None) or []
    value = groups[0].get("lr") if groups else None
    try:
        return float(value)  # a float, or a 0-d tensor for a tensor learning rate
    except (TypeError, ValueError, RuntimeError):
        return None


