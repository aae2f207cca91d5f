"""Probes for losses: the loss, its input and target (live, or sizes read from the message)."""

from __future__ import annotations

import math
import re
from typing import Any

from explainer._inspect import MISSING, describe_module, describe_tensor, format_shape, is_tensor, tensor_facts
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.library_names import library_call_argument
from explainer.probes.readers.loss_args import argument_text, caller_argument_base, unsqueezed_from
from explainer.probes.readers.operands import (FUNCTIONAL_FILE, failing_module, frame_tensor, join_dims, module_label,
                                               name_of, shape_of, torch_frame, user_expression)


@probe("loss_operands", provides=(
    "loss", "input_name", "input_shape", "target_name", "target_shape", "input_batch", "target_batch",
    "batch_ratio", "num_classes", "squeeze_fix", "view_as_fix", "target_squeeze_fix", "argmax_fix", "permute_fix",
    "permute_shape", "flatten_fix", "onehot_squeeze", "unsqueezed_from", "library_where", "target_variable",
    "onehot_rows", "token_scores", "token_len", "token_target"))
def loss_operands(ctx: ProbeContext) -> Evidence | None:
    """The loss (module or function) and its input and target, named as the failing line names them."""
    record, module = failing_module(ctx, "_Loss")
    _, expr = user_expression(ctx)
    if module is not None:
        loss = module_label(ctx, module, expr)
        prediction, target = frame_tensor(record, "input"), frame_tensor(record, "target")
    else:
        found = _function_loss(ctx, expr)
        if found is None:
            return None
        loss, prediction, target = found
    facts: dict[str, Any] = {"loss": loss}
    culprits = [describe_module(loss, module)] if module is not None else []
    if prediction is MISSING or target is MISSING:
        return Evidence(facts, culprits)
    (p_name, p_note), (t_name, t_note) = (_operand_name(ctx, prediction, expr, 0, "input"),
                                          _operand_name(ctx, target, expr, 1, "target"))
    if (base := unsqueezed_from(ctx, 1)) is not None:
        facts["unsqueezed_from"] = base
    sp, st = shape_of(prediction), shape_of(target)
    facts.update(input_name=p_name, input_shape=format_shape(sp), target_name=t_name, target_shape=format_shape(st))
    culprits += [describe_tensor(p_name, prediction, **p_note), describe_tensor(t_name, target, **t_note)]
    if t_note and (found := library_call_argument(ctx.records, 1)) is not None:
        facts["library_where"] = found[2]
        if found[1]:
            facts["target_variable"] = found[1]
    if sp and st:
        facts.update(input_batch=sp[0], target_batch=st[0])
        if sp[0] != st[0] and st[0] and sp[0] % st[0] == 0:
            facts["batch_ratio"] = sp[0] // st[0]
        facts.update(_batch_mismatch_reading(ctx, sp, st))
    if len(sp) >= 2:
        facts["num_classes"] = sp[1]
    if sp != st and math.prod(sp) == math.prod(st):
        facts["view_as_fix"] = f"{t_name}.view_as({p_name})"
        if sp == st + [1]:
            facts["squeeze_fix"] = f"{p_name}.squeeze(-1)"
    if len(st) == 2 and st[1] == 1 and sp and st[0] == sp[0] and "unsqueezed_from" not in facts:
        facts["target_squeeze_fix"] = f"{t_name}.squeeze(1)"
    if st == sp and len(st) == 2 and not tensor_facts(target)["dtype"].startswith("float"):
        facts["argmax_fix"] = f"{t_name}.argmax(1)"
    facts.update(_onehot_fixes(t_name, sp, st))
    if len(sp) == len(st) + 1 and len(st) >= 2 and sp[:-1] == st:
        order = (0, len(sp) - 1, *range(1, len(sp) - 1))
        facts.update(permute_fix=f"{p_name}.permute{order}", permute_shape=format_shape([sp[i] for i in order]),
                     flatten_fix=f"{p_name}.reshape(-1, {sp[-1]}), {t_name}.reshape(-1)", num_classes=sp[-1])
    return Evidence(facts, culprits)


def _operand_name(ctx: ProbeContext, value: Any, expr, position: int, local: str) -> tuple[str, dict[str, str]]:
    """The user's name for the loss's input or target; else the argument as a library's call wrote it, with a note
    saying where that name lives (`labels.view(-1)` in transformers' model), never torch's own `target` unqualified."""
    name = name_of(ctx, value, expr) or argument_text(ctx, value, position)
    if name:
        return name, {}
    found = library_call_argument(ctx.records, position)
    return (found[0], {"note": f"in {found[2]}"}) if found is not None else (local, {})


def _batch_mismatch_reading(ctx: ProbeContext, sp: list[int], st: list[int]) -> dict[str, Any]:
    """What the two batch sizes say: a 1-D target of batch x classes values is one-hot rows flattened (12 = 4 x 3);
    scores flattened from (B, T, C) per-token scores against B targets need one label per token, (B, T)."""
    if len(sp) != 2 or len(st) != 1 or sp[0] == st[0]:
        return {}
    if st[0] == sp[0] * sp[1] and sp[1] > 1:
        return {"onehot_rows": format_shape([sp[0], sp[1]])}
    found = caller_argument_base(ctx.records, 0)
    shape = shape_of(found[1]) if found is not None else []
    if len(shape) == 3 and shape[0] == st[0] and shape[0] * shape[1] == sp[0] and shape[2] == sp[1]:
        return {"token_scores": f"{found[0]} {format_shape(shape)}", "token_len": shape[1],
                "token_target": format_shape(shape[:2])}
    return {}


