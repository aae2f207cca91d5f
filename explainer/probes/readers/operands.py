"""What the probes of several op families share: the failing module, the user's failing expression and its
operands, how the user's code names a live object, a submodule by path, and small text helpers."""

from __future__ import annotations

import ast
import re
from typing import Any, Collection

from explainer._inspect import (MISSING, FrameRecord, Operand, child_modules, describe_module, describe_tensor,
                                failing_expression, format_shape, innermost_user_frame, is_tensor, module_frames,
                                module_repr, name_module, resolve, resolve_text, tensor_facts, user_frames)
from explainer.probes import ProbeContext

from .library_names import layer_builder

MAX_LISTED = 20  # culprits and list entries shown at most


def failing_module(ctx: ProbeContext, *types: str):
    """The innermost module whose own forward was running (torch's frame holds it as `self`)."""
    for record, module in reversed(module_frames(ctx.records)):
        if not types or type(module).__name__ in types or any(
                base.__name__ in types for base in type(module).__mro__):
            return record, module
    return None, None


def shape_of(tensor: Any) -> list[int]:
    return tensor_facts(tensor)["shape"]


def user_expression(ctx: ProbeContext):
    """(innermost user frame, its failing expression), either None when not found."""
    record = innermost_user_frame(ctx.records)
    return record, (failing_expression(record) if record is not None else None)


FUNCTIONAL_FILE = "torch/nn/functional.py"


def torch_frame(records: list[FrameRecord], path: str, names: str | Collection[str] | None = None) -> FrameRecord | None:
    """The innermost frame in torch's own file ending with path ("torch/nn/functional.py"), of a function
    named names (one name or several; any function when None)."""
    wanted = {names} if isinstance(names, str) else names
    for record in reversed(records):
        if (wanted is None or record.name in wanted) and record.filename.replace("\\", "/").endswith(path):
            return record
    return None


def user_node(record: FrameRecord | None) -> ast.AST | None:
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
        body = _header_statement(text)
    return body[0] if len(body) == 1 else None


def _header_statement(text: str) -> list[ast.stmt]:
    """An `if` / `while` statement whose positions take in a body cut off mid-way: its header line alone."""
    header = text.split("\n", 1)[0].rstrip()
    if not header.endswith(":") or not header.startswith(("if ", "while ", "elif ")):
        return []
    try:
        return ast.parse(header.removeprefix("el") + " pass", mode="exec").body
    except SyntaxError:
        return []


def name_of(ctx: ProbeContext, value: Any, expr=None) -> str | None:
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


def frame_tensor(record: FrameRecord | None, *names: str) -> Any:
    table = record.locals if record is not None else None
    if not isinstance(table, dict):
        return MISSING
    for name in names:
        candidate = dict.get(table, name, MISSING)
        if candidate is not MISSING and is_tensor(candidate):
            return candidate
    return MISSING


def call_receiver(record: FrameRecord | None, expr) -> tuple[str | None, Any]:
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


def call_operands(record: FrameRecord | None, expr) -> tuple[str, list[Operand]]:
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


def module_label(ctx: ProbeContext, module: Any, expr=None) -> str:
    """How the user's code reaches module: its name, the callee of the failing call, or the constructor call
    written inline on the failing line (`nn.Conv2d(1, 16, 3)(x)`); its type where none of these holds."""
    name = name_module(module, ctx.records)
    if name is None and expr is not None and expr.callee is not None and expr.callee.value is module:
        name = expr.callee.text
    if name is None:
        user = innermost_user_frame(ctx.records)
        inline = inline_constructor(user, module)
        if inline is not None:
            name = ast.get_source_segment(user.code.strip().rstrip(":"), inline)
    return name or type(module).__name__


def ints_in(text: Any) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", str(text))]


def compact(value: Any) -> str:
    if isinstance(value, tuple) and value and all(v == value[0] for v in value):
        return str(value[0])
    return repr(value)


def layout_text(labels: tuple[str, ...], shape: list[int]) -> str:
    """(N=8, L=10, E=64): each dimension's size under its name."""
    return "(" + ", ".join(f"{label}={size}" for label, size in zip(labels, shape)) + ")"


def join_dims(shape: list[int]) -> str:
    return ", ".join(str(d) for d in shape)


def literal_int(node: ast.AST | None, namespace: dict[str, Any]) -> int | None:
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = resolve(node, namespace)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_expression(text: str) -> ast.AST | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def failing_layer(ctx: ProbeContext, *types: str) -> tuple[FrameRecord | None, Any, Any, dict[str, Any], list]:
    """The failing module of one of types: (its frame, the module, the user's failing expression, facts that
    name it, culprits); the module is None when none of those types was running."""
    record, module = failing_module(ctx, *types)
    if module is None:
        return None, None, None, {}, []
    _, expr = user_expression(ctx)
    name = module_label(ctx, module, expr)
    facts = {"module": name, "module_repr": module_repr(module), **layer_builder(ctx.records, name)}
    return record, module, expr, facts, [describe_module(name, module)]


def module_and_input(ctx: ProbeContext, *types: str) -> tuple[dict[str, Any], list, Any, Any]:
    """(facts, culprits, module, input tensor) for the failing module of one of types and the input it got."""
    record, module, expr, facts, culprits = failing_layer(ctx, *types)
    if module is None:
        return {}, [], None, MISSING
    name = facts["module"]
    value = frame_tensor(record, "input")
    if value is not MISSING:
        input_name = name_of(ctx, value, expr) or f"the input of {name}"
        facts.update(input_name=input_name, input_shape=format_shape(shape_of(value)))
        culprits.append(describe_tensor(input_name, value))
    return facts, culprits, module, value


def submodule(root: Any, path: str) -> Any:
    """The module at a dotted path below root ("" is root itself), or None."""
    current = root
    for part in path.split(".") if path else []:
        current = child_modules(current).get(part)
        if current is None:
            return None
    return current


def inline_constructor(record: FrameRecord | None, module: Any) -> ast.Call | None:
    """The constructor call that built module on the failing line and called it at once, as in
    `torch.nn.Linear(cfg["in"], cfg["out"])(x)`: no name reaches such a module, only this expression."""
    code = record.code if record is not None else ""
    try:
        tree = ast.parse(code.strip().rstrip(":"), mode="exec")
    except SyntaxError:
        return None
    wanted = type(module).__name__
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
            callee = node.func.func
            if (callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)) == wanted:
                return node.func
    return None


def with_first_argument(code: str, call: ast.Call, value: Any, keyword: str) -> str | None:
    """The source of call (parsed from code, one line) with its first argument (or `keyword=`) set to value;
    None where the call passes neither (`**cfg`)."""
    text = code.strip().rstrip(":")
    parts = [ast.get_source_segment(text, arg) or "" for arg in call.args]
    parts += [ast.get_source_segment(text, kw) or "" for kw in call.keywords]
    named = next((i for i, kw in enumerate(call.keywords) if kw.arg == keyword), None)
    if call.args:
        parts[0] = str(value)
    elif named is not None:
        parts[named] = f"{keyword}={value}"
    else:
        return None
    return f"{ast.get_source_segment(text, call.func)}({', '.join(parts)})"
