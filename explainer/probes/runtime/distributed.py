"""Probes for the distributed family: how the process was launched, and the live DDP wrapper."""

from __future__ import annotations

import ast
import os
import sys
from typing import Any

from explainer._inspect import (MISSING, describe_module, describe_tensor, find_local_instance, format_shape,
                                innermost_user_frame, is_module, is_tensor, module_repr, resolve, safe_getattr,
                                tensor_facts, user_frames)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import name_of, submodule, torch_frame, user_expression, user_node

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


C10D_FILE = "torch/distributed/distributed_c10d.py"
# torch.distributed's collective -> (its list argument, its single-tensor argument), as named in distributed_c10d.py
COLLECTIVE_ARGS = {
    "all_gather": ("tensor_list", "tensor"),
    "gather": ("gather_list", "tensor"),
    "scatter": ("scatter_list", "tensor"),
    "reduce_scatter": ("input_list", "output"),
    "all_to_all": ("output_tensor_list", "input_tensor_list"),
    "all_gather_into_tensor": ("output_tensor", "input_tensor"),
}


def collective_frame(records: list) -> Any:
    """The innermost frame of a torch.distributed collective named in COLLECTIVE_ARGS."""
    return torch_frame(records, C10D_FILE, COLLECTIVE_ARGS)


def _shape(tensor: Any) -> str:
    shape = tensor_facts(tensor)["shape"]
    return format_shape(shape) if shape is not None else "(nested)"


def same_items_name(ctx: ProbeContext, expr: Any, items: list) -> str | None:
    """How the user's code names a list torch copied (all_gather rebuilds its tensor_list): the operand of the
    failing call, else the user's local, that holds the very same tensors."""
    wanted = [id(t) for t in items]

    def same(value: Any) -> bool:
        return isinstance(value, (list, tuple)) and [id(t) for t in value] == wanted

    for operand in (expr.operands if expr is not None else []):
        if same(operand.value):
            return operand.text
    for record in reversed(user_frames(ctx.records)):
        table = record.locals
        if isinstance(table, dict):
            for key, value in list(table.items())[:2000]:
                if not key.startswith("_") and same(value):
                    return key
    return None


def _describe_list(name: str, items: list) -> dict[str, Any]:
    tensors = [t for t in items if is_tensor(t)]
    shapes = sorted({_shape(t) for t in tensors})
    shown = f"list of {len(items)} tensor(s)" + (f", shape {', '.join(shapes[:3])}" if shapes else "")
    return {"name": name, "kind": "list", "length": len(items), "repr": shown}


@probe("collective_buffers", provides=("collective", "list_name", "list_length", "list_shape", "input_name",
                                        "input_shape", "world_size", "output_name", "output_shape"))
def collective_buffers(ctx: ProbeContext) -> Evidence | None:
    """The failing collective's list argument (output buffers) and its tensor, as the user's code names them."""
    record = collective_frame(ctx.records)
    table = record.locals if record is not None else None
    if not isinstance(table, dict):
        return None
    list_arg, tensor_arg = COLLECTIVE_ARGS[record.name]
    facts: dict[str, Any] = {"collective": f"dist.{record.name}"}
    culprits = []
    _, expr = user_expression(ctx)
    items = table.get(list_arg, MISSING)
    if isinstance(items, list):
        name = same_items_name(ctx, expr, items) or list_arg
        facts.update({"list_name": name, "list_length": len(items)})
        first = next((t for t in items if is_tensor(t)), None)
        if first is not None:
            facts["list_shape"] = _shape(first)
        culprits.append(_describe_list(name, items))
    elif is_tensor(items):
        # all_gather_into_tensor: one output tensor that holds every rank's input, stacked in dimension 0.
        name = name_of(ctx, items, expr) or list_arg
        facts.update({"output_name": name, "output_shape": _shape(items)})
        culprits.append(describe_tensor(name, items, role="output"))
    tensor = table.get(tensor_arg, MISSING)
    if is_tensor(tensor):
        name = name_of(ctx, tensor, expr) or tensor_arg
        facts.update({"input_name": name, "input_shape": _shape(tensor)})
        culprits.append(describe_tensor(name, tensor))
    world = _world_size(table.get("group", MISSING))
    if world is not None:
        facts["world_size"] = world
    return Evidence(facts, culprits) if culprits else None


