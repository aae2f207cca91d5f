"""Probes for nn.Module's own bookkeeping checks: a class whose forward is missing (misspelled or
mis-indented) and an attribute assignment that puts the wrong kind of value into a parameter,
buffer or child-module slot."""

from __future__ import annotations

import ast
import difflib
import inspect
import types
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, describe_module, describe_tensor, is_module, is_tensor,
                                name_module, resolve, safe_getattr, user_frames)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import torch_frame, user_node

MODULE_FILE = "torch/nn/modules/module.py"
NEAR_FORWARD = 0.75


def _own_methods(cls: type) -> dict[str, Any]:
    """Functions the user's classes define (torch's own classes left out), innermost class first."""
    found: dict[str, Any] = {}
    for klass in cls.__mro__:
        if klass.__module__.startswith("torch.") or klass is object:
            continue
        for name, value in vars(klass).items():
            value = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if inspect.isfunction(value) and name not in found:
                found[name] = value
    return found


def _forward_lookalike(methods: dict[str, Any], wanted: str = "forward") -> tuple[str, Any] | None:
    """The method that was meant to be forward (or wanted): a misspelling (`foward`, `Forward`, `forward_`)."""
    best, score = None, NEAR_FORWARD
    for name, function in methods.items():
        if name.startswith("__") or name == wanted:
            continue
        ratio = difflib.SequenceMatcher(None, name.lower(), wanted).ratio()
        if ratio > score:
            best, score = (name, function), ratio
    return best


def _signature(name: str, function: Any) -> str:
    """`foward(self, x, *args)` from the code object alone: no default value is ever repr'd."""
    code = getattr(function, "__code__", None)
    if code is None:
        return f"{name}(...)"
    count = code.co_argcount + code.co_kwonlyargcount
    params = list(code.co_varnames[:code.co_argcount])
    if code.co_flags & inspect.CO_VARARGS:
        params.append("*" + code.co_varnames[count])
    elif code.co_kwonlyargcount:
        params.append("*")
    params.extend(code.co_varnames[code.co_argcount:count])
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append("**" + code.co_varnames[count + bool(code.co_flags & inspect.CO_VARARGS)])
    return f"{name}({', '.join(params)})"


@probe("module_missing_forward", provides=("module_name", "method_name", "method_signature", "method_line"))
def module_missing_forward(ctx: ProbeContext) -> Evidence | None:
    """The module called without a forward, and the method of its class that looks like a misspelt forward."""
    record = torch_frame(ctx.records, MODULE_FILE, "_forward_unimplemented")
    module = record.locals.get("self", MISSING) if record is not None else MISSING
    if not is_module(module):
        return None
    facts: dict[str, Any] = {}
    culprits = []
    name = name_module(module, ctx.records)
    if name is not None:
        facts["module_name"] = name
        culprits.append(describe_module(name, module))
    found = _forward_lookalike(_own_methods(type(module)))
    if found is not None:
        method, function = found
        facts["method_name"] = method
        facts["method_signature"] = _signature(method, function)
        code = getattr(function, "__code__", None)
        if code is not None:
            facts["method_line"] = code.co_firstlineno
        culprits.insert(0, {"name": method, "kind": "method", "type": type(module).__name__,
                            "repr": f"def {facts['method_signature']}"})
    return Evidence(facts, culprits) if facts else None


FUNCTION_FILE = "torch/autograd/function.py"
FUNCTION_PLACEHOLDERS = {"forward": "forward", "backward": "backward", "vjp": "backward", "setup_context": "setup_context"}


@probe("function_missing_method", provides=("function_name", "wanted_method", "method_name", "method_signature",
                                            "method_line"))
