"""Probes for the device family: every tensor the failing operation touched, its device, the odd
one out, and where the move belongs (a variable to move, a tensor created without `device=`, a plain
tensor attribute that should be a buffer, modules kept in a Python list instead of nn.ModuleList)."""

from __future__ import annotations

import ast
import linecache
import re
import sys
import types
from collections import Counter
from dataclasses import dataclass
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, child_modules, class_table, describe_tensor, failing_expression,
                                innermost_user_frame, instance_dict, is_module, is_tensor, is_user_file, module_frames,
                                module_roots, name_module, resolve, resolve_text, user_frames)
from explainer._pycode import module_expression
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.construction import meta_construction
from explainer.probes.readers.producer import assignment_of

MAX_TENSORS = 400  # per module walk: enough for any layer, bounded for a large model
MAX_CULPRITS = 12
MAX_SOURCE_LINES = 400
# Factories that put a new tensor on the default device unless `device=` is given.
FACTORY_RE = (r"\btorch\.(zeros|ones|empty|full|rand|randn|randint|randperm|arange|linspace|"
              r"logspace|eye|tensor|as_tensor|from_numpy|Tensor|FloatTensor|LongTensor)\s*\(")


@dataclass
class Holding:
    """A tensor reachable from the failure, named as the user's code reaches it."""

    name: str
    tensor: Any
    kind: str  # operand, local, parameter, buffer, attribute, listed
    owner: str | None = None  # the module path holding it, for parameters/buffers/attributes
    container: str | None = None  # 'model.layers' when the owning module sits in a plain list


def _dict(obj: Any) -> dict:
    return instance_dict(obj) or {}


def _table(module: Any, name: str) -> dict:
    table = _dict(module).get(name)
    return table if isinstance(table, dict) else {}


def module_tensors(module: Any, prefix: str, container: str | None = None) -> list[Holding]:
    """Parameters, buffers and plain tensor attributes of module and its submodules, plus modules
    hidden in plain lists/tuples/dicts (which nn.Module.to() never visits)."""
    found: list[Holding] = []
    queue = [(prefix, module, container)]
    seen = {id(module)}
    while queue and len(found) < MAX_TENSORS:
        path, current, inside = queue.pop(0)
        found += _own_tensors(current, path, inside)
        children = [(f"{path}.{key}", child, inside) for key, child in list(child_modules(current).items())
                    if child is not None]
        for entry in _listed_modules(current, path) + children:
            if id(entry[1]) not in seen:
                seen.add(id(entry[1]))
                queue.append(entry)
    return found


def _own_tensors(module: Any, path: str, inside: str | None) -> list[Holding]:
    """module's own parameters, buffers and plain tensor attributes (not its submodules')."""
    found = []
    for table, kind in (("_parameters", "parameter"), ("_buffers", "buffer")):
        for key, value in list(_table(module, table).items()):
            if value is not None and is_tensor(value):
                found.append(Holding(f"{path}.{key}", value, kind, path, inside))
    for key, value in list(_dict(module).items()):
        if not key.startswith("_") and is_tensor(value):
            found.append(Holding(f"{path}.{key}", value, "attribute", path, inside))
    return found


def _listed_modules(module: Any, path: str) -> list[tuple[str, Any, str]]:
    """Modules kept in plain list, tuple or dict attributes of module: (path, module, the container's path)."""
    found = []
    for key, value in list(_dict(module).items()):
        if key.startswith("_"):
            continue
        if isinstance(value, (list, tuple)):
            items = [(f"[{i}]", item) for i, item in enumerate(value[:64])]
        elif isinstance(value, dict):
            items = [(f"[{item_key!r}]", item) for item_key, item in list(value.items())[:64]]
        else:
            continue
        found += [(f"{path}.{key}{index}", item, f"{path}.{key}") for index, item in items if is_module(item)]
    return found


def local_name(value: Any, records: list[FrameRecord]) -> tuple[str, FrameRecord] | tuple[None, None]:
    """The name a user frame binds to value (innermost frame first), by identity."""
    return _binding(value, list(reversed(user_frames(records))))


def outermost_binding(value: Any, records: list[FrameRecord]) -> tuple[str, FrameRecord] | tuple[None, None]:
    """The outermost user frame that binds value: where the caller can still move or convert it."""
    return _binding(value, user_frames(records))


def _binding(value: Any, frames: list[FrameRecord]) -> tuple[str, FrameRecord] | tuple[None, None]:
    for record in frames:
        local_vars = record.locals
        if not isinstance(local_vars, dict):
            continue
        for key, item in list(local_vars.items()):
            if item is value and not key.startswith("__"):
                return key, record
    return None, None


