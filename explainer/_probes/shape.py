"""Probes for the shape family: which module, which operands, which dimension disagrees."""

from __future__ import annotations

import ast
import linecache
import math
import re
from typing import Any

from .._inspect import (MISSING, FrameRecord, Operand, child_modules, describe_module, describe_tensor,
                        failing_expression, format_shape, innermost_user_frame, is_module, is_tensor, module_frames, module_repr,
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


# --- shared helpers for the other shape rules ----------------------------------------------------

MAX_INDEX_ELEMENTS = 10_000_000
MAX_LISTED = 20
# Tensor methods that return a view with permuted or broken strides.
_STRIDE_OPS = ("transpose", "permute", "t", "T", "mT", "swapaxes", "swapdims", "movedim", "expand", "narrow",
               "unfold", "as_strided")
_STRIDE_OP_RE = re.compile(r"\.(" + "|".join(_STRIDE_OPS) + r")\b")
_GRAD_FN_OPS = {"TransposeBackward0": "transpose", "TransposeBackward1": "transpose", "PermuteBackward0": "permute",
                "TBackward0": "t", "ExpandBackward0": "expand", "UnfoldBackward0": "unfold"}


def _shape(tensor: Any) -> list[int]:
    return tensor_facts(tensor)["shape"]


def _user_expression(ctx: ProbeContext):
    record = innermost_user_frame(ctx.records)
    return record, (failing_expression(record) if record is not None else None)


def _user_node(record: FrameRecord | None) -> ast.AST | None:
    """The failing sub-expression of a user frame as an AST; statements too (`a += b`)."""
    segment = record.segment() if record is not None else None
    if segment is None:
        return None
    text = segment.strip()
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        pass
    try:
        body = ast.parse(text, mode="exec").body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def _name_of(ctx: ProbeContext, value: Any, expr=None) -> str | None:
    """How the user's code names a live object: an operand of the failing line, else a local variable."""
    if value is MISSING:
        return None
    if expr is not None:
        for operand in ([expr.callee] if expr.callee is not None else []) + list(expr.operands):
            if operand.value is value:
                return operand.text
    for record in reversed(user_frames(ctx.records)):
        table = record.locals
        if not isinstance(table, dict):
            continue
        for i, (name, candidate) in enumerate(list(table.items())):
            if i >= 2000:
                break
            if candidate is value and not name.startswith("_"):
                return name
    return None


def _frame_tensor(record: FrameRecord | None, *names: str) -> Any:
    table = record.locals if record is not None else None
    if not isinstance(table, dict):
        return MISSING
    for name in names:
        candidate = dict.get(table, name, MISSING)
        if candidate is not MISSING and is_tensor(candidate):
            return candidate
    return MISSING


def _receiver(record: FrameRecord | None, expr) -> tuple[str | None, Any]:
    """The tensor a failing call works on: x in `x.view(...)`, else the first tensor argument
    (`torch.reshape(x, ...)`). A receiver that is itself a call (`x.t().view(...)`) keeps its text only."""
    if record is None or expr is None or expr.kind != "call" or expr.callee is None:
        return None, MISSING
    text = expr.callee.text
    if "." in text:
        base = text.rsplit(".", 1)[0]
        value = resolve_text(base, record.namespace())
        if is_tensor(value):
            return base, value
        if value is MISSING and ("(" in base or "[" in base):
            return base, MISSING
    for operand in expr.operands:
        if is_tensor(operand.value):
            return operand.text, operand.value
    return None, MISSING


def _call_operands(record: FrameRecord | None, expr) -> tuple[str, list[Operand]]:
    """The called function's last name and its operands, a tensor receiver first: `x.mm(w)` and
    `torch.mm(x, w)` both give ("mm", [x, w])."""
    callee = expr.callee.text
    operands = list(expr.operands)
    if "." in callee:
        base = callee.rsplit(".", 1)[0]
        receiver = resolve_text(base, record.namespace()) if record is not None else MISSING
        if is_tensor(receiver):
            operands = [Operand(base, receiver)] + operands
    return callee.rsplit(".", 1)[-1], operands


def _module_label(ctx: ProbeContext, module: Any, expr=None) -> str:
    name = name_module(module, ctx.records)
    if name is None and expr is not None and expr.callee is not None and expr.callee.value is module:
        name = expr.callee.text
    return name or type(module).__name__


def _ints(text: Any) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", str(text))]


def _compact(value: Any) -> str:
    if isinstance(value, tuple) and value and all(v == value[0] for v in value):
        return str(value[0])
    return repr(value)


def _dims(shape: list[int]) -> str:
    return ", ".join(str(d) for d in shape)


# --- conv ------------------------------------------------------------------------------------------

def _conv_constructor(module: Any, in_channels: int) -> str:
    parts = [str(in_channels), str(safe_getattr(module, "out_channels")),
             f"kernel_size={_compact(safe_getattr(module, 'kernel_size'))}"]
    for attr, default in (("stride", "1"), ("padding", "0"), ("dilation", "1"), ("groups", "1")):
        value = safe_getattr(module, attr)
        if value is not MISSING and _compact(value) != default:
            parts.append(f"{attr}={_compact(value)}")
    return f"nn.{type(module).__name__}({', '.join(parts)})"


@probe("conv_operands", provides=(
    "module", "module_repr", "in_channels", "out_channels", "input_name", "input_shape", "input_rank",
    "batched_rank", "channel_dim", "got_channels", "conv_fix", "channels_last_fix", "channels_last_shape",
    "unsqueeze_fix", "unsqueeze_shape", "gray_fix", "rank_fix", "rank_fix_shape", "producer"))
def conv_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.ConvNd that refused its input: its channels, the input's name, shape and layout."""
    record, module = _failing_module(ctx, "_ConvNd")
    if module is None:
        return None
    _, expr = _user_expression(ctx)
    name = _module_label(ctx, module, expr)
    in_channels = safe_getattr(module, "in_channels")
    kernel = safe_getattr(module, "kernel_size")
    spatial = len(kernel) if isinstance(kernel, tuple) else 2
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module), "batched_rank": spatial + 2}
    if isinstance(in_channels, int):
        facts["in_channels"] = in_channels
    out_channels = safe_getattr(module, "out_channels")
    if isinstance(out_channels, int):
        facts["out_channels"] = out_channels
    culprits = [describe_module(name, module)]
    value = _frame_tensor(record, "input")
    if value is MISSING:
        return Evidence(facts, culprits)
    input_name = _name_of(ctx, value, expr)
    shape = _shape(value)
    rank = len(shape)
    facts.update(input_name=input_name or f"the input of {name}", input_shape=format_shape(shape), input_rank=rank)
    culprits.append(describe_tensor(input_name or "input", value))
    if input_name is None:
        facts["producer"] = f"the layer before {name}"
    if rank in (spatial + 1, spatial + 2):
        channel_dim = 1 if rank == spatial + 2 else 0
        got = shape[channel_dim]
        facts.update(channel_dim=channel_dim, got_channels=got, conv_fix=_conv_constructor(module, got))
        if input_name and rank == spatial + 2 and shape[-1] == in_channels and got != in_channels:
            order = (0, rank - 1, *range(1, rank - 1))
            facts["channels_last_fix"] = f"{input_name}.permute{order}"
            facts["channels_last_shape"] = format_shape([shape[i] for i in order])
        if input_name and rank == spatial + 1 and in_channels == 1:
            facts["unsqueeze_fix"] = f"{input_name}.unsqueeze(1)"
            facts["unsqueeze_shape"] = format_shape(shape[:1] + [1] + shape[1:])
        if input_name and rank == spatial + 2 and got == 1 and isinstance(in_channels, int) and in_channels > 1:
            facts["gray_fix"] = f"{input_name}.expand(-1, {in_channels}{', -1' * spatial})"
    elif input_name:
        _conv_rank_fix(facts, input_name, shape, spatial, in_channels)
    return Evidence(facts, culprits)