def function_missing_method(ctx: ProbeContext) -> Evidence | None:
    """The custom autograd.Function whose forward/backward torch's base-class placeholder ran, and a method of it
    that looks like the misspelt one (`backwards`, `Backward`)."""
    placeholder = torch_frame(ctx.records, FUNCTION_FILE, set(FUNCTION_PLACEHOLDERS))
    if placeholder is None:
        return None
    cls = MISSING
    for record in reversed(ctx.records):  # backward: ctx is the graph node; forward: `apply` runs as a classmethod
        local_vars = record.locals if record.filename.replace("\\", "/").endswith(FUNCTION_FILE) else None
        if isinstance(local_vars, dict):
            node = local_vars.get("ctx", local_vars.get("self", MISSING))
            # the graph node's class (ClampGradBackward) holds the Function as a class attribute: read statically
            cls = local_vars.get("fwd_cls", vars(type(node)).get("_forward_cls", local_vars.get("cls", MISSING)))
            if isinstance(cls, type):
                break
    if not isinstance(cls, type):
        return None
    wanted = FUNCTION_PLACEHOLDERS[placeholder.name]
    facts: dict[str, Any] = {"function_name": cls.__qualname__, "wanted_method": wanted}
    found = _forward_lookalike(_own_methods(cls), wanted)
    if found is not None:
        facts["method_name"], facts["method_signature"] = found[0], _signature(*found)
        code = getattr(found[1], "__code__", None)
        if code is not None:
            facts["method_line"] = code.co_firstlineno
    return Evidence(facts, [{"name": cls.__qualname__, "kind": "autograd.Function", "type": cls.__qualname__,
                             "repr": f"class {cls.__qualname__}({', '.join(b.__name__ for b in cls.__bases__)})"}])


def _assignment(record: FrameRecord | None) -> tuple[ast.AST, ast.AST] | None:
    """(target, value) of the failing `a.b.c = value` statement in the user's frame."""
    node = user_node(record)
    if not isinstance(node, ast.Assign) and record is not None:  # the segment is only the store's target
        try:
            body = ast.parse(record.code, mode="exec").body
        except SyntaxError:
            return None
        node = body[0] if len(body) == 1 else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
        return node.targets[0], node.value
    return None


def _source_names(value: ast.AST) -> list[ast.AST]:
    """The variables the assigned value is built from (`vectors` in `torch.from_numpy(vectors)`), not callees."""
    callees = {id(node.func) for node in ast.walk(value) if isinstance(node, ast.Call)}
    names, inside = [], set()
    for node in ast.walk(value):  # outer chains first: `F.gelu` is kept, its `F` is not
        if id(node) in callees or id(node) in inside or not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        inside.update(id(sub) for sub in ast.walk(node))
        names.append(node)
    return names[:3]


def _describe(name: str, value: Any) -> dict[str, Any]:
    if is_tensor(value):
        return describe_tensor(name, value)
    if is_module(value):
        return describe_module(name, value)
    return {"name": name, "kind": "value", "type": type(value).__name__}


def _user_record(ctx: ProbeContext) -> FrameRecord | None:
    frames = user_frames(ctx.records)
    return frames[-1] if frames else None


def _slot_culprit(ctx: ProbeContext, setter: FrameRecord | None, target_text: str | None) -> dict[str, Any] | None:
    """What the slot held before the assignment (the Parameter, buffer or layer), named as the user's code names it."""
    table = setter.locals if setter is not None else None
    if not isinstance(table, dict):
        return None
    module, attr = table.get("self", MISSING), table.get("name", MISSING)
    if not is_module(module) or not isinstance(attr, str):
        return None
    current = safe_getattr(module, attr)
    if target_text is None:
        owner = name_module(module, ctx.records)
        target_text = f"{owner}.{attr}" if owner else attr
    if current is MISSING or current is None:
        return None
    return _describe(target_text, current)


@probe("module_slot_assignment", provides=("target_expr", "value_expr", "value_names"))
def module_slot_assignment(ctx: ProbeContext) -> Evidence | None:
    """The failing `model.layer.weight = value`: the slot's current Parameter/layer and the variables the value comes from."""
    record = _user_record(ctx)
    setter = torch_frame(ctx.records, MODULE_FILE, "__setattr__") \
        or torch_frame(ctx.records, MODULE_FILE, "register_parameter") \
        or torch_frame(ctx.records, MODULE_FILE, "register_buffer")
    found = _assignment(record)
    facts: dict[str, Any] = {}
    culprits = []
    target_text = None
    if found is not None and record is not None:
        target, value = found
        target_text = ast.unparse(target)
        facts["target_expr"] = target_text
        facts["value_expr"] = ast.unparse(value)
        namespace = record.namespace()
        sources = []
        for node in _source_names(value):
            resolved = resolve(node, namespace)
            if resolved is not MISSING and not isinstance(resolved, types.ModuleType):
                sources.append(_describe(ast.unparse(node), resolved))
        if sources:
            facts["value_names"] = ", ".join(c["name"] for c in sources)
        culprits.extend(sources)
    slot = _slot_culprit(ctx, setter, target_text)
    if slot is not None:
        culprits.insert(0, slot)
    return Evidence(facts, culprits) if facts or culprits else None