def assignment(record: FrameRecord, name: str) -> tuple[int, str] | None:
    """The last line before the failing one, in the same function, that assigns `name = ...`."""
    frame = record.frame
    if frame is None:
        return None
    first = frame.f_code.co_firstlineno
    start = max(first, record.lineno - MAX_SOURCE_LINES)
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*(?::[^=]+)?=(?!=)")
    for lineno in range(record.lineno, start - 1, -1):
        line = linecache.getline(record.filename, lineno)
        if pattern.match(line):
            return lineno, line.strip()
    return None


def line_names(record: FrameRecord) -> list[tuple[str, Any]]:
    """Names and attribute chains used by the failing line, resolved without running code."""
    try:
        tree = ast.parse(record.code.rstrip(":").strip(), mode="exec")
    except SyntaxError:
        try:
            tree = ast.parse(record.code.strip().rstrip("(").strip(), mode="exec")
        except SyntaxError:
            return []
    found, seen = [], set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = ast.unparse(node)
            if text in seen:
                continue
            seen.add(text)
            value = resolve(node, record.locals)
            if value is not MISSING:
                found.append((text, value))
    return found


# Argument names under which a module's forward holds its input tensors.
_MODULE_INPUTS = ("input", "x", "hx", "query", "target")


def gather(ctx: ProbeContext) -> tuple[list[Holding], list[Holding], Any]:
    """(tensors the failing operation touched, registered tensors of the user's root model, failing module)."""
    user = innermost_user_frame(ctx.records)
    expr = failing_expression(user) if user is not None else None
    called_module = None
    if expr is not None and expr.callee is not None and is_module(expr.callee.value):
        called_module = expr.callee.value
    frames = module_frames(ctx.records)
    failing_module = frames[-1][1] if frames else called_module
    holdings: dict[int, Holding] = {}
    for item in _operand_holdings(expr) + _module_inputs(frames, ctx.records) + _line_holdings(user):
        holdings.setdefault(id(item.tensor), item)
    registered, by_id = _registered(module_roots(ctx.records))
    for module in {id(m): m for m in [failing_module, called_module] if m is not None}.values():
        prefix = name_module(module, ctx.records) or type(module).__name__
        for item in module_tensors(module, prefix):
            holdings.setdefault(id(item.tensor), by_id.get(id(item.tensor), item))
    _prefer_model_names(holdings, by_id, ctx.records)
    return list(holdings.values())[:MAX_TENSORS], registered, failing_module


def _operand_holdings(expr) -> list[Holding]:
    """The failing call's tensor operands, and the tensors in a plain list or tuple operand (`torch.stack(outs)`)."""
    found = []
    for op in expr.operands if expr is not None else []:
        if is_tensor(op.value):
            found.append(Holding(op.text, op.value, "operand"))
        elif type(op.value) in (list, tuple):
            found += [Holding(f"{op.text}[{i}]", item, "operand") for i, item in enumerate(op.value[:MAX_TENSORS])
                      if is_tensor(item)]
    return found


def _module_inputs(frames: list[tuple[FrameRecord, Any]], records: list[FrameRecord]) -> list[Holding]:
    """The inputs of the module whose forward raised, and of every module frame in between."""
    found = []
    for record, _ in reversed(frames):
        for key in _MODULE_INPUTS:
            value = record.locals.get(key, MISSING) if isinstance(record.locals, dict) else MISSING
            if is_tensor(value):
                name, _ = outermost_binding(value, records)
                # torch creates some of these itself (an RNN's zero hx): only the user's own count.
                if name is not None or key == "input":
                    found.append(Holding(name or key, value, "operand"))
    return found


def _line_holdings(user: FrameRecord | None) -> list[Holding]:
    if user is None:
        return []
    return [Holding(text, value, "local") for text, value in line_names(user) if is_tensor(value)]


def _registered(roots) -> tuple[list[Holding], dict[int, Holding]]:
    """The registered tensors of each distinct root model, in a list and by tensor id."""
    named_roots: list[tuple[str, Any]] = []
    for root_name, root in roots:
        if not any(root is other for _, other in named_roots):
            named_roots.append((root_name, root))
    # Prefer the outermost name ('model' over 'self') for the same object.
    registered: list[Holding] = []
    by_id: dict[int, Holding] = {}
    for root_name, root in named_roots:
        for item in module_tensors(root, root_name):
            if id(item.tensor) not in by_id:
                by_id[id(item.tensor)] = item
                registered.append(item)
    return registered, by_id


