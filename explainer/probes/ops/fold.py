"""Probes for F.fold / F.unfold (nn.Fold / nn.Unfold): the blocks tensor and the output_size the user's call
gives, and the output_size that the blocks it got would fill."""

from __future__ import annotations

import ast

from explainer._inspect import MISSING, describe_tensor, format_shape, innermost_user_frame
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import call_arguments, pick
from explainer.probes.readers.operands import failing_layer, frame_tensor, ints_in, name_of, shape_of, user_node

_FOLD_CALLS = frozenset({"fold", "unfold", "col2im", "im2col"})


def _size_argument(record) -> str | None:
    """The text of the output_size the user's F.fold call passes (position 1 or keyword), when it is a name."""
    node = user_node(record)
    if not isinstance(node, ast.Call):
        return None
    found = next((k.value for k in node.keywords if k.arg == "output_size"), None)
    if found is None and len(node.args) > 1:
        found = node.args[1]
    return ast.unparse(found) if isinstance(found, (ast.Name, ast.Attribute)) else None


@probe("fold_operands", provides=("call_name", "input_name", "input_shape", "size_name", "module"))
def fold_operands(ctx: ProbeContext) -> Evidence | None:
    """The tensor of blocks F.fold / F.unfold got (or an nn.Fold / nn.Unfold layer's input), and the name of the
    output_size the user's call passes."""
    record, module, expr, facts, culprits = failing_layer(ctx, "Fold", "Unfold")
    if module is not None:
        value = frame_tensor(record, "input")
        if value is not MISSING:
            name = name_of(ctx, value, expr) or f"the input of {facts['module']}"
            facts.update(input_name=name, input_shape=format_shape(shape_of(value)))
            culprits.append(describe_tensor(name, value, role="input"))
        return Evidence(facts, culprits)
    user = innermost_user_frame(ctx.records)
    arguments = call_arguments(user)
    if arguments is None or arguments[0].rsplit(".", 1)[-1] not in _FOLD_CALLS:
        return None
    facts = {"call_name": arguments[0]}
    given = pick(arguments, 0, "input")
    culprits = []
    if given is not None and given.shape is not None:
        facts.update(input_name=given.text, input_shape=format_shape(given.shape))
        culprits.append(describe_tensor(given.text, given.tensor, role="input"))
    size = _size_argument(user)
    if size is not None:
        facts["size_name"] = size
        culprits.append({"name": size, "kind": "value", "type": "output_size"})
    return Evidence(facts, culprits) if culprits else None


def _side(blocks: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    """The output side along which `blocks` sliding blocks fit exactly (the inverse of the blocks formula)."""
    return (blocks - 1) * stride + dilation * (kernel - 1) + 1 - 2 * padding


@probe("fold_fit", provides=("fit_size", "blocks_side"), live=False)
def fold_fit(ctx: ProbeContext) -> Evidence | None:
    """The output_size the message's number of blocks would fill, when that number is a square (a square image)."""
    got = ctx.facts.get("got_blocks")
    kernel, dilation = ints_in(ctx.facts.get("kernel_size", "")), ints_in(ctx.facts.get("dilation", ""))
    padding, stride = ints_in(ctx.facts.get("padding", "")), ints_in(ctx.facts.get("stride", ""))
    if not isinstance(got, int) or not all(len(v) == 2 for v in (kernel, dilation, padding, stride)):
        return None
    side = round(got ** 0.5)
    if side < 1 or side * side != got:
        return None
    fit = [_side(side, kernel[i], dilation[i], padding[i], stride[i]) for i in range(2)]
    if min(fit) < 1:
        return None
    return Evidence({"fit_size": f"({fit[0]}, {fit[1]})", "blocks_side": side})


