"""The tensors the user's failing call or expression works on, for rules whose message names no operand:
`torch.linalg.cholesky(K)`, `torch.autograd.grad(loss, [w1, w2])`, `if confidence > 0.9`, `x.requires_grad = ...`."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import describe_tensor, innermost_user_frame, is_tensor
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import tensor_arguments
from explainer.probes.readers.operands import MAX_LISTED, user_node


def _listed_tensors(record) -> list[tuple[str, Any]]:
    """The tensors in a list or tuple display argument of the failing call (`[w1, w2]`), by their names."""
    node = user_node(record)
    if not isinstance(node, ast.Call):
        return []
    namespace = record.namespace()
    found = []
    for arg in node.args:
        if isinstance(arg, (ast.List, ast.Tuple)):
            for element in arg.elts:
                if isinstance(element, ast.Name) and is_tensor(value := namespace.get(element.id)):
                    found.append((element.id, value))
    return found


@probe("call_operands", provides=("operand_names",))
def call_operands(ctx: ProbeContext) -> Evidence | None:
    """Each tensor operand of the user's failing line (name, shape, dtype, device), a method's receiver first."""
    record = innermost_user_frame(ctx.records)
    if record is None:
        return None
    named: dict[str, Any] = {}
    for found in tensor_arguments(record):
        named.setdefault(found.name, found.tensor)
    for name, value in _listed_tensors(record):
        named.setdefault(name, value)
    if not named:
        return None
    names = list(named)[:MAX_LISTED]
    return Evidence({"operand_names": ", ".join(names)}, [describe_tensor(n, named[n], role="operand") for n in names])
