"""Where a layer's wrong input came from: the layer before it that set the size the failing layer refused.

In an nn.Sequential that is the previous child that changes the size (activations, dropout, norms and,
for channels, pooling keep it); in the user's own forward it is read from the source (AST): the call
whose result is the failing layer's argument, or the last assignment of that argument's variable before
the failing line. Whenever the path is not plain straight-line code, nothing is claimed.
"""

from __future__ import annotations

import ast
import linecache
import math
from functools import lru_cache
from typing import Any

from explainer._inspect import (FrameRecord, child_modules, describe_module, is_module, module_frames, name_module,
                                resolve, safe_getattr)
from explainer.probes import ProbeContext

from .operands import user_node

# torch.nn submodules whose layers keep dimension 1 (channels) or the last dimension (features) unchanged.
_KEEPS = {
    "channels": ("activation", "dropout", "pooling", "batchnorm", "instancenorm", "normalization", "padding",
                 "upsampling"),
    "features": ("activation", "dropout", "batchnorm", "normalization"),
}
_SIZE_ATTRS = {"channels": ("out_channels", "out_features"), "features": ("out_features", "embedding_dim")}
# Functions in a forward that keep every size of their first argument.
_ELEMENTWISE = frozenset({"relu", "relu_", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "elu", "selu", "mish",
                          "hardtanh", "softplus", "dropout", "contiguous", "clone"})
_CHANNEL_KEEPING = frozenset({"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                              "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "batch_norm",
                              "group_norm", "instance_norm", "interpolate", "pad"})
MAX_STEPS = 12
MAX_SOURCE_LINES = 20_000  # a larger file is not parsed at crash time


def _torch_family(module: Any) -> str | None:
    """'activation' for torch.nn.modules.activation.ReLU; None for a user's class."""
    name = type(module).__module__
    return name.rsplit(".", 1)[-1] if name.startswith("torch.nn.modules.") else None


def _is_sequential(module: Any) -> bool:
    return type(module).__name__ == "Sequential" and _torch_family(module) == "container"


def keeps_size(module: Any, kind: str) -> bool:
    if type(module).__name__ == "Identity" and _torch_family(module) == "linear":
        return True
    return _torch_family(module) in _KEEPS[kind] and type(module).__name__ != "MultiheadAttention"


def last_setter(module: Any, kind: str) -> Any:
    """The layer that sets kind's size of module's output: module itself, or inside a Sequential its last such child."""
    if not _is_sequential(module):
        return module
    return setter_before(list(child_modules(module).values()), None, kind)


def setter_before(children: list[Any], index: int | None, kind: str) -> Any:
    """The last child before children[index] (all when index is None) that changes kind's size, or None."""
    for child in reversed(children if index is None else children[:index]):
        if child is None or keeps_size(child, kind):
            continue
        inner = last_setter(child, kind)
        if inner is not None:
            return inner
    return None


def _container_setter(ctx: ProbeContext, record: FrameRecord, module: Any, kind: str) -> tuple[Any, Any]:
    """(setter, the module the user's code called) through the nn.Sequential frames around the failing layer.
    setter is None when the input came from outside those containers (then the user's code says more)."""
    frames = module_frames(ctx.records)
    index = next((i for i, (r, _) in enumerate(frames) if r is record), None)
    current = module
    while index is not None and index > 0:
        index -= 1
        outer = frames[index][1]
        if outer is current:  # the layer's own forward around its helper (`_conv_forward`)
            continue
        if not _is_sequential(outer):
            break
        children = list(child_modules(outer).values())
        position = next((i for i, child in enumerate(children) if child is current), None)
        if position is None:
            break
        found = setter_before(children, position, kind)
        if found is not None:
            return found, current
        current = outer
    return None, current


# --- the user's forward -------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _parsed(filename: str, size: int) -> ast.Module | None:
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def parsed_file(filename: str) -> ast.Module | None:
    """The file's syntax tree from its source text (linecache), parsed once; None for a file too long or not Python."""
    lines = linecache.getlines(filename)
    return _parsed(filename, len(lines)) if 0 < len(lines) <= MAX_SOURCE_LINES else None


def _function_node(record: FrameRecord) -> ast.AST | None:
    """The def (or module) whose code the frame runs, from the file's source."""
    return code_node(record.frame.f_code, record.filename) if record.frame is not None else None


