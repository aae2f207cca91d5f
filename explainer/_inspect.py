"""Read-only inspection of live frames, tensors and modules.

Nothing here calls user code: no repr() or str() of user objects, no property getters, no
__getattr__, no re-evaluation. Attributes are read from instance dictionaries and nn.Module's own
tables; tensors are described by shape, dtype, device, requires_grad and grad_fn only.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import types
from collections import deque
from functools import lru_cache
from types import FrameType, TracebackType
from typing import Any, Iterator, Mapping

MISSING = object()
MAX_FRAMES = 200
MAX_MODULES = 20_000
MAX_LOCALS = 2_000


# Plain classes, not dataclasses, for the records below: this module is imported at a crash, where making a
# dataclass costs a fraction of a millisecond each (issue 14's crash-time budget).
class FrameRecord:  # it holds a live frame: never repr'd or compared
    """One traceback entry with the positions of the failing instruction."""

    __slots__ = ("frame", "filename", "lineno", "name", "positions")

    def __init__(self, frame: FrameType | None, filename: str, lineno: int, name: str,
                 positions: tuple[int, int, int, int] | None = None) -> None:
        self.frame = frame
        self.filename = filename
        self.lineno = lineno
        self.name = name
        self.positions = positions  # lineno, end_lineno, col, end_col

    @property
    def is_user(self) -> bool:
        return is_user_file(self.filename)

    @property
    def code(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    @property
    def locals(self) -> dict[str, Any]:
        return self.frame.f_locals if self.frame is not None else {}

    @property
    def globals(self) -> dict[str, Any]:
        return self.frame.f_globals if self.frame is not None else {}

    def namespace(self) -> dict[str, Any]:
        """Names as the frame's code sees them: locals over globals (a copy; never the frame's own dict)."""
        merged: dict[str, Any] = {}
        for table in (self.globals, self.locals):
            if isinstance(table, dict) and len(table) <= MAX_LOCALS:
                merged.update(table)
        return merged

    def segment(self) -> str | None:
        """The source text of the failing sub-expression (Python 3.11+ positions), if known."""
        if not self.positions:
            return None
        start, end, col, end_col = self.positions
        if None in (start, end, col, end_col) or end - start > 20:
            return None
        lines = [linecache.getline(self.filename, n) for n in range(start, end + 1)]
        if not all(lines):
            return None
        if start == end:
            return _decode_cols(lines[0], col, end_col)
        parts = [_decode_cols(lines[0], col, None)] + lines[1:-1] + [_decode_cols(lines[-1], 0, end_col)]
        return "".join(parts)


def _decode_cols(line: str, col: int, end_col: int | None) -> str:
    # Column offsets are in UTF-8 bytes.
    raw = line.encode("utf-8")
    return raw[col:end_col].decode("utf-8", "replace")


@lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    # The standard library is where `os` lives; installed packages where `site` put them (sysconfig would
    # say the same, at a few milliseconds of the crash's time to import and expand its schemes).
    dirs = {os.path.dirname(os.path.realpath(os.__file__))}
    try:
        import site

        dirs.update(os.path.realpath(p) for p in site.getsitepackages())
        dirs.add(os.path.realpath(site.getusersitepackages()))
    except (AttributeError, ValueError):  # an old virtualenv's own site module
        import sysconfig

        dirs.update(os.path.realpath(p) for k, p in sysconfig.get_paths().items() if k in ("purelib", "platlib"))
    dirs.add(os.path.dirname(os.path.realpath(__file__)))
    torch = sys.modules.get("torch")
    torch_file = getattr(torch, "__file__", None) if torch is not None else None
    if isinstance(torch_file, str):
        dirs.add(os.path.dirname(os.path.realpath(torch_file)))
    return tuple(sorted(d + os.sep for d in dirs))


@lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """True for the user's own code: not torch, not the standard library, not an installed package."""
    if not filename:
        return False
    if filename.startswith("<"):
        # Notebook cells (<ipython-input-..>) and exec'd code are the user's; frozen stdlib is not.
        return not filename.startswith("<frozen")
    real = os.path.realpath(filename)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not any(real.startswith(d) for d in _library_dirs())


