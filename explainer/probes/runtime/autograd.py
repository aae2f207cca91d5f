"""Probes for the autograd family: which tensor the failing call worked on, which live tensor an
in-place operation changed, why a loss has no graph, which state carries a freed graph.

Source code is read (linecache) and never executed; tensors are read through torch's C getters.
"""

from __future__ import annotations

import ast
import linecache
import os
import re
import sys
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, child_modules, describe_module, describe_tensor, format_shape,
                                innermost_user_frame, is_module, is_tensor, module_repr, resolve, user_frames)
from explainer._pycode import module_expression
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.reach import MAX_ITEMS, Budget, walk_reachable

from .memory import grad_fn_of

MAX_SOURCE_LINES = 3_000
MAX_GRAPH_NODES = 10_000
_STRING_RE = r"(['\"])(?:\\.|(?!\1).)*\1"
_AUGMENTED = {"Add": "+=", "Sub": "-=", "Mult": "*=", "Div": "/=", "FloorDiv": "//=", "Mod": "%=", "Pow": "**=",
              "MatMult": "@=", "BitAnd": "&=", "BitOr": "|=", "BitXor": "^="}
MAX_HINTS = 3
# Methods whose operand is the tensor the error is about: `loss.backward()`, `out.numpy()`.
TARGET_METHODS = ("backward", "numpy", "item", "tolist")


def _torch():
    return sys.modules["torch"]


def _is_leaf(tensor: Any) -> bool:
    return bool(_torch()._C.TensorBase.is_leaf.__get__(tensor))


def _requires_grad(tensor: Any) -> bool:
    return bool(_torch()._C.TensorBase.requires_grad.__get__(tensor))


def _version(tensor: Any) -> int:
    return int(_torch()._C.TensorBase._version.__get__(tensor))


def _node_name(node: Any) -> str | None:
    return type(node).__name__ if node is not None else None


# --- the statement that failed ------------------------------------------------------------------

def _statement(record: FrameRecord) -> ast.AST | None:
    """The failing expression or statement of the user's line, parsed (never evaluated)."""
    segment = record.segment() or record.code
    for text in (segment.strip(), record.code):
        try:
            tree = ast.parse(text, mode="exec")
        except SyntaxError:
            continue
        if tree.body:
            node = tree.body[0]
            return node.value if isinstance(node, ast.Expr) else node
    return None


