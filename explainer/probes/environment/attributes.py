"""Probes for Python's own AttributeError on an object (`'Separation' object has no attribute 'use_amp'`; NoneType and
modules have their own rules): which expression of the failing line the attribute was read from and its type, the
distribution that provides that type, the close names the class and the instance do have, for a class of the user's
the methods that set `self.<attr>` (or that none does), and for a list or dict of tensors their shapes and devices.

Nothing of the user's runs: the object is the exception's own `obj` slot (Python 3.10+) or a name or attribute chain
read from the frame's tables (safe_getattr); a class is read through its `__dict__` and `__mro__` as `type` defines them
(no metaclass property, no `__getattr__`), its source as text (ast). Tensors give shape, dtype and device, never values.
"""

from __future__ import annotations

import ast
import os
import sys
import types
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, class_mro, class_table, class_text, format_shape, instance_dict,
                                is_tensor, is_user_file, resolve, tensor_facts)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.environment.none_values import library_and_caller, parse_code
from explainer.probes.environment.releases import close_names
from explainer.probes.readers.installed import distributions_providing
from explainer.probes.readers.producer import parsed_file

MAX_NAMES = 2_000  # names read from one class or instance table for close matches
MAX_MRO = 30
MAX_CLOSE = 4
CLOSE_CUTOFF = 0.7  # an attribute name is short: a looser match names unrelated ones
MAX_ITEMS = 4  # items of a container described
MAX_STR = 160
CONTAINERS = (list, tuple, dict)

def type_name(cls: type) -> str:
    """`module.qualname` of a class, read through type's own descriptors; builtins by their bare name."""
    module, qualname = class_text(cls, "__module__"), class_text(cls, "__qualname__") or class_text(cls, "__name__")
    if not qualname:
        return "?"
    return qualname if module in (None, "builtins") else f"{module}.{qualname}"


def known_names(obj: Any) -> list[str]:
    """The names the object has: its instance `__dict__` (and nn.Module's parameter, buffer and child tables), then
    each class of its MRO's `__dict__`; read as keys, never through a descriptor."""
    names: dict[str, None] = {}
    table = instance_dict(obj)
    if table is not None:
        for key in list(table)[:MAX_NAMES]:
            names[key] = None
        for sub in ("_parameters", "_buffers", "_modules"):
            entries = table.get(sub)
            if isinstance(entries, dict):
                names.update(dict.fromkeys(list(entries)[:MAX_NAMES]))
    for cls in class_mro(type(obj))[:MAX_MRO]:
        names.update(dict.fromkeys(list(class_table(cls))[:MAX_NAMES]))
    return [n for n in names if isinstance(n, str)]


# --- the class's source: which methods set self.<attr> ------------------------------------------------------------

def _class_file(cls: type) -> str | None:
    """The file a class is defined in: the code file of its own plain functions, else its module's `__file__` read
    from the module's own `__dict__`."""
    for value in list(class_table(cls).values())[:MAX_NAMES]:
        if type(value) in (staticmethod, classmethod):
            value = value.__func__
        if type(value) is types.FunctionType:
            return value.__code__.co_filename
    module = sys.modules.get(class_text(cls, "__module__") or "")
    table = instance_dict(module) if module is not None else None
    file = table.get("__file__") if table is not None else None
    return file if type(file) is str and file.endswith(".py") else None


def _class_node(tree: ast.AST, qualname: str) -> ast.ClassDef | None:
    body = getattr(tree, "body", [])
    node = None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def _sets_attribute(function: ast.FunctionDef, attr: str) -> int | None:
    """The first line of function that sets `self.<attr>` (an assignment, `setattr(self, 'attr', ...)`)."""
    args = function.args.posonlyargs + function.args.args
    if not args:
        return None
    this = args[0].arg
    for node in ast.walk(function):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and getattr(node, "value", None) is not None:
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == this \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value == attr:
            return node.lineno
        flat: list[ast.AST] = []
        for target in targets:
            flat.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        for target in flat:
            if isinstance(target, ast.Attribute) and target.attr == attr and isinstance(target.value, ast.Name) \
                    and target.value.id == this:
                return node.lineno
    return None


def setter_facts(cls: type, attr: str) -> dict[str, Any]:
    """For the classes of the user's in cls's MRO: the methods that set `self.<attr>` and whether `__init__` does,
    read from their source."""
    setters: list[str] = []
    classes: list[str] = []
    init_sets = False
    for klass in class_mro(cls)[:MAX_MRO]:
        filename = _class_file(klass)
        if filename is None or not is_user_file(filename):
            continue
        qualname = class_text(klass, "__qualname__") or ""
        tree = parsed_file(filename)
        node = _class_node(tree, qualname) if tree is not None and "<locals>" not in qualname else None
        if node is None:
            continue
        classes.append(f"{qualname} ({os.path.basename(filename)}:{node.lineno})")
        for function in node.body:
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                line = _sets_attribute(function, attr)
                if line is not None:
                    setters.append(f"{function.name}() ({os.path.basename(filename)}:{line})")
                    init_sets = init_sets or function.name == "__init__"
    if not classes:
        return {}
    facts: dict[str, Any] = {"attr_user_classes": ", ".join(classes), "attr_init_sets": init_sets}
    if setters:
        facts["attr_setters"] = ", ".join(setters[:6])
    return facts


# --- the object: what it is -----------------------------------------------------------------------------------

def _item_text(item: Any) -> str:
    if is_tensor(item):
        facts = tensor_facts(item)
        shape = format_shape(facts["shape"]) if facts["shape"] is not None else f"{facts.get('ndim')}-D"
        return f"tensor {shape} {facts['dtype']} {facts['device']}"
    return type_name(type(item))


