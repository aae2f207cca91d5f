"""Where a NaN/Inf first appears: re-run one forward with temporary hooks, then read the gradients.

Far cheaper than training under `torch.autograd.detect_anomaly`: nothing is hooked on the normal
steps; on the one bad step the model's forward runs once more under `torch.no_grad` with forward hooks
on every submodule, removed as soon as it returns. Outputs are checked in the order modules finish,
so the first non-finite one is the innermost module that produced it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from ._inspect import dtype_name, module_repr


def _float_tensors(value: Any) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [t for t in leaves if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]


def _all_finite(tensors: list[torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in tensors)


def _kind(tensors: list[torch.Tensor]) -> str:
    return "nan" if any(bool(torch.isnan(t).any()) for t in tensors) else "inf"


def nonfinite_names(named: list[tuple[str, torch.Tensor]]) -> list[str]:
    """Names of the tensors with a NaN or Inf, in the given order, with one device sync."""
    present = [(n, t) for n, t in named if t is not None]
    if not present:
        return []
    with torch.no_grad():
        norms = torch._foreach_norm([t.detach() for _, t in present])
        flags = torch.isfinite(torch.stack([n.float().to(norms[0].device) for n in norms])).tolist()
    return [name for (name, _), ok in zip(present, flags) if not ok]


def param_owner(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def locate(model: torch.nn.Module, args: tuple | None, kwargs: dict | None) -> dict[str, Any]:
    """Facts and culprits about the first non-finite forward output, gradient and parameter.

    The re-run keeps the caller's state: random number generators are forked and buffers (BatchNorm
    running statistics) are restored afterwards.
    """
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    named = list(model.named_parameters())
    bad_weights = nonfinite_names(named)
    if bad_weights:
        facts["nonfinite_params"] = bad_weights[:10]
        facts["nonfinite_param_count"] = len(bad_weights)
    # Backward reaches the parameters nearest the output first: the last non-finite gradient in
    # registration order is the one closest to where the NaN/Inf was made.
    bad_grads = nonfinite_names([(n, p.grad) for n, p in named])
    if bad_grads:
        facts["grad_param"] = bad_grads[-1]
        facts["nonfinite_grad_count"] = len(bad_grads)
    if args is not None:
        found = rerun_forward(model, args, kwargs or {})
        if found is not None:
            name, module, info = found
            facts.update(info)
            facts["module"] = name
            facts["module_type"] = type(module).__name__
            culprits.append({"name": name or "model", "kind": "module", "type": type(module).__name__,
                             "repr": module_repr(module), "note": f"first non-finite output ({info['output_kind']})"})
        else:
            facts["forward_finite"] = True
    if "module" not in facts and bad_grads:
        facts["grad_module"] = param_owner(bad_grads[-1])
        culprits.append({"name": bad_grads[-1], "kind": "parameter", "note": "non-finite gradient nearest the output"})
    return {"facts": facts, "culprits": culprits}


def rerun_forward(model: torch.nn.Module, args: tuple, kwargs: dict) -> tuple[str, torch.nn.Module, dict] | None:
    """(dotted name, module, facts) of the first module whose output is non-finite, or None."""
    names = {id(m): n for n, m in model.named_modules()}
    found: list[tuple[str, torch.nn.Module, dict]] = []

    def check(module: torch.nn.Module, inputs: tuple, kwinputs: dict, output: Any) -> None:
        if found:
            return
        outs = _float_tensors(output)
        if not outs or _all_finite(outs):
            return
        ins = _float_tensors((inputs, kwinputs))
        info = {"input_finite": _all_finite(ins) if ins else None,
                "input_dtype": dtype_name(ins[0].dtype) if ins else None,
                "output_dtype": dtype_name(outs[0].dtype), "output_kind": _kind(outs)}
        found.append((names.get(id(module), "?"), module, info))

    handles = [m.register_forward_hook(check, with_kwargs=True) for m in model.modules()]
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    devices = sorted({p.device.index or 0 for p in model.parameters() if p.device.type == "cuda"})
    try:
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            model(*args, **kwargs)
    except Exception:  # the re-run is best effort: the original step already ran
        pass
    finally:
        for handle in handles:
            handle.remove()
        with torch.no_grad():
            for buffer, saved in buffers:
                buffer.copy_(saved)
    return found[0] if found else None
