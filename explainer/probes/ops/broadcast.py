"""Probe for element-wise operations whose operands do not broadcast."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import (FrameRecord, describe_tensor, format_shape, innermost_user_frame, is_tensor, resolve,
                                tensor_facts)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import argument
from explainer.probes.readers.operands import FUNCTIONAL_FILE, shape_of, torch_frame, user_node


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
            found.append((ast.unparse(sub), value, shape_of(value), ast.unparse(sub)))
        elif (derived := _derived_operand(sub, namespace)) is not None:
            found.append((ast.unparse(sub), derived.tensor, derived.shape, derived.name))
    return (found[0], found[1], ast.unparse(node)) if len(found) >= 2 else None


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _derived_operand(node: ast.AST, namespace: dict[str, Any], steps: int = 0):
    """An operand that is not a plain variable but keeps a known shape: `a.unsqueeze(0)`, `b.T`, `deltas * 16`
    (a tensor scaled by a number keeps its shape): its variable, that variable's tensor and the operand's shape."""
    if isinstance(node, ast.BinOp) and steps < 4:
        tensor_side = node.left if _is_number(node.right) else node.right if _is_number(node.left) else None
        return _derived_operand(tensor_side, namespace, steps + 1) if tensor_side is not None else None
    found = argument(node, namespace)
    return found if found is not None and found.shape is not None else None


@probe("broadcast_operands", provides=(
    "a_name", "a_shape", "b_name", "b_shape", "a_dim", "b_dim", "expression", "column_fix", "column_name",
    "column_shape", "loss_fn", "loss_classes", "onehot_fix", "class_loss_fix"))
def broadcast_operands(ctx: ProbeContext) -> Evidence | None:
    """Both operands of the failing element-wise operation and the dimension, counted from the left in each."""
    record = innermost_user_frame(ctx.records)
    found = _binop_tensors(record) if record is not None else None
    if found is None:
        return None
    (a_name, a, sa, a_var), (b_name, b, sb, b_var), text = found
    facts: dict[str, Any] = {"a_name": a_name, "a_shape": format_shape(sa), "b_name": b_name,
                             "b_shape": format_shape(sb), "expression": text}
    dim = ctx.facts.get("dim")
    if isinstance(dim, int):
        ndim = max(len(sa), len(sb))
        for key, shape in (("a_dim", sa), ("b_dim", sb)):
            index = dim - (ndim - len(shape))
            if 0 <= index < len(shape):
                facts[key] = index
    loss = _loss_facts(ctx, (a_name, sa), (b_name, b, sb, b_var))
    facts.update(loss)
    # A 1-D operand whose length matches another dimension of the other operand: make it a column (never a loss's
    # target: a column broadcasts against every column of the input, which torch only warns about).
    for (x_name, sx), sy in (((b_name, sb), sa), ((a_name, sa), sb)):
        if not loss and len(sx) == 1 and len(sy) >= 2 and sx[0] != sy[-1]:
            for j, size in enumerate(sy[:-1]):
                if size == sx[0]:
                    ones = len(sy) - 1 - j
                    facts["column_name"] = x_name
                    facts["column_fix"] = (f"{x_name}.unsqueeze(-1)" if ones == 1
                                           else f"{x_name}.view({sx[0]}{', 1' * ones})")
                    facts["column_shape"] = format_shape([sx[0]] + [1] * ones)
                    break
            break
    return Evidence(facts, [describe_tensor(a_var, a), describe_tensor(b_var, b)])


_LOSS_SUFFIX = "_loss"


def _loss_facts(ctx: ProbeContext, a: tuple[str, list[int]], b: tuple[str, Any, list[int], str]) -> dict[str, Any]:
    """The failing call is a regression loss (torch's F.mse_loss, F.l1_loss, ... frame under it): it compares its
    input and target element by element, so the target must have the input's shape. For (N, C) scores against (N,)
    integer labels: C classes, the labels one-hot or a class-index loss instead."""
    loss = next((r for r in reversed(ctx.records) if r.name.endswith(_LOSS_SUFFIX)
                 and torch_frame([r], FUNCTIONAL_FILE) is not None), None)
    if loss is None:
        return {}
    (a_name, sa), (_, b, sb, b_var) = a, b
    facts: dict[str, Any] = {"loss_fn": f"F.{loss.name}"}
    if len(sa) == 2 and sa[1] > 1 and sb == sa[:1]:
        facts["loss_classes"] = sa[1]
        if is_tensor(b) and not tensor_facts(b)["dtype"].startswith("complex"):
            labels = b_var if tensor_facts(b)["dtype"].startswith(("int", "uint")) else f"{b_var}.long()"
            facts["onehot_fix"] = f"F.one_hot({labels}, {sa[1]}).float()"
            facts["class_loss_fix"] = f"F.cross_entropy({a_name}, {labels})"
    return facts
