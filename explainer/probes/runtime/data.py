"""Probes for the data, distributed and numerics families: loaders, labels, DDP, NaN (checkpoints: checkpoint.py)."""

from __future__ import annotations

import ast
import re
import sys
import types
from typing import Any, Iterator

from explainer._inspect import (MISSING, FrameRecord, child_modules, describe_module, describe_tensor, failing_expression,
                                find_local_instance, format_shape, innermost_user_frame, instance_dict, is_module,
                                is_tensor, module_frames, module_repr, name_module, resolve_text, safe_getattr)
from explainer._lazyre import cached_compile
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import submodule

MAX_KEYS_SHOWN = 8
MAX_SCAN_NUMEL = 10_000_000
MAX_TENSORS_SCANNED = 200

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


def _locals(ctx: ProbeContext) -> dict[str, Any]:
    user = innermost_user_frame(ctx.records)
    return user.locals if user is not None else {}


def _shown(keys: list[str]) -> str:
    text = ", ".join(keys[:MAX_KEYS_SHOWN])
    return text + (f" and {len(keys) - MAX_KEYS_SHOWN} more" if len(keys) > MAX_KEYS_SHOWN else "")


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
    inst = instance_dict(module)
    if inst is None:
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


def _target_range(target: Any, classes: int, ignore_index: Any) -> dict[str, int] | None:
    """Smallest and largest class index and how many fall outside 0..classes-1 (ignore_index not counted): reductions
    of a plain CPU integer tensor of bounded size, never its values."""
    torch = sys.modules.get("torch")
    if torch is None or type(target) is not torch.Tensor or target.device.type != "cpu":
        return None
    if target.is_floating_point() or target.is_complex() or target.dtype == torch.bool:
        return None
    if not 0 < target.numel() <= MAX_SCAN_NUMEL:
        return None
    with torch._C.DisableTorchFunction(), torch.no_grad():
        kept = target[target != ignore_index] if isinstance(ignore_index, int) else target.reshape(-1)
        if kept.numel() == 0:
            return None
        outside = int(((kept < 0) | (kept >= classes)).sum())
        return {"target_min": int(kept.min()), "target_max": int(kept.max()), "out_of_range": outside}


@probe("class_target", provides=("num_classes", "input_name", "target_name", "input_shape", "target_shape",
                                 "target_min", "target_max", "out_of_range"))
def class_target(ctx: ProbeContext) -> Evidence | None:
    """The class dimension of the loss input, the names of the logits and targets, and the targets' range."""
    value = target = ignore_index = MISSING
    for record in reversed(ctx.records):
        if record.is_user or record.name not in LOSS_FUNCTIONS:
            continue
        local_vars = record.locals
        candidate, labels = dict.get(local_vars, "input", MISSING), dict.get(local_vars, "target", MISSING)
        if is_tensor(candidate) and is_tensor(labels):
            value, target = candidate, labels
            ignore_index = dict.get(local_vars, "ignore_index", MISSING)
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
    facts.update(_target_range(target, shape[class_dim], ignore_index) or {})
    culprits = [describe_tensor(facts["input_name"], value), describe_tensor(facts["target_name"], target)]
    return Evidence(facts, culprits)


# --- DataLoaders -------------------------------------------------------------------------------

def _failing_loader(ctx: ProbeContext) -> tuple[str, Any] | None:
    """(name, DataLoader) the failing user line iterates: a name on that line, else a local of its frame."""
    cls = getattr(sys.modules.get("torch.utils.data"), "DataLoader", None)
    user = innermost_user_frame(ctx.records)
    if cls is None or user is None:
        return None
    namespace = user.namespace()
    for name in re.findall(r"[A-Za-z_][\w.]*", user.segment() or ""):
        value = resolve_text(name, namespace)
        if issubclass(type(value), cls):
            return name, value
    return find_local_instance(ctx.records, "torch.utils.data", "DataLoader")


def _callable_name(value: Any) -> str:
    """A function's qualified name, read only from plain functions (nothing of the user's runs)."""
    if isinstance(value, types.FunctionType):
        return value.__qualname__
    return type(value).__name__


def _sample_kind(records: list[FrameRecord]) -> dict[str, str]:
    """What each sample of the batch is, read off the outermost frame of torch's collate (its `elem`, the batch's first
    sample, only its type looked at): a tuple's or a dict's fields are padded one by one, not the sample."""
    for record in records:
        if record.name in ("collate", "default_collate") and record.filename.replace("\\", "/").endswith(
                "data/_utils/collate.py"):
            local = record.locals
            if "elem" not in local:  # (torch 2's default_collate holds none: the collate under it does)
                continue
            kind = type(local["elem"])
            if issubclass(kind, dict):
                return {"dict_samples": kind.__name__}
            return {"tuple_samples": kind.__name__} if issubclass(kind, (tuple, list)) else {}
    return {}


@probe("dataloader", provides=("loader_name", "batch_size", "dataset_type", "collate_name", "num_workers",
                               "tuple_samples", "dict_samples"))
