"""Probes for the memory family: the numbers in an out-of-memory message, the largest live tensors,
lists that keep computation graphs alive, and evaluation run with autograd still recording.

Everything is read from frames, containers and autograd nodes without calling user code, within
fixed bounds (objects visited, graph nodes walked, seconds spent), and nothing is kept afterwards.
"""

from __future__ import annotations

import ast
import linecache
import math
import os
import re
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

from explainer._inspect import (MISSING, FrameRecord, describe_tensor, failing_expression, format_shape,
                                innermost_user_frame, is_module, is_tensor, resolve, safe_getattr, user_frames)
from explainer._lazyre import lazy_compile
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.reach import MAX_ITEMS, Budget, walk_reachable

MAX_GRAPH_NODES = 50_000   # autograd nodes walked per measurement
TOP_TENSORS = 3
FRAGMENTATION_SHARE = 0.10  # reserved-but-unallocated above this share of the GPU is fragmentation
BATCH_NAMES = ("inputs", "input", "images", "x", "batch", "data", "features", "tokens", "input_ids", "xb", "imgs")
EVAL_WORDS = ("eval", "valid", "test", "predict", "infer")
LEAK_SHARE = 0.05           # beside an impossible request, a leak matters only above this share of the memory
MAX_DIM_DIGITS = 30         # size arithmetic is recomputed only on ints this small

