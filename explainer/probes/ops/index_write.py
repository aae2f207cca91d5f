"""index_add_ / index_copy_ / index_reduce_: the tensor written into, the index and the source of the user's
failing call, as the user's code names them, and the variable a source of the wrong dtype was computed from."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import describe_tensor, dtype_name, format_shape, innermost_user_frame, is_tensor, resolve
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import shape_of, user_node
from explainer.probes.readers.producer import assignment_of

_INDEX_WRITES = ("index_add", "index_copy", "index_reduce")
_ROLES = ("self", "dim", "index", "source")


def _index_call(node: ast.AST | None) -> tuple[str, dict[str, ast.AST]] | None:
    """(the op's name, the argument node of each role) for `out.index_add_(0, idx, src)`,
    `torch.index_add(out, 0, idx, src)` or `out[idx] = src` (index_put); None for anything else."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        target = node.targets[0]
        return "index_put", {"self": target.value, "index": target.slice, "source": node.value}
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    op = node.func.attr.rstrip("_")
    if op not in _INDEX_WRITES:
        return None
    args = list(node.args)
    method = not (isinstance(node.func.value, ast.Name) and node.func.value.id == "torch")
    if method:
        args.insert(0, node.func.value)
    roles = {role: args[i] for i, role in enumerate(_ROLES) if i < len(args)}
    for keyword in node.keywords:
        if keyword.arg in ("dim", "index", "source"):
            roles[keyword.arg] = keyword.value
    return op, roles


def _statement_of(record, node: ast.AST | None) -> ast.AST | None:
    """The whole `out[idx] = src` for its failing target `out[idx]`; any other node as it is."""
    if not isinstance(node, ast.Subscript):
        return node
    try:
        statement = ast.parse(record.code.strip()).body
    except (SyntaxError, ValueError, AttributeError):
        return node
    if len(statement) == 1 and isinstance(statement[0], ast.Assign) and \
            ast.unparse(statement[0].targets[0]) == ast.unparse(node):
        return statement[0]
    return node


def _operands(record) -> tuple[str, list[tuple[str, str, Any]]] | None:
    """(the op's name, [(role, text, tensor or MISSING)]) for the user's failing index write."""
    found = _index_call(_statement_of(record, user_node(record)))
    if found is None:
        return None
    op, roles = found
    namespace = record.namespace()
    return op, [(role, ast.unparse(node), resolve(node, namespace)) for role, node in roles.items()]


@probe("index_write_operands", provides=("op", "self_name", "dim_name", "index_name", "source_name",
                                         "index_len", "source_shape", "self_shape"))
def index_write_operands(ctx: ProbeContext) -> Evidence | None:
    """The tensor written into, the index and the source of a failing index_add_ / index_copy_ / index_reduce_,
    by the names the user's line gives them, with their shapes."""
    record = innermost_user_frame(ctx.records)
    found = _operands(record) if record is not None else None
    if found is None:
        return None
    op, operands = found
    facts: dict[str, Any] = {"op": op}
    culprits = []
    for role, text, value in operands:
        facts[f"{role}_name"] = text
        if not is_tensor(value):
            continue
        shape = shape_of(value)
        facts[f"{role}_shape"] = format_shape(shape)
        if role == "index" and len(shape) == 1:
            facts["index_len"] = shape[0]
        culprits.append(describe_tensor(text, value, role=role))
    # The index and the source are what disagree; the tensor written into only frames them.
    culprits.sort(key=lambda c: c.get("role") == "self")
    return Evidence(facts, culprits)


_DTYPE_WORDS = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
                "Long": "int64", "Int": "int32"}


@probe("index_write_source_origin", provides=("source_name", "origin_name", "origin_dtype"))
def index_write_source_origin(ctx: ProbeContext) -> Evidence | None:
    """Where a source of the refused dtype came from: the tensor of that dtype in the expression last assigned
    to the source variable (`messages = self.lin(x)[src] * edge_weight` gives edge_weight, float64)."""
    record = innermost_user_frame(ctx.records)
    found = _operands(record) if record is not None else None
    wanted = _DTYPE_WORDS.get(str(ctx.facts.get("source", "")))
    if found is None or wanted is None:
        return None
    source = next(((text, value) for role, text, value in found[1] if role == "source"), None)
    if source is None or not source[0].isidentifier():
        return None
    value = assignment_of(record, source[0])
    if value is None:
        return None
    namespace = record.namespace()
    for node in ast.walk(value):
        if isinstance(node, (ast.Name, ast.Attribute)):
            tensor = resolve(node, namespace)
            if is_tensor(tensor) and dtype_name(tensor.dtype) == wanted and tensor is not source[1]:
                text = ast.unparse(node)
                return Evidence({"source_name": source[0], "origin_name": text, "origin_dtype": wanted},
                                [describe_tensor(text, tensor, role="origin")])
    return None