def code_node(code: Any, filename: str | None = None) -> ast.AST | None:
    """The def (or module) of a code object, from its file's source (filename, where the frame names it otherwise)."""
    tree = parsed_file(filename or code.co_filename)
    if tree is None:
        return None
    if code.co_name == "<module>":
        return tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            starts = [node.lineno] + [d.lineno for d in node.decorator_list]
            if code.co_firstlineno in starts:
                return node
    return None


def _block_chain(body: list[ast.stmt], line: int, owner: ast.AST) -> list[tuple[list[ast.stmt], int, ast.AST]]:
    """(statements, index of the one holding line, their owner) from the outermost block to the innermost."""
    for i, stmt in enumerate(body):
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            chain = [(body, i, owner)]
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    deeper = _block_chain(inner, line, stmt)
                    if deeper:
                        return chain + deeper
            # A line in an except handler or a match case: its block is not followed, so nothing is claimed.
            return [] if hasattr(stmt, "body") else chain
    return []


def _stores(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(node))


def _assigned_value(stmt: ast.stmt, name: str) -> ast.AST | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        return stmt.value if isinstance(target, ast.Name) and target.id == name else None
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
        return stmt.value
    return None


def _assignment_before(chain, name: str) -> tuple[ast.AST | None, bool]:
    """(the value last assigned to name before the failing statement, certain); certain is False when a loop,
    a branch or an augmented assignment could have set it some other way."""
    for depth in range(len(chain) - 1, -1, -1):
        body, index, owner = chain[depth]
        for stmt in reversed(body[:index]):
            if not _stores(stmt, name):
                continue
            value = _assigned_value(stmt, name)
            return value, value is not None
        if isinstance(owner, (ast.For, ast.AsyncFor, ast.While)) and any(_stores(s, name) for s in body[index:]):
            return None, False
    return None, False


def assignment_of(record: FrameRecord, name: str) -> ast.AST | None:
    """The value last assigned to name before the frame's failing statement, where nothing else could have set it."""
    function = _function_node(record)
    chain = _block_chain(function.body, record.lineno, function) if function is not None else []
    value, certain = _assignment_before(chain, name) if chain else (None, False)
    return value if certain else None


def _call_name(func: ast.AST) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _expression_setter(node: ast.AST, chain, namespace: dict[str, Any], kind: str, steps: int = 0) -> Any:
    """The module whose output, through kind-keeping calls only, is the value of node."""
    if steps > MAX_STEPS:
        return None
    if isinstance(node, ast.Name):
        value, certain = _assignment_before(chain, node.id)
        return _expression_setter(value, chain, namespace, kind, steps + 1) if certain else None
    if not isinstance(node, ast.Call) or not node.args:
        return None
    callee = resolve(node.func, namespace)
    if is_module(callee):
        if keeps_size(callee, kind):
            return _expression_setter(node.args[0], chain, namespace, kind, steps + 1)
        return last_setter(callee, kind)
    name = _call_name(node.func)
    if name in _ELEMENTWISE or (kind == "channels" and name in _CHANNEL_KEEPING):
        return _expression_setter(node.args[0], chain, namespace, kind, steps + 1)
    return None


def _loop_setter(chain, call: ast.Call, namespace: dict[str, Any], module: Any, kind: str) -> Any:
    """`for layer in self.layers: x = f(layer(x))`: the element before module in self.layers."""
    body, index, owner = chain[-1]
    if not (isinstance(owner, (ast.For, ast.AsyncFor)) and isinstance(owner.target, ast.Name)
            and isinstance(call.func, ast.Name) and call.func.id == owner.target.id
            and isinstance(call.args[0], ast.Name) and _assigned_value(body[index], call.args[0].id) is not None):
        return None
    if any(_stores(s, call.args[0].id) for i, s in enumerate(owner.body) if i != index):
        return None
    layers = resolve(owner.iter, namespace)
    children = list(child_modules(layers).values()) if is_module(layers) else []
    position = next((i for i, child in enumerate(children) if child is module), None)
    return setter_before(children, position, kind) if position else None


def _user_setter(record: FrameRecord, module: Any, kind: str) -> Any:
    call = user_node(record)
    namespace = record.namespace()
    if not isinstance(call, ast.Call) or not call.args or resolve(call.func, namespace) is not module:
        return None
    function = _function_node(record)
    chain = _block_chain(function.body, record.lineno, function) if function is not None else []
    if not chain:
        return None
    return _loop_setter(chain, call, namespace, module, kind) or _expression_setter(
        call.args[0], chain, namespace, kind)


def _innermost_user_record(ctx: ProbeContext) -> FrameRecord | None:
    for record in reversed(ctx.records):
        if record.is_user:
            return record
    return None