def _prefer_model_names(holdings: dict[int, Holding], by_id: dict[int, Holding], records: list[FrameRecord]) -> None:
    """A tensor the model holds is named by the model's path ('model.head.scale', not 'self.scale'), which
    also tells a plain attribute or a module in a plain list from a registered parameter."""
    for key, item in list(holdings.items()):
        better = by_id.get(key)
        if better is not None:
            holdings[key] = better
        elif item.kind in ("operand", "local"):
            outer, _ = outermost_binding(item.tensor, records)
            if outer is not None and outer != item.name:
                holdings[key] = Holding(outer, item.tensor, item.kind)


def _device(tensor: Any) -> str:
    return str(tensor.device)


def reference_device(touched: list[Holding], registered: list[Holding]) -> str | None:
    """Where the model lives: the commonest device of the registered parameters and buffers that
    model.to() moves; without a model, the commonest device among the touched tensors."""
    proper = [h for h in registered if h.kind in ("parameter", "buffer") and h.container is None]
    pool = proper or touched
    counts = Counter(_device(h.tensor) for h in pool)
    if not counts:
        return None
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def _device_expr(record: FrameRecord | None, device: str) -> str:
    """`device` when the frame has such a variable, else the literal."""
    if record is not None and isinstance(record.locals, dict):
        value = record.locals.get("device", MISSING)
        if value is not MISSING and (isinstance(value, str) or type(value).__name__ == "device"):
            return "device"
    return f'"{device}"'


def source_tensor(item: Holding, ctx: ProbeContext) -> tuple[str, Any, FrameRecord] | None:
    """(name, tensor, frame) of the tensor a local on the odd device was taken from (`negatives = bank[idx]`): the
    first tensor on that same device in the expression last assigned to the local."""
    if item.kind not in ("local", "operand"):
        return None
    name, record = local_name(item.tensor, ctx.records)
    value = assignment_of(record, name) if name is not None and record is not None else None
    if value is None:
        return None
    namespace = record.namespace()
    for node in ast.walk(value):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            found = resolve(node, namespace)
            if is_tensor(found) and found is not item.tensor and _device(found) == _device(item.tensor):
                return ast.unparse(node), found, record
    return None


def explain_odd(item: Holding, ref_device: str, touched: list[Holding], ctx: ProbeContext) -> tuple[str, str]:
    """(why this tensor is on the odd device, the one change that fixes it)."""
    if item.container is not None:
        holder = item.container
        return (f"{holder} is a plain Python container, so model.to() never moved the modules in it",
                f"Build `{holder}` with `nn.ModuleList([...])` (or `nn.ModuleDict`), so `.to({ref_device!r})`, "
                f"`.parameters()` and `state_dict()` see the layers inside it.")
    if item.kind == "attribute":
        attr = item.name.rsplit(".", 1)[-1]
        return (f"{item.name} is a plain tensor attribute, not a buffer, so model.to() did not move it",
                f"`{item.name}` is a plain tensor attribute, not a buffer: in `__init__` write "
                f"`self.register_buffer(\"{attr}\", <tensor>)` instead of `self.{attr} = <tensor>`, so "
                f"`model.to(device)` moves it.")
    if item.kind in ("parameter", "buffer"):
        owner = item.owner or item.name.rsplit(".", 1)[0]
        return (f"{owner} was not moved with the rest of the model",
                f"Move `{module_expression(owner)}` with the model: call `model.to(device)` after building or "
                f"replacing `{module_expression(owner)}` "
                f"(it is on {_device(item.tensor)}, the rest on {ref_device}).")
    name, record = local_name(item.tensor, ctx.records)
    in_forward = record is not None and isinstance(record.locals, dict) and is_module(record.locals.get("self"))
    if name is not None and record is not None and in_forward:
        created = assignment(record, name)
        if created is not None and re.search(FACTORY_RE, created[1]) and "device=" not in created[1]:
            lineno, code = created
            # Prefer forward's own argument (`x.device`) among the frame's tensors already on the right device.
            code_obj = record.frame.f_code
            arguments = code_obj.co_varnames[1:code_obj.co_argcount]
            local_vars = record.locals
            on_ref = [key for key in list(local_vars)[:MAX_TENSORS] if key != name and not key.startswith("_")
                      and is_tensor(local_vars[key]) and _device(local_vars[key]) == ref_device]
            source = next((key for key in on_ref if key in arguments), on_ref[0] if on_ref else None)
            device_arg = f"device={source}.device" if source else f"device={_device_expr(record, ref_device)}"
            return (f"{name} is created on line {lineno} without device=, so it lands on {_device(item.tensor)}",
                    f"Create `{name}` on the right device: add `{device_arg}` to `{code}` on line {lineno}.")
    taken = source_tensor(item, ctx)
    if taken is not None:
        origin, record = taken[0], taken[2]
        return (f"{item.name} is taken from {origin}, which is on {_device(item.tensor)} and was never moved to "
                f"{ref_device}",
                f"Move `{origin}` to {ref_device} where it is made: `{origin} = {origin}.to("
                f"{_device_expr(record, ref_device)})`, or move what is taken from it: `{item.name} = "
                f"{item.name}.to({_device_expr(record, ref_device)})`.")
    outer, outer_record = outermost_binding(item.tensor, ctx.records)
    if outer is not None and outer_record is not None:
        where = f"before `{outer_record.code}` on line {outer_record.lineno}"
        return (f"{outer} was never moved to {ref_device}",
                f"Move `{outer}` with `{outer} = {outer}.to({_device_expr(outer_record, ref_device)})` {where}.")
    return (f"{item.name} is on {_device(item.tensor)}",
            f"Move `{item.name}` to {ref_device} with `.to({ref_device!r})` before this operation.")


