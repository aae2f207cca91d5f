"""Probes for the data, distributed and numerics families: checkpoints, loaders, labels, DDP, NaN."""

from __future__ import annotations

import os
import pathlib
import re
import sys
from typing import Any, Iterator

from .._inspect import (MISSING, FrameRecord, child_modules, describe_module, describe_tensor, failing_expression,
                        find_local_instance, format_shape, innermost_user_frame, is_module, is_tensor, module_frames,
                        module_repr, name_module, resolve_text, safe_getattr)
from . import Evidence, ProbeContext, probe
from ._operands import submodule

MAX_KEYS_SHOWN = 8
MAX_SCAN_NUMEL = 10_000_000
MAX_TENSORS_SCANNED = 200

STATE_DICT_KEYS_RE = r'(Missing|Unexpected) key\(s\) in state_dict: ((?:"[^"]*"(?:, )?)+)'
KEY_RE = r'"([^"]*)"'
PARAM_INDICES_RE = r"Parameter indices which did not receive grad for rank (\d+): ([\d ]+)"
KILLED_RE = r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: (?P<signal>[^.]+)\."


def _message(exc: BaseException | None) -> str:
    """The exception's own message: only str arguments are read, nothing of the user's is called."""
    if exc is None:
        return ""
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], str) else ""


def _user_call(ctx: ProbeContext):
    """The failing call on the innermost user line, if that line fails in a call."""
    user = innermost_user_frame(ctx.records)
    expr = failing_expression(user) if user is not None else None
    return user, (expr if expr is not None and expr.kind == "call" else None)


def _shown(keys: list[str]) -> str:
    text = ", ".join(keys[:MAX_KEYS_SHOWN])
    return text + (f" and {len(keys) - MAX_KEYS_SHOWN} more" if len(keys) > MAX_KEYS_SHOWN else "")


# --- state_dict keys --------------------------------------------------------------------------

def parse_state_dict_keys(message: str) -> tuple[list[str], list[str]]:
    missing: list[str] = []
    unexpected: list[str] = []
    for kind, keys in re.findall(STATE_DICT_KEYS_RE, message):
        (missing if kind == "Missing" else unexpected).extend(re.findall(KEY_RE, keys))
    return missing, unexpected


def key_prefix(missing: list[str], unexpected: list[str]) -> tuple[str, str] | None:
    """('module.', 'checkpoint') when the checkpoint's keys are the model's behind one prefix
    (DataParallel, DDP, torch.compile's '_orig_mod.'); 'model' when the model's keys carry it."""
    for extra, plain, side in ((unexpected, missing, "checkpoint"), (missing, unexpected, "model")):
        wanted = set(plain)
        for other in plain:
            first = extra[0] if extra else ""
            if not first.endswith("." + other):
                continue
            prefix = first[: -len(other)]
            stripped = {k[len(prefix):] for k in extra if k.startswith(prefix)}
            if len(stripped) == len(extra) and len(stripped & wanted) * 2 >= len(wanted):
                return prefix, side
    return None


def renamed_prefix(missing: list[str], unexpected: list[str]) -> tuple[str, str] | None:
    """(old, new) when the unexpected keys are the missing ones with one leading path renamed."""
    counts: dict[tuple[str, str], int] = {}
    for old in unexpected:
        old_parts = old.split(".")
        for new in missing:
            new_parts = new.split(".")
            tail = 0
            while tail < min(len(old_parts), len(new_parts)) - 1 and old_parts[-1 - tail] == new_parts[-1 - tail]:
                tail += 1
            if tail:
                pair = (".".join(old_parts[:-tail]) + ".", ".".join(new_parts[:-tail]) + ".")
                counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    pair, count = max(counts.items(), key=lambda item: item[1])
    return pair if count * 2 >= len(missing) else None


@probe("state_dict_keys", provides=("missing_keys", "unexpected_keys", "missing_count", "unexpected_count",
                                     "key_prefix", "prefix_side", "renamed_from", "renamed_to", "model_name",
                                     "checkpoint_name"))