# NumPy writes three significant digits and may end on the point ("147. TiB").
_SIZE_RE = lazy_compile(r"^\s*(\d+(?:\.\d*)?)\s*(bytes|B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB)\s*$")
# torch prints these with binary multiples even where it writes "MB"/"GB" (the MPS allocator).
_UNITS = {"bytes": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50,
          "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "PB": 2**50}


def parse_size(text: Any) -> int | None:
    """'20.00 MiB' -> 20971520; an int is already bytes; anything else -> None."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if not isinstance(text, str):
        return None
    match = _SIZE_RE.match(text)
    if not match:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def format_size(nbytes: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{int(nbytes)} bytes"


def tensor_nbytes(tensor: Any) -> int:
    torch = sys.modules["torch"]
    with torch._C.DisableTorchFunction():
        return int(torch.Tensor.numel(tensor)) * int(torch.Tensor.element_size(tensor))


# --- autograd graphs ----------------------------------------------------------------------------

def graph_size(roots: list[Any], max_nodes: int = MAX_GRAPH_NODES) -> tuple[int, int, bool]:
    """(nodes, bytes of saved tensors, complete) for the graphs behind roots, shared nodes once.

    Saved tensors are read through the nodes' `_saved_*` attributes; those already freed by a
    backward pass raise and count as nothing."""
    seen: set[int] = set()
    storages: set[tuple[int, int]] = set()
    saved = 0
    stack = [r for r in roots if r is not None]
    names_by_type: dict[type, list[str]] = {}
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        if len(seen) >= max_nodes:
            return len(seen), saved, False
        seen.add(id(node))
        kind = type(node)
        if kind not in names_by_type:
            names_by_type[kind] = [n for n in dir(kind) if n.startswith("_saved_")]
        for attr in names_by_type[kind]:
            try:
                value = getattr(node, attr)
            except Exception:  # freed by backward(), or not a tensor slot
                continue
            for item in (value if isinstance(value, (tuple, list)) else (value,)):
                if is_tensor(item):
                    saved += _count_storage(item, storages)
        try:
            nexts = node.next_functions
        except Exception:  # AccumulateGrad and custom nodes without edges
            continue
        for entry in nexts or ():
            if entry and entry[0] is not None:
                stack.append(entry[0])
    return len(seen), saved, True


def _count_storage(tensor: Any, storages: set[tuple[int, int]]) -> int:
    try:
        storage = tensor.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
    except Exception:  # sparse or meta tensors
        return tensor_nbytes(tensor)
    if key in storages:
        return 0
    storages.add(key)
    return key[1]


def grad_fn_of(tensor: Any) -> Any:
    torch = sys.modules["torch"]
    with torch._C.DisableTorchFunction():
        return tensor.grad_fn


@dataclass
class Leak:
    path: str
    count: int
    length: int
    nodes: int
    saved: int
    complete: bool


def find_leaks(records: list[FrameRecord], budget: Budget | None = None) -> list[Leak]:
    """Lists in user frames holding several tensors that still carry a grad_fn: each keeps a graph."""
    leaks = []
    for found in walk_reachable(records, budget):
        if type(found.value) is not list or len(found.value) < 2:
            continue
        roots = []
        for item in found.value[:MAX_ITEMS]:
            if is_tensor(item):
                node = grad_fn_of(item)
                if node is not None:
                    roots.append(node)
        if len(roots) >= 2:
            nodes, saved, complete = graph_size(roots)
            leaks.append(Leak(found.path, len(roots), len(found.value), nodes, saved, complete))
    leaks.sort(key=lambda leak: (leak.saved, leak.count), reverse=True)
    return leaks


# --- the probes ---------------------------------------------------------------------------------

@probe("oom_numbers", provides=("requested_bytes", "requested_size", "free_bytes", "total_bytes",
                                "allocated_bytes", "reserved_bytes", "unallocated_bytes", "unallocated_size",
                                "unallocated_share", "fragmented", "exceeds_total", "process_bytes"), live=False)
def oom_numbers(ctx: ProbeContext) -> Evidence | None:
    """The sizes printed in an out-of-memory message, in bytes, whether the pool is fragmented, and
    whether the request alone is larger than the whole device (then no cache state explains it)."""
    facts: dict[str, Any] = {}
    for key, name in (("requested", "requested"), ("free", "free"), ("total", "total"),
                      ("allocated", "allocated"), ("reserved", "reserved"), ("cached", "reserved"),
                      ("unallocated", "unallocated"), ("process_used", "process")):
        value = parse_size(ctx.facts.get(key, ctx.facts.get(f"{key}_bytes")))
        if value is not None:
            facts[f"{name}_bytes"] = value
    if not facts:
        return None
    if "requested_bytes" in facts:
        facts["requested_size"] = format_size(facts["requested_bytes"])
    unallocated = facts.get("unallocated_bytes")
    if unallocated is None and "reserved_bytes" in facts and "allocated_bytes" in facts:
        unallocated = max(facts["reserved_bytes"] - facts["allocated_bytes"], 0)
        facts["unallocated_bytes"] = unallocated
    total = facts.get("total_bytes")
    exceeds_total = bool(total) and facts.get("requested_bytes", 0) > total
    if total:
        facts["exceeds_total"] = exceeds_total
    if unallocated is not None and total:
        share = unallocated / total
        facts["unallocated_size"] = format_size(unallocated)
        facts["unallocated_share"] = f"{share:.0%}"
        # Fragmentation: a large idle pool. One that could have served the request but is a small share of the GPU
        # (2% of it: MolGAN's issue 7) is not the reading: given back, it would buy a few steps; the GPU is full.
        facts["fragmented"] = not exceeds_total and share >= FRAGMENTATION_SHARE
    return Evidence(facts)


@probe("memory_live", provides=("largest_name", "largest_size", "largest_shape", "batch_name", "batch_size",
                                "fit_batch", "no_batch_fits", "leak_name", "leak_count", "leak_nodes",
                                "leak_saved_size", "leak_saved_bytes", "leak_append", "leak_keep", "eval_name",
                                "eval_model", "eval_without_no_grad", "eval_function", "available_size",
                                "cuda_peak_size", "impossible_size", "memory_total_size", "memory_kind",
                                "total_multiple", "size_call", "size_names", "size_shape", "size_elements"))
def memory_live(ctx: ProbeContext) -> Evidence | None:
    """The largest live tensors, the batch size and one that would fit, lists that keep graphs alive,
    outputs still recording autograd during evaluation, a request larger than the whole memory (with
    the shape arithmetic behind it), and the CUDA allocator's own statistics."""
    facts: dict[str, Any] = {}
    culprits: list[dict[str, Any]] = []
    budget = Budget()
    tensors: dict[int, tuple[str, Any, int]] = {}
    for found in walk_reachable(ctx.records, budget):
        if is_tensor(found.value) and id(found.value) not in tensors:
            tensors[id(found.value)] = (found.path, found.value, tensor_nbytes(found.value))
    largest = sorted(tensors.values(), key=lambda item: item[2], reverse=True)[:TOP_TENSORS]
    for path, tensor, nbytes in largest:
        culprits.append(_describe(path, tensor, nbytes))
    if largest:
        path, tensor, nbytes = largest[0]
        facts.update(largest_name=path, largest_size=format_size(nbytes), largest_shape=format_shape(tensor.shape))

    impossible = _impossible(ctx)
    facts.update(impossible)
    leaks = find_leaks(ctx.records, Budget())
    total = impossible.get("_total_bytes")
    if leaks:
        facts.update(_leak_append(ctx.records, leaks[0].path))
    # Beside a request no memory could serve, a small leak is noise, not the cause: only its fix is kept.
    if leaks and ("impossible_size" not in impossible or leaks[0].saved >= LEAK_SHARE * total):
        leak = leaks[0]
        facts.update(leak_name=leak.path, leak_count=leak.count, leak_nodes=leak.nodes,
                     leak_saved_bytes=leak.saved, leak_saved_size=format_size(leak.saved))
        culprits.insert(0, {"name": leak.path, "kind": "list", "length": leak.length,
                            "tensors_with_grad_fn": leak.count, "graph_nodes": leak.nodes,
                            "saved_tensor_bytes": leak.saved, "complete": leak.complete})

    facts.update(_batch(ctx, tensors))
    facts.update(_eval_outputs(ctx.records, tensors))
    facts.update(_fit(ctx.facts, facts))
    facts.update(_cuda_stats())
    # The working set here is the tensors' ids and references: drop them before returning.
    tensors.clear()
    if not facts:
        return None
    return Evidence(facts, culprits)


def _describe(path: str, tensor: Any, nbytes: int) -> dict[str, Any]:
    return describe_tensor(path, tensor, bytes=nbytes, size=format_size(nbytes))


def _batch(ctx: ProbeContext, tensors: dict[int, tuple[str, Any, int]]) -> dict[str, Any]:
    """The batch: the tensor handed to the failing call in the user's frame, else a conventional name."""
    user = innermost_user_frame(ctx.records)
    expr = failing_expression(user) if user is not None else None
    if expr is not None:
        # `loss_fn(model(inputs), targets)`: the model's input is the batch, wherever the allocation failed.
        for operand in expr.operands:
            inner = _model_input(operand.text, user)
            if inner is not None:
                return {"batch_name": inner[0], "batch_size": int(inner[1].shape[0])}
        for operand in expr.operands:
            if is_tensor(operand.value) and operand.value.dim() >= 1:
                return {"batch_name": operand.text, "batch_size": int(operand.value.shape[0])}
    by_name = {path: tensor for path, tensor, _ in tensors.values() if "." not in path and "[" not in path}
    for name in BATCH_NAMES:
        tensor = by_name.get(name)
        if tensor is not None and tensor.dim() >= 2:
            return {"batch_name": name, "batch_size": int(tensor.shape[0])}
    return {}


def _model_input(text: str, record) -> tuple[str, Any] | None:
    """For an operand written `module(x, ...)`, x's name and tensor when x is a plain name."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Name):
        return None
    namespace = record.namespace()
    if not is_module(resolve(node.func, namespace)):
        return None
    value = resolve(node.args[0], namespace)
    return (node.args[0].id, value) if is_tensor(value) and value.dim() >= 1 else None


def _fit(message: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """A batch size for which the failing allocation fits, assuming it grows with the batch."""
    batch = facts.get("batch_size")
    requested = parse_size(message.get("requested", message.get("requested_bytes")))
    if not batch or not requested:
        return {}
    out: dict[str, Any] = {}
    free = parse_size(message.get("free"))
    limit = parse_size(message.get("max_allowed"))
    if free is None and limit is not None:  # MPS: the watermark minus what is already in use
        used = sum(parse_size(message.get(k)) or 0 for k in ("allocated", "other"))
        free = max(limit - used, 0)
    if free is None and "total" not in message:  # the CPU allocator: what the machine has left now
        free = _available_ram()
        if free is not None:
            out["available_size"] = format_size(free)
    if free is None or requested <= free:
        return out
    fit = int(batch * free // requested)
    if fit >= 1:
        out["fit_batch"] = fit
    else:
        out["no_batch_fits"] = True
    return out


def _total_ram() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _impossible(ctx: ProbeContext) -> dict[str, Any]:
    """A request larger than the whole device (the GPU's total from the message, the MPS limit, or the
    machine's RAM for the CPU allocator): no batch size or cleanup can make it fit."""
    message = ctx.facts
    requested = parse_size(message.get("requested", message.get("requested_bytes")))
    if not requested:
        return {}
    if "total" in message:
        total, kind = parse_size(message.get("total")), "GPU memory"
    elif "max_allowed" in message:
        total, kind = parse_size(message.get("max_allowed")), "MPS memory limit"
    else:
        total, kind = _total_ram(), "RAM"
    if not total or requested <= total:
        return {"_total_bytes": total} if total else {}
    multiple = requested / total
    out: dict[str, Any] = {"_total_bytes": total, "impossible_size": format_size(requested),
                           "memory_total_size": format_size(total), "memory_kind": kind,
                           "total_multiple": f"{multiple:,.0f}" if multiple >= 10 else f"{multiple:.1f}"}
    user = innermost_user_frame(ctx.records)
    if user is not None:
        out.update(_size_arithmetic(user, requested))
    return out


def _size_arithmetic(record: FrameRecord, requested: int) -> dict[str, Any]:
    """The failing call's size arguments recomputed from the ints they name (pure integer arithmetic on
    values already in the frame; nothing of the user's is called), when they account for the request."""
    expr = failing_expression(record)
    if expr is None or expr.kind != "call" or not expr.operands:
        return {}
    local_vars = record.namespace()
    names: dict[str, int] = {}
    dims: list[int] = []
    for operand in expr.operands:
        try:
            node = ast.parse(operand.text, mode="eval").body
        except SyntaxError:
            return {}
        nodes = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        for item in nodes:
            value = _int_value(item, local_vars, names)
            if value is None:
                return {}
            dims.append(value)
    elements = math.prod(dims)
    if not dims or not any(elements * size == requested for size in (1, 2, 4, 8, 16)):
        return {}
    out: dict[str, Any] = {"size_call": expr.text, "size_shape": format_shape(tuple(dims)),
                           "size_elements": elements}
    if names:
        out["size_names"] = ", ".join(f"{name} = {value}" for name, value in names.items())
    return out


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b if b else None, ast.Pow: lambda a, b: a ** b if 0 <= b <= 64 else None}


def _int_value(node: ast.AST, local_vars: dict[str, Any], names: dict[str, int]) -> int | None:
    """An int literal, a local bound to an int, or + - * // ** of those; anything else is None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        try:
            value = dict.get(local_vars, node.id, MISSING) if isinstance(local_vars, dict) else MISSING
        except TypeError:
            return None
        if type(value) is not int:
            return None
        names[node.id] = value
        return value
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        left = _int_value(node.left, local_vars, names)
        right = _int_value(node.right, local_vars, names)
        if left is None or right is None:
            return None
        value = _INT_OPS[type(node.op)](left, right)
        return value if value is None or len(str(abs(value))) <= MAX_DIM_DIGITS else None
    return None


def _leak_append(records: list[FrameRecord], path: str) -> dict[str, Any]:
    """`path.append(expr)` as the user's code writes it, and the same call keeping no graph."""
    root = re.split(r"[.\[]", path, maxsplit=1)[0]
    for record in reversed(user_frames(records)):
        local_vars = record.locals
        if not isinstance(local_vars, dict) or root not in local_vars or record.frame is None:
            continue
        container = local_vars[root]
        for call in _append_calls(record):
            if ast.unparse(call.func.value) != path or len(call.args) != 1:
                continue
            appended = ast.unparse(call.args[0])
            scalar = _all_scalars(container) if path == root else False
            keep = f"{appended}.item()" if scalar else f"{appended}.detach()"
            return {"leak_append": f"{path}.append({appended})", "leak_keep": f"{path}.append({keep})"}
    return {}


def _append_calls(record: FrameRecord) -> list[ast.Call]:
    """The .append(...) calls in the source of the frame's function (the whole file for module code)."""
    code = record.frame.f_code
    lines = linecache.getlines(record.filename)
    if not lines:
        return []
    if code.co_name == "<module>":
        first, last = 1, len(lines)
    else:
        numbers = [line for _, _, line in code.co_lines() if line is not None]
        first, last = code.co_firstlineno, max(numbers, default=code.co_firstlineno)
    source = "".join(lines[first - 1:last])
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"]


def _all_scalars(container: Any) -> bool:
    if type(container) is not list or not container:
        return False
    torch = sys.modules["torch"]
    with torch._C.DisableTorchFunction():
        return all(is_tensor(item) and torch.Tensor.numel(item) == 1 for item in container[:MAX_ITEMS])


def _available_ram() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _eval_outputs(records: list[FrameRecord], tensors: dict[int, tuple[str, Any, int]]) -> dict[str, Any]:
    """An output that records a graph in a frame that is evaluating: named so, or its model in eval().
    A model in eval mode (training False) is certain evidence: eval() does not turn autograd off."""
    for record in reversed(user_frames(records)):
        local_vars = record.locals
        if not isinstance(local_vars, dict):
            continue
        models = [(name, value) for name, value in list(local_vars.items())[:MAX_ITEMS]
                  if is_module(value) and name != "self"]
        eval_model = next((name for name, model in models if safe_getattr(model, "training") is False), None)
        evaluating = eval_model is not None or any(word in record.name.lower() for word in EVAL_WORDS)
        for name, value in list(local_vars.items())[:MAX_ITEMS]:
            if not is_tensor(value) or grad_fn_of(value) is None:
                continue
            if evaluating or any(word in name.lower() for word in EVAL_WORDS):
                out: dict[str, Any] = {"eval_name": name}
                if eval_model is not None:
                    out.update(eval_model=eval_model, eval_without_no_grad=True)
                    if record.name != "<module>":
                        out["eval_function"] = record.name
                return out
    return {}


def _cuda_stats() -> dict[str, Any]:
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    try:
        # Only an already-initialised CUDA context: the explainer must not create one.
        if cuda is None or not cuda.is_available() or not cuda.is_initialized():
            return {}
        stats = cuda.memory_stats()
    except Exception:  # a broken driver after the OOM
        return {}
    peak = stats.get("allocated_bytes.all.peak")
    return {"cuda_peak_size": format_size(peak)} if isinstance(peak, int) else {}