def _conv_rank_fix(facts: dict[str, Any], name: str, shape: list[int], spatial: int, in_channels: Any) -> None:
    rank, batched = len(shape), spatial + 2
    if rank < batched - 1:
        if in_channels == 1:
            missing = batched - rank
            facts["rank_fix"] = name + ".unsqueeze(0)" * missing
            facts["rank_fix_shape"] = format_shape([1] * missing + shape)
        elif rank == 2 and spatial == 2 and isinstance(in_channels, int) and shape[1] % in_channels == 0:
            side = math.isqrt(shape[1] // in_channels)
            if side * side * in_channels == shape[1]:
                facts["rank_fix"] = f"{name}.view({shape[0]}, {in_channels}, {side}, {side})"
                facts["rank_fix_shape"] = format_shape([shape[0], in_channels, side, side])
    elif rank > batched:
        ones = [i for i, d in enumerate(shape) if d == 1]
        if ones and rank - 1 == batched:
            facts["rank_fix"] = f"{name}.squeeze({ones[0]})"
            facts["rank_fix_shape"] = format_shape(shape[:ones[0]] + shape[ones[0] + 1:])
        else:
            extra = rank - batched
            facts["rank_fix"] = f"{name}.flatten(0, {extra})"
            facts["rank_fix_shape"] = format_shape([math.prod(shape[:extra + 1])] + shape[extra + 1:])


# --- broadcasting ----------------------------------------------------------------------------------

def _binop_tensors(record: FrameRecord):
    """((text, tensor), (text, tensor)) for the failing `a + b`, `a += b`, `torch.add(a, b)` or `a.mul(b)`."""
    node = _user_node(record)
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
    sa, sb = _shape(a), _shape(b)
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


# --- view / reshape --------------------------------------------------------------------------------

@probe("reshape_operands", provides=(
    "input_name", "input_shape", "requested_numel", "suggested_view", "suggested_shape", "flatten_fix",
    "flatten_shape", "flatten_features", "call"))
def reshape_operands(ctx: ProbeContext) -> Evidence | None:
    """The tensor being reshaped and a shape with the right element count."""
    record, expr = _user_expression(ctx)
    requested = _ints(ctx.facts.get("requested", ""))
    numel = ctx.facts.get("numel")
    if not isinstance(numel, int) or not requested:
        return None
    known = math.prod(d for d in requested if d != -1)
    facts: dict[str, Any] = {"requested_numel": known}
    culprits = []
    name, value = _receiver(record, expr)
    if expr is not None and expr.kind == "call":
        facts["call"] = expr.text
    if value is MISSING or name is None:
        return Evidence(facts, culprits)
    shape = _shape(value)
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
                facts["suggested_view"] = f"{name}.{method}({_dims(fixed)})"
                facts["suggested_shape"] = format_shape(fixed)
                break
    return Evidence(facts, culprits)


@probe("noncontiguous_view", provides=(
    "input_name", "input_shape", "input_stride", "made_by", "made_at", "reshape_fix", "contiguous_fix", "call"))
def noncontiguous_view(ctx: ProbeContext) -> Evidence | None:
    """The tensor `.view` refused, its strides, and the op that made it non-contiguous when visible."""
    record, expr = _user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None or not expr.callee.text.endswith(".view"):
        return None
    facts: dict[str, Any] = {"call": expr.text}
    head, _, tail = expr.text.rpartition(".view(")
    facts["reshape_fix"] = f"{head}.reshape({tail}"
    facts["contiguous_fix"] = f"{head}.contiguous().view({tail}"
    name, value = _receiver(record, expr)
    culprits = []
    if name is not None:
        facts["input_name"] = name
        op = _STRIDE_OP_RE.search(name)
        if op:
            facts["made_by"] = op.group(1)
    if value is not MISSING:
        import torch

        with torch._C.DisableTorchFunction():
            stride = tuple(int(s) for s in torch.Tensor.stride(value))
        facts.update(input_shape=format_shape(_shape(value)), input_stride=format_shape(stride))
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
        op = _STRIDE_OP_RE.search(found.group(1))
        if op:
            facts.setdefault("made_by", op.group(1))
            facts["made_at"] = f"line {lineno}: {line.strip()}"
        return


# --- cat / stack -----------------------------------------------------------------------------------

def _literal_int(node: ast.AST | None, namespace: dict[str, Any]) -> int | None:
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = resolve(node, namespace)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tensor_list(record: FrameRecord | None):
    """(list text, [(name, tensor)], dim) for a failing `torch.cat([a, b], dim=1)` / `torch.stack(xs)`."""
    node = _user_node(record)
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
    dim = _literal_int(dim_node, namespace) if dim_node is not None else 0
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
    shapes = [_shape(v) for _, v in tensors]
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


# --- losses ----------------------------------------------------------------------------------------

@probe("loss_operands", provides=(
    "loss", "input_name", "input_shape", "target_name", "target_shape", "input_batch", "target_batch",
    "batch_ratio", "num_classes", "squeeze_fix", "view_as_fix", "target_squeeze_fix", "argmax_fix", "permute_fix",
    "permute_shape", "flatten_fix"))
def loss_operands(ctx: ProbeContext) -> Evidence | None:
    """The loss (module or function) and its input and target, named as the failing line names them."""
    record, module = _failing_module(ctx, "_Loss")
    _, expr = _user_expression(ctx)
    if module is not None:
        loss = _module_label(ctx, module, expr)
        prediction, target = _frame_tensor(record, "input"), _frame_tensor(record, "target")
    else:
        if expr is None or expr.kind != "call":
            return None
        tensors = [op.value for op in expr.operands if is_tensor(op.value)]
        if len(tensors) < 2:
            return None
        loss = expr.callee.text if expr.callee is not None else "the loss"
        prediction, target = tensors[0], tensors[1]
    facts: dict[str, Any] = {"loss": loss}
    culprits = [describe_module(loss, module)] if module is not None else []
    if prediction is MISSING or target is MISSING:
        return Evidence(facts, culprits)
    p_name = _name_of(ctx, prediction, expr) or "input"
    t_name = _name_of(ctx, target, expr) or "target"
    sp, st = _shape(prediction), _shape(target)
    facts.update(input_name=p_name, input_shape=format_shape(sp), target_name=t_name, target_shape=format_shape(st))
    culprits += [describe_tensor(p_name, prediction), describe_tensor(t_name, target)]
    if sp and st:
        facts.update(input_batch=sp[0], target_batch=st[0])
        if sp[0] != st[0] and st[0] and sp[0] % st[0] == 0:
            facts["batch_ratio"] = sp[0] // st[0]
    if len(sp) >= 2:
        facts["num_classes"] = sp[1]
    if sp != st and math.prod(sp) == math.prod(st):
        facts["view_as_fix"] = f"{t_name}.view_as({p_name})"
        if sp == st + [1]:
            facts["squeeze_fix"] = f"{p_name}.squeeze(-1)"
    if len(st) == 2 and st[1] == 1 and sp and st[0] == sp[0]:
        facts["target_squeeze_fix"] = f"{t_name}.squeeze(1)"
    if st == sp and len(st) == 2 and not tensor_facts(target)["dtype"].startswith("float"):
        facts["argmax_fix"] = f"{t_name}.argmax(1)"
    if len(sp) == len(st) + 1 and len(st) >= 2 and sp[:-1] == st:
        order = (0, len(sp) - 1, *range(1, len(sp) - 1))
        facts.update(permute_fix=f"{p_name}.permute{order}", permute_shape=format_shape([sp[i] for i in order]),
                     flatten_fix=f"{p_name}.reshape(-1, {sp[-1]}), {t_name}.reshape(-1)", num_classes=sp[-1])
    return Evidence(facts, culprits)


# --- embedding -------------------------------------------------------------------------------------

def _index_range(index: Any, size: int) -> dict[str, int] | None:
    """The largest id and how many ids fall outside [0, size) (negative ones counted too): reductions, never values."""
    import torch

    if type(index) is not torch.Tensor or index.is_floating_point() or index.is_complex():
        return None
    if index.device.type != "cpu" or not 0 < index.numel() <= MAX_INDEX_ELEMENTS:
        return None
    with torch._C.DisableTorchFunction(), torch.no_grad():
        negative = int((index < 0).sum())
        return {"max_index": int(index.max()), "negative_count": negative,
                "out_of_range": int((index >= size).sum()) + negative}


def _functional_embedding(ctx: ProbeContext):
    for record in reversed(ctx.records):
        if record.name == "embedding" and record.filename.replace("\\", "/").endswith("torch/nn/functional.py"):
            return record
    return None


@probe("embedding_index", provides=(
    "module", "num_embeddings", "embedding_dim", "index_name", "index_shape", "max_index", "negative_count",
    "out_of_range", "needed_embeddings", "embedding_fix"))
def embedding_index(ctx: ProbeContext) -> Evidence | None:
    """The nn.Embedding (or F.embedding weight) and the largest index it was given."""
    record, module = _failing_module(ctx, "Embedding")
    _, expr = _user_expression(ctx)
    if module is not None:
        weight = safe_getattr(module, "weight")
        label = _module_label(ctx, module, expr)
        culprits = [describe_module(label, module)]
    else:
        record = _functional_embedding(ctx)
        weight = _frame_tensor(record, "weight")
        if record is None or weight is MISSING:
            return None
        label = _name_of(ctx, weight, expr) or "the embedding weight"
        culprits = [describe_tensor(label, weight)]
    if not is_tensor(weight):
        return None
    rows, dim = (_shape(weight) + [0, 0])[:2]
    facts: dict[str, Any] = {"module": label, "num_embeddings": rows, "embedding_dim": dim}
    index = _frame_tensor(record, "input")
    if index is MISSING:
        return Evidence(facts, culprits)
    index_name = _name_of(ctx, index, expr) or "the index tensor"
    facts.update(index_name=index_name, index_shape=format_shape(_shape(index)))
    culprits.append(describe_tensor(index_name, index))
    found = _index_range(index, rows)
    if found:
        facts.update(found)
        if found["max_index"] >= rows:
            facts["needed_embeddings"] = found["max_index"] + 1
            facts["embedding_fix"] = f"nn.Embedding({found['max_index'] + 1}, {dim})"
    return Evidence(facts, culprits)


@probe("index_select_operands", provides=(
    "call", "select_name", "select_shape", "select_dim", "select_size", "index_name", "index_shape", "max_index",
    "negative_count", "out_of_range"))
def index_select_operands(ctx: ProbeContext) -> Evidence | None:
    """A failing torch.index_select(x, dim, index) / x.index_select(dim, index) on the user's line: the size of
    the selected dimension and how many indices fall outside it (the same message as an embedding lookup)."""
    record, expr = _user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None:
        return None
    method, operands = _call_operands(record, expr)
    if method != "index_select":
        return None
    if len(operands) != 3 or not is_tensor(operands[0].value) or not is_tensor(operands[2].value):
        return None
    source, index = operands[0], operands[2]
    dim = _literal_int(_parse_expression(operands[1].text), record.namespace())
    shape = _shape(source.value)
    if dim is None or not -len(shape) <= dim < max(len(shape), 1) or not shape:
        return None
    dim %= len(shape)
    found = _index_range(index.value, shape[dim])
    if not found or not found["out_of_range"]:
        return None
    facts: dict[str, Any] = {"call": expr.text, "select_name": source.text, "select_shape": format_shape(shape),
                             "select_dim": dim, "select_size": shape[dim], "index_name": index.text,
                             "index_shape": format_shape(_shape(index.value)), **found}
    return Evidence(facts, [describe_tensor(source.text, source.value), describe_tensor(index.text, index.value)])


def _parse_expression(text: str) -> ast.AST | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


# --- dim out of range ------------------------------------------------------------------------------

@probe("dim_operand", provides=("tensor_name", "tensor_shape", "tensor_rank", "last_dim", "call"))
def dim_operand(ctx: ProbeContext) -> Evidence | None:
    """The tensor whose dimension was asked for, and its rank."""
    record, expr = _user_expression(ctx)
    name, value = _receiver(record, expr)
    if value is MISSING or name is None:
        return None
    shape = _shape(value)
    facts = {"tensor_name": name, "tensor_shape": format_shape(shape), "tensor_rank": len(shape),
             "last_dim": max(len(shape) - 1, 0), "call": expr.text}
    return Evidence(facts, [describe_tensor(name, value)])


# --- load_state_dict size mismatches ---------------------------------------------------------------

_SIZE_MISMATCH_RE = re.compile(
    r"size mismatch for (?P<key>[\w.]+): copying a param with shape torch\.Size\(\[(?P<ckpt>[\d, ]*)\]\) from "
    r"checkpoint, the shape in current model is torch\.Size\(\[(?P<model>[\d, ]*)\]\)")


def _submodule(root: Any, path: str) -> Any:
    module = root
    for part in path.split(".") if path else []:
        module = child_modules(module).get(part, MISSING)
        if module is MISSING or module is None:
            return MISSING
    return module


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
        return f"nn.{cls}({ckpt[1] * groups}, {ckpt[0]}, kernel_size={_compact(kernel)}{extra})"
    if ("Norm" in cls) and len(ckpt) == 1:
        return f"nn.{cls}({ckpt[0]})"
    return None


@probe("state_dict_sizes", provides=("model", "mismatch_count", "mismatches", "rebuild"))
def state_dict_sizes(ctx: ProbeContext) -> Evidence | None:
    """Every `size mismatch for KEY` in the message, with the live parameter and the layer that would fit."""
    message = ctx.exception.args[0] if ctx.exception is not None and ctx.exception.args else None
    if not isinstance(message, str):
        return None
    found = [(m.group("key"), _ints(m.group("ckpt")), _ints(m.group("model")))
             for m in _SIZE_MISMATCH_RE.finditer(message)]
    if not found:
        return None
    lines = [f"{key}: checkpoint {format_shape(c)} vs model {format_shape(m)}" for key, c, m in found]
    facts: dict[str, Any] = {"mismatch_count": len(found), "mismatches": "; ".join(lines[:10])
                             + (f"; ... and {len(lines) - 10} more" if len(lines) > 10 else "")}
    record, expr = _user_expression(ctx)
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
        owner = _submodule(model, path)
        if owner is MISSING:
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


# --- recurrent layers ------------------------------------------------------------------------------

@probe("rnn_input", provides=(
    "module", "module_repr", "input_size", "hidden_size", "batch_first", "input_name", "input_shape",
    "got_features", "layout", "rnn_fix", "transpose_fix", "transpose_shape"))
def rnn_input(ctx: ProbeContext) -> Evidence | None:
    """The RNN/LSTM/GRU, how it reads its input's dimensions (batch_first) and what would fit."""
    record, module = _failing_module(ctx, "RNNBase")
    if module is None:
        return None
    _, expr = _user_expression(ctx)
    name = _module_label(ctx, module, expr)
    input_size, hidden = safe_getattr(module, "input_size"), safe_getattr(module, "hidden_size")
    batch_first = safe_getattr(module, "batch_first") is True
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module), "input_size": input_size,
                             "hidden_size": hidden, "batch_first": batch_first}
    culprits = [describe_module(name, module)]
    value = _frame_tensor(record, "input")
    if value is MISSING:
        return Evidence(facts, culprits)
    input_name = _name_of(ctx, value, expr) or f"the input of {name}"
    shape = _shape(value)
    facts.update(input_name=input_name, input_shape=format_shape(shape), got_features=shape[-1] if shape else 0)
    culprits.append(describe_tensor(input_name, value))
    if len(shape) == 3:
        labels = ("batch", "seq", "features") if batch_first else ("seq", "batch", "features")
        facts["layout"] = "(" + ", ".join(f"{label}={size}" for label, size in zip(labels, shape)) + ")"
    options = []
    for attr, default in (("num_layers", 1), ("bidirectional", False), ("batch_first", False)):
        option = safe_getattr(module, attr)
        if option is not MISSING and option != default:
            options.append(f"{attr}={option}")
    facts["rnn_fix"] = f"nn.{type(module).__name__}({', '.join([str(facts['got_features']), str(hidden)] + options)})"
    if shape and input_size in shape[:-1]:
        j = shape.index(input_size)
        swapped = list(shape)
        swapped[j], swapped[-1] = swapped[-1], swapped[j]
        facts["transpose_fix"] = f"{input_name}.transpose({j}, {len(shape) - 1})"
        facts["transpose_shape"] = format_shape(swapped)
    return Evidence(facts, culprits)


