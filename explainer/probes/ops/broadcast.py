"""Probe for element-wise operations whose operands do not broadcast."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import FrameRecord, describe_tensor, format_shape, innermost_user_frame, is_tensor, resolve
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import shape_of, user_node


def _binop_tensors(record: FrameRecord):
    """((text, tensor), (text, tensor)) for the failing `a + b`, `a += b`, `torch.add(a, b)` or `a.mul(b)`."""
    node = user_node(record)
    namespace = record.namespace()
    if isinstance(node, ast.BinOp):
        pairs = [node.left, node.right]
    elif isinstance(node, ast.AugAssign):
        pairs = [node.target, node.value]
    elif isinstance(node, ast.Call):
        pairs = ([node.func.value] if isinstance(node.func, ast.Attribute) else []) + list(node.args)
    else:
        return None
    found = []
    for sub in pairs:
        value = resolve(sub, namespace)
        if is_tensor(value):
            found.append((ast.unparse(sub), value))
    return (found[0], found[1], ast.unparse(node)) if len(found) >= 2 else None


@probe("broadcast_operands", provides=(
    "a_name", "a_shape", "b_name", "b_shape", "a_dim", "b_dim", "expression", "column_fix", "column_name",
    "column_shape"))
def broadcast_operands(ctx: ProbeContext) -> Evidence | None:
    """Both operands of the failing element-wise operation and the dimension, counted from the left in each."""
    record = innermost_user_frame(ctx.records)
    found = _binop_tensors(record) if record is not None else None
    if found is None:
        return None
    (a_name, a), (b_name, b), text = found
    sa, sb = shape_of(a), shape_of(b)
    facts: dict[str, Any] = {"a_name": a_name, "a_shape": format_shape(sa), "b_name": b_name,
                             "b_shape": format_shape(sb), "expression": text}
    dim = ctx.facts.get("dim")
    if isinstance(dim, int):
        ndim = max(len(sa), len(sb))
        for key, shape in (("a_dim", sa), ("b_dim", sb)):
            index = dim - (ndim - len(shape))
            if 0 <= index < len(shape):
                facts[key] = index
    # A 1-D operand whose length matches another dimension of the other operand: make it a column.
    for (x_name, sx), sy in (((b_name, sb), sa), ((a_name, sa), sb)):
        if len(sx) == 1 and len(sy) >= 2 and sx[0] != sy[-1]:
            for j, size in enumerate(sy[:-1]):
                if size == sx[0]:
                    ones = len(sy) - 1 - j
                    facts["column_name"] = x_name
                    facts["column_fix"] = (f"{x_name}.unsqueeze(-1)" if ones == 1
                                           else f"{x_name}.view({sx[0]}{', 1' * ones})")
                    facts["column_shape"] = format_shape([sx[0]] + [1] * ones)
                    break
            break
    return Evidence(facts, [describe_tensor(a_name, a), describe_tensor(b_name, b)])
