"""Probes for the distributed family: how the process was launched, and the live DDP wrapper."""

from __future__ import annotations

import os
from typing import Any

from explainer._inspect import describe_module, find_local_instance, is_module, module_repr, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import submodule

from .data import named_parameters

LAUNCH_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@probe("launch_env", provides=("launch_vars", "rank_assigned", "launched_by_torchrun"))
def launch_env(ctx: ProbeContext) -> Evidence | None:
    """Which of the variables a launcher (torchrun, mpirun via env://) sets this process has."""
    found = {name: os.environ[name] for name in LAUNCH_VARS if name in os.environ}
    if found:
        shown = ", ".join(f"{name}={value}" for name, value in found.items())
    else:
        shown = "none of " + ", ".join(LAUNCH_VARS) + " is set"
    # RANK and WORLD_SIZE are what a launcher assigns per process; MASTER_* are often set by hand or by scripts.
    rank_assigned = "RANK" in found or "WORLD_SIZE" in found
    return Evidence({"launch_vars": shown, "rank_assigned": rank_assigned,
                     "launched_by_torchrun": "TORCHELASTIC_RUN_ID" in os.environ})


@probe("ddp_ready_twice_param", provides=("ddp_name", "find_unused", "static_graph", "param_name", "owner_module",
                                           "owner_repr"))
def ddp_ready_twice_param(ctx: ProbeContext) -> Evidence | None:
    """The DDP wrapper's settings and the module that owns the parameter marked ready twice."""
    found = find_local_instance(ctx.records, "torch.nn.parallel", "DistributedDataParallel")
    if found is None:
        return None
    ddp_name, ddp = found
    facts: dict[str, Any] = {"ddp_name": ddp_name}
    for attribute, fact in (("find_unused_parameters", "find_unused"), ("static_graph", "static_graph")):
        value = safe_getattr(ddp, attribute)
        if isinstance(value, bool):
            facts[fact] = value
    culprits = []
    wrapped = safe_getattr(ddp, "module")
    name = ctx.facts.get("param_name")
    index = ctx.facts.get("param_index")
    if is_module(wrapped) and name is None and isinstance(index, int):
        # DDP numbers the parameters that require grad, in named_parameters order.
        trainable = [n for n, p in named_parameters(wrapped) if bool(p.requires_grad)]
        if 0 <= index < len(trainable):
            name = facts["param_name"] = trainable[index]
    if is_module(wrapped) and isinstance(name, str) and "." in name:
        owner_path = name.rsplit(".", 1)[0]
        owner = submodule(wrapped, owner_path)
        if owner is not None:
            facts["owner_module"] = f"{ddp_name}.module.{owner_path}"
            facts["owner_repr"] = module_repr(owner)
            culprits.append(describe_module(facts["owner_module"], owner))
    return Evidence(facts, culprits)