def walk_traceback(tb: TracebackType | None) -> list[FrameRecord]:
    """Outermost first, capped at MAX_FRAMES (keeping the innermost, where the error is)."""
    records = []
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        positions = None
        if hasattr(code, "co_positions") and tb.tb_lasti >= 0:
            try:
                for i, pos in enumerate(code.co_positions()):
                    if i == tb.tb_lasti // 2:
                        positions = pos
                        break
            except (ValueError, TypeError):
                positions = None
        records.append(FrameRecord(frame, code.co_filename, tb.tb_lineno, code.co_name, positions))
        tb = tb.tb_next
    return records[-MAX_FRAMES:]


def innermost_user_frame(records: list[FrameRecord]) -> FrameRecord | None:
    for record in reversed(records):
        if record.is_user:
            return record
    return None


def user_frames(records: list[FrameRecord]) -> list[FrameRecord]:
    return [r for r in records if r.is_user]


def find_local_instance(records: list[FrameRecord], module_name: str, class_name: str) -> tuple[str, Any] | None:
    """(name, value) of the innermost user frame's local that is an instance of torch's module_name.class_name;
    None when that torch module was never imported (nothing is imported here, no user code runs)."""
    module = sys.modules.get(module_name)
    cls = getattr(module, class_name, None) if module is not None else None
    if cls is None:
        return None
    for record in reversed(user_frames(records)):
        local_vars = record.locals
        if not isinstance(local_vars, dict):
            continue
        for name, value in list(local_vars.items())[:MAX_LOCALS]:
            if issubclass(type(value), cls):
                return name, value
    return None


# --- the failing expression -------------------------------------------------------------------

class Operand:  # never repr'd or compared: value is the user's object, repr or == would run their code
    """A sub-expression of the failing line: its source text and, when it is a plain name or
    attribute chain, the live value it refers to (MISSING when it cannot be read safely)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Any = MISSING) -> None:
        self.text = text
        self.value = value


class FailingExpression:
    """The failing line's expression: its kind, the callee and the operands."""

    __slots__ = ("text", "kind", "callee", "operands")

    def __init__(self, text: str, kind: str, callee: Operand | None, operands: list[Operand]) -> None:
        self.text = text
        self.kind = kind  # "call", "binop", "subscript", "other"
        self.callee = callee
        self.operands = operands


def failing_expression(record: FrameRecord) -> FailingExpression | None:
    segment = record.segment()
    if segment is None:
        return None
    try:
        node = ast.parse(segment.strip(), mode="eval").body
    except SyntaxError:
        return None
    text = segment.strip()
    local_vars = record.namespace()
    if isinstance(node, ast.Call):
        args = [_operand(a, local_vars) for a in node.args]
        args += [_operand(k.value, local_vars) for k in node.keywords]
        return FailingExpression(text, "call", _operand(node.func, local_vars), args)
    if isinstance(node, (ast.BinOp, ast.Compare)):
        left = node.left
        rights = [node.right] if isinstance(node, ast.BinOp) else list(node.comparators)
        return FailingExpression(text, "binop", None, [_operand(n, local_vars) for n in [left, *rights]])
    if isinstance(node, ast.Subscript):
        return FailingExpression(text, "subscript", None,
                                 [_operand(node.value, local_vars), _operand(node.slice, local_vars)])
    return FailingExpression(text, "other", None, [])


def _operand(node: ast.AST, local_vars: dict[str, Any]) -> Operand:
    text = ast.unparse(node)
    return Operand(text, resolve(node, local_vars))


def resolve(node: ast.AST, local_vars: dict[str, Any]) -> Any:
    """The value of a Name or a chain of attributes, read without running user code."""
    if isinstance(node, ast.Name):
        try:
            return dict.get(local_vars, node.id, MISSING) if isinstance(local_vars, dict) else MISSING
        except TypeError:
            return MISSING
    if isinstance(node, ast.Attribute):
        base = resolve(node.value, local_vars)
        return MISSING if base is MISSING else safe_getattr(base, node.attr)
    return MISSING


def resolve_text(text: str, local_vars: dict[str, Any]) -> Any:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return MISSING
    return resolve(node, local_vars)


# type's own descriptors (a metaclass's property never runs) and the C-level kinds of `__dict__` slot: what reading
# a class through them runs is CPython's
_TYPE_DICT = type.__dict__["__dict__"]
_TYPE_MRO = type.__dict__["__mro__"]
_BUILTIN_DICT_SLOTS = (type(type.__dict__["__dict__"]), type(types.ModuleType.__dict__["__dict__"]))


