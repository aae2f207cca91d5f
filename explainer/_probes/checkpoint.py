"""Probes for load_state_dict size mismatches: each key, the live parameter and the layer that would fit."""

from __future__ import annotations

import re
from typing import Any

from .._inspect import MISSING, describe_tensor, format_shape, is_module, is_tensor, resolve_text, safe_getattr
from . import Evidence, ProbeContext, probe
from ._operands import MAX_LISTED, compact, ints_in, submodule, user_expression

_SIZE_MISMATCH_RE = (
    r"size mismatch for (?P<key>[\w.]+): copying a param with shape torch\.Size\(\[(?P<ckpt>[\d, ]*)\]\) from "
    r"checkpoint, the shape in current model is torch\.Size\(\[(?P<model>[\d, ]*)\]\)")


def _constructor_for(module: Any, param: str, ckpt: list[int]) -> str | None:
    """The layer that holds a checkpoint parameter of this shape."""
    cls = type(module).__name__
    if param != "weight" or not ckpt:
        return None
    if cls == "Linear" and len(ckpt) == 2:
        return f"nn.Linear({ckpt[1]}, {ckpt[0]})"
    if cls == "Embedding" and len(ckpt) == 2:
        return f"nn.Embedding({ckpt[0]}, {ckpt[1]})"
    if cls.startswith("Conv") and "Transpose" not in cls and len(ckpt) >= 3:
        groups = safe_getattr(module, "groups")
        groups = groups if isinstance(groups, int) else 1
        kernel = tuple(ckpt[2:])
        extra = "" if groups == 1 else f", groups={groups}"
        return f"nn.{cls}({ckpt[1] * groups}, {ckpt[0]}, kernel_size={compact(kernel)}{extra})"
    if ("Norm" in cls) and len(ckpt) == 1:
        return f"nn.{cls}({ckpt[0]})"
    return None


@probe("state_dict_sizes", provides=("model", "mismatch_count", "mismatches", "rebuild"))
def state_dict_sizes(ctx: ProbeContext) -> Evidence | None:
    """Every `size mismatch for KEY` in the message, with the live parameter and the layer that would fit."""
    message = ctx.exception.args[0] if ctx.exception is not None and ctx.exception.args else None
    if not isinstance(message, str):
        return None
    found = [(m.group("key"), ints_in(m.group("ckpt")), ints_in(m.group("model")))
             for m in re.finditer(_SIZE_MISMATCH_RE, message)]
    if not found:
        return None
    lines = [f"{key}: checkpoint {format_shape(c)} vs model {format_shape(m)}" for key, c, m in found]
    facts: dict[str, Any] = {"mismatch_count": len(found), "mismatches": "; ".join(lines[:10])
                             + (f"; ... and {len(lines) - 10} more" if len(lines) > 10 else "")}
    record, expr = user_expression(ctx)
    model_name, model = None, MISSING
    if expr is not None and expr.kind == "call" and expr.callee is not None \
            and expr.callee.text.endswith(".load_state_dict") and record is not None:
        model_name = expr.callee.text.rsplit(".", 1)[0]
        model = resolve_text(model_name, record.namespace())
    culprits = []
    if not is_module(model):
        return Evidence(facts, culprits)
    facts["model"] = model_name
    rebuild = []
    for key, ckpt, _ in found:
        path, _, param = key.rpartition(".")
        owner = submodule(model, path)
        if owner is None:
            continue
        live = safe_getattr(owner, param)
        if is_tensor(live) and len(culprits) < MAX_LISTED:
            culprits.append(describe_tensor(f"{model_name}.{key}", live, checkpoint_shape=ckpt))
        constructor = _constructor_for(owner, param, ckpt)
        if constructor:
            rebuild.append(f"{model_name}.{path} = {constructor}")
    if rebuild:
        facts["rebuild"] = "; ".join(rebuild[:10])
    return Evidence(facts, culprits)


_SIZE_MISMATCH_ANY_RE = (
    r"size mismatch for (?P<key>[\w.]+): copying a param (?:with shape|of) torch\.Size\(\[(?P<ckpt>[\d, ]*)\]\) "
    r"from checkpoint, (?:the shape in current model is|where the shape is) torch\.Size\(\[(?P<model>[\d, ]*)\]\)")


@probe("state_dict_text", provides=("mismatch_count", "mismatches"), live=False)
def state_dict_text(ctx: ProbeContext) -> Evidence | None:
    """Every `size mismatch for KEY` line of the message (the first is in the pattern's groups, the rest in _rest)."""
    if "key" not in ctx.facts:
        return None
    found = [(ctx.facts["key"], ctx.facts.get("checkpoint_shape", ""), ctx.facts.get("model_shape", ""))]
    found += [(m.group("key"), m.group("ckpt"), m.group("model"))
              for m in re.finditer(_SIZE_MISMATCH_ANY_RE, str(ctx.facts.get("_rest", "")))]
    lines = [f"{key}: checkpoint torch.Size([{ckpt}]) vs model torch.Size([{model}])" for key, ckpt, model in found]
    return Evidence({"mismatch_count": len(found), "mismatches": "; ".join(lines[:10])
                     + (f"; ... and {len(lines) - 10} more" if len(lines) > 10 else "")})
