"""Why the loss stalls or drifts although gradients arrive: readings the learning rate cannot explain.

- the optimizer handed to the monitor holds none of the watched parameters, or only with lr 0;
- the weights did not change at all over an optimizer step;
- early layers get a gradient of exactly zero (dead ReLU units, a saturated or cut-off input);
- the gradient norm climbs steadily, step after step, as gradients summed over steps do (no zero_grad).

Each function reads only the monitor's figures and the parameters' `.grad` / the optimizer's param groups:
no user code runs and no tensor value is shown.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

ACCUM_BLOCK = 5          # steps per block: the gradient norm's trend is read on block means ...
ACCUM_MIN_BLOCKS = 6     # ... of at least this many blocks (30 steps) ...
ACCUM_RISING = 0.8       # ... rising from one block to the next in at least this share ...
ACCUM_GROWTH = 10.0      # ... to at least this many times the first block's mean ...
ACCUM_LINEAR = 4.0       # ... and not faster than linear: the last block over the middle one at most this
SATURATING = {"Sigmoid", "Tanh", "Hardtanh", "Softsign", "Hardsigmoid", "LogSigmoid", "RNN"}
RELU_FAMILY = {"ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
               "Hardswish"}


def _names(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def optimizer_gap(optimizer: Any, names: list[str], params: list[torch.Tensor]) -> dict[str, Any] | None:
    """Facts when the optimizer cannot move the watched weights: it holds none of those that get a gradient
    (case not_held), or holds them only at lr 0 (case lr_zero); None otherwise (a partial set may be on purpose)."""
    held: dict[int, float | None] = {}
    for group in getattr(optimizer, "param_groups", []):
        for param in group.get("params", []):
            held[id(param)] = _float(group.get("lr"))
    trained = [(n, p) for n, p in zip(names, params) if p.grad is not None]
    if not trained:
        return None
    facts: dict[str, Any] = {"trained_count": len(trained), "optimizer_count": len(held),
                             "optimizer_type": type(optimizer).__name__}
    missing = [n for n, p in trained if id(p) not in held]
    if len(missing) == len(trained):
        return {**facts, "case": "not_held", "missing_params": _names(missing)}
    at_zero = [n for n, p in trained if id(p) in held and held[id(p)] == 0]
    if at_zero and len(at_zero) + len(missing) == len(trained):
        return {**facts, "case": "lr_zero", "zero_lr_params": _names(at_zero), "zero_lr_count": len(at_zero)}
    return None


def dead_layers(order: list[int], rms: list[float], present: list[bool]) -> list[int]:
    """Layers (in model order) whose gradient was exactly zero over the window although `.grad` exists, when they
    come first and a later layer still gets a gradient: dead or saturated units cut the path to them."""
    live = [g for g in order if present[g]]
    if not live or rms[live[0]] != 0.0 or not any(rms[g] > 0 for g in live):
        return []
    return [g for g in live if rms[g] == 0.0]


def dead_facts(rms: dict[str, float], types: list[str], group_of: list[int], names: list[str],
               params: list[torch.Tensor]) -> dict[str, Any] | None:
    """The dead-layer verdict's facts from the layers' gradient RMS (model order), or None when no layer is dead."""
    from .gradnorms import SPARSE_TYPES

    layers, values = list(rms), list(rms.values())
    present = [False] * len(layers)
    for param, group in zip(params, group_of):
        present[group] = present[group] or param.grad is not None
    order = [g for g in range(len(layers)) if types[g] not in SPARSE_TYPES]
    dead = dead_layers(order, values, present) if values else []
    if not dead:
        return None
    live = next(g for g in order if present[g] and values[g] > 0)
    return {"dead_layers": ", ".join(f"`{layers[g] or '(root)'}` ({types[g]})" for g in dead[:6])
            + (", ..." if len(dead) > 6 else ""), "dead_count": len(dead), "first_dead": layers[dead[0]] or "(root)",
            "first_dead_type": types[dead[0]], "live_group": layers[live] or "(root)", "live_type": types[live],
            "live_grad_rms": _sig(values[live]), "zero_params": _names(zero_grad_params(names, params), 6)}


def zero_grad_params(names: list[str], params: list[torch.Tensor]) -> list[str]:
    """Parameters whose current gradient exists and is exactly zero everywhere (read once, at a verdict)."""
    import torch

    with torch.no_grad():
        return [n for n, p in zip(names, params) if p.grad is not None and not bool(p.grad.any())]


def model_activations(modules: dict[str, Any]) -> dict[str, Any]:
    """Facts on the activation modules the model holds (functional calls are not visible: then neither is set)."""
    kinds = {type(m).__name__ for m in modules.values()}
    saturating = sorted(kinds & SATURATING)
    return {"saturating_acts": ", ".join(saturating), "relu_family": bool(kinds & RELU_FAMILY)}


def accumulating(steps: list[int], norms: list[float]) -> dict[str, Any] | None:
    """Facts when the total gradient norm climbs block after block, about linearly, to many times its start:
    what `.grad` does when it is never zeroed (each backward adds to it). None otherwise."""
    finite = [(s, v) for s, v in zip(steps, norms) if math.isfinite(v)]
    blocks = len(finite) // ACCUM_BLOCK
    if blocks < ACCUM_MIN_BLOCKS:
        return None
    means = [sum(v for _, v in finite[i * ACCUM_BLOCK:(i + 1) * ACCUM_BLOCK]) / ACCUM_BLOCK for i in range(blocks)]
    if means[0] <= 0:
        return None
    rising = sum(b > a for a, b in zip(means, means[1:])) / (blocks - 1)
    growth = means[-1] / means[0]
    middle = means[blocks // 2]
    if rising < ACCUM_RISING or growth < ACCUM_GROWTH or middle <= 0 or means[-1] / middle > ACCUM_LINEAR:
        return None
    end = blocks * ACCUM_BLOCK - 1
    return {"accum_first_step": finite[0][0], "accum_last_step": finite[end][0],
            "accum_start_norm": _sig(means[0]), "accum_end_norm": _sig(means[-1]), "accum_growth": _sig(growth),
            "accum_rising_pct": round(100 * rising), "accum_blocks": blocks}


def _sig(value: float) -> float:
    return float(f"{value:.4g}")