def never_materialized(item: Holding, ref_device: str, registered: list[Holding],
                       ctx: ProbeContext) -> tuple[str, str] | None:
    """(reason, fix) when the model is on meta because the source built it there and never called to_empty():
    moving the data to meta would give shapes without values, so the model must be materialized instead."""
    on_meta = next((h for h in registered if _device(h.tensor) == "meta"), None)
    if ref_device != "meta" or on_meta is None or _device(item.tensor) == "meta":
        return None
    root = on_meta.name.split(".", 1)[0]
    built = meta_construction(ctx.records, root) if root != "self" else None
    if built is None:
        return None
    target = _device(item.tensor)
    return (f"{root} was built on the meta device (line {built[0]}: `{built[1]}`) and never materialized: its "
            f"parameters have shapes but no values, so moving {item.name} to meta would not help",
            f"Materialize `{root}` on {target} and load its weights: `{root}.to_empty(device=\"{target}\")`, then "
            f"`{root}.load_state_dict(state_dict)`; or load them straight into the meta model with "
            f"`{root}.load_state_dict(state_dict, assign=True)`.")


@probe("device_operands", provides=("odd_name", "odd_device", "odd_reason", "ref_name", "ref_device",
                                     "move_fix", "devices", "tensor_count", "meta_built"))
def device_operands(ctx: ProbeContext) -> Evidence | None:
    """Every tensor, parameter and buffer behind a device mismatch, and which one is on the odd device."""
    touched, registered, _ = gather(ctx)
    if not touched:
        return None
    devices = sorted({_device(h.tensor) for h in touched})
    facts: dict[str, Any] = {"devices": ", ".join(devices), "tensor_count": len(touched)}
    ref = reference_device(touched, registered) if len(devices) > 1 else None
    culprits = []
    if ref is None:
        for item in touched[:MAX_CULPRITS]:
            culprits.append(describe_tensor(item.name, item.tensor, role=item.kind))
        return Evidence(facts, culprits)
    odd = [h for h in touched if _device(h.tensor) != ref]
    right = [h for h in touched if _device(h.tensor) == ref]
    if not odd:
        return Evidence(facts, [describe_tensor(h.name, h.tensor, role=h.kind) for h in touched[:MAX_CULPRITS]])
    # Plain attributes, listed modules and tensors built in forward explain more than an operand that merely
    # carries the wrong device through, so they come first.
    rank = {"attribute": 0, "parameter": 1, "buffer": 1, "local": 2, "operand": 2}
    odd.sort(key=lambda h: (0 if h.container else rank.get(h.kind, 3)))
    first = odd[0]
    materialize = never_materialized(first, ref, registered, ctx)
    reason, fix = materialize or explain_odd(first, ref, touched, ctx)
    if materialize is not None:
        facts["meta_built"] = True  # the fix is to_empty(), not moving anything: the generic moves would mislead
    reference = next((h for h in right if h.kind == "parameter"), None) or next(
        (h for h in registered if h.kind == "parameter" and h.container is None and _device(h.tensor) == ref),
        right[0] if right else None)
    facts.update({"odd_name": first.name, "odd_device": _device(first.tensor), "odd_reason": reason,
                  "ref_device": ref, "move_fix": fix})
    if reference is not None:
        facts["ref_name"] = reference.name
    culprits = [describe_tensor(h.name, h.tensor, role=h.kind, odd_one_out=True) for h in odd[:MAX_CULPRITS]]
    taken = source_tensor(first, ctx)
    if taken is not None and all(c["name"] != taken[0] for c in culprits):
        culprits.insert(1, describe_tensor(taken[0], taken[1], role="source", odd_one_out=True))
    culprits += [describe_tensor(h.name, h.tensor, role=h.kind) for h in right[:max(0, MAX_CULPRITS - len(culprits))]]
    return Evidence(facts, culprits)