# --- attention -------------------------------------------------------------------------------------

@probe("attention_operands", provides=(
    "module", "module_repr", "embed_dim", "num_heads", "batch_first", "query_name", "query_shape", "key_shape",
    "got_embed", "layout", "seq_first_layout", "mha_fix", "layer", "layer_fix", "projection_fix"))
def attention_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.MultiheadAttention (and the Transformer layer around it), its embed_dim and the query it got."""
    record, module = _failing_module(ctx, "MultiheadAttention")
    if module is None:
        return None
    _, expr = _user_expression(ctx)
    name = _module_label(ctx, module, expr)
    embed_dim, heads = safe_getattr(module, "embed_dim"), safe_getattr(module, "num_heads")
    batch_first = safe_getattr(module, "batch_first") is True
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module), "embed_dim": embed_dim,
                             "num_heads": heads, "batch_first": batch_first}
    culprits = [describe_module(name, module)]
    layer, layer_record = None, None
    for outer, owner in reversed(module_frames(ctx.records)):
        if owner is not module and type(owner).__name__ in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
            layer, layer_record = owner, outer
            break
    if layer is not None:
        facts["layer"] = _module_label(ctx, layer, expr)
        culprits.append(describe_module(facts["layer"], layer))
    # With batch_first=True, forward() rebinds query/key to transposed copies: read them from the caller.
    query = key = MISSING
    if expr is not None and expr.kind == "call" and expr.callee is not None and expr.callee.value is module:
        tensors = [op.value for op in expr.operands if is_tensor(op.value)]
        query, key = (tensors + [MISSING, MISSING])[:2]
    elif layer_record is not None:
        query = _frame_tensor(layer_record, "x")
    swap = False
    if query is MISSING:
        query, key, swap = _frame_tensor(record, "query"), _frame_tensor(record, "key"), batch_first
    if query is MISSING:
        return Evidence(facts, culprits)
    query_name = _name_of(ctx, query, expr) or "query"
    shape = _shape(query)
    if swap and len(shape) == 3:
        shape = [shape[1], shape[0], shape[2]]
    facts.update(query_name=query_name, query_shape=format_shape(shape), got_embed=shape[-1] if shape else 0)
    culprits.append(describe_tensor(query_name, query))
    if key is not MISSING:
        key_shape = _shape(key)
        if swap and len(key_shape) == 3:
            key_shape = [key_shape[1], key_shape[0], key_shape[2]]
        facts["key_shape"] = format_shape(key_shape)
    if len(shape) == 3:
        labels = ("N", "L", "E") if batch_first else ("L", "N", "E")
        facts["layout"] = "(" + ", ".join(f"{label}={size}" for label, size in zip(labels, shape)) + ")"
        if not batch_first:
            facts["seq_first_layout"] = facts["layout"]
    got = facts["got_embed"]
    if isinstance(heads, int) and got:
        fitting = max(h for h in range(1, heads + 1) if got % h == 0)
        suffix = ", batch_first=True" if batch_first else ""
        facts["mha_fix"] = f"nn.MultiheadAttention({got}, {fitting}{suffix})"
        if layer is not None:
            facts["layer_fix"] = f"nn.{type(layer).__name__}(d_model={got}, nhead={fitting}{suffix})"
    if isinstance(embed_dim, int) and got and got != embed_dim:
        facts["projection_fix"] = f"nn.Linear({got}, {embed_dim})"
    return Evidence(facts, culprits)


# --- batched matmul --------------------------------------------------------------------------------

def _wrapped(text: str) -> str:
    return text if re.fullmatch(r"[\w.]+", text) else f"({text})"


@probe("bmm_operands", provides=(
    "left_name", "left_shape", "right_name", "right_shape", "call", "fixed_call", "fixed_shape", "batch_fix"))
def bmm_operands(ctx: ProbeContext) -> Evidence | None:
    """Both operands of a failing `a @ b` / torch.bmm / torch.matmul, and the transpose that makes them fit."""
    record, expr = _user_expression(ctx)
    if expr is None or expr.kind not in ("binop", "call"):
        return None
    operands = list(expr.operands)
    method = None
    if expr.kind == "call" and expr.callee is not None and "." in expr.callee.text:
        base, method = expr.callee.text.rsplit(".", 1)
        receiver = resolve_text(base, record.namespace())
        if is_tensor(receiver):
            operands = [Operand(base, receiver)] + operands
    tensors = [op for op in operands if is_tensor(op.value)][-2:]
    if len(tensors) < 2:
        return None
    left, right = tensors
    sl, sr = _shape(left.value), _shape(right.value)
    facts: dict[str, Any] = {"left_name": left.text, "left_shape": format_shape(sl), "right_name": right.text,
                             "right_shape": format_shape(sr), "call": expr.text}
    culprits = [describe_tensor(left.text, left.value), describe_tensor(right.text, right.value)]
    if len(sl) >= 2 and len(sr) >= 2:
        if sl[:-2] != sr[:-2]:
            facts["batch_fix"] = (f"{left.text} has batch dimensions {format_shape(sl[:-2])} and {right.text} has "
                                  f"{format_shape(sr[:-2])}: they must be equal (or 1, with torch.matmul)")
        elif sr[-1] == sl[-1] and sr[-2] != sl[-1]:
            transposed = f"{_wrapped(right.text)}.transpose(-2, -1)"
            if expr.kind == "binop":
                fixed = f"{left.text} @ {transposed}"
            elif method is not None and expr.callee.text == f"{left.text}.{method}":
                fixed = f"{left.text}.{method}({transposed})"
            else:
                fixed = f"{expr.callee.text}({left.text}, {transposed})"
            facts.update(fixed_call=fixed, fixed_shape=format_shape(sl[:-1] + [sr[-2]]))
        elif sl[-2] == sr[-2] and sl[-1] != sr[-2]:
            transposed = f"{_wrapped(left.text)}.transpose(-2, -1)"
            fixed = (f"{transposed} @ {right.text}" if expr.kind == "binop"
                     else f"{expr.callee.text}({transposed}, {right.text})")
            facts.update(fixed_call=fixed, fixed_shape=format_shape(sl[:-2] + [sl[-1], sr[-1]]))
    return Evidence(facts, culprits)


# --- mm / addmm operand rank ----------------------------------------------------------------------

# Which positional tensor of torch.mm(self, mat2) / torch.addmm(input, mat1, mat2) the message names,
# counted from the end so that a method call's receiver (x.mm(w)) lines up with torch.mm(x, w).
_MM_OPERAND_FROM_END = {"mat2": 1, "mat1": 2, "self": 2}


@probe("mm_operands", provides=("bad_name", "bad_shape", "bad_rank", "call", "matrix_fix", "matrix_fix_shape"))
def mm_operands(ctx: ProbeContext) -> Evidence | None:
    """The operand of a failing torch.mm / addmm call (on the user's line) that is not 2-D, and how to make it one."""
    record, expr = _user_expression(ctx)
    operand = ctx.facts.get("operand")
    if expr is None or expr.kind != "call" or expr.callee is None or operand not in _MM_OPERAND_FROM_END:
        return None
    method, operands = _call_operands(record, expr)
    if method not in ("mm", "addmm") or (method == "addmm" and operand == "self"):
        return None
    tensors = [op for op in operands if is_tensor(op.value)][:3]
    position = _MM_OPERAND_FROM_END[operand]
    if len(tensors) < position or (method == "mm" and len(tensors) != 2):
        return None
    bad = tensors[-position]
    shape = _shape(bad.value)
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


# --- expand ----------------------------------------------------------------------------------------

@probe("expand_layout", provides=("aligned_shape", "aligned_dims", "kept_target"), live=False)
def expand_layout(ctx: ProbeContext) -> Evidence | None:
    """From the message's Target sizes and Tensor sizes: a view of the tensor whose dimensions line up."""
    target, sizes = _ints(ctx.facts.get("target_sizes", "")), _ints(ctx.facts.get("tensor_sizes", ""))
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
            facts.update(aligned_shape=format_shape(aligned), aligned_dims=_dims(aligned))
    offset = len(target) - len(sizes)
    kept = [t if i < offset or sizes[i - offset] in (1, t) or t == -1 else -1 for i, t in enumerate(target)]
    if kept != target:
        facts["kept_target"] = _dims(kept)
    return Evidence(facts) if facts else None


@probe("expand_operand", provides=("tensor_name", "call"))
def expand_operand(ctx: ProbeContext) -> Evidence | None:
    """The tensor a failing `.expand(...)` / `.expand_as(...)` was called on."""
    record, expr = _user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None or \
            not expr.callee.text.rsplit(".", 1)[-1].startswith("expand"):
        return None
    name, value = _receiver(record, expr)
    if name is None:
        return None
    facts = {"tensor_name": name, "call": expr.text}
    return Evidence(facts, [describe_tensor(name, value)] if value is not MISSING else [])


# --- normalization layers --------------------------------------------------------------------------

@probe("layer_norm_fix", provides=("norm_fix", "norm_tail"), live=False)
def layer_norm_fix(ctx: ProbeContext) -> Evidence | None:
    """The normalized_shape the message's input would need: its last len(normalized_shape) sizes."""
    normalized, size = _ints(ctx.facts.get("normalized_shape", "")), _ints(ctx.facts.get("input_size", ""))
    if not normalized or len(size) < len(normalized):
        return None
    tail = size[-len(normalized):]
    arg = str(tail[0]) if len(tail) == 1 else repr(tail)
    return Evidence({"norm_fix": f"nn.LayerNorm({arg})", "norm_tail": _dims(tail)})


def _norm_module(ctx: ProbeContext, *types: str) -> tuple[dict[str, Any], list, Any, Any]:
    record, module = _failing_module(ctx, *types)
    if module is None:
        return {}, [], None, MISSING
    _, expr = _user_expression(ctx)
    name = _module_label(ctx, module, expr)
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module)}
    culprits = [describe_module(name, module)]
    value = _frame_tensor(record, "input")
    if value is not MISSING:
        input_name = _name_of(ctx, value, expr) or f"the input of {name}"
        facts.update(input_name=input_name, input_shape=format_shape(_shape(value)))
        culprits.append(describe_tensor(input_name, value))
    return facts, culprits, module, value


