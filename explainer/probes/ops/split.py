"""Probe for torch.split with a list of sizes: the tensor split (or the layer that made it) and the names the
sizes come from."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import describe_module, describe_tensor, innermost_user_frame, is_module, is_tensor, resolve
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import MAX_LISTED, user_node

_SPLIT_CALLS = frozenset({"split", "split_with_sizes"})


def _split_call(node: ast.AST | None) -> tuple[ast.AST, ast.AST] | None:
    """(the tensor's node, the sizes' node) for `x.split([...], dim)` or `torch.split(x, [...], dim)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr not in _SPLIT_CALLS:
        return None
    args = list(node.args)
    if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"):
        args.insert(0, node.func.value)
    sizes = next((k.value for k in node.keywords if k.arg in ("split_size_or_sections", "split_sizes")), None)
    if sizes is None and len(args) > 1:
        sizes = args[1]
    return (args[0], sizes) if args and sizes is not None else None


def _source(node: ast.AST, namespace: dict[str, Any]) -> dict[str, Any] | None:
    """The tensor split as a culprit: the variable, or the layer whose output it is (`self.qkv(x).split(...)`)."""
    value = resolve(node, namespace)
    if is_tensor(value):
        return describe_tensor(ast.unparse(node), value, role="split")
    if isinstance(node, ast.Call) and is_module(callee := resolve(node.func, namespace)):
        return describe_module(ast.unparse(node.func), callee)
    return None


@probe("split_operands", provides=("split_source", "size_names"))
def split_operands(ctx: ProbeContext) -> Evidence | None:
    """The tensor (or the layer that produced it) a failing split cut, and each size in the list that the user's
    code reads from a variable or attribute (`self.kv_dim`), with its value."""
    record = innermost_user_frame(ctx.records)
    found = _split_call(user_node(record)) if record is not None else None
    if found is None:
        return None
    namespace = record.namespace()
    culprits = []
    facts: dict[str, Any] = {}
    source = _source(found[0], namespace)
    if source is not None:
        facts["split_source"] = source["name"]
        culprits.append(source)
    named = []
    elements = found[1].elts if isinstance(found[1], (ast.List, ast.Tuple)) else [found[1]]
    for element in elements[:MAX_LISTED]:
        value = resolve(element, namespace) if isinstance(element, (ast.Name, ast.Attribute)) else None
        if type(value) is int and (text := ast.unparse(element)) not in named:
            named.append(text)
            culprits.append({"name": text, "kind": "value", "type": "int", "repr": str(value)})
    if named:
        facts["size_names"] = ", ".join(f"{n}" for n in named)
    return Evidence(facts, culprits) if culprits else None
