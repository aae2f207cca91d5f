"""Probe for a failure inside a LightningModule: Lightning moves the module and each batch to the Trainer's device
itself, so its idioms differ from a plain loop's (`device=self.device`, `self.register_buffer(...)`, never
`model.to(device)` or moving batches by hand).

A LightningModule is told by its class's MRO names (read through type's own descriptors), the hook by the frame's
function name; a tensor's creation by its assignment's source line. Nothing of the user's runs."""

from __future__ import annotations

import ast
import re
from typing import Any

from explainer._inspect import FrameRecord, class_text, innermost_user_frame, is_tensor, module_frames
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.library_names import has_base
from explainer.probes.runtime.device import FACTORY_RE, assignment

_PACKAGES = ("lightning", "pytorch_lightning")


def is_lightning_module(value: Any) -> bool:
    """value's class has Lightning's LightningModule among its bases."""
    return has_base(value, "LightningModule", _PACKAGES)


def _step_frame(ctx: ProbeContext) -> tuple[FrameRecord, Any] | None:
    """The user's innermost frame when it runs a LightningModule's *_step method (training_step, validation_step ...)."""
    record = innermost_user_frame(ctx.records)
    local_vars = record.locals if record is not None else None
    owner = dict.get(local_vars, "self", None) if isinstance(local_vars, dict) else None
    if owner is None or not record.name.endswith("_step") or not is_lightning_module(owner):
        return None
    return record, owner


def _created_here(record: FrameRecord, name: str, device: str) -> tuple[str, str] | None:
    """(reason, fix) when the step's local name was made on line N by a torch factory: the same call on self.device."""
    made = assignment(record, name)
    if made is None or not re.search(FACTORY_RE, made[1]):
        return None
    lineno, fixed, given = made[0], *_on_self_device(made[1])
    if fixed is None:
        return None
    how = f"with device={given}" if given else "without device="
    attribute = name if name.isidentifier() else "constant"
    return (f"`{name}` is made on line {lineno} of `{record.name}` {how}, so it stays on {device}",
            f"Create `{name}` on the module's device: `{fixed}` on line {lineno} "
            f"(`self.device` is where Lightning put the module); for a constant, register it once in `__init__` with "
            f"`self.register_buffer(\"{attribute}\", torch.tensor(...))` and use `self.{attribute}`, which Lightning "
            f"moves with the module.")


def _on_self_device(line: str) -> tuple[str | None, str | None]:
    """(the assignment `name = torch.factory(..., device=self.device)`, the device it gave) for a line whose value is a
    torch factory call; (None, None) for any other line."""
    try:
        statement = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):
        return None, None
    call = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
    if not isinstance(call, ast.Call) or not re.match(FACTORY_RE, f"{ast.unparse(call.func)}("):
        return None, None
    given = next((ast.unparse(k.value) for k in call.keywords if k.arg == "device"), None)
    call.keywords = [k for k in call.keywords if k.arg != "device"]
    call.keywords.append(ast.keyword("device", ast.parse("self.device", mode="eval").body))
    return ast.unparse(statement), given


@probe("lightning_hook", provides=("pl_class", "pl_hook", "pl_reason", "pl_fix"))
def lightning_hook(ctx: ProbeContext) -> Evidence | None:
    """The LightningModule whose *_step method failed (or that a module call was moving), and, for a device mismatch,
    Lightning's own fix for a tensor the step made on the wrong device."""
    found = _step_frame(ctx)
    if found is None:
        frames = module_frames(ctx.records)
        owner = frames[0][1] if frames else None
        if owner is None or not is_lightning_module(owner):
            return None
        return Evidence({"pl_class": class_text(type(owner), "__name__") or "LightningModule"})
    record, owner = found
    facts: dict[str, Any] = {"pl_class": class_text(type(owner), "__name__") or "LightningModule",
                             "pl_hook": record.name}
    name, device = ctx.facts.get("odd_name"), ctx.facts.get("odd_device")
    local_vars = record.locals
    if isinstance(name, str) and isinstance(local_vars, dict) and is_tensor(dict.get(local_vars, name)):
        created = _created_here(record, name, str(device))
        if created is not None:
            facts["pl_reason"], facts["pl_fix"] = created
        else:
            facts["pl_fix"] = (f"Move `{name}` to the module's device: `{name} = {name}.to(self.device)` before line "
                               f"{record.lineno} (`self.device` is where Lightning put the module and the batch).")
    return Evidence(facts)
