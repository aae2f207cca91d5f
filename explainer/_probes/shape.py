"""Probes for the shape family: which module, which operands, which dimension disagrees."""

from __future__ import annotations

import ast
import linecache
import math
import re
from typing import Any

from .._inspect import (MISSING, FrameRecord, child_modules, describe_module, describe_tensor, failing_expression,
                        format_shape, innermost_user_frame, is_module, is_tensor, module_frames, module_repr,
                        name_module, resolve, resolve_text, safe_getattr, tensor_facts, user_frames)
from . import Evidence, ProbeContext, probe


def _failing_module(ctx: ProbeContext, *types: str):
    """The innermost module whose own forward was running (torch's frame holds it as `self`)."""
    for record, module in reversed(module_frames(ctx.records)):
        if not types or type(module).__name__ in types or any(
                base.__name__ in types for base in type(module).__mro__):
            return record, module
    return None, None


def _input_operand(ctx: ProbeContext, module, torch_record):
    """The tensor handed to module, named as the user's failing line names it."""
    value = MISSING
    if torch_record is not None:
        local_vars = torch_record.locals
        for key in ("input", "x", "query"):
            candidate = dict.get(local_vars, key, MISSING) if isinstance(local_vars, dict) else MISSING
            if candidate is not MISSING and is_tensor(candidate):
                value = candidate
                break
    name = callee = None
    user = innermost_user_frame(ctx.records)
    expr = failing_expression(user) if user is not None else None
    if expr is not None and expr.kind == "call" and expr.callee is not None and expr.callee.value is module:
        callee = expr.callee.text
        if expr.operands:
            first = expr.operands[0]
            name = first.text
            if value is MISSING and is_tensor(first.value):
                value = first.value
    return name, value, expr, callee


@probe("linear_operands", provides=("module", "module_repr", "in_features", "out_features", "input_name",
                                     "input_shape", "got_features", "call", "left_name", "right_name",
                                     "left_shape", "right_shape"))
def linear_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.Linear (or F.linear / matmul operands) behind a matrix-multiply shape error."""
    torch_record, module = _failing_module(ctx, "Linear")
    if module is None:
        return _matmul_operands(ctx)
    in_features = safe_getattr(module, "in_features")
    out_features = safe_getattr(module, "out_features")
    input_name, value, expr, callee = _input_operand(ctx, module, torch_record)
    module_name = name_module(module, ctx.records) or callee or type(module).__name__
    facts = {"module": module_name, "module_repr": module_repr(module)}
    if isinstance(in_features, int):
        facts["in_features"] = in_features
    if isinstance(out_features, int):
        facts["out_features"] = out_features
    culprits = [describe_module(module_name, module)]
    if value is not MISSING:
        shape = list(value.shape)
        facts["input_shape"] = format_shape(shape)
        facts["got_features"] = shape[-1] if shape else 0
        facts["input_name"] = input_name or "the input"
        culprits.append(describe_tensor(input_name or "input", value))
    if expr is not None:
        facts["call"] = expr.text
    return Evidence(facts, culprits)


def _matmul_operands(ctx: ProbeContext) -> Evidence | None:
    user = innermost_user_frame(ctx.records)
    expr = failing_expression(user) if user is not None else None
    if expr is None:
        return None
    tensors = [op for op in expr.operands if is_tensor(op.value)]
    if len(tensors) < 2:
        return None
    left, right = tensors[0], tensors[1]
    facts = {"call": expr.text, "left_name": left.text, "right_name": right.text,
             "left_shape": format_shape(left.value.shape), "right_shape": format_shape(right.value.shape)}
    return Evidence(facts, [describe_tensor(left.text, left.value), describe_tensor(right.text, right.value)])