def class_table(cls: type) -> Mapping[str, Any]:
    """A class's own namespace (its `__dict__`), read through type's descriptor."""
    try:
        return _TYPE_DICT.__get__(cls, type)
    except (TypeError, AttributeError):
        return {}


def class_mro(cls: type) -> tuple[type, ...]:
    """A class's method resolution order, read through type's descriptor."""
    try:
        mro = _TYPE_MRO.__get__(cls, type)
    except (TypeError, AttributeError):
        return (cls,)
    return mro if isinstance(mro, tuple) else (cls,)


def class_text(cls: type, name: str) -> str | None:
    """A class's `__name__`, `__qualname__` or `__module__` read through type's descriptor; None unless a str."""
    try:
        value = type.__dict__[name].__get__(cls, type)
    except (TypeError, AttributeError, KeyError):
        return None
    return value if type(value) is str else None


def instance_dict(obj: Any) -> dict | None:
    """obj's own attribute table, or None: also where a class of obj defines `__dict__` itself (a property, or any
    descriptor of Python code), since reading it would run that class's code."""
    try:
        for cls in class_mro(type(obj)):
            slot = class_table(cls).get("__dict__")
            if slot is not None:
                if type(slot) not in _BUILTIN_DICT_SLOTS:
                    return None
                break
        table = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    return table if type(table) is dict else None


def safe_getattr(obj: Any, name: str) -> Any:
    """An attribute stored on the instance (or in nn.Module's tables); never a property or __getattr__."""
    inst_dict = instance_dict(obj)
    if inst_dict is None:
        return MISSING
    if name in inst_dict:
        return inst_dict[name]
    if is_module(obj):
        for table in ("_parameters", "_buffers", "_modules"):
            entries = inst_dict.get(table)
            if isinstance(entries, dict) and name in entries:
                return entries[name]
    return MISSING


# --- torch objects ----------------------------------------------------------------------------

def _torch():
    return sys.modules.get("torch")


def is_tensor(obj: Any) -> bool:
    torch = _torch()
    # type(), not isinstance(): isinstance can consult a user-defined __class__ property.
    return torch is not None and issubclass(type(obj), torch.Tensor)


def is_module(obj: Any) -> bool:
    torch = _torch()
    return torch is not None and issubclass(type(obj), torch.nn.Module)


def format_shape(shape: Any) -> str:
    dims = tuple(int(d) for d in shape)
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def tensor_facts(tensor: Any) -> dict[str, Any]:
    """shape, dtype, device, requires_grad and grad_fn: never values.

    Nested (ragged) tensors have no single shape: they get shape None and their rank.
    """
    torch = _torch()
    with torch._C.DisableTorchFunction():
        try:
            shape: list[int] | None = [int(d) for d in torch.Tensor.size(tensor)]
        except (RuntimeError, TypeError, ValueError):
            shape = None
        facts: dict[str, Any] = {
            "shape": shape,
            "dtype": dtype_name(tensor.dtype),
            "device": str(tensor.device),
            "requires_grad": bool(tensor.requires_grad),
        }
        if shape is None:
            facts["ndim"] = int(torch.Tensor.dim(tensor))
        if tensor.layout is not torch.strided:
            facts["layout"] = str(tensor.layout).removeprefix("torch.")
        if tensor.is_nested:
            facts["layout"] = "nested"
        grad_fn = tensor.grad_fn
        if grad_fn is not None:
            facts["grad_fn"] = type(grad_fn).__name__
    if type(tensor) is not torch.Tensor and type(tensor) is not torch.nn.Parameter:
        facts["type"] = type(tensor).__name__
    return facts


def describe_tensor(name: str, tensor: Any, **extra: Any) -> dict[str, Any]:
    facts = tensor_facts(tensor)
    kind = "parameter" if issubclass(type(tensor), _torch().nn.Parameter) else "tensor"
    culprit = {"name": name, "kind": kind, "shape": facts["shape"], "dtype": facts["dtype"],
               "device": facts["device"], "requires_grad": facts["requires_grad"]}
    for optional in ("grad_fn", "layout", "ndim", "type"):
        if optional in facts:
            culprit[optional] = facts[optional]
    culprit.update(extra)
    return culprit