def state_dict_keys(ctx: ProbeContext) -> Evidence | None:
    """The key lists of a failed load_state_dict, what relates them, and the names the user gave."""
    missing, unexpected = parse_state_dict_keys(_message(ctx.exception))
    if not missing and not unexpected:
        return None
    facts = _key_analysis(missing, unexpected)
    culprits = []
    _, expr = _user_call(ctx)
    if expr is not None and expr.callee is not None and expr.callee.text.endswith(".load_state_dict"):
        facts["model_name"] = expr.callee.text.rsplit(".", 1)[0]
        model = resolve_text(facts["model_name"], _locals(ctx))
        if is_module(model):
            culprits.append(describe_module(facts["model_name"], model))
        if expr.operands:
            facts["checkpoint_name"] = expr.operands[0].text
    return Evidence(facts, culprits)


@probe("state_dict_key_lists", provides=("missing_keys", "unexpected_keys", "missing_count", "unexpected_count",
                                          "key_prefix", "prefix_side", "renamed_from", "renamed_to"), live=False)
def state_dict_key_lists(ctx: ProbeContext) -> Evidence | None:
    """The same key analysis as state_dict_keys, from the key lists a pattern captured (a pasted message)."""
    missing = re.findall(KEY_RE, str(ctx.facts.get("missing_list", "")))
    unexpected = re.findall(KEY_RE, str(ctx.facts.get("unexpected_list", "")))
    if not missing and not unexpected:
        return None
    return Evidence(_key_analysis(missing, unexpected))


def _key_analysis(missing: list[str], unexpected: list[str]) -> dict[str, Any]:
    """The two key lists, and what relates them: a prefix on one side, or a renamed submodule."""
    facts: dict[str, Any] = {"missing_keys": _shown(missing), "unexpected_keys": _shown(unexpected),
                             "missing_count": len(missing), "unexpected_count": len(unexpected)}
    prefix = key_prefix(missing, unexpected)
    if prefix is not None:
        facts["key_prefix"], facts["prefix_side"] = prefix
    elif missing and unexpected:
        renamed = renamed_prefix(missing, unexpected)
        if renamed is not None:
            facts["renamed_from"], facts["renamed_to"] = renamed
    return facts


def _locals(ctx: ProbeContext) -> dict[str, Any]:
    user = innermost_user_frame(ctx.records)
    return user.locals if user is not None else {}


# --- modules and parameters -------------------------------------------------------------------

