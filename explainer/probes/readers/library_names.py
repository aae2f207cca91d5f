"""Names a library gave the tensors torch got, for errors raised inside a library the user's line called into
(Hugging Face's Trainer running the model's loss): the library's own local that holds the same tensor, and where
that name lives ("in transformers' BertEmbeddings.forward"), so that a culprit named `input_ids` or `labels` is not
taken for a variable of the user's code."""

from __future__ import annotations

import os
from typing import Any

from explainer._inspect import MISSING, FrameRecord, class_mro, class_text

_SKIPPED = frozenset({"self", "input", "target", "args", "kwargs"})


def library_package(record: FrameRecord) -> str | None:
    """The installed package a frame's file belongs to (`transformers`), None for torch's own files, the user's
    code and the standard library."""
    if record.is_user:
        return None
    parts = os.path.realpath(record.filename).split(os.sep)
    for marker in ("site-packages", "dist-packages"):
        if marker in parts[:-1]:
            package = parts[parts.index(marker) + 1].removesuffix(".py")
            return None if package == "torch" else package
    return None


def has_base(obj: Any, name: str, packages: tuple[str, ...]) -> bool:
    """Whether obj's class or one of its bases is the class `name` of one of packages (its top-level module:
    `LightningModule` of lightning), read through type's descriptors: nothing of the user's classes runs."""
    return any(class_text(cls, "__name__") == name
               and (class_text(cls, "__module__") or "").split(".", 1)[0] in packages for cls in class_mro(type(obj)))


def _possessive(package: str) -> str:
    return f"{package}'" if package.endswith("s") else f"{package}'s"


def _owner(record: FrameRecord) -> str:
    """`BertEmbeddings.forward` for a method (the class of its `self`, read through class_text: nothing of the user's
    runs, not even a metaclass's __name__)."""
    table = record.locals if isinstance(record.locals, dict) else {}
    owner = dict.get(table, "self", MISSING)
    name = class_text(type(owner), "__name__") if owner is not MISSING else None
    return f"{name}.{record.name}" if name else record.name


def library_local(records: list[FrameRecord], value: Any) -> tuple[str, str] | None:
    """(name, where) of the innermost library frame's local that is value itself: ("input_ids", "transformers'
    `BertEmbeddings.forward`"); None when no library frame holds it by a name of its own."""
    for record in reversed(records):
        package = library_package(record)
        table = record.locals if package is not None else None
        if not isinstance(table, dict):
            continue
        for i, (name, candidate) in enumerate(list(table.items())):
            if i >= 2000:
                break
            if candidate is value and name not in _SKIPPED and not name.startswith("_"):
                return name, f"{_possessive(package)} `{_owner(record)}`"
    return None


def library_caller(records: list[FrameRecord]) -> tuple[str, FrameRecord] | None:
    """(where, frame) of the innermost library frame on the failing path, when the user's code reached torch
    through a library: the frame whose locals torch's argument names would otherwise be taken for the user's."""
    for record in reversed(records):
        if record.is_user:
            return None
        package = library_package(record)
        if package is not None:
            return f"{_possessive(package)} `{_owner(record)}`", record
    return None


def library_call_argument(records: list[FrameRecord], position: int) -> tuple[str, str | None, str] | None:
    """(text, variable, where) of the argument at position of the library's call into torch, when a library frame
    called torch directly (transformers' `loss_fct(logits.view(-1, self.num_labels), labels.view(-1))`): the
    argument as the library wrote it, the variable it starts from (`labels`) and where that line is."""
    import ast

    from .operands import user_node

    found = library_caller(records)
    if found is None:
        return None
    where, record = found
    node = user_node(record)
    if not isinstance(node, ast.Call) or position >= len(node.args) or isinstance(node.args[position], ast.Starred):
        return None
    arg = node.args[position]
    base = arg
    while isinstance(base, (ast.Call, ast.Attribute, ast.Subscript)):
        base = base.func.value if isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) else \
            base.value if isinstance(base, (ast.Attribute, ast.Subscript)) else None
    return ast.unparse(arg), (base.id if isinstance(base, ast.Name) else None), where


def layer_builder(records: list[FrameRecord], label: str) -> dict[str, Any]:
    """Whose `__init__` built the layer the user's code reaches as label (`model.fc`): {"layer_builder": "ResNet
    (torchvision)"} when the object that holds it is a library's class, so that a fix does not send the user into
    code they did not write; {"layer_top_level": True} for a layer held by a plain variable (`fc = nn.Linear(...)`)."""
    import sys

    from explainer._inspect import innermost_user_frame, is_user_file, resolve_text

    parent_text, dot, _ = label.rpartition(".")
    record = innermost_user_frame(records)
    if record is None or not label.replace(".", "").replace("_", "").isalnum():
        return {}
    if not dot:
        return {"layer_top_level": True} if label.isidentifier() else {}
    parent = resolve_text(parent_text, record.namespace())
    if parent is MISSING:
        return {}
    module_name = class_text(type(parent), "__module__") or ""
    module = sys.modules.get(module_name)
    table = module.__dict__ if module is not None else {}
    filename = dict.get(table, "__file__") if isinstance(table, dict) else None
    if not isinstance(filename, str) or is_user_file(filename):
        return {}
    return {"layer_builder": f"{class_text(type(parent), '__name__')} ({module_name.split('.')[0]})"}