@probe("layer_norm_operands", provides=("module", "module_repr", "input_name", "input_shape"))
def layer_norm_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.LayerNorm that refused its input, and that input."""
    facts, culprits, module, _ = _norm_module(ctx, "LayerNorm")
    return Evidence(facts, culprits) if module is not None else None


@probe("batchnorm_operands", provides=("module", "module_repr", "input_name", "input_shape", "bn_fix"))
def batchnorm_operands(ctx: ProbeContext) -> Evidence | None:
    """The BatchNorm whose num_features differs from its input's channels (dimension 1)."""
    facts, culprits, module, value = _norm_module(ctx, "_NormBase")
    if module is None:
        return None
    shape = _shape(value) if value is not MISSING else []
    if len(shape) >= 2:
        facts["bn_fix"] = f"nn.{type(module).__name__}({shape[1]})"
    return Evidence(facts, culprits)


# --- recurrent hidden state ------------------------------------------------------------------------

@probe("rnn_hidden", provides=(
    "module", "module_repr", "hidden_name", "hidden_shape", "input_name", "input_shape", "batch_dim",
    "hidden_fix"))
def rnn_hidden(ctx: ProbeContext) -> Evidence | None:
    """The RNN/GRU/LSTM, the initial state it refused (h0 or c0) and a state built from the input's batch."""
    # The size check runs in a helper method of the same module: read the arguments from its forward.
    found = [(r, m) for r, m in module_frames(ctx.records) if r.name == "forward" and
             any(base.__name__ == "RNNBase" for base in type(m).__mro__)]
    if not found:
        return None
    record, module = found[-1]
    _, expr = _user_expression(ctx)
    name = _module_label(ctx, module, expr)
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module)}
    culprits = [describe_module(name, module)]
    table = record.locals if isinstance(record.locals, dict) else {}
    hx = dict.get(table, "hx", MISSING)
    which = _ints(ctx.facts.get("which", "")) if ctx.facts.get("which") else [0]
    if isinstance(hx, tuple) and which and which[0] < len(hx):
        hx = hx[which[0]]
    value = _frame_tensor(record, "input")
    batch_first = safe_getattr(module, "batch_first") is True
    if value is not MISSING:
        input_name = _name_of(ctx, value, expr) or f"the input of {name}"
        facts.update(input_name=input_name, input_shape=format_shape(_shape(value)),
                     batch_dim=0 if batch_first else 1)
        culprits.append(describe_tensor(input_name, value))
        expected = _ints(ctx.facts.get("expected", ""))
        if len(expected) == 3:
            size = f"{input_name}.size({facts['batch_dim']})" if input_name.isidentifier() else str(expected[1])
            facts["hidden_fix"] = f"torch.zeros({expected[0]}, {size}, {expected[2]})"
    if is_tensor(hx):
        hidden_name = _name_of(ctx, hx, expr) or "the initial hidden state"
        facts.update(hidden_name=hidden_name, hidden_shape=format_shape(_shape(hx)))
        culprits.append(describe_tensor(hidden_name, hx))
    return Evidence(facts, culprits)