def named_parameters(module: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Like nn.Module.named_parameters (pre-order, each tensor once), read from the tables only."""
    seen_modules: set[int] = set()
    seen_params: set[int] = set()
    stack = [(prefix, module)]
    while stack:
        path, current = stack.pop(0)
        if id(current) in seen_modules:
            continue
        seen_modules.add(id(current))
        params = safe_getattr(current, "_parameters")
        for name, value in (params.items() if isinstance(params, dict) else ()):
            if value is not None and id(value) not in seen_params:
                seen_params.add(id(value))
                yield (f"{path}.{name}" if path else name), value
        children = [(f"{path}.{name}" if path else name, child)
                    for name, child in child_modules(current).items() if child is not None]
        stack[0:0] = children


def unregistered_containers(module: Any) -> list[tuple[str, int]]:
    """Attributes holding modules in a plain list, tuple or dict: nn.Module does not see them."""
    try:
        inst = object.__getattribute__(module, "__dict__")
    except (AttributeError, TypeError):
        return []
    found = []
    for name, value in list(inst.items()):
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif isinstance(value, dict) and not name.startswith("_"):
            items = list(value.values())
        else:
            continue
        count = sum(1 for item in items if is_module(item))
        if count:
            found.append((name, count))
    return found


@probe("optimizer_params", provides=("model_name", "param_count", "trainable_count", "unregistered",
                                      "container_fix"))
def optimizer_params(ctx: ProbeContext) -> Evidence | None:
    """Why the parameters handed to the optimizer were empty: unregistered layers or all frozen."""
    _, expr = _user_call(ctx)
    if expr is None or not expr.operands:
        return None
    source = expr.operands[0].text
    root = source.split(".parameters(")[0] if ".parameters(" in source else None
    if root is None:
        found = re.search(r"([A-Za-z_][\w.]*)\.parameters\(", source)
        root = found.group(1) if found else None
    model = resolve_text(root, _locals(ctx)) if root else MISSING
    if not is_module(model):
        return None
    params = list(named_parameters(model))
    facts: dict[str, Any] = {"model_name": root, "param_count": len(params),
                             "trainable_count": sum(1 for _, p in params if bool(p.requires_grad))}
    culprits = [describe_module(root, model, parameters=len(params))]
    containers = unregistered_containers(model)
    if containers:
        name, count = containers[0]
        facts["unregistered"] = f"{root}.{name} ({count} modules in a plain Python container)"
        holder = type(safe_getattr(model, name)).__name__
        wrapper = "nn.ModuleDict" if holder == "dict" else "nn.ModuleList"
        facts["container_fix"] = f"self.{name} = {wrapper}([...])" if wrapper == "nn.ModuleList" \
            else f"self.{name} = nn.ModuleDict({{...}})"
        culprits.append({"name": f"{root}.{name}", "kind": "attribute", "type": holder,
                         "repr": f"{holder} of {count} modules, not registered"})
    return Evidence(facts, culprits)


# --- BatchNorm, labels ------------------------------------------------------------------------

@probe("batchnorm_module", provides=("module", "module_repr", "loader_name", "batch_size"))
def batchnorm_module(ctx: ProbeContext) -> Evidence | None:
    """The BatchNorm layer that got one value per channel, and the DataLoader feeding it."""
    for record, module in reversed(module_frames(ctx.records)):
        if "BatchNorm" in type(module).__name__ or any("_BatchNorm" == b.__name__ for b in type(module).__mro__):
            name = name_module(module, ctx.records) or type(module).__name__
            facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module)}
            culprits = [describe_module(name, module)]
            loader = find_local_instance(ctx.records, "torch.utils.data", "DataLoader")
            if loader is not None:
                loader_name, value = loader
                batch_size = safe_getattr(value, "batch_size")
                if isinstance(batch_size, int) and safe_getattr(value, "drop_last") is False:
                    facts["loader_name"], facts["batch_size"] = loader_name, batch_size
            return Evidence(facts, culprits)
    return None


LOSS_FUNCTIONS = {"cross_entropy", "nll_loss", "forward"}


@probe("class_target", provides=("num_classes", "input_name", "target_name", "input_shape", "target_shape"))
def class_target(ctx: ProbeContext) -> Evidence | None:
    """The class dimension of the loss input and the names of the logits and targets."""
    value = target = MISSING
    for record in reversed(ctx.records):
        if record.is_user or record.name not in LOSS_FUNCTIONS:
            continue
        local_vars = record.locals
        candidate, labels = dict.get(local_vars, "input", MISSING), dict.get(local_vars, "target", MISSING)
        if is_tensor(candidate) and is_tensor(labels):
            value, target = candidate, labels
            break
    if value is MISSING:
        return None
    shape = list(value.shape)
    class_dim = 1 if len(shape) > 1 else 0
    facts: dict[str, Any] = {"num_classes": shape[class_dim], "input_shape": format_shape(shape),
                             "target_shape": format_shape(target.shape)}
    _, expr = _user_call(ctx)
    tensors = [op for op in expr.operands if is_tensor(op.value)] if expr is not None else []
    facts["input_name"] = next((op.text for op in tensors if op.value is value), "the input")
    facts["target_name"] = next((op.text for op in tensors if op.value is target), "the target")
    culprits = [describe_tensor(facts["input_name"], value), describe_tensor(facts["target_name"], target)]
    return Evidence(facts, culprits)


# --- DataLoader workers -----------------------------------------------------------------------

@probe("worker_exit_cause", provides=("signal", "pid"))
def worker_exit_cause(ctx: ProbeContext) -> Evidence | None:
    """The signal that killed the worker, from the exception or the one it was raised from."""
    exc, hops = ctx.exception, 0
    while exc is not None and hops < 5:
        found = re.search(KILLED_RE, _message(exc))
        if found:
            return Evidence({"signal": found.group("signal"), "pid": int(found.group("pid"))})
        exc, hops = exc.__cause__ or exc.__context__, hops + 1
    return None


# --- DDP --------------------------------------------------------------------------------------

@probe("ddp_unused", provides=("unused_parameters", "unused_modules", "ddp_name"))
def ddp_unused(ctx: ProbeContext) -> Evidence | None:
    """Parameter names (and their modules) behind DDP's 'Parameter indices which did not receive grad'."""
    found = re.search(PARAM_INDICES_RE, _message(ctx.exception))
    if not found:
        return None
    indices = [int(i) for i in found.group(2).split()]
    for _, module in reversed(module_frames(ctx.records)):
        if type(module).__name__ != "DistributedDataParallel":
            continue
        wrapped = safe_getattr(module, "module")
        if not is_module(wrapped):
            return None
        # DDP numbers the parameters that require grad, in named_parameters order.
        trainable = [name for name, p in named_parameters(wrapped) if bool(p.requires_grad)]
        names = [trainable[i] for i in indices if 0 <= i < len(trainable)]
        if not names:
            return None
        owners = list(dict.fromkeys(n.rsplit(".", 1)[0] if "." in n else "(root)" for n in names))
        ddp_name = name_module(module, ctx.records) or "the DDP model"
        facts = {"unused_parameters": _shown(names), "unused_modules": _shown(owners), "ddp_name": ddp_name}
        culprits = [describe_module(f"{ddp_name}.module.{owner}", submodule(wrapped, owner))
                    for owner in owners[:MAX_KEYS_SHOWN] if submodule(wrapped, owner) is not None]
        return Evidence(facts, culprits)
    return None


# --- NaN and Inf ------------------------------------------------------------------------------

def nonfinite_counts(tensor: Any) -> tuple[int, int] | None:
    """(nan, inf) element counts of a plain floating tensor; None when it is not safe or cheap to count."""
    torch = sys.modules.get("torch")
    if torch is None or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return None
    with torch._C.DisableTorchFunction():
        if not tensor.dtype.is_floating_point or tensor.device.type == "meta" or tensor.numel() > MAX_SCAN_NUMEL:
            return None
        with torch.no_grad():
            return int(torch.isnan(tensor).sum()), int(torch.isinf(tensor).sum())


def _tensors_in_frame(record: FrameRecord) -> Iterator[tuple[str, Any]]:
    local_vars = record.locals
    if not isinstance(local_vars, dict):
        return
    for name, value in list(local_vars.items())[:2000]:
        if is_tensor(value):
            yield name, value
        elif is_module(value):
            for param_name, param in named_parameters(value, name):
                yield param_name, param
                grad = param.grad
                if grad is not None:
                    yield f"{param_name}.grad", grad


@probe("nonfinite_tensors", provides=("nonfinite", "first_nonfinite"))
def nonfinite_tensors(ctx: ProbeContext) -> Evidence | None:
    """Tensors (and parameter gradients) in the failing user frame that hold nan or inf."""
    user = innermost_user_frame(ctx.records)
    if user is None:
        return None
    found, culprits = [], []
    # Values before gradients: the first non-finite value is nearer the cause than the gradients it spoiled.
    tensors = sorted(_tensors_in_frame(user), key=lambda item: item[0].endswith(".grad"))
    for index, (name, tensor) in enumerate(tensors):
        if index >= MAX_TENSORS_SCANNED:
            break
        counts = nonfinite_counts(tensor)
        if counts is None or counts == (0, 0):
            continue
        nan, inf = counts
        what = ", ".join(part for part in (f"{nan} nan" if nan else "", f"{inf} inf" if inf else "") if part)
        found.append(f"{name} ({what})")
        culprits.append(describe_tensor(name, tensor, nan=nan, inf=inf))
    if not found:
        return None
    return Evidence({"nonfinite": _shown(found), "first_nonfinite": found[0].split(" (")[0]}, culprits)


# --- checkpoint files -------------------------------------------------------------------------

# What the first byte of a file that is not a checkpoint usually says about it.
FIRST_BYTE_MEANINGS = {
    "<": "an HTML or XML page (a download link that returned a web page: a login, quota or error page)",
    "v": "a Git LFS pointer file ('version https://git-lfs...'): the repository was cloned without `git lfs pull`",
    "\\x0a": "a text file starting with an empty line (a pointer, a log or an error message saved under the checkpoint's name)",
    "\\n": "a text file starting with an empty line (a pointer, a log or an error message saved under the checkpoint's name)",
    "{": "a JSON file (a config or an error response), not the weights",
    "\\x00": "a file that starts with zero bytes: an incomplete download or a preallocated, never written file",
    "\\x1f": "a gzip-compressed file: decompress it first",
    "P": "a zip archive that torch's legacy loader was given: it is probably truncated or corrupt",
}


def _byte_text(operand: int) -> str:
    """How pickle's 'invalid load key' would print the byte: the character, or its \\x escape."""
    char = chr(operand)
    return char if char.isprintable() and operand < 128 else f"\\x{operand:02x}"


CHECKPOINT_HEAD_BYTES = 16


def _human_size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} bytes"


