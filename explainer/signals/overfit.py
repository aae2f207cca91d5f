"""The single-batch overfit check: a model that cannot drive one batch's loss to ~0 is broken.

It trains a deep copy of the model (the caller's model, optimizer state and random streams are left
as they were) on one batch and, when the loss does not fall close to zero, measures why: parameters
no gradient reaches, frozen parameters, a loss unbounded below, probabilities fed to
CrossEntropyLoss, output and target shapes that broadcast, or a model that does no better than a
constant output (labels that do not depend on the inputs as the model sees them).
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any, Callable

from explainer._diagnosis import Diagnosis
from explainer._inspect import format_shape

from .curves import significant

if TYPE_CHECKING:
    import torch

ELEMENTWISE_LOSSES = ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss")
BASELINE_MARGIN = 0.85  # a model within 15% of the best constant output learned next to nothing from the inputs
CURVE_POINTS = 20
MIN_STEPS = 10          # a loss near 0 before any training says nothing about learning


def overfit_one_batch(model: torch.nn.Module, batch: Any, loss_fn: Callable[..., torch.Tensor], *,
                      steps: int = 100, lr: float = 1e-2, tolerance: float | None = None) -> Diagnosis:
    """Train a copy of model on one batch with Adam; facts['passed'] says whether the loss reached ~0.

    batch is (inputs, target): inputs a tensor, a tuple/list of positional inputs or a dict of keyword
    inputs; the loss is loss_fn(model(inputs), target). passed means that after at least 10 updates the
    loss is within tolerance of zero (default: 1% of the first loss, and never below 0.05).
    """
    import torch

    from explainer.diagnose.explain import diagnose_signal

    inputs, target = _split(batch)
    work = _copy(model)
    work.train()
    named = list(work.named_parameters())
    trainable = [(n, p) for n, p in named if p.requires_grad]
    frozen = [n for n, p in named if not p.requires_grad]
    facts: dict[str, Any] = {"steps": steps, "lr": lr}
    curve: list[float] = []
    output = None
    devices = sorted({p.device.index or 0 for _, p in named if p.device.type == "cuda"})
    with torch.random.fork_rng(devices=devices):
        optimizer = torch.optim.Adam([p for _, p in trainable], lr=lr) if trainable else None
        limit = tolerance
        for step in range(steps):
            output = _call(work, inputs)
            loss = loss_fn(output, target)
            value = float(loss.detach())
            curve.append(value)
            if limit is None:
                limit = max(0.05, 0.01 * abs(value))
            if not math.isfinite(value):
                facts["nonfinite_step"] = step
                break
            if (step >= MIN_STEPS and abs(value) <= limit) or optimizer is None or not loss.requires_grad:
                break
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if step == 0:
                _gradient_flow(trainable, facts)
            optimizer.step()
        facts.update(initial_loss=significant(curve[0]), final_loss=significant(curve[-1]), tolerance=significant(limit),
                     steps_taken=len(curve), curve=_sample(curve))
        passed = len(curve) > MIN_STEPS and abs(curve[-1]) <= limit
        facts["passed"] = passed
        if passed:
            return diagnose_signal("signal.overfit_passed", facts)
        facts["best_loss"] = significant(min(v for v in curve if not math.isnan(v))) if any(
            not math.isnan(v) for v in curve) else curve[-1]
        if frozen:
            facts["frozen_params"] = frozen[:20]
        if not trainable:
            facts["no_trainable"] = True
        if trainable and not any(p.requires_grad for p in _leaves(output)):
            facts["output_detached"] = True
        _loss_checks(output, target, loss_fn, curve, facts)
        _baseline(work, inputs, output, target, loss_fn, steps, curve, facts)
    facts["causes"] = [name for name in CAUSES if name in facts]
    return diagnose_signal("signal.overfit_failed", facts)


# Facts that name a cause, in the order the rule's summaries try them.
CAUSES = ("nonfinite_step", "no_trainable", "output_detached", "loss_unbounded", "probabilities_to_cross_entropy",
          "shape_mismatch", "no_grad_params", "zero_grad_params", "frozen_params", "input_ignored",
          "no_better_than_constant", "still_falling_pct")


def _split(batch: Any) -> tuple[Any, Any]:
    if isinstance(batch, (tuple, list)) and len(batch) == 2:
        return batch[0], batch[1]
    raise TypeError("batch must be (inputs, target): inputs a tensor, a tuple of tensors or a dict")


def _call(model: torch.nn.Module, inputs: Any) -> Any:
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


def _copy(model: torch.nn.Module) -> torch.nn.Module:
    """A deep copy, so the caller's weights, buffers and gradients never change."""
    try:
        return copy.deepcopy(model)
    except Exception as exc:  # e.g. a module holding a lock or a file handle
        raise TypeError(f"overfit_one_batch needs a model that copy.deepcopy can copy ({type(exc).__name__}: "
                        f"{exc}); pass a freshly built model instead") from None


