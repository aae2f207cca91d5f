"""Where the user's source built a layer: the constructor call in its owner's `__init__`
(`self.fc = nn.Linear(32 * 7 * 7, 10)`, or an item of `self.head = nn.Sequential(...)`).
The class and its file are read through the class's own tables and the function's code object, and the
source is parsed (AST), never run."""

from __future__ import annotations

import ast
import math
import types
from dataclasses import dataclass
from typing import Any

from explainer._inspect import (FrameRecord, child_modules, class_mro, class_table, class_text, is_user_file,
                                module_path, module_roots)

from .producer import code_node


@dataclass
class LayerCall:
    filename: str
    call: ast.Call


def _owner(module: Any, records: list[FrameRecord]) -> list[tuple[Any, str]]:
    """(owner, key) pairs from the module up to the first owner that is not an nn.Sequential."""
    for _, root in module_roots(records):
        path = module_path(root, module)
        if not path:
            continue
        chain = [root]
        keys = path.split(".")
        for key in keys[:-1]:
            chain.append(child_modules(chain[-1]).get(key))
        pairs = []
        for owner, key in zip(reversed(chain), reversed(keys)):
            pairs.append((owner, key))
            if not _is_sequential(owner):
                return pairs
        return []
    return []


def _is_sequential(module: Any) -> bool:
    cls = type(module)
    return class_text(cls, "__name__") == "Sequential" and (class_text(cls, "__module__") or "").startswith("torch.")


def _init_node(owner: Any) -> tuple[str, ast.FunctionDef] | None:
    """The file and def of the owner's own `__init__` (the first class in its MRO that defines one in user code)."""
    for cls in class_mro(type(owner)):
        init = class_table(cls).get("__init__")
        if init is None:
            continue
        if not isinstance(init, types.FunctionType):
            return None
        code = init.__code__
        node = code_node(code) if is_user_file(code.co_filename) else None
        return (code.co_filename, node) if isinstance(node, ast.FunctionDef) else None
    return None


def _assigned_call(init: ast.FunctionDef, key: str) -> ast.Call | None:
    for node in ast.walk(init):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
                    and target.attr == key and isinstance(node.value, ast.Call)):
                return node.value
    return None


def layer_call(module: Any, records: list[FrameRecord]) -> LayerCall | None:
    """The constructor call that built module, as the user's source wrote it, or None."""
    pairs = _owner(module, records)
    if not pairs:
        return None
    owner, key = pairs[-1]
    found = _init_node(owner)
    call = _assigned_call(found[1], key) if found is not None else None
    for _, index in reversed(pairs[:-1]):  # items of nn.Sequential(...) calls, outermost first
        if call is None or not index.isdigit() or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        item = call.args[int(index)] if int(index) < len(call.args) else None
        call = item if isinstance(item, ast.Call) else None
    return LayerCall(found[0], call) if call is not None else None


def first_argument(call: ast.Call, keyword: str) -> ast.AST | None:
    """The call's first positional argument, or the keyword that names it."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _int_factors(node: ast.AST) -> list[int] | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _int_factors(node.left), _int_factors(node.right)
        return left + right if left is not None and right is not None else None
    return None


def square_refit(node: ast.AST, wanted: int) -> tuple[str, int, int] | None:
    """For a literal `C * H * H` (a flattened square feature map), the same product that gives `wanted`:
    (`C * S * S`, H, S), or None."""
    factors = _int_factors(node)
    if factors is None or len(factors) != 3 or factors[1] != factors[2] or factors[0] <= 0:
        return None
    channels, side = factors[0], factors[1]
    if wanted % channels:
        return None
    new_side = math.isqrt(wanted // channels)
    if new_side * new_side * channels != wanted or new_side == side:
        return None
    return f"{channels} * {new_side} * {new_side}", side, new_side