# --- pooling ---------------------------------------------------------------------------------------

@probe("pool_window", provides=("max_kernel",), live=False)
def pool_window(ctx: ProbeContext) -> Evidence | None:
    """The largest window that fits the message's input size (its smallest spatial dimension)."""
    spatial = _ints(ctx.facts.get("input_spatial", ""))
    return Evidence({"max_kernel": min(spatial)}) if spatial else None


def _pool_output(size: int, kernel: int, stride: int, padding: int, ceil: bool) -> int:
    span = size + 2 * padding - kernel
    return (-(-span // stride) if ceil else span // stride) + 1


@probe("pool_operands", provides=(
    "module", "module_repr", "input_name", "input_shape", "kernel", "ceil_fix", "model_input", "min_input"))
def pool_operands(ctx: ProbeContext) -> Evidence | None:
    """The pooling layer whose window does not fit its input, and the smallest model input that would fit."""
    facts, culprits, module, value = _norm_module(ctx, "_MaxPoolNd", "_AvgPoolNd")
    if module is None:
        return None
    cls = type(module).__name__
    rank = 3 if cls.endswith("3d") else 2 if cls.endswith("2d") else 1

    def per_dim(attr: str, default: int) -> list[int]:
        option = safe_getattr(module, attr)
        option = default if option is MISSING or option is None or option == [] else option
        return list(option) if isinstance(option, (tuple, list)) else [option] * rank

    kernel, padding = per_dim("kernel_size", 1), per_dim("padding", 0)
    stride = per_dim("stride", 0)
    stride = [s or k for s, k in zip(stride, kernel)]
    facts["kernel"] = "x".join(str(k) for k in kernel)
    shape = _shape(value) if value is not MISSING else []
    if len(shape) < rank or not all(isinstance(v, int) for v in kernel + stride + padding):
        return Evidence(facts, culprits)
    spatial = shape[-rank:]
    if all(_pool_output(n, k, s, p, True) >= 1 for n, k, s, p in zip(spatial, kernel, stride, padding)):
        facts["ceil_fix"] = f"nn.{cls}({_compact(tuple(kernel))}, ceil_mode=True)"
    # The model's own input (the user's failing call) and how much the network shrank it before this layer.
    _, expr = _user_expression(ctx)
    if expr is not None and expr.kind == "call":
        first = next((op for op in expr.operands if is_tensor(op.value)), None)
        outer = _shape(first.value) if first is not None else []
        if first is not None and first.value is not value and len(outer) == len(shape):
            scales = [o // n for o, n in zip(outer[-rank:], spatial) if n and o % n == 0]
            if len(scales) == rank:
                needed = [sc * (k - 2 * p) for sc, k, p in zip(scales, kernel, padding)]
                facts["model_input"] = first.text
                facts["min_input"] = "x".join(str(n) for n in needed)
    return Evidence(facts, culprits)


# --- integer index past the end --------------------------------------------------------------------

@probe("index_operand", provides=("tensor_name", "tensor_shape", "call"))
def index_operand(ctx: ProbeContext) -> Evidence | None:
    """The tensor subscripted on the failing line whose dimension has the size the message names."""
    record = innermost_user_frame(ctx.records)
    node = _user_node(record)
    if node is None:
        return None
    dim, size = ctx.facts.get("dim"), ctx.facts.get("size")
    namespace = record.namespace()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Subscript):
            continue
        value = resolve(sub.value, namespace)
        if not is_tensor(value):
            continue
        shape = _shape(value)
        if isinstance(dim, int) and dim < len(shape) and shape[dim] == size:
            name = ast.unparse(sub.value)
            return Evidence({"tensor_name": name, "tensor_shape": format_shape(shape), "call": ast.unparse(sub)},
                            [describe_tensor(name, value)])
    return None


# --- attention heads -------------------------------------------------------------------------------

@probe("attention_heads", provides=("embed_dim", "num_heads", "valid_heads", "embed_dim_up"))
def attention_heads(ctx: ProbeContext) -> Evidence | None:
    """embed_dim and num_heads from the failing MultiheadAttention constructor's own frame."""
    for record in reversed(ctx.records):
        table = record.locals
        if not isinstance(table, dict):
            continue
        embed_dim, num_heads = dict.get(table, "embed_dim"), dict.get(table, "num_heads")
        if type(embed_dim) is int and type(num_heads) is int and embed_dim > 0 and num_heads > 0:
            valid = [h for h in range(1, min(embed_dim, 64) + 1) if embed_dim % h == 0]
            up = -(-embed_dim // num_heads) * num_heads
            return Evidence({"embed_dim": embed_dim, "num_heads": num_heads,
                             "valid_heads": ", ".join(str(h) for h in valid[-6:]), "embed_dim_up": up})
    return None


# --- loss input/target sizes read from the message -------------------------------------------------

def _size_list(text: Any) -> list[int] | None:
    """'1, 3, 1356, 204\\n0' (a size wrapped by a paste) -> [1, 3, 1356, 2040]; None if not a size list."""
    parts = [re.sub(r"\s+", "", part) for part in str(text).split(",")]
    if parts == [""]:
        return []
    if not all(part.isdigit() for part in parts):
        return None
    return [int(part) for part in parts]


def _broadcast(a: list[int], b: list[int]) -> list[int] | None:
    out = []
    for x, y in zip([1] * (len(b) - len(a)) + a, [1] * (len(a) - len(b)) + b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return out


def _broadcast_clash(a: list[int], b: list[int]) -> tuple[int, int, int] | None:
    """The first dimension (of the broadcast result) where a and b differ and neither is 1: (dim, size_a, size_b)."""
    rank = max(len(a), len(b))
    for dim, (x, y) in enumerate(zip([1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b)):
        if x != y and 1 not in (x, y):
            return dim, x, y
    return None


@probe("loss_size_text", provides=("input_dims", "target_dims", "broadcast_dims", "clash_dim", "clash_input",
                                   "clash_target"), live=False)
def loss_size_text(ctx: ProbeContext) -> Evidence | None:
    """The loss's input and target sizes from the message, line wraps removed, and what they broadcast to
    (or, when they do not broadcast at all, the first dimension where they clash)."""
    sizes = {key: _size_list(ctx.facts.get(key, "")) for key in ("input_dims", "target_dims")}
    if any(value is None for value in sizes.values()):
        return None
    facts: dict[str, Any] = {key: _dims(value) for key, value in sizes.items()}
    both = _broadcast(sizes["input_dims"], sizes["target_dims"])
    if both is not None and both != sizes["input_dims"]:
        facts["broadcast_dims"] = _dims(both)
    clash = _broadcast_clash(sizes["input_dims"], sizes["target_dims"])
    if clash is not None:
        facts["clash_dim"], facts["clash_input"], facts["clash_target"] = clash
    return Evidence(facts)


# --- load_state_dict size mismatches, from the message alone ----------------------------------------

_SIZE_MISMATCH_ANY_RE = re.compile(
    r"size mismatch for (?P<key>[\w.]+): copying a param (?:with shape|of) torch\.Size\(\[(?P<ckpt>[\d, ]*)\]\) "
    r"from checkpoint, (?:the shape in current model is|where the shape is) torch\.Size\(\[(?P<model>[\d, ]*)\]\)")


@probe("state_dict_text", provides=("mismatch_count", "mismatches"), live=False)
def state_dict_text(ctx: ProbeContext) -> Evidence | None:
    """Every `size mismatch for KEY` line of the message (the first is in the pattern's groups, the rest in _rest)."""
    if "key" not in ctx.facts:
        return None
    found = [(ctx.facts["key"], ctx.facts.get("checkpoint_shape", ""), ctx.facts.get("model_shape", ""))]
    found += [(m.group("key"), m.group("ckpt"), m.group("model"))
              for m in _SIZE_MISMATCH_ANY_RE.finditer(str(ctx.facts.get("_rest", "")))]
    lines = [f"{key}: checkpoint torch.Size([{ckpt}]) vs model torch.Size([{model}])" for key, ckpt, model in found]
    return Evidence({"mismatch_count": len(found), "mismatches": "; ".join(lines[:10])
                     + (f"; ... and {len(lines) - 10} more" if len(lines) > 10 else "")})
