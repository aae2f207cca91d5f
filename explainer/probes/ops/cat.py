"""Probe for torch.cat / torch.stack: the tensors in the list and the dimension that differs."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import FrameRecord, describe_tensor, format_shape, innermost_user_frame, is_tensor, resolve
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import MAX_LISTED, literal_int, shape_of, user_node


def _tensor_list(record: FrameRecord | None):
    """(list text, [(name, tensor)], dim) for a failing `torch.cat([a, b], dim=1)` / `torch.stack(xs)`."""
    node = user_node(record)
    if not isinstance(node, ast.Call) or not node.args:
        return None
    namespace = record.namespace()
    first = node.args[0]
    items: list[tuple[str, Any]] = []
    if isinstance(first, (ast.List, ast.Tuple)):
        for element in first.elts:
            items.append((ast.unparse(element), resolve(element, namespace)))
    else:
        value = resolve(first, namespace)
        if not isinstance(value, (list, tuple)):
            return None
        base = ast.unparse(first)
        items = [(f"{base}[{i}]", v) for i, v in enumerate(value[:10_000])]
    dim_node = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg in ("dim", "axis"):
            dim_node = keyword.value
    dim = literal_int(dim_node, namespace) if dim_node is not None else 0
    return ast.unparse(first), items, dim


@probe("tensor_list_operands", provides=(
    "list_name", "tensors", "cat_dim", "mismatch_dim", "mismatch_name", "mismatch_shape", "first_name",
    "first_shape", "suggested_dim", "pad_fix"))
def tensor_list_operands(ctx: ProbeContext) -> Evidence | None:
    """The tensors handed to torch.cat / torch.stack, their shapes and the dimension that differs."""
    record = innermost_user_frame(ctx.records)
    found = _tensor_list(record)
    if found is None:
        return None
    list_name, items, dim = found
    tensors = [(n, v) for n, v in items if is_tensor(v)]
    if len(tensors) < 2 or len(tensors) != len(items):
        return None
    shapes = [shape_of(v) for _, v in tensors]
    listed = ", ".join(f"{n} {format_shape(s)}" for (n, _), s in zip(tensors[:MAX_LISTED], shapes))
    if len(tensors) > MAX_LISTED:
        listed += f", ... ({len(tensors)} tensors)"
    facts: dict[str, Any] = {"list_name": list_name, "tensors": listed}
    culprits = [describe_tensor(n, v) for n, v in tensors[:MAX_LISTED]]
    rank = len(shapes[0])
    if dim is not None and rank and -rank <= dim < rank:
        dim %= rank
        facts["cat_dim"] = dim
    # Which pair disagrees: the message names an entry (cat: "tensor number N"; stack: "entry N").
    index = ctx.facts.get("index", ctx.facts.get("entry_b"))
    first = ctx.facts.get("entry_a", 0)
    if isinstance(index, int) and 0 <= index < len(tensors) and isinstance(first, int) and first < len(tensors):
        a, b = shapes[first], shapes[index]
        facts.update(first_name=tensors[first][0], first_shape=format_shape(a),
                     mismatch_name=tensors[index][0], mismatch_shape=format_shape(b))
        if len(a) == len(b):
            is_stack = "entry_b" in ctx.facts
            differing = [d for d in range(len(a)) if a[d] != b[d] and (is_stack or d != facts.get("cat_dim"))]
            if differing:
                facts["mismatch_dim"] = differing[0]
    if all(len(s) == rank for s in shapes) and rank:
        differing = [d for d in range(rank) if len({s[d] for s in shapes}) > 1]
        if len(differing) == 1 and differing[0] != facts.get("cat_dim") and "cat_dim" in facts:
            facts["suggested_dim"] = differing[0]
        if rank == 1 and len(differing) == 1:
            facts["pad_fix"] = f"torch.nn.utils.rnn.pad_sequence({list_name}, batch_first=True)"
    return Evidence(facts, culprits)
