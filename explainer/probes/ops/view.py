"""Probes for view / reshape / expand / unflatten and dimension arguments: the tensor, its shape and strides."""

from __future__ import annotations

import linecache
import math
import re
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, describe_module, describe_tensor, format_shape, module_repr,
                                name_module, tensor_facts)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import (call_receiver, failing_module, ints_in, join_dims, shape_of,
                                               user_expression)
from explainer.probes.readers.producer import add_producer

# Tensor methods that return a view with permuted or broken strides.
_STRIDE_OPS = ("transpose", "permute", "t", "T", "mT", "swapaxes", "swapdims", "movedim", "expand", "narrow",
               "unfold", "as_strided")
_STRIDE_OP_RE = r"\.(" + "|".join(_STRIDE_OPS) + r")\b"
_GRAD_FN_OPS = {"TransposeBackward0": "transpose", "TransposeBackward1": "transpose", "PermuteBackward0": "permute",
                "TBackward0": "t", "ExpandBackward0": "expand", "UnfoldBackward0": "unfold"}


@probe("reshape_operands", provides=(
    "input_name", "input_shape", "requested_numel", "suggested_view", "suggested_shape", "flatten_fix",
    "flatten_shape", "flatten_features", "call"))
def reshape_operands(ctx: ProbeContext) -> Evidence | None:
    """The tensor being reshaped and a shape with the right element count."""
    record, expr = user_expression(ctx)
    requested = ints_in(ctx.facts.get("requested", ""))
    numel = ctx.facts.get("numel")
    if not isinstance(numel, int) or not requested:
        return None
    known = math.prod(d for d in requested if d != -1)
    facts: dict[str, Any] = {"requested_numel": known}
    culprits = []
    name, value = call_receiver(record, expr)
    if expr is not None and expr.kind == "call":
        facts["call"] = expr.text
    if value is MISSING or name is None:
        return Evidence(facts, culprits)
    shape = shape_of(value)
    facts.update(input_name=name, input_shape=format_shape(shape))
    culprits.append(describe_tensor(name, value))
    method = "reshape" if expr.callee is not None and expr.callee.text.endswith("reshape") else "view"
    if len(requested) == 2 and len(shape) >= 2 and requested[0] in (-1, shape[0]) and shape[0]:
        facts.update(flatten_fix=f"{name}.flatten(1)", flatten_features=numel // shape[0],
                     flatten_shape=format_shape([shape[0], numel // shape[0]]))
    if -1 not in requested:
        for i in reversed(range(len(requested))):
            others = math.prod(requested[:i] + requested[i + 1:])
            if others and numel % others == 0:
                fixed = requested[:i] + [numel // others] + requested[i + 1:]
                facts["suggested_view"] = f"{name}.{method}({join_dims(fixed)})"
                facts["suggested_shape"] = format_shape(fixed)
                break
    return Evidence(facts, culprits)


@probe("noncontiguous_view", provides=(
    "input_name", "input_shape", "input_stride", "made_by", "made_at", "reshape_fix", "contiguous_fix", "call"))
def noncontiguous_view(ctx: ProbeContext) -> Evidence | None:
    """The tensor `.view` refused, its strides, and the op that made it non-contiguous when visible."""
    record, expr = user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None or not expr.callee.text.endswith(".view"):
        return None
    facts: dict[str, Any] = {"call": expr.text}
    head, _, tail = expr.text.rpartition(".view(")
    facts["reshape_fix"] = f"{head}.reshape({tail}"
    facts["contiguous_fix"] = f"{head}.contiguous().view({tail}"
    name, value = call_receiver(record, expr)
    culprits = []
    if name is not None:
        facts["input_name"] = name
        op = re.search(_STRIDE_OP_RE, name)
        if op:
            facts["made_by"] = op.group(1)
    if value is not MISSING:
        import torch

        with torch._C.DisableTorchFunction():
            stride = tuple(int(s) for s in torch.Tensor.stride(value))
        facts.update(input_shape=format_shape(shape_of(value)), input_stride=format_shape(stride))
        culprits.append(describe_tensor(name, value, stride=list(stride)))
        grad_fn = tensor_facts(value).get("grad_fn")
        if "made_by" not in facts and grad_fn in _GRAD_FN_OPS:
            facts["made_by"] = _GRAD_FN_OPS[grad_fn]
        if name is not None and name.isidentifier():
            _find_assignment(record, name, facts)
    return Evidence(facts, culprits)


def _find_assignment(record: FrameRecord, name: str, facts: dict[str, Any]) -> None:
    """The closest earlier line of the failing function that assigned name from a stride-changing op."""
    frame = record.frame
    first = frame.f_code.co_firstlineno if frame is not None else max(1, record.lineno - 50)
    assign = re.compile(r"^\s*" + re.escape(name) + r"\s*=(?!=)(.*)$")
    for lineno in range(record.lineno - 1, max(first, record.lineno - 200) - 1, -1):
        line = linecache.getline(record.filename, lineno)
        found = assign.match(line)
        if not found:
            continue
        op = re.search(_STRIDE_OP_RE, found.group(1))
        if op:
            facts.setdefault("made_by", op.group(1))
            facts["made_at"] = f"line {lineno}: {line.strip()}"
        return


@probe("dim_operand", provides=("tensor_name", "tensor_shape", "tensor_rank", "last_dim", "call"))
def dim_operand(ctx: ProbeContext) -> Evidence | None:
    """The tensor whose dimension was asked for, and its rank."""
    record, expr = user_expression(ctx)
    name, value = call_receiver(record, expr)
    if value is MISSING or name is None:
        return None
    shape = shape_of(value)
    facts = {"tensor_name": name, "tensor_shape": format_shape(shape), "tensor_rank": len(shape),
             "last_dim": max(len(shape) - 1, 0), "call": expr.text}
    return Evidence(facts, [describe_tensor(name, value)])


@probe("expand_layout", provides=("aligned_shape", "aligned_dims", "kept_target"), live=False)
def expand_layout(ctx: ProbeContext) -> Evidence | None:
    """From the message's Target sizes and Tensor sizes: a view of the tensor whose dimensions line up."""
    target, sizes = ints_in(ctx.facts.get("target_sizes", "")), ints_in(ctx.facts.get("tensor_sizes", ""))
    if not target or not sizes or len(sizes) > len(target):
        return None
    facts: dict[str, Any] = {}
    # Place each non-1 dimension of the tensor, right to left, at the rightmost equal target size.
    placed: dict[int, int] = {}
    j = len(target) - 1
    for size in reversed([s for s in sizes if s != 1]):
        while j >= 0 and target[j] != size:
            j -= 1
        if j < 0:
            placed = {}
            break
        placed[j] = size
        j -= 1
    if placed:
        aligned = [placed.get(i, 1) for i in range(len(target))]
        right_aligned = [1] * (len(target) - len(sizes)) + sizes
        if aligned != right_aligned:
            facts.update(aligned_shape=format_shape(aligned), aligned_dims=join_dims(aligned))
    offset = len(target) - len(sizes)
    kept = [t if i < offset or sizes[i - offset] in (1, t) or t == -1 else -1 for i, t in enumerate(target)]
    if kept != target:
        facts["kept_target"] = join_dims(kept)
    return Evidence(facts) if facts else None


@probe("expand_operand", provides=("tensor_name", "call"))
def expand_operand(ctx: ProbeContext) -> Evidence | None:
    """The tensor a failing `.expand(...)` / `.expand_as(...)` was called on."""
    record, expr = user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None or \
            not expr.callee.text.rsplit(".", 1)[-1].startswith("expand"):
        return None
    name, value = call_receiver(record, expr)
    if name is None:
        return None
    facts = {"tensor_name": name, "call": expr.text}
    return Evidence(facts, [describe_tensor(name, value)] if value is not MISSING else [])


@probe("unflatten_layer", provides=("module", "module_repr", "producer", "producer_name", "producer_desc"))
def unflatten_layer(ctx: ProbeContext) -> Evidence | None:
    """The nn.Unflatten that refused its input, and the layer before it that made the size it split."""
    record, module = failing_module(ctx, "Unflatten")
    if module is None:
        return None
    name = name_module(module, ctx.records) or "nn.Unflatten"
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module)}
    culprits = [describe_module(name, module)]
    size = ctx.facts.get("size")
    if str(ctx.facts.get("dim")) in ("1", "-1") and str(size).isdigit():
        add_producer(ctx, record, module, "features", int(size), facts, culprits)
    return Evidence(facts, culprits)