def _world_size(group: Any) -> int | None:
    """The group's size, read from torch's own ProcessGroup (a C++ object: no user code runs)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_initialized():
        return None
    try:
        return int(dist.get_world_size(group if group is not MISSING else None))
    except (RuntimeError, ValueError, TypeError):
        return None


# The argument that names ranks in the point-to-point and group calls: (keywords, position when positional).
_RANK_ARGUMENTS = {"send": (("dst", "group_dst"), 1), "isend": (("dst", "group_dst"), 1),
                   "recv": (("src", "group_src"), 1), "irecv": (("src", "group_src"), 1),
                   "new_group": (("ranks",), 0), "new_subgroups_by_enumeration": (("ranks_per_subgroup_list",), 0)}


def _plain_ranks(value: Any) -> int | list[int] | None:
    """value when it is an int or a short list/tuple/range of ints (safe to show), else None."""
    if type(value) is int:
        return value
    if type(value) in (list, tuple, range) and len(value) <= 64 and all(type(v) is int for v in value):
        return list(value)
    return None


def _torch_local(ctx: ProbeContext, name: str) -> Any:
    """The innermost torch.distributed frame's local name (an int the check compared), or MISSING."""
    for record in reversed(ctx.records):
        if "torch/distributed/" in record.filename.replace("\\", "/") and isinstance(record.locals, dict):
            value = dict.get(record.locals, name, MISSING)
            if type(value) is int:
                return value
    return MISSING


@probe("rank_arguments", provides=("call_name", "rank_arg", "rank_value", "group_size", "world_size"))
def rank_arguments(ctx: ProbeContext) -> Evidence | None:
    """The rank (dst/src) or ranks list the user's failing torch.distributed call passes, by its name and value,
    and the world size the check compared it with."""
    record = innermost_user_frame(ctx.records)
    node = user_node(record)
    if not isinstance(node, ast.Call):
        return None
    call = ast.unparse(node.func).rsplit(".", 1)[-1]
    if call not in _RANK_ARGUMENTS:
        return None
    keywords, position = _RANK_ARGUMENTS[call]
    found = next((k.value for k in node.keywords if k.arg in keywords), None)
    if found is None and len(node.args) > position:
        found = node.args[position]
    if found is None:
        return None
    text, value = ast.unparse(found), _plain_ranks(resolve(found, record.namespace()))
    facts: dict[str, Any] = {"call_name": call, "rank_arg": text}
    if value is not None:
        facts["rank_value"] = str(value)
        if isinstance(value, list):
            facts["group_size"] = len(value)
    world = _torch_local(ctx, "global_world_size")
    if world is not MISSING:
        facts["world_size"] = world
    culprit = {"name": text, "kind": "value", "type": type(value).__name__ if value is not None else "expression"}
    if value is not None:
        culprit["repr"] = facts["rank_value"]
    return Evidence(facts, [culprit])


@probe("wrapped_module", provides=("wrapped_name", "param_count", "trainable_count"))
def wrapped_module(ctx: ProbeContext) -> Evidence | None:
    """The module the user's failing line hands to a wrapper (`DDP(extractor)`, `FSDP(model)`), by its name, and
    how many of its parameters require a gradient (read from the parameter tables)."""
    record = innermost_user_frame(ctx.records)
    node = user_node(record)
    if not isinstance(node, ast.Call) or not node.args:
        return None
    module = resolve(node.args[0], record.namespace())
    if not is_module(module):
        return None
    name = ast.unparse(node.args[0])
    params = [p for _, p in named_parameters(module)]
    trainable = sum(1 for p in params if _requires_grad(p))
    return Evidence({"wrapped_name": name, "param_count": len(params), "trainable_count": trainable},
                    [describe_module(name, module)])


def _requires_grad(tensor: Any) -> bool:
    return tensor_facts(tensor).get("requires_grad") is True