def module_repr(module: Any) -> str:
    """torch's own modules show their configuration (a container its layers' types, attention its sizes), read
    from their tables; a user's class shows only its name."""
    cls = type(module)
    if not cls.__module__.startswith("torch."):
        return f"{cls.__name__}(...)"
    try:
        extra = cls.extra_repr(module)
    except Exception:  # torch's extra_repr on a half-built module
        return f"{cls.__name__}(...)"
    return f"{cls.__name__}({extra or _inner_summary(module)})"


def _inner_summary(module: Any) -> str:
    """What an empty extra_repr (nn.Sequential, nn.MultiheadAttention) leaves out: plain sizes, else the layers."""
    table = instance_dict(module) or {}
    sizes = [f"{key}={table[key]}" for key in ("embed_dim", "num_heads", "batch_first")
             if type(table.get(key)) in (int, bool)]
    kinds = [type(child).__name__ for child in child_modules(module).values()]
    if sizes or not kinds:
        return ", ".join(sizes)
    return f"{len(kinds)} layers: " + ", ".join(kinds[:6]) + (", ..." if len(kinds) > 6 else "")


def describe_module(name: str, module: Any, **extra: Any) -> dict[str, Any]:
    culprit = {"name": name, "kind": "module", "type": type(module).__name__, "repr": module_repr(module)}
    culprit.update(extra)
    return culprit


def child_modules(module: Any) -> dict[str, Any]:
    table = (instance_dict(module) or {}).get("_modules")
    return table if isinstance(table, dict) else {}


def module_path(root: Any, target: Any) -> str | None:
    """Dotted path of target inside root ('' for root itself), walking _modules breadth first."""
    if root is target:
        return ""
    queue: deque[tuple[str, Any]] = deque([("", root)])
    seen = {id(root)}
    visited = 0
    while queue and visited < MAX_MODULES:
        prefix, module = queue.popleft()
        visited += 1
        for name, child in list(child_modules(module).items()):
            if child is None or id(child) in seen:
                continue
            path = f"{prefix}.{name}" if prefix else name
            if child is target:
                return path
            seen.add(id(child))
            queue.append((path, child))
    return None


def module_roots(records: list[FrameRecord]) -> Iterator[tuple[str, Any]]:
    """nn.Module objects named in user frames: locals outermost frame first, then module globals."""
    frames = user_frames(records)
    tables = [r.locals for r in frames] + [r.globals for r in frames]
    seen_tables: set[int] = set()
    for table in tables:
        if not isinstance(table, dict) or id(table) in seen_tables:
            continue
        seen_tables.add(id(table))
        for i, (name, value) in enumerate(list(table.items())):
            if i >= MAX_LOCALS:
                break
            if is_module(value):
                yield name, value


def name_module(module: Any, records: list[FrameRecord]) -> str | None:
    """How the user's code reaches module: 'model.encoder.fc', or 'self.fc' inside forward."""
    best = None
    for root_name, root in module_roots(records):
        path = module_path(root, module)
        if path is None:
            continue
        name = f"{root_name}.{path}" if path else root_name
        if root_name != "self":
            return name
        best = best or name
    return best


def module_frames(records: list[FrameRecord]) -> list[tuple[FrameRecord, Any]]:
    """Frames running an nn.Module method (torch's forward or the user's), innermost last."""
    found = []
    for record in records:
        local_vars = record.locals
        if isinstance(local_vars, dict):
            owner = dict.get(local_vars, "self", None)
            if owner is not None and is_module(owner):
                found.append((record, owner))
    return found


def user_location(records: list[FrameRecord]):
    from ._diagnosis import Location

    record = innermost_user_frame(records)
    if record is None:
        return None
    return Location(cell_name(record.filename), record.lineno, record.code, record.name)


def cell_name(filename: str) -> str:
    """A live notebook cell's file as IPython's own traceback names it ("Cell In[3]"), not its temporary path
    (/tmp/ipykernel_.../123.py); any other file as it is. Only IPython's map of the cells it compiled is read."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return filename
    try:
        shell = ipython.get_ipython()
        name = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # an IPython without the map (before 8.0), or a shell of its own kind
        return filename
    return " ".join(name) if isinstance(name, tuple) and all(isinstance(part, str) for part in name) else filename