def _base_of(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    return node


def _target(record: FrameRecord) -> tuple[str, Any, str] | None:
    """(source text, live tensor, operation) for what the failing line works on."""
    node = _statement(record)
    if node is None:
        return None
    local_vars = record.locals
    candidates: list[tuple[ast.AST, str]] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method in TARGET_METHODS or method.endswith("_"):
            candidates.append((node.func.value, method))
        elif node.args:  # torch.autograd.backward(loss), torch.autograd.grad(y, x)
            candidates.append((node.args[0], method))
    elif isinstance(node, ast.AugAssign):
        candidates.append((node.target, _AUGMENTED.get(type(node.op).__name__, "in-place assignment")))
    elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
        candidates.append((node.targets[0].value, "[...] ="))
    for expr, operation in candidates:
        base = _base_of(expr) if not isinstance(expr, ast.Name) else expr
        value = resolve(base, local_vars)
        if value is not MISSING and is_tensor(value):
            return ast.unparse(base), value, operation
    return None


def _tensor_facts(prefix: str, name: str, tensor: Any) -> dict[str, Any]:
    node = grad_fn_of(tensor)
    facts = {f"{prefix}_name": name, f"{prefix}_shape": format_shape(tensor.shape),
             f"{prefix}_requires_grad": _requires_grad(tensor), f"{prefix}_is_leaf": _is_leaf(tensor)}
    if node is not None:
        facts[f"{prefix}_grad_fn"] = _node_name(node)
    return facts


@probe("autograd_target", provides=("target_name", "target_shape", "target_requires_grad", "target_is_leaf",
                                    "target_grad_fn", "operation", "target_dims"))
def autograd_target(ctx: ProbeContext) -> Evidence | None:
    """The tensor the failing line works on: `loss` in `loss.backward()`, `w` in `w -= lr * w.grad`."""
    user = innermost_user_frame(ctx.records)
    found = _target(user) if user is not None else None
    if found is None:
        return None
    name, tensor, operation = found
    facts = _tensor_facts("target", name, tensor)
    facts["operation"] = operation
    facts["target_dims"] = len(tensor.shape)
    return Evidence(facts, [describe_tensor(name, tensor)])


# --- source scanning ----------------------------------------------------------------------------

def _code_range(code: Any) -> tuple[str, int, int]:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    first = code.co_firstlineno
    return code.co_filename, first, max(lines, default=first)


def _source_spans(records: list[FrameRecord]) -> list[tuple[str, int, int]]:
    """The user's functions on the failing path, and the forward() of every user module in reach."""
    spans: list[tuple[str, int, int]] = []
    for record in user_frames(records):
        if record.frame is None:
            continue
        code = record.frame.f_code
        if code.co_name == "<module>":
            spans.append((code.co_filename, 1, MAX_SOURCE_LINES))
        else:
            spans.append(_code_range(code))
    seen_types: set[type] = set()
    for found in walk_reachable(records, Budget(objects=5_000)):
        kind = type(found.value)
        if not is_module(found.value) or kind in seen_types or kind.__module__.startswith("torch."):
            continue
        seen_types.add(kind)
        forward = kind.__dict__.get("forward")
        code = getattr(forward, "__code__", None)
        if code is not None:
            spans.append(_code_range(code))
    unique = []
    for span in spans:
        if span not in unique:
            unique.append(span)
    return unique


def _scan(spans: list[tuple[str, int, int]], pattern: re.Pattern[str]) -> list[tuple[str, int, str]]:
    hits = []
    strings = re.compile(_STRING_RE)
    for filename, first, last in spans:
        for lineno in range(first, min(last, first + MAX_SOURCE_LINES) + 1):
            line = linecache.getline(filename, lineno)
            if not line:
                break
            # Match code only: string literals and comments are blanked out, docstring lines skipped.
            code = strings.sub('""', line).split("#", 1)[0].strip()
            if not code or code.startswith(('""', "''")):
                continue
            if pattern.search(code) and (filename, lineno, code) not in hits:  # a forward is also a frame's span
                hits.append((filename, lineno, code))
                if len(hits) >= MAX_HINTS:
                    return hits
    return hits


def _hint_text(hits: list[tuple[str, int, str]]) -> str:
    return "; ".join(f"`{code}` ({os.path.basename(filename)}:{lineno})" for filename, lineno, code in hits)


# --- in-place modification of a saved tensor ----------------------------------------------------

def _inplace_pattern(name: str | None) -> re.Pattern[str]:
    if name:
        word = re.escape(name)
        return re.compile(rf"(?<![\w.]){word}\s*(?:[-+*/%@&|^]|//|\*\*)=|(?<![\w.]){word}(?:\[[^\]]*\])+\s*=(?!=)"
                          rf"|(?<![\w.]){word}\.\w+_\(")
    return re.compile(r"^\s*[\w.]+\s*(?:[-+*/]|//)=|\.(?:add|sub|mul|div|relu|clamp|copy|fill|zero|masked_fill)_\("
                      r"|inplace\s*=\s*True")


@probe("inplace_culprit", provides=("modified_name", "modified_shape", "modified_version", "modified_kind",
                                    "inplace_code", "inplace_modules", "saved_by"))
def inplace_culprit(ctx: ProbeContext) -> Evidence | None:
    """The live tensor whose version counter matches the message, and the in-place code that bumped it."""
    shape = _dims(ctx.facts.get("shape"))
    version = ctx.facts.get("version")
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    match = None
    if shape is not None and isinstance(version, int):
        for found in walk_reachable(ctx.records):
            value = found.value
            if not is_tensor(value) or _version(value) != version:
                continue
            dims = [int(d) for d in value.shape]
            # Saved weights are often transposed views (TBackward / AsStrided) sharing the counter.
            if dims == shape or (len(dims) == 2 and dims[::-1] == shape):
                score = (dims == shape, _node_name(grad_fn_of(value)) == ctx.facts.get("op"), "." not in found.path)
                if match is None or score > match[0]:
                    match = (score, found.path, value)
    if match is not None:
        _, path, tensor = match
        is_param = issubclass(type(tensor), _torch().nn.Parameter)
        facts.update(modified_name=path, modified_shape=format_shape(tensor.shape), modified_version=version,
                     modified_kind="parameter" if is_param else "tensor")
        culprits.append(describe_tensor(path, tensor, version=version))
    spans = _source_spans(ctx.records)
    name = facts.get("modified_name")
    hits = _scan(spans, _inplace_pattern(name.split(".")[-1] if name and "." not in name else None))
    if name and facts.get("modified_kind") == "parameter":
        hits = _scan(spans, re.compile(r"\.step\(\)")) or hits
    if not hits and name:
        hits = _scan(spans, _inplace_pattern(None))
        renamed = _inplace_variable(hits, _forward_spans(ctx.records)) if facts.get("modified_kind") == "tensor" else None
        if renamed is not None:  # the live path (`rates`) is the forward's output; the forward calls it `h`
            facts["modified_name"] = renamed
            culprits.insert(0, describe_tensor(renamed, match[2], version=version))
    if hits:
        facts["inplace_code"] = _hint_text(hits)
    modules = _inplace_modules(ctx.records)
    if modules:
        facts["inplace_modules"] = ", ".join(modules)
    op = ctx.facts.get("op")
    if isinstance(op, str):
        facts["saved_by"] = op if op.endswith(("Backward0", "Backward1")) else f"{op}Backward0"
    return Evidence(facts, culprits) if facts else None


_INPLACE_TARGET = r"^(\w+)\s*(?:[-+*/%@&|^]|//|\*\*)=(?!=)|^(\w+)\.\w+_\("


def _forward_spans(records: list[FrameRecord]) -> list[tuple[str, int, int]]:
    """The forward() of every user module in reach (where a saved activation is changed in place)."""
    spans, seen_types = [], set()
    for found in walk_reachable(records, Budget(objects=5_000)):
        kind = type(found.value)
        if not is_module(found.value) or kind in seen_types or kind.__module__.startswith("torch."):
            continue
        seen_types.add(kind)
        code = getattr(kind.__dict__.get("forward"), "__code__", None)
        if code is not None:
            spans.append(_code_range(code))
    return spans


def _inplace_variable(hits: list[tuple[str, int, str]], forward: list[tuple[str, int, int]]) -> str | None:
    """The variable of the one in-place statement inside a module's forward (`h += 1e-3` gives `h`)."""
    names = set()
    for filename, lineno, code in hits:
        if not any(filename == f and first <= lineno <= last for f, first, last in forward):
            continue
        target = re.match(_INPLACE_TARGET, code)
        if target is None:
            return None
        names.add(target.group(1) or target.group(2))
    return names.pop() if len(names) == 1 else None


def _dims(text: Any) -> list[int] | None:
    if not isinstance(text, str):
        return None
    try:
        return [int(d) for d in text.replace(" ", "").split(",") if d] if text.strip() else []
    except ValueError:
        return None


def _inplace_modules(records: list[FrameRecord]) -> list[str]:
    """Modules built with inplace=True (nn.ReLU(inplace=True), nn.Dropout(inplace=True), ...)."""
    names = []
    for found in walk_reachable(records, Budget(objects=5_000)):
        if is_module(found.value) and found.value.__dict__.get("inplace") is True:
            names.append(f"{found.path} = {module_repr(found.value)}")
            if len(names) >= MAX_HINTS:
                break
    return names


# --- backward through a freed graph -------------------------------------------------------------

@probe("carried_graph", provides=("carried_name", "carried_shape", "carried_code", "backward_calls", "reused_name",
                                   "reused_shape"))
def carried_graph(ctx: ProbeContext) -> Evidence | None:
    """State carried from the previous iteration without .detach() (`hidden = rnn(x, hidden)`), or a
    second `.backward()` on the same tensor."""
    user = innermost_user_frame(ctx.records)
    if user is None or user.frame is None:
        return None
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    spans = [_code_range(user.frame.f_code)] if user.frame.f_code.co_name != "<module>" else \
        [(user.filename, 1, MAX_SOURCE_LINES)]
    local_vars = user.locals if isinstance(user.locals, dict) else {}
    carried = []
    for name, value in list(local_vars.items())[:MAX_ITEMS]:
        if not isinstance(name, str) or not is_tensor(value) or grad_fn_of(value) is None:
            continue
        word = re.escape(name)
        # `hidden = f(..., hidden ...)` without a detach on the same line: the old graph is kept.
        pattern = re.compile(rf"^\s*(?:\w+\s*,\s*)*{word}(?:\s*,\s*\w+)*\s*=(?!=).*\b{word}\b(?!.*\.detach\(\))")
        hits = _scan(spans, pattern)
        if hits:
            carried.append((name, value, hits))
    if carried:
        name, value, hits = carried[0]
        facts.update(carried_name=name, carried_shape=format_shape(value.shape), carried_code=_hint_text(hits))
        culprits.append(describe_tensor(name, value))
    target = _target(user)
    if target is not None:
        word = re.escape(target[0])
        calls = _scan(spans, re.compile(rf"(?<![\w.]){word}\.backward\("))
        if len(calls) >= 2:
            facts["backward_calls"] = _hint_text(calls)
        reused = None if carried or "backward_calls" in facts else _reused_freed_tensor(target[1], local_vars)
        if reused is not None:
            facts.update(reused_name=reused[0], reused_shape=format_shape(reused[1].shape))
            culprits.append(describe_tensor(*reused))
    return Evidence(facts, culprits) if facts else None


def _reused_freed_tensor(target: Any, local_vars: dict[str, Any]) -> tuple[str, Any] | None:
    """The local tensor whose graph an earlier backward freed and that the failing backward reaches
    (a GAN's `fake` reused by the generator's loss after the discriminator's backward): the closest one."""
    root = grad_fn_of(target)
    if root is None:
        return None
    order = _graph_order(root)
    found = None
    for name, value in list(local_vars.items())[:MAX_ITEMS]:
        if not isinstance(name, str) or not is_tensor(value) or value is target:
            continue
        node = grad_fn_of(value)
        if node is None or node is root or id(node) not in order or not _saved_tensors_freed(node):
            continue
        if found is None or order[id(node)] < order[id(found[1])]:
            found = (name, value, node)
    return (found[0], found[1]) if found is not None else None


def _graph_order(root: Any) -> dict[int, int]:
    """Each autograd node reachable from root, by id, with its breadth-first rank (capped)."""
    order: dict[int, int] = {}
    queue, keep = [root], []  # keep: the nodes stay alive, so their ids stay theirs
    while queue and len(order) < MAX_GRAPH_NODES:
        node = queue.pop(0)
        if node is None or id(node) in order:
            continue
        order[id(node)] = len(order)
        keep.append(node)
        queue.extend(child for child, _ in node.next_functions)
    return order


def _saved_tensors_freed(node: Any) -> bool:
    """A backward freed this node's saved tensors: torch's getter for any of them raises."""
    for attribute in dir(node):
        if attribute.startswith("_saved_"):
            try:
                getattr(node, attribute)
            except RuntimeError:
                return True
    return False


# --- a loss without a graph ---------------------------------------------------------------------

@probe("graph_missing", provides=("why", "frozen_count", "param_count", "model_name", "detach_code",
                                    "last_layer", "freeze_code"))
def graph_missing(ctx: ProbeContext) -> Evidence | None:
    """Why the tensor handed to backward has no grad_fn: frozen parameters, a detach/.item()/NumPy
    round trip in the source, or a torch.no_grad() block."""
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    best = None
    for record in reversed(user_frames(ctx.records)):
        local_vars = record.locals if isinstance(record.locals, dict) else {}
        for name, value in list(local_vars.items())[:MAX_ITEMS]:
            if name == "self" or not is_module(value):
                continue
            total = frozen = 0
            torch = _torch()
            for param in torch.nn.Module.parameters(value):
                total += 1
                frozen += not _requires_grad(param)
                if total >= 100_000:
                    break
            if total and (best is None or frozen / total > best[1] / best[2]):
                best = (name, frozen, total, value)
    if best is not None:
        name, frozen, total, module = best
        facts.update(model_name=name, frozen_count=frozen, param_count=total)
        layers = list(child_modules(module))
        if layers:  # how the user's code reaches the last layer: `clf.head`, `model[2]`
            facts["last_layer"] = module_expression(f"{name}.{layers[-1]}")
        culprits.append(describe_module(name, module, frozen_parameters=frozen, parameters=total))
    spans = _source_spans(ctx.records)
    hits = _scan(spans, re.compile(r"\.detach\(\)|\.item\(\)|\.numpy\(\)|torch\.(?:tensor|from_numpy|as_tensor)\("
                                   r"|no_grad\(\)|inference_mode\(|requires_grad\s*=\s*False|requires_grad_\(False\)"))
    if best is not None and best[1] == best[2]:  # the lines that froze the model are its cause, not a cut
        freezes = [hit for hit in hits if "requires_grad" in hit[2]]
        hits = [hit for hit in hits if hit not in freezes]
        if freezes:
            facts["freeze_code"] = _hint_text(freezes)
    if hits:
        facts["detach_code"] = _hint_text(hits)
    if best is not None and best[1] == best[2]:
        facts["why"] = f"all {best[2]} parameters of {best[0]} have requires_grad=False"
    elif hits:
        facts["why"] = f"the graph is cut in the source: {facts['detach_code']}"
    elif best is not None:
        facts["why"] = (f"{best[0]} has trainable parameters, so the loss was computed without them "
                        f"(under torch.no_grad(), or from detached values)")
    return Evidence(facts, culprits) if facts else None


# --- anomaly mode -------------------------------------------------------------------------------

# Backward functions that turn finite inputs into NaN, with the forward input that does it.
NAN_SOURCES = {
    "Log": ("torch.log", "x <= 0 (and 0 * log(0) gives 0 * -inf)", "torch.log(x.clamp_min(1e-12))"),
    "Sqrt": ("torch.sqrt", "x <= 0 (the gradient 1/(2*sqrt(x)) is infinite at 0)", "torch.sqrt(x + 1e-12)"),
    "Div": ("division", "a zero denominator", "a / (b + 1e-12)"),
    "Pow": ("pow", "a negative base with a fractional exponent, or 0 ** negative", "x.clamp_min(1e-12) ** p"),
    "Norm": ("norm", "a zero vector (the gradient x / ||x|| is 0/0)", "torch.linalg.vector_norm(x + 1e-12)"),
    "LinalgVectorNorm": ("vector_norm", "a zero vector (the gradient x / ||x|| is 0/0)", "(x.pow(2).sum() + 1e-12).sqrt()"),
    "Acos": ("torch.acos", "inputs at exactly +-1", "torch.acos(x.clamp(-1 + 1e-7, 1 - 1e-7))"),
    "Asin": ("torch.asin", "inputs at exactly +-1", "torch.asin(x.clamp(-1 + 1e-7, 1 - 1e-7))"),
    "Atan2": ("torch.atan2", "both arguments zero", "torch.atan2(y, x + 1e-12)"),
}


def _input_tensors(records: list[FrameRecord], node: Any) -> list[tuple[str, Any]]:
    """The live tensors the failing op read (`sq` in `dist = sq.sqrt()`): their grad_fn is one of node's inputs."""
    try:
        wanted = [fn for fn, _ in node.next_functions if fn is not None]
        leaves = [fn.variable for fn in wanted if _node_name(fn) == "AccumulateGrad"]  # a leaf input
    except (AttributeError, TypeError, RuntimeError):
        return []
    found_inputs: list[tuple[str, Any]] = []
    for found in walk_reachable(records, Budget(objects=5_000)):
        if not is_tensor(found.value) or any(found.value is value for _, value in found_inputs):
            continue
        fn = grad_fn_of(found.value)
        if any(fn is w for w in wanted) if fn is not None else any(found.value is leaf for leaf in leaves):
            found_inputs.append((found.path, found.value))
            if len(found_inputs) >= len(wanted):
                break
    return found_inputs


@probe("anomaly_source", provides=("forward_op", "nan_condition", "safe_call", "forward_name", "forward_code",
                                   "forward_inputs"))
def anomaly_source(ctx: ProbeContext) -> Evidence | None:
    """The forward operation behind a backward function that produced NaN, and where the user calls it."""
    function = ctx.facts.get("function")
    if not isinstance(function, str):
        return None
    op = re.sub(r"Backward\d*$", "", function)
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    if op in NAN_SOURCES:
        forward, condition, safe = NAN_SOURCES[op]
        facts.update(forward_op=forward, nan_condition=condition, safe_call=safe)
    for found in walk_reachable(ctx.records):
        if is_tensor(found.value) and _node_name(grad_fn_of(found.value)) == function:
            facts["forward_name"] = found.path
            culprits.append(describe_tensor(found.path, found.value))
            inputs = _input_tensors(ctx.records, grad_fn_of(found.value))
            if inputs:
                facts["forward_inputs"] = ", ".join(path for path, _ in inputs)
                culprits.extend(describe_tensor(path, value) for path, value in inputs)
            break
    call = {"Log": r"\blog\(|\.log\(", "Sqrt": r"\bsqrt\(|\.sqrt\(", "Div": r"[^/]/[^/]|\.div\(",
            "Pow": r"\*\*|\.pow\(", "Acos": r"acos\(", "Asin": r"asin\(", "Atan2": r"atan2\(",
            "Norm": r"norm\(", "LinalgVectorNorm": r"norm\("}.get(op)
    if call:
        hits = _scan(_source_spans(ctx.records), re.compile(call))
        if hits:
            facts["forward_code"] = _hint_text(hits)
    return Evidence(facts, culprits) if facts else None
