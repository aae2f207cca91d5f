"""A loss function's arguments as the user's failing call wrote them (`F.cross_entropy(logits, targets.unsqueeze(1))`):
the text of the argument torch's loss got at a position, read from the call without running it."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import innermost_user_frame, is_tensor, resolve
from explainer.probes import ProbeContext

from .derived import argument
from .operands import FUNCTIONAL_FILE, shape_of, torch_frame, user_node


def _loss_call(ctx: ProbeContext) -> tuple[ast.Call, dict[str, Any]] | None:
    """The user's failing call when it is the call of the torch loss function that raised (`F.nll_loss(...)` over
    torch's `nll_loss` frame): its node and the frame's namespace."""
    record = innermost_user_frame(ctx.records)
    node = user_node(record)
    loss = torch_frame(ctx.records, FUNCTIONAL_FILE)
    if not isinstance(node, ast.Call) or loss is None:
        return None
    callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    return (node, record.namespace()) if callee == loss.name else None


def argument_text(ctx: ProbeContext, tensor: Any, position: int) -> str | None:
    """The source of the call's argument at position when its shape, worked out from its variable, is the shape of
    the tensor the loss got (else None: a name with another shape would mislead)."""
    found = _loss_call(ctx)
    if found is None or position >= len(found[0].args):
        return None
    node, namespace = found
    arg = argument(node.args[position], namespace)
    return arg.text if arg is not None and arg.shape == shape_of(tensor) else None


def unsqueezed_from(ctx: ProbeContext, position: int) -> str | None:
    """`targets` when the argument at position is `targets.unsqueeze(...)`: the dimension the call itself added."""
    found = _loss_call(ctx)
    if found is None or position >= len(found[0].args):
        return None
    arg = found[0].args[position]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "unsqueeze":
        return ast.unparse(arg.func.value)
    return None


def caller_argument_base(records: list, position: int) -> tuple[str, Any] | None:
    """(variable, its live tensor) behind the argument at position of the call into torch's loss, made in the user's
    frame or a library's (`logits` of `logits.view(-1, self.num_labels)`): what the loss's input was before a view."""
    from .library_names import library_package

    record = next((r for r in reversed(records) if r.is_user or library_package(r) is not None), None)
    node = user_node(record)
    if not isinstance(node, ast.Call) or position >= len(node.args):
        return None
    base = node.args[position]
    while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
        base = base.func.value
    if not isinstance(base, ast.Name):
        return None
    value = resolve(base, record.namespace())
    return (base.id, value) if is_tensor(value) else None
