"""Operands of the user's failing call that are not plain names: `k.transpose(-2, -1)`, `x.float()`, `w.T`.

The operand is named by the variable it starts from; its shape is worked out from that variable's shape
through a few torch methods whose result shape depends only on literal arguments. Nothing is evaluated:
any other method, or a non-literal argument, leaves the shape unknown (None).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from explainer._inspect import FrameRecord, is_tensor, resolve

from .operands import shape_of, user_node

_SAME_SHAPE = frozenset({"float", "double", "half", "bfloat16", "long", "int", "bool", "to", "cpu", "cuda",
                         "contiguous", "detach", "clone", "type", "relu", "sigmoid", "tanh", "abs", "exp",
                         "log", "neg", "sqrt", "requires_grad_"})


@dataclass
class Argument:
    text: str       # the source text of the argument
    name: str       # the variable it starts from (`k` for `k.transpose(-2, -1)`)
    tensor: Any     # that variable's live tensor
    shape: list[int] | None  # the argument's own shape, where it follows from the tensor's shape


def _literal_ints(nodes: list[ast.AST]) -> list[int] | None:
    values = []
    for node in nodes:
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(value, (tuple, list)):
            values.extend(value)
        else:
            values.append(value)
    return values if all(isinstance(v, int) and not isinstance(v, bool) for v in values) else None


def _dim(index: int, rank: int) -> int | None:
    return index + rank if -rank <= index < 0 else index if 0 <= index < rank else None


def _swap(shape: list[int], a: int | None, b: int | None) -> list[int] | None:
    if a is None or b is None:
        return None
    out = list(shape)
    out[a], out[b] = out[b], out[a]
    return out


def _method_shape(shape: list[int], method: str, args: list[int]) -> list[int] | None:
    rank = len(shape)
    if method in ("transpose", "swapaxes", "swapdims") and len(args) == 2:
        return _swap(shape, _dim(args[0], rank), _dim(args[1], rank))
    if method == "permute":
        dims = [_dim(a, rank) for a in args]
        return [shape[d] for d in dims] if sorted(d if d is not None else -1 for d in dims) == list(range(rank)) \
            else None
    if method == "unsqueeze" and len(args) == 1 and _dim(args[0], rank + 1) is not None:
        at = _dim(args[0], rank + 1)
        return shape[:at] + [1] + shape[at:]
    if method == "t" and rank == 2 and not args:
        return shape[::-1]
    return None


def _call_shape(shape: list[int] | None, node: ast.Call) -> list[int] | None:
    if shape is None:
        return None
    if node.func.attr in _SAME_SHAPE:
        return shape
    args = _literal_ints(node.args)
    return _method_shape(shape, node.func.attr, args) if args is not None and not node.keywords else None


def _attribute_shape(shape: list[int], attr: str) -> list[int] | None:
    if attr == "T" and len(shape) == 2:
        return shape[::-1]
    if attr == "mT" and len(shape) >= 2:
        return shape[:-2] + [shape[-1], shape[-2]]
    if attr in ("data", "real"):
        return shape
    return None


def argument(node: ast.AST, namespace: dict[str, Any], steps: int = 0) -> Argument | None:
    """The argument node as a variable and the shape it has after the shape-only methods applied to it."""
    value = resolve(node, namespace)
    if is_tensor(value):
        return Argument(ast.unparse(node), ast.unparse(node), value, shape_of(value))
    if steps > 6:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = argument(node.func.value, namespace, steps + 1)
        if base is None:
            return None
        return Argument(ast.unparse(node), base.name, base.tensor, _call_shape(base.shape, node))
    if isinstance(node, ast.Attribute):
        base = argument(node.value, namespace, steps + 1)
        if base is None:
            return None
        shape = _attribute_shape(base.shape, node.attr) if base.shape is not None else None
        return Argument(ast.unparse(node), base.name, base.tensor, shape)
    return None


def call_arguments(record: FrameRecord | None) -> tuple[str, list[Argument | None], dict[str, Argument]] | None:
    """The user's failing call: its callee's text, its positional arguments (None where one is not a
    tensor reached from a variable) and its keyword arguments that are."""
    node = user_node(record)
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    namespace = record.namespace()
    positional = [argument(a, namespace) for a in node.args]
    keywords = {k.arg: found for k in node.keywords if k.arg and (found := argument(k.value, namespace)) is not None}
    return ast.unparse(node.func), positional, keywords


def pick(arguments: tuple[str, list[Argument | None], dict[str, Argument]], position: int,
         keyword: str) -> Argument | None:
    """The argument passed at position or as keyword."""
    _, positional, keywords = arguments
    return positional[position] if position < len(positional) else keywords.get(keyword)


def _condition_leaves(node: ast.AST):
    """The operands inside a truth test (`a and not (b > c)` gives a, b, c): the tensors one bool was asked of."""
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _condition_leaves(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _condition_leaves(node.operand)
    elif isinstance(node, ast.Compare):
        yield node.left
        yield from node.comparators
    else:
        yield node


def tensor_arguments(record: FrameRecord | None) -> list[Argument]:
    """The tensors the user's failing call or operator works on, a method's receiver first
    (`x.mm(w)`, `torch.mm(x, w)` and `x @ w` all give [x, w])."""
    node = user_node(record)
    if node is None:
        return []
    namespace = record.namespace()
    if isinstance(node, (ast.If, ast.While, ast.Assert)):  # a truth test: the tensors are in its condition
        node = node.test
    truth_test = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    if truth_test or isinstance(node, (ast.BoolOp, ast.Compare, ast.Name)):
        found = [argument(n, namespace) for n in _condition_leaves(node)]  # (a comparison: its operands)
    elif isinstance(node, ast.BinOp):
        found = [argument(node.left, namespace), argument(node.right, namespace)]
    elif isinstance(node, (ast.Attribute, ast.Subscript, ast.UnaryOp)):
        found = [argument(node.operand if isinstance(node, ast.UnaryOp) else node.value, namespace)]
    elif isinstance(node, ast.Call):
        found = [argument(a, namespace) for a in node.args] + [argument(k.value, namespace) for k in node.keywords]
        if isinstance(node.func, ast.Attribute):
            found.insert(0, argument(node.func.value, namespace))
    else:
        return []
    return [a for a in found if a is not None]