def dataloader(ctx: ProbeContext) -> Evidence | None:
    """The DataLoader whose batch failed: its name, batch size, dataset class and collate_fn; where torch's collate ran
    in this process, whether its samples are tuples or dicts."""
    found, samples = _failing_loader(ctx), _sample_kind(ctx.records)
    if found is None:
        return Evidence(samples) if samples else None
    name, loader = found
    facts: dict[str, Any] = {"loader_name": name, **samples}
    for key in ("batch_size", "num_workers"):
        if type(safe_getattr(loader, key)) is int:
            facts[key] = safe_getattr(loader, key)
    dataset = safe_getattr(loader, "dataset")
    if dataset is not MISSING:
        facts["dataset_type"] = type(dataset).__name__
    collate = safe_getattr(loader, "collate_fn")
    if collate is not MISSING:
        facts["collate_name"] = _callable_name(collate)
    shown = ", ".join(f"{key}={facts[key]}" for key in ("dataset_type", "batch_size", "num_workers", "collate_name")
                      if key in facts).replace("dataset_type=", "dataset=").replace("collate_name=", "collate_fn=")
    return Evidence(facts, [{"name": name, "kind": "DataLoader", "type": type(loader).__name__,
                             "repr": f"DataLoader({shown})"}])


@probe("len_operand", provides=("operand", "operand_type"))
def len_operand(ctx: ProbeContext) -> Evidence | None:
    """What the failing `len(x)` of the user's line measured: its name and class (its __len__ is not called again)."""
    _, expr = _user_call(ctx)
    if expr is None or expr.callee is None or expr.callee.text != "len" or len(expr.operands) != 1:
        return None
    operand = expr.operands[0]
    if operand.value is MISSING:
        return Evidence({"operand": operand.text})
    kind = type(operand.value).__name__
    return Evidence({"operand": f"{operand.text} ({kind})", "operand_type": kind},
                    [{"name": operand.text, "kind": "object", "type": kind, "repr": f"{kind} object"}])


NUMPY_SCALAR_RE = cached_compile(r"^np\.\w+\((?P<value>.*)\)$")  # numpy 2 prints a set's members as np.int64(3)


def _set_members(text: Any) -> list[str]:
    """The members of a printed Python set ('{0, 1, 3}', "{'cat', 'dog'}"), each as printed."""
    inner = str(text).strip()[1:-1]
    members = [part.strip() for part in inner.split(",") if part.strip()]
    return [(m.group("value") if (m := NUMPY_SCALAR_RE.match(part)) else part) for part in members]


@probe("label_sets", provides=("unseen_labels", "unseen_count"), live=False)
def label_sets(ctx: ProbeContext) -> Evidence | None:
    """The labels of a validation set that the training labels lack, from the two sets a message prints."""
    if "valid_labels" not in ctx.facts or "train_labels" not in ctx.facts:
        return None
    train = set(_set_members(ctx.facts["train_labels"]))
    unseen = [label for label in _set_members(ctx.facts["valid_labels"]) if label not in train]
    if not unseen:
        return None
    return Evidence({"unseen_labels": _shown(unseen), "unseen_count": len(unseen)})


# --- DataLoader workers -----------------------------------------------------------------------

@probe("split_lengths", provides=("dataset_name", "dataset_length", "lengths", "lengths_sum"))
def split_lengths(ctx: ProbeContext) -> Evidence | None:
    """random_split's two operands: the lengths asked for and their sum, and the dataset's own length where
    torch's dataset classes hold it (TensorDataset, Subset); a user's __len__ is never called."""
    user, expr = _user_call(ctx)
    if expr is None or len(expr.operands) < 2:
        return None
    dataset, lengths = expr.operands[0], expr.operands[1]
    values = lengths.value if lengths.value is not MISSING else _numbers(lengths.text, user.namespace())
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, (int, float)) for v in values):
        return None
    facts: dict[str, Any] = {"lengths": "[" + ", ".join(str(v) for v in values) + "]",
                             "lengths_sum": round(sum(values), 6), "dataset_name": dataset.text}
    size = _dataset_length(dataset.value)
    culprit = {"name": dataset.text, "kind": type(dataset.value).__name__}
    if size is not None:
        facts["dataset_length"] = culprit["length"] = size
    return Evidence(facts, [culprit])


def _numbers(text: str, namespace: dict[str, Any]) -> list[Any] | None:
    """A list or tuple display of numbers and names (`[800, 200]`, `[train_len, val_len]`), read without running it."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    values = [element.value if isinstance(element, ast.Constant) else resolve_text(ast.unparse(element), namespace)
              for element in node.elts]
    return values if all(type(v) in (int, float) for v in values) else None


def _dataset_length(dataset: Any) -> int | None:
    """len() of torch's own dataset classes, read from what they hold (no method runs)."""
    kind = type(dataset)
    if kind.__module__ != "torch.utils.data.dataset":
        return None
    if kind.__name__ == "TensorDataset":
        tensors = safe_getattr(dataset, "tensors")
        return int(tensors[0].shape[0]) if isinstance(tensors, tuple) and tensors and is_tensor(tensors[0]) else None
    if kind.__name__ == "Subset":
        indices = safe_getattr(dataset, "indices")
        return len(indices) if type(indices) in (list, tuple, range) else None
    return None


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
