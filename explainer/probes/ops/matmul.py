"""Probes for matrix products: nn.Linear / F.linear, `a @ b`, torch.bmm / matmul, torch.mm / addmm."""

from __future__ import annotations

import ast
import re
from typing import Any

from explainer._inspect import (MISSING, describe_module, describe_tensor, failing_expression, format_shape,
                                innermost_user_frame, is_tensor, module_repr, name_module, safe_getattr)
from explainer.probes import Evidence, ProbeContext, probe, shown_file
from explainer.probes.readers.derived import tensor_arguments
from explainer.probes.readers.layer_source import first_argument, layer_call, square_refit
from explainer.probes.readers.library_names import layer_builder
from explainer.probes.readers.operands import (call_operands, failing_module, inline_constructor, shape_of,
                                               user_expression, with_first_argument)
from explainer.probes.readers.producer import add_producer


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
                                     "left_shape", "right_shape", "producer", "producer_name", "producer_desc",
                                     "layer_desc", "flatten_spatial", "fit_pool", "fit_pool_size",
                                     "missing_flatten", "inline_line", "inline_fix", "in_features_expr",
                                     "in_features_at", "in_features_fit", "old_side", "new_side", "layer_builder", "layer_top_level"))
def linear_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.Linear (or F.linear / matmul operands) behind a matrix-multiply shape error."""
    torch_record, module = failing_module(ctx, "Linear")
    if module is None:
        return _matmul_operands(ctx)
    in_features = safe_getattr(module, "in_features")
    out_features = safe_getattr(module, "out_features")
    input_name, value, expr, callee = _input_operand(ctx, module, torch_record)
    module_name = name_module(module, ctx.records) or callee
    user = innermost_user_frame(ctx.records)
    inline = inline_constructor(user, module) if module_name is None else None
    facts: dict[str, Any] = {}
    if inline is not None:
        module_name = ast.get_source_segment(user.code.strip().rstrip(":"), inline)
        facts["inline_line"] = user.lineno
    module_name = module_name or type(module).__name__
    facts.update(module=module_name, module_repr=module_repr(module), **layer_builder(ctx.records, module_name))
    if isinstance(in_features, int):
        facts["in_features"] = in_features
        facts["layer_desc"] = f"Linear, in_features={in_features}"
    if isinstance(out_features, int):
        facts["out_features"] = out_features
    culprits = [describe_module(module_name, module)]
    if value is not MISSING:
        shape = list(value.shape)
        facts["input_shape"] = format_shape(shape)
        facts["got_features"] = shape[-1] if shape else 0
        facts["input_name"] = input_name or "the input"
        culprits.append(describe_tensor(input_name or "input", value))
        fixed = with_first_argument(user.code, inline, facts["got_features"], "in_features") if inline else None
        if fixed is not None:
            facts["inline_fix"] = fixed
        if facts["got_features"] != in_features:
            if inline is None:
                facts.update(_in_features_source(module, ctx.records, facts["got_features"]))
            add_producer(ctx, torch_record, module, "features", facts["got_features"], facts, culprits,
                         in_features)
    if expr is not None:
        facts["call"] = expr.text
    return Evidence(facts, culprits)


def _in_features_source(module, records, got_features: int) -> dict[str, Any]:
    """Where the user's __init__ computed the layer's in_features (`32 * 7 * 7`), and the same product for the
    features that arrived, when it is a flattened square map."""
    built = layer_call(module, records)
    arg = first_argument(built.call, "in_features") if built is not None else None
    if arg is None or isinstance(arg, ast.Constant):
        return {}
    facts: dict[str, Any] = {"in_features_expr": ast.unparse(arg),
                             "in_features_at": f"{shown_file(built.filename)}:{arg.lineno}"}
    refit = square_refit(arg, got_features)
    if refit is not None:
        facts.update(in_features_fit=refit[0], old_side=refit[1], new_side=refit[2])
    return facts


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


def _wrapped(text: str) -> str:
    return text if re.fullmatch(r"[\w.]+", text) else f"({text})"


@probe("bmm_operands", provides=(
    "left_name", "left_shape", "right_name", "right_shape", "call", "fixed_call", "fixed_shape", "batch_fix"))
def bmm_operands(ctx: ProbeContext) -> Evidence | None:
    """Both operands of a failing `a @ b` / torch.bmm / torch.matmul, and the transpose that makes them fit."""
    record, expr = user_expression(ctx)
    if expr is None or expr.kind not in ("binop", "call"):
        return None
    found = tensor_arguments(record)[-2:]
    if len(found) < 2:
        return None
    left, right = found
    culprits = [describe_tensor(left.name, left.tensor)]
    if right.tensor is not left.tensor:
        culprits.append(describe_tensor(right.name, right.tensor))
    facts: dict[str, Any] = {"left_name": left.text, "right_name": right.text, "call": expr.text}
    sl, sr = left.shape, right.shape
    if sl is None or sr is None:
        return Evidence(facts, culprits)
    facts.update(left_shape=format_shape(sl), right_shape=format_shape(sr))
    method = expr.callee.text.rsplit(".", 1)[1] if expr.kind == "call" and "." in expr.callee.text else None
    if len(sl) >= 2 and len(sr) >= 2:
        facts.update(_bmm_fix(expr, method, left.text, right.text, sl, sr))
    return Evidence(facts, culprits)


def _bmm_fix(expr, method: str | None, left: str, right: str, sl: list[int], sr: list[int]) -> dict[str, Any]:
    if sl[:-2] != sr[:-2]:
        return {"batch_fix": f"{left} has batch dimensions {format_shape(sl[:-2])} and {right} has "
                             f"{format_shape(sr[:-2])}: they must be equal (or 1, with torch.matmul)"}
    if sr[-1] == sl[-1] and sr[-2] != sl[-1]:
        transposed = f"{_wrapped(right)}.transpose(-2, -1)"
        if expr.kind == "binop":
            fixed = f"{left} @ {transposed}"
        elif method is not None and expr.callee.text == f"{left}.{method}":
            fixed = f"{left}.{method}({transposed})"
        else:
            fixed = f"{expr.callee.text}({left}, {transposed})"
        return {"fixed_call": fixed, "fixed_shape": format_shape(sl[:-1] + [sr[-2]])}
    if sl[-2] == sr[-2] and sl[-1] != sr[-2]:
        transposed = f"{_wrapped(left)}.transpose(-2, -1)"
        fixed = (f"{transposed} @ {right}" if expr.kind == "binop"
                 else f"{expr.callee.text}({transposed}, {right})")
        return {"fixed_call": fixed, "fixed_shape": format_shape(sl[:-2] + [sl[-1], sr[-1]])}
    return {}


# --- mm / addmm operand rank ----------------------------------------------------------------------

# Which positional tensor of torch.mm(self, mat2) / torch.addmm(input, mat1, mat2) the message names,
# counted from the end so that a method call's receiver (x.mm(w)) lines up with torch.mm(x, w).
_MM_OPERAND_FROM_END = {"mat2": 1, "mat1": 2, "self": 2}


@probe("mm_operands", provides=("bad_name", "bad_shape", "bad_rank", "call", "matrix_fix", "matrix_fix_shape"))
def mm_operands(ctx: ProbeContext) -> Evidence | None:
    """The operand of a failing torch.mm / addmm call (on the user's line) that is not 2-D, and how to make it one."""
    record, expr = user_expression(ctx)
    operand = ctx.facts.get("operand")
    if expr is None or expr.kind != "call" or expr.callee is None or operand not in _MM_OPERAND_FROM_END:
        return None
    method, operands = call_operands(record, expr)
    if method not in ("mm", "addmm") or (method == "addmm" and operand == "self"):
        return None
    tensors = [op for op in operands if is_tensor(op.value)][:3]
    position = _MM_OPERAND_FROM_END[operand]
    if len(tensors) < position or (method == "mm" and len(tensors) != 2):
        return None
    bad = tensors[-position]
    shape = shape_of(bad.value)
    if len(shape) == 2:
        return None  # not the operand the message means: the call on this line is not the failing one
    facts: dict[str, Any] = {"bad_name": bad.text, "bad_shape": format_shape(shape), "bad_rank": len(shape),
                             "call": expr.text}
    if len(shape) == 1:
        # A vector on the left is one row; on the right it is one column.
        axis = 0 if position == 2 else 1
        fixed = [1, shape[0]] if axis == 0 else [shape[0], 1]
        facts.update(matrix_fix=f"{_wrapped(bad.text)}.unsqueeze({axis})", matrix_fix_shape=format_shape(fixed))
    return Evidence(facts, [describe_tensor(t.text, t.value) for t in tensors[-2:]])
