"""A bounded walk over what user frames reach (containers, modules, objects, tensors and their .grad),
for the memory and autograd probes: it never calls user code and stops at fixed bounds."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Iterator

from explainer._inspect import (FrameRecord, child_modules, instance_dict, is_module, is_tensor, safe_getattr,
                                user_frames)

MAX_OBJECTS = 20_000       # containers and tensors visited per scan
MAX_DEPTH = 4              # list inside dict inside object inside a frame
MAX_ITEMS = 5_000          # items read from one container
SCAN_BUDGET_S = 0.5


@dataclass
class Found:
    path: str   # how the user's code reaches it: 'losses', 'history["val"]', 'model.fc.weight.grad'
    value: Any
    depth: int


class Budget:
    def __init__(self, objects: int = MAX_OBJECTS, seconds: float = SCAN_BUDGET_S):
        self.left = objects
        self.deadline = time.monotonic() + seconds

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0 and time.monotonic() < self.deadline


def _tensor_grad(tensor: Any) -> Any:
    torch = sys.modules["torch"]
    try:
        # The C-level getter: a Tensor subclass's own `grad` property is never consulted.
        return torch._C.TensorBase.grad.__get__(tensor)
    except Exception:  # a tensor type without the slot
        return None


def walk_reachable(records: list[FrameRecord], budget: Budget | None = None) -> Iterator[Found]:
    """Every list, tuple, dict, module, tensor (and a tensor's .grad) reachable from user frames'
    locals, innermost frame first, each object once. Plain containers only: subclasses might run
    code when iterated. User objects are entered through their instance __dict__ only."""
    budget = budget or Budget()
    seen: set[int] = set()
    for record in reversed(user_frames(records)):
        local_vars = record.locals
        if not isinstance(local_vars, dict):
            continue
        for name, value in list(local_vars.items())[:MAX_ITEMS]:
            if not isinstance(name, str) or name.startswith("__"):
                continue
            stack = [(name, value, 0)]
            while stack:
                path, obj, depth = stack.pop()
                if id(obj) in seen:
                    continue
                if not budget.spend():
                    return
                seen.add(id(obj))
                children = _children(path, obj, depth)
                if children is None:
                    continue
                yield Found(path, obj, depth)
                if depth < MAX_DEPTH:
                    stack.extend(reversed(children))


def _children(path: str, obj: Any, depth: int) -> list[tuple[str, Any, int]] | None:
    """The objects under obj worth visiting, or None when obj is of no interest at all."""
    kind = type(obj)
    if is_tensor(obj):
        # Only leaves accumulate .grad (reading it on any other tensor makes torch warn).
        grad = _tensor_grad(obj) if sys.modules["torch"]._C.TensorBase.is_leaf.__get__(obj) else None
        return [(f"{path}.grad", grad, depth + 1)] if grad is not None else []
    if kind in (list, tuple):
        return [(f"{path}[{i}]", item, depth + 1) for i, item in enumerate(obj[:MAX_ITEMS])]
    if kind is dict:
        items = []
        for i, (key, item) in enumerate(dict.items(obj)):
            if i >= MAX_ITEMS:
                break
            label = repr(key) if type(key) in (str, int) else str(i)
            items.append((f"{path}[{label}]", item, depth + 1))
        return items
    if is_module(obj):
        items = []
        for table in ("_parameters", "_buffers"):
            entries = safe_getattr(obj, table)
            if type(entries) is dict:
                items += [(f"{path}.{key}", value, depth) for key, value in entries.items() if value is not None]
        items += [(f"{path}.{key}", child, depth) for key, child in child_modules(obj).items() if child is not None]
        return items
    if kind.__module__ in ("builtins", "types") or kind.__module__.startswith(("torch", "numpy")):
        return None
    inst = instance_dict(obj)
    if inst is None:
        return None
    return [(f"{path}.{key}", value, depth + 1) for key, value in list(inst.items())[:MAX_ITEMS]
            if isinstance(key, str) and not key.startswith("__")]