def find_setter(ctx: ProbeContext, record: FrameRecord, module: Any, kind: str) -> Any:
    """The layer that set kind's size of the input module refused (record is module's own frame), or None."""
    found, called = _container_setter(ctx, record, module, kind)
    if found is not None:
        return found
    user = _innermost_user_record(ctx)
    return _user_setter(user, called, kind) if user is not None else None


# --- what it says -------------------------------------------------------------------------------------

def _size_of(module: Any, kind: str) -> tuple[str, int] | None:
    for attr in _SIZE_ATTRS[kind]:
        value = safe_getattr(module, attr)
        if isinstance(value, int) and not isinstance(value, bool):
            return attr, value
    return None


def producer_facts(ctx: ProbeContext, record: FrameRecord, module: Any, kind: str, got: int,
                   want: Any = None) -> dict[str, Any]:
    """producer_name / producer_desc / producer_module for the layer that made the refused size got; empty when
    it cannot be named with certainty (its own size disagrees with what arrived, or no name reaches it)."""
    setter = find_setter(ctx, record, module, kind)
    name = name_module(setter, ctx.records) if setter is not None else None
    if name is None:
        return {}
    cls = type(setter).__name__
    if kind == "features" and cls == "Flatten" and _torch_family(setter) == "flatten":
        return _flatten_facts(ctx, setter, name, got, want)
    if kind == "features" and _torch_family(setter) == "pooling":
        return _pool_facts(setter, name, got)
    size = _size_of(setter, kind)
    if size is None or size[1] != got:
        return {}
    return {"producer": name, "producer_name": name, "producer_desc": f"{cls}, {size[0]}={size[1]}",
            "_producer_module": setter}


def _pool_facts(pool: Any, name: str, got: int) -> dict[str, Any]:
    """An adaptive pool straight before a Linear: its maps' last side arrived as the features (no Flatten)."""
    size = safe_getattr(pool, "output_size")
    last = size[-1] if isinstance(size, tuple) and size else size
    if last != got:
        return {}
    return {"producer": name, "producer_name": name, "producer_desc": f"{type(pool).__name__}, output_size={size}",
            "missing_flatten": f"nn.Flatten(1) after {name}", "_producer_module": pool}


def add_producer(ctx: ProbeContext, record: FrameRecord, module: Any, kind: str, got: Any,
                 facts: dict[str, Any], culprits: list[dict[str, Any]], want: Any = None) -> None:
    """Name the layer that made the refused size got (want would have fitted) in facts, and as a culprit."""
    if not isinstance(got, int) or record is None:
        return
    found = producer_facts(ctx, record, module, kind, got, want)
    setter = found.pop("_producer_module", None)
    if setter is not None:
        facts.update(found)
        culprits.append(describe_module(found["producer_name"], setter, role="made the input"))


def _fitting_pool(conv: Any, channels: int, want: Any) -> dict[str, Any]:
    """The adaptive pool that makes a 2-D conv's square maps flatten to want features."""
    if not (isinstance(want, int) and type(conv).__name__.endswith("2d") and want % channels == 0):
        return {}
    side = math.isqrt(want // channels)
    if side * side != want // channels:
        return {}
    return {"fit_pool": f"nn.AdaptiveAvgPool2d({side})", "fit_pool_size": f"{side}x{side}"}


def _flatten_facts(ctx: ProbeContext, flatten: Any, name: str, got: int, want: Any) -> dict[str, Any]:
    """The Flatten before a Linear: the channels x height x width it flattened into got features."""
    facts: dict[str, Any] = {"producer": name, "producer_name": name, "producer_desc": "Flatten",
                             "_producer_module": flatten}
    container = _parent_sequential(ctx, flatten)
    if container is None:
        return facts
    children = list(child_modules(container).values())
    conv = setter_before(children, children.index(flatten), "channels")
    channels = safe_getattr(conv, "out_channels") if conv is not None else None
    if isinstance(channels, int) and channels > 0 and got % channels == 0:
        spatial = got // channels
        side = math.isqrt(spatial)
        area = f"{side}x{side}" if side * side == spatial else str(spatial)
        facts["producer_desc"] = f"Flatten of {channels} channels x {area}"
        facts["flatten_spatial"] = area
        facts.update(_fitting_pool(conv, channels, want))
    return facts


def _parent_sequential(ctx: ProbeContext, child: Any) -> Any:
    for _, module in reversed(module_frames(ctx.records)):
        if _is_sequential(module) and any(c is child for c in child_modules(module).values()):
            return module
    return None
