"""Probes for the optimizer's own checks: the parameter it refused (a non-leaf, a non-tensor) and the group
sizes of a loaded optimizer state against the optimizer's."""

from __future__ import annotations

from typing import Any

from explainer._inspect import (MISSING, FrameRecord, describe_module, describe_tensor, is_module, is_tensor,
                                resolve_text, safe_getattr, user_frames)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import name_of, torch_frame, user_expression

from .device import assignment

OPTIMIZER_FILE = "torch/optim/optimizer.py"
MAX_GROUPS = 64


def _made_by(ctx: ProbeContext, name: str) -> tuple[int, str] | None:
    """The user's line that assigns `name`, in the innermost user frame that binds it."""
    for record in reversed(user_frames(ctx.records)):
        table = record.locals
        if isinstance(table, dict) and name in table:
            return assignment(record, name)
    return None


@probe("optimizer_refused_param", provides=("param_name", "param_grad_fn", "param_shape", "param_made_line",
                                             "param_made_code", "param_type_name"))
def optimizer_refused_param(ctx: ProbeContext) -> Evidence | None:
    """The parameter add_param_group refused, as the user's code names it, and the line that made it."""
    if "leaf_kind" not in ctx.facts and "param_type" not in ctx.facts:
        return None  # the duplicate-group check runs after the loop: `param` is then just the last one
    record = torch_frame(ctx.records, OPTIMIZER_FILE, "add_param_group")
    table = record.locals if record is not None else None
    if not isinstance(table, dict):
        return None
    param = table.get("param", MISSING)
    if param is MISSING:
        return None
    facts: dict[str, Any] = {}
    name = name_of(ctx, param)
    if name is not None:
        facts["param_name"] = name
        made = _made_by(ctx, name)
        if made is not None:
            facts["param_made_line"], facts["param_made_code"] = made
    if not is_tensor(param):
        facts["param_type_name"] = type(param).__name__
        if is_module(param):
            return Evidence(facts, [describe_module(name or "param", param)])
        return Evidence(facts, [{"name": name or "param", "kind": "value", "type": type(param).__name__}])
    culprit = describe_tensor(name or "param", param)
    if "grad_fn" in culprit:
        facts["param_grad_fn"] = culprit["grad_fn"]
    facts["param_shape"] = tuple(culprit["shape"] or ())
    return Evidence(facts, [culprit])


def _receiver_text(record: FrameRecord | None, expr, value: Any) -> str | None:
    """`opt` in the failing `opt.load_state_dict(...)` (or `self.opt`), when it is that very object."""
    if record is None or expr is None or expr.callee is None or "." not in expr.callee.text:
        return None
    base = expr.callee.text.rsplit(".", 1)[0]
    return base if resolve_text(base, record.namespace()) is value else None


def _group_sizes(groups: Any) -> list[int] | None:
    if not isinstance(groups, list) or len(groups) > MAX_GROUPS:
        return None
    sizes = []
    for group in groups:
        params = group.get("params") if isinstance(group, dict) else None
        if not isinstance(params, list):
            return None
        sizes.append(len(params))
    return sizes


@probe("optimizer_state_groups", provides=("optimizer_name", "optimizer_type", "current_sizes", "saved_sizes",
                                            "group_index", "current_size", "saved_size", "state_expr"))
def optimizer_state_groups(ctx: ProbeContext) -> Evidence | None:
    """Parameters per group in the optimizer and in the state given to its load_state_dict."""
    record = torch_frame(ctx.records, OPTIMIZER_FILE, "load_state_dict")
    table = record.locals if record is not None else None
    if not isinstance(table, dict):
        return None
    current = _group_sizes(table.get("groups"))
    saved = _group_sizes(table.get("saved_groups"))
    if current is None or saved is None:
        return None
    facts: dict[str, Any] = {"current_sizes": ", ".join(map(str, current)), "saved_sizes": ", ".join(map(str, saved))}
    pairs = zip(current, saved) if len(current) == len(saved) else ()
    for index, (mine, theirs) in enumerate(pairs):
        if mine != theirs:
            facts.update({"group_index": index, "current_size": mine, "saved_size": theirs})
            break
    optimizer = table.get("self", MISSING)
    culprits = []
    user, expr = user_expression(ctx)
    if optimizer is not MISSING:
        facts["optimizer_type"] = type(optimizer).__name__
        name = _receiver_text(user, expr, optimizer) or name_of(ctx, optimizer, expr)
        if name is not None:
            facts["optimizer_name"] = name
            culprits.append({"name": name, "kind": "optimizer", "type": type(optimizer).__name__,
                             "repr": f"{type(optimizer).__name__} with {len(current)} group(s) of "
                                     f"{facts['current_sizes']} parameters"})
    if expr is not None and expr.operands:
        facts["state_expr"] = expr.operands[0].text
    return Evidence(facts, culprits)


SCHEDULER_FILE = "torch/optim/lr_scheduler.py"
MAX_STEP_NAMES = 3


def _scheduler_frame(records: list[FrameRecord]) -> FrameRecord | None:
    """The innermost frame of an lr_scheduler method (OneCycleLR.get_lr raises the step check)."""
    for record in reversed(records):
        if record.filename.replace("\\", "/").endswith(SCHEDULER_FILE) and "self" in (record.locals or {}):
            return record
    return None


def _step_variables(ctx: ProbeContext, total: int) -> list[tuple[str, int]]:
    """The user's integer variables the step count was built from: `steps_per_epoch`, `total_steps`, ...

    A name with "steps" in it (not a loop's `step` counter) whose value is the total or divides it (steps per epoch times epochs)."""
    found: list[tuple[str, int]] = []
    seen: set[str] = set()
    for record in reversed(user_frames(ctx.records)):
        for name, value in record.namespace().items():
            if (type(value) is not int or value <= 0 or "steps" not in name.lower() or name in seen
                    or total % value != 0):
                continue
            seen.add(name)
            found.append((name, value))
    return found[:MAX_STEP_NAMES]


@probe("scheduler_step_budget", provides=("scheduler_name", "scheduler_type", "step_names"))
def scheduler_step_budget(ctx: ProbeContext) -> Evidence | None:
    """The scheduler stepped past its total_steps, and the user's variables that sized it."""
    record = _scheduler_frame(ctx.records)
    scheduler = record.locals.get("self", MISSING) if record is not None else MISSING
    total = safe_getattr(scheduler, "total_steps") if scheduler is not MISSING else MISSING
    if type(total) is not int:
        return None
    facts: dict[str, Any] = {"scheduler_type": type(scheduler).__name__}
    culprits: list[dict[str, Any]] = []
    user, expr = user_expression(ctx)
    name = _receiver_text(user, expr, scheduler) or name_of(ctx, scheduler, expr)
    steps = _step_variables(ctx, total)
    for step_name, value in steps:
        culprits.append({"name": step_name, "kind": "value", "type": "int", "repr": str(value)})
    if steps:
        facts["step_names"] = ", ".join(f"`{n}` = {v}" for n, v in steps)
    if name is not None:
        facts["scheduler_name"] = name
        culprits.append({"name": name, "kind": "scheduler", "type": type(scheduler).__name__,
                         "repr": f"{type(scheduler).__name__}(total_steps={total})"})
    return Evidence(facts, culprits)