def container_facts(obj: Any) -> dict[str, Any]:
    """A list, tuple or dict: how many items, and the first few described (tensors by shape, dtype and device)."""
    if type(obj) not in CONTAINERS:
        return {}
    items = list(dict.values(obj))[:MAX_ITEMS] if type(obj) is dict else list(obj[:MAX_ITEMS])
    keys = [k for k in list(dict.keys(obj))[:MAX_ITEMS]] if type(obj) is dict else []
    count = len(obj)
    described = [(f"'{k}': " if type(k) is str and len(k) <= 40 else "") + _item_text(v)
                 for k, v in zip(keys or [None] * len(items), items)]
    facts: dict[str, Any] = {"attr_items_count": count, "attr_items": "; ".join(described) + ("; ..." if count >
                                                                                            MAX_ITEMS else "")}
    tensors = sum(1 for item in (dict.values(obj) if type(obj) is dict else obj) if is_tensor(item))
    facts["attr_tensor_items"] = tensors
    return facts if count else {"attr_items_count": 0}


def value_facts(obj: Any, attr: str) -> dict[str, Any]:
    cls = type(obj)
    facts: dict[str, Any] = {"attr_class": type_name(cls)}
    if cls in (str, int, float, bool):
        text = repr(obj) if cls is not str or len(obj) <= MAX_STR else repr(obj[:MAX_STR]) + "..."
        facts["attr_value"] = text  # a builtin's own repr: no user code
    facts.update(container_facts(obj))
    if type(obj) is dict:
        if attr in obj:
            facts["attr_dict_has_key"] = True
        keys = [k for k in list(dict.keys(obj))[:MAX_NAMES] if type(k) is str]
        close = close_names(attr, keys, cutoff=CLOSE_CUTOFF, limit=MAX_CLOSE)
        if close:
            facts["attr_close_keys"] = ", ".join(f"'{k}'" for k in close)
    else:
        close = [n for n in close_names(attr, known_names(obj), cutoff=CLOSE_CUTOFF, limit=MAX_CLOSE) if n != attr]
        if close:
            facts["attr_close"] = ", ".join(f"`{n}`" for n in close)
    module = (class_text(cls, "__module__") or "").split(".")[0]
    file = _class_file(cls)
    if module and module not in ("builtins", "__main__") and (file is None or not is_user_file(file)):
        for name, version in distributions_providing(module)[:1]:
            facts.update({"attr_dist": name, "attr_dist_version": version})
    facts.update(setter_facts(cls, attr))
    return facts


def _expression(record: FrameRecord, attr: str, obj: Any) -> ast.AST | None:
    """The value expression of the failing line's `.attr` read: the one that resolves to obj, else the only one."""
    found: dict[str, ast.AST] = {}
    for text in (record.segment() or "", record.code):
        tree = parse_code(text)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Attribute) and node.attr == attr:
                found.setdefault(ast.unparse(node.value), node.value)
        if found:
            break
    if obj is not MISSING:
        namespace = record.namespace()
        for node in found.values():
            value = resolve(node, namespace)
            if value is not MISSING and value is obj:
                return node
    return next(iter(found.values())) if len(found) == 1 else None


def _exception_object(exc: BaseException | None, attr: str) -> Any:
    """AttributeError's own `obj` (Python 3.10+), when its `name` is the attribute of the message."""
    if not isinstance(exc, AttributeError):
        return MISSING
    try:
        name = BaseException.__getattribute__(exc, "name")
        obj = BaseException.__getattribute__(exc, "obj")
    except AttributeError:
        return MISSING
    return obj if name == attr else MISSING


@probe("object_attribute_live", provides=(
    "attr_expr", "attr_place", "attr_in_function", "attr_code", "attr_class", "attr_value", "attr_items_count",
    "attr_items", "attr_tensor_items", "attr_dict_has_key", "attr_close_keys", "attr_close", "attr_dist",
    "attr_dist_version", "attr_user_classes", "attr_init_sets", "attr_setters", "attr_library", "attr_library_version",
    "attr_user_place", "attr_user_code"))
def object_attribute_live(ctx: ProbeContext) -> Evidence | None:
    """The object whose attribute was missing (the exception's `obj`, or the failing line's expression read from the
    frame), its type and that type's distribution, the names it does have close to the one asked, the methods of a
    class of the user's that set it, a container's tensors; and when a library's frame raised, the library and the
    user's call into it."""
    attr = ctx.facts.get("attr_name")
    if not isinstance(attr, str) or not ctx.records:
        return None
    raising = ctx.records[-1]
    obj = _exception_object(ctx.exception, attr)
    node = _expression(raising, attr, obj)
    if obj is MISSING and node is not None:
        obj = resolve(node, raising.namespace())
    facts: dict[str, Any] = {"attr_in_function": raising.name, "attr_code": raising.code[:300],
                             "attr_place": f"{os.path.basename(raising.filename)}:{raising.lineno}"}
    if node is not None:
        facts["attr_expr"] = ast.unparse(node)[:120]
    if obj is not MISSING and obj is not None and not isinstance(obj, type(sys)):
        facts.update(value_facts(obj, attr))
    if not raising.is_user:
        facts.update(library_and_caller(ctx.records, raising, "attr"))
    culprits = []
    if obj is not MISSING and "attr_expr" in facts:
        culprit = {"name": facts["attr_expr"], "kind": "value", "type": facts.get("attr_class", "?")}
        if "attr_items" in facts:
            culprit["items"] = facts["attr_items"]
        culprits.append(culprit)
    return Evidence(facts, culprits)


__all__ = ["container_facts", "known_names", "object_attribute_live", "setter_facts", "type_name"]