def _leaves(output: Any) -> list[torch.Tensor]:
    import torch
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(output)[0] if isinstance(t, torch.Tensor)]


def _gradient_flow(trainable: list[tuple[str, torch.nn.Parameter]], facts: dict[str, Any]) -> None:
    """After the first backward: parameters no gradient reached, or whose gradient is exactly zero."""
    import torch

    missing = [n for n, p in trainable if p.grad is None]
    present = [(n, p.grad) for n, p in trainable if p.grad is not None]
    zero = []
    if present:
        norms = torch.stack([g.detach().float().norm().to("cpu") for _, g in present]).tolist()
        zero = [n for (n, _), v in zip(present, norms) if v == 0]
    if missing:
        facts["no_grad_params"] = missing[:20]
    if zero:
        facts["zero_grad_params"] = zero[:20]


def _loss_checks(output: Any, target: Any, loss_fn: Any, curve: list[float], facts: dict[str, Any]) -> None:
    import torch

    finite = [v for v in curve if math.isfinite(v)]
    if finite and finite[-1] < -0.05 and finite[-1] < finite[0]:
        facts["loss_unbounded"] = True
    if not (isinstance(output, torch.Tensor) and isinstance(target, torch.Tensor)):
        return
    facts["output_shape"] = format_shape(output.shape)
    facts["target_shape"] = format_shape(target.shape)
    name = type(loss_fn).__name__
    if name == "CrossEntropyLoss" or getattr(loss_fn, "__name__", "") == "cross_entropy":
        with torch.no_grad():
            if output.dim() >= 2 and output.is_floating_point():
                rows = output.detach().float().sum(1)
                if bool((output >= 0).all()) and bool(torch.allclose(rows, torch.ones_like(rows), atol=1e-3)):
                    facts["probabilities_to_cross_entropy"] = True
    elif name in ELEMENTWISE_LOSSES and output.shape != target.shape:
        facts["shape_mismatch"] = True
    if len(curve) >= 10:
        fifth = max(2, len(curve) // 5)
        total = curve[0] - curve[-1]
        recent = curve[-fifth] - curve[-1]
        if total > 0 and recent > 0.2 * total and "loss_unbounded" not in facts:
            facts["still_falling_pct"] = round(100 * recent / max(abs(curve[-fifth]), 1e-12), 1)


def _baseline(model: torch.nn.Module, inputs: Any, output: Any, target: Any, loss_fn: Any, steps: int,
              curve: list[float], facts: dict[str, Any]) -> None:
    """The best loss a constant output reaches, and whether the trained model's outputs differ between samples."""
    import torch

    if not isinstance(output, torch.Tensor) or not output.is_floating_point() or output.dim() < 1:
        return
    constant = torch.zeros((1, *output.shape[1:]), dtype=output.dtype, device=output.device, requires_grad=True)
    optimizer = torch.optim.Adam([constant], lr=0.05)
    best = math.inf
    try:
        for _ in range(max(steps, 100)):
            loss = loss_fn(constant.expand_as(output), target)
            best = min(best, float(loss.detach()))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    except (RuntimeError, ValueError, TypeError):  # a loss that needs a structured output
        return
    final = min(v for v in curve if math.isfinite(v)) if any(math.isfinite(v) for v in curve) else math.nan
    if math.isfinite(best):
        facts["baseline_loss"] = significant(best)
        if math.isfinite(final) and final >= BASELINE_MARGIN * best:
            facts["no_better_than_constant"] = True
    if output.dim() >= 1 and output.shape[0] > 1:
        with torch.no_grad():
            again = _call(model, inputs)
        if isinstance(again, torch.Tensor) and again.is_floating_point():
            # How much the outputs differ between samples: zero when the forward ignores its input.
            spread = float((again - again.roll(1, 0)).norm() / again.norm().clamp_min(1e-12))
            facts["input_sensitivity"] = significant(spread)
            if spread < 1e-6:
                facts["input_ignored"] = True


def _sample(curve: list[float]) -> list[float]:
    if len(curve) <= CURVE_POINTS:
        return [significant(v) for v in curve]
    step = (len(curve) - 1) / (CURVE_POINTS - 1)
    return [significant(curve[round(i * step)]) for i in range(CURVE_POINTS)]