def _function_loss(ctx: ProbeContext, expr) -> tuple[str, Any, Any] | None:
    """A loss called as a function (F.cross_entropy): the input and target torch's own frame got (the tensors passed,
    `targets.unsqueeze(1)` itself, not the variable it was made from); the user's operands where no such frame is."""
    if expr is None or expr.kind != "call":
        return None
    loss = expr.callee.text if expr.callee is not None else "the loss"
    record = torch_frame(ctx.records, FUNCTIONAL_FILE)
    prediction, target = frame_tensor(record, "input"), frame_tensor(record, "target")
    if prediction is not MISSING and target is not MISSING:
        return loss, prediction, target
    tensors = [op.value for op in expr.operands if is_tensor(op.value)]
    return (loss, tensors[0], tensors[1]) if len(tensors) >= 2 else None


def _onehot_fixes(t_name: str, sp: list[int], st: list[int]) -> dict[str, str]:
    """(N, C) scores and a one-hot target of shape (N, C) with singleton dimensions added ((N, 1, C)): class indices
    with the singletons squeezed, or the (N, C) probabilities themselves (never a view(-1) into N*C targets)."""
    singletons = [dim for dim, size in enumerate(st) if size == 1]
    if len(sp) != 2 or st == sp or not singletons or [size for size in st if size != 1] != sp or st[-1] != sp[1]:
        return {}
    squeezed = f"{t_name}.squeeze({singletons[0]})" if len(singletons) == 1 else f"{t_name}.reshape({sp[0]}, {sp[1]})"
    return {"argmax_fix": f"{squeezed}.argmax(dim=-1)", "onehot_squeeze": squeezed}


def _size_list(text: Any) -> list[int] | None:
    """'1, 3, 1356, 204\\n0' (a size wrapped by a paste) -> [1, 3, 1356, 2040]; None if not a size list."""
    parts = [re.sub(r"\s+", "", part) for part in str(text).split(",")]
    if parts == [""]:
        return []
    if not all(part.isdigit() for part in parts):
        return None
    return [int(part) for part in parts]


def _broadcast(a: list[int], b: list[int]) -> list[int] | None:
    out = []
    for x, y in zip([1] * (len(b) - len(a)) + a, [1] * (len(a) - len(b)) + b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return out


def _broadcast_clash(a: list[int], b: list[int]) -> tuple[int, int, int] | None:
    """The first dimension (of the broadcast result) where a and b differ and neither is 1: (dim, size_a, size_b)."""
    rank = max(len(a), len(b))
    for dim, (x, y) in enumerate(zip([1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b)):
        if x != y and 1 not in (x, y):
            return dim, x, y
    return None


@probe("loss_size_text", provides=("input_dims", "target_dims", "broadcast_dims", "clash_dim", "clash_input",
                                   "clash_target"), live=False)
def loss_size_text(ctx: ProbeContext) -> Evidence | None:
    """The loss's input and target sizes from the message, line wraps removed, and what they broadcast to
    (or, when they do not broadcast at all, the first dimension where they clash)."""
    sizes = {key: _size_list(ctx.facts.get(key, "")) for key in ("input_dims", "target_dims")}
    if any(value is None for value in sizes.values()):
        return None
    facts: dict[str, Any] = {key: join_dims(value) for key, value in sizes.items()}
    both = _broadcast(sizes["input_dims"], sizes["target_dims"])
    if both is not None and both != sizes["input_dims"]:
        facts["broadcast_dims"] = join_dims(both)
    clash = _broadcast_clash(sizes["input_dims"], sizes["target_dims"])
    if clash is not None:
        facts["clash_dim"], facts["clash_input"], facts["clash_target"] = clash
    return Evidence(facts)


_CTC_ARGUMENTS = ("log_probs", "targets", "input_lengths", "target_lengths")


@probe("ctc_operands", provides=("log_probs_name", "log_probs_shape", "frames", "batch_size", "classes",
                                 "input_lengths_name", "input_lengths_shape", "target_lengths_name",
                                 "target_lengths_shape", "targets_name", "targets_shape", "lengths_name",
                                 "lengths_shape"))
def ctc_operands(ctx: ProbeContext) -> Evidence | None:
    """F.ctc_loss / nn.CTCLoss: log_probs (T, N, C) and the targets and lengths it got, by the user's names; the
    lengths the message refuses (its `which` group) first."""
    record = torch_frame(ctx.records, FUNCTIONAL_FILE, "ctc_loss")
    if record is None:
        return None
    _, expr = user_expression(ctx)
    facts: dict[str, Any] = {}
    found, shapes = {}, {}
    for local in _CTC_ARGUMENTS:
        value = frame_tensor(record, local)
        if value is MISSING:
            continue
        name = name_of(ctx, value, expr) or local
        shapes[local] = shape_of(value)
        facts.update({f"{local}_name": name, f"{local}_shape": format_shape(shapes[local])})
        found[local] = describe_tensor(name, value, role=local)
    shape = shapes.get("log_probs", [])
    if len(shape) == 3:
        facts.update(frames=shape[0], batch_size=shape[1], classes=shape[2])
    elif len(shape) == 2:
        facts.update(frames=shape[0], batch_size=1, classes=shape[1])
    which = ctx.facts.get("which")
    if which in found:
        facts.update(lengths_name=facts[f"{which}_name"], lengths_shape=facts[f"{which}_shape"])
    order = [which] + [k for k in _CTC_ARGUMENTS if k != which]
    return Evidence(facts, [found[k] for k in order if k in found])