CUDA_CALL_RE = r"""\.cuda\(\s*(\d*)\s*\)|["']cuda(?::(\d+))?["']|torch\.cuda\.set_device\(\s*(\d*)"""


@probe("cuda_request", provides=("cuda_call", "cuda_line", "requested_index", "torch_version"))
def cuda_request(ctx: ProbeContext) -> Evidence | None:
    """The user's line that asked for a CUDA device (`.cuda()`, `"cuda:1"`, `set_device`)."""
    torch = sys.modules.get("torch")
    facts: dict[str, Any] = {}
    if torch is not None:
        facts["torch_version"] = str(torch.__version__)
    for record in reversed(user_frames(ctx.records)):
        found = re.search(CUDA_CALL_RE, record.code)
        if found is None:
            continue
        facts.update({"cuda_call": found.group(0), "cuda_line": record.lineno})
        index = next((g for g in found.groups() if g), None)
        if index is not None:
            facts["requested_index"] = int(index)
        return Evidence(facts)
    return Evidence(facts) if facts else None


@probe("load_call", provides=("load_call", "load_line", "load_fixed"))
def load_call(ctx: ProbeContext) -> Evidence | None:
    """The user's torch.load call, and the same call with map_location="cpu"."""
    for record in reversed(user_frames(ctx.records)):
        expr = failing_expression(record)
        if expr is None or expr.kind != "call" or expr.callee is None or not expr.callee.text.endswith("load"):
            continue
        text = expr.text
        fixed = text[:-1].rstrip() + (", " if not text[:-1].rstrip().endswith("(") else "") + 'map_location="cpu")'
        return Evidence({"load_call": text, "load_line": record.lineno, "load_fixed": fixed})
    return None


@probe("numpy_source", provides=("tensor_name", "tensor_device"))
def numpy_source(ctx: ProbeContext) -> Evidence | None:
    """The tensor that .numpy() (or a NumPy function) was called on, with its device."""
    user = innermost_user_frame(ctx.records)
    expr = failing_expression(user) if user is not None else None
    if expr is None or expr.kind != "call":
        return None
    candidates = []
    if expr.callee is not None and expr.callee.text.endswith(".numpy"):
        base = expr.callee.text[: -len(".numpy")]
        candidates.append((base, resolve_text(base, user.locals)))
    candidates += [(op.text, op.value) for op in expr.operands]
    for name, value in candidates:
        if is_tensor(value) and value.device.type != "cpu":
            return Evidence({"tensor_name": name, "tensor_device": _device(value)},
                            [describe_tensor(name, value)])
    return None


@probe("meta_tensors", provides=("meta_module", "meta_count", "meta_total", "meta_first"))
def meta_tensors(ctx: ProbeContext) -> Evidence | None:
    """The module being moved off the meta device: how many of its tensors still have no data."""
    frames = module_frames(ctx.records)
    if not frames:
        return None
    module = frames[0][1]  # the outermost: Module.to()/_apply() runs on the module the user moved
    name = name_module(module, ctx.records)
    # unnamed (`trainer.fit(Classifier())`): `self` in the methods of a class the user wrote, else the class's name
    methods = [v for v in class_table(type(module)).values() if type(v) is types.FunctionType]
    own = bool(methods) and is_user_file(methods[0].__code__.co_filename)
    holdings = [h for h in module_tensors(module, name or ("self" if own else type(module).__name__))
                if h.kind in ("parameter", "buffer")]
    on_meta = [h for h in holdings if describe_tensor(h.name, h.tensor).get("device") == "meta"]
    if not on_meta:
        return None
    culprits = [describe_tensor(module_expression(h.name), h.tensor) for h in on_meta[:MAX_CULPRITS]]
    return Evidence(facts={"meta_module": name or type(module).__name__, "meta_count": len(on_meta),
                           "meta_total": len(holdings), "meta_first": module_expression(on_meta[0].name)},
                    culprits=culprits)