@probe("checkpoint_file", provides=("checkpoint_path", "checkpoint_size", "checkpoint_head"))
def checkpoint_file(ctx: ProbeContext) -> Evidence | None:
    """The file torch.load was reading (from its own frame), its size and first bytes.

    Only a str or pathlib path is read: a file-like object of the user's is never touched.
    """
    for record in reversed(ctx.records):
        if record.is_user or record.name != "load" or "serialization" not in record.filename:
            continue
        target = dict.get(record.locals, "f", MISSING)
        if type(target) is str:
            path = target
        elif type(target) in (pathlib.PosixPath, pathlib.WindowsPath, pathlib.Path):
            path = str(target)
        else:
            return None
        try:
            size = os.stat(path).st_size
            with open(path, "rb") as handle:
                head = handle.read(CHECKPOINT_HEAD_BYTES)
        except OSError:
            return None
        facts = {"checkpoint_path": path, "checkpoint_size": _human_size(size), "checkpoint_head": repr(head)}
        culprits = [{"name": path, "kind": "file", "size": size, "repr": f"file of {_human_size(size)} starting {head!r}"}]
        return Evidence(facts, culprits)
    return None


@probe("checkpoint_first_byte", provides=("load_key", "file_kind"), live=False)
def checkpoint_first_byte(ctx: ProbeContext) -> Evidence | None:
    """What kind of file torch.load was given, from the byte pickle choked on.

    'invalid load key, X' names the byte; the weights-only unpickler's 'Unsupported operand N' names
    its code: 60 is '<', the start of an HTML page.
    """
    key = ctx.facts.get("load_key")
    operand = ctx.facts.get("operand")
    if key is None and operand not in (None, ""):
        try:
            key = _byte_text(int(operand))
        except (TypeError, ValueError, OverflowError):
            return None
    if key is None:
        return None
    facts: dict[str, Any] = {"load_key": key}
    meaning = FIRST_BYTE_MEANINGS.get(key)
    if meaning is not None:
        facts["file_kind"] = meaning
    return Evidence(facts)
