"""Live probes, and the public API for a team rule pack's own.

    from explainer.probes import probe, Evidence, ProbeContext

    @probe("acme_loader_state", provides=("loader_shard", "loader_workers"))
    def loader_state(ctx: ProbeContext) -> Evidence | None:
        ...

A probe reads the failing process and returns Evidence (facts for the rule's templates, culprits,
a location), or None when it has nothing to say. It must never call user code: use the read-only
helpers below (safe_getattr reads an instance's own __dict__, never a property or __getattr__, and
returns MISSING when the attribute is not stored there),
never repr() or str() of user objects. Name a pack's probes after its prefix so they cannot clash.

The built-in probes live in the subpackages, one module per family: ops/ (tensor operations),
layers/ (modules and losses), runtime/ (autograd, devices, memory, data, distributed), environment/
(imports, installed releases, call signatures, None values); readers/ holds
what they share. Rules name the probes they use; an unknown name is a rule-load error. Importing a
probe module is on the crash path, so they keep module-level work small: patterns stay strings,
compiled (and cached) the first time a probe runs. May import: explainer's foundation modules only.
"""

from __future__ import annotations

from typing import Any, Callable

from .._diagnosis import Location
from .._inspect import (MISSING, FrameRecord, describe_module, describe_tensor, failing_expression, format_shape,
                        innermost_user_frame, is_module, is_tensor, module_frames, module_repr, name_module,
                        safe_getattr, tensor_facts, user_frames)


# Plain classes, not dataclasses, for these records: the probe modules are imported at a crash, and making a
# dataclass costs a fraction of a millisecond each (issue 14's crash-time budget). Never repr'd or compared.
class ProbeContext:
    """What a probe reads: the exception, the traceback's records and the facts the message gave."""

    __slots__ = ("exception", "records", "facts")

    def __init__(self, exception: BaseException | None, records: list[FrameRecord], facts: dict[str, Any]) -> None:
        self.exception = exception
        self.records = records
        self.facts = facts  # values read from the message so far


class Evidence:
    """What a probe found: facts for the templates, culprit tensors' metadata, a better location."""

    __slots__ = ("facts", "culprits", "location")

    def __init__(self, facts: dict[str, Any] | None = None, culprits: list[dict[str, Any]] | None = None,
                 location: Location | None = None) -> None:
        self.facts = {} if facts is None else facts
        self.culprits = [] if culprits is None else culprits
        self.location = location


class Probe:
    """A registered probe: its function and the facts it may provide."""

    __slots__ = ("name", "function", "provides", "doc", "live")

    def __init__(self, name: str, function: Callable[[ProbeContext], Evidence | None], provides: tuple[str, ...],
                 doc: str, live: bool = True) -> None:
        self.name = name
        self.function = function
        self.provides = provides
        self.doc = doc
        self.live = live  # False: reads only ctx.facts, so it also runs for pasted messages and logs


PROBES: dict[str, Probe] = {}
_BUILTIN_NAMES: set[str] = set()  # the probes this package registered; any other is a team pack's


def probe(name: str, provides: tuple[str, ...] = (), *, live: bool = True):
    """Register a probe under name; provides lists the facts its templates may use.

    live=False marks a probe that derives facts from the message alone (no frames, no exception).
    """

    def register(function: Callable[[ProbeContext], Evidence | None]):
        existing = PROBES.get(name)
        # The same function registering again (a module re-imported after a failed import) is fine.
        if existing is not None and _origin(existing.function) != _origin(function):
            raise ValueError(f"probe {name!r} is registered twice: in {existing.function.__module__} "
                             f"and in {function.__module__}; rename one")
        PROBES[name] = Probe(name, function, tuple(provides), (function.__doc__ or "").strip(), live)
        if function.__module__.startswith(f"{__name__}."):
            _BUILTIN_NAMES.add(name)
        return function

    return register


def _origin(function: Callable) -> tuple[str, str]:
    return function.__module__, function.__qualname__


class TeamProbeFailure(str):
    """The text of a team pack's probe that raised: the team's bug, not the explainer's, so shown as theirs."""

    __slots__ = ()


def probe_failure(name: str, error: BaseException) -> str:
    """What a probe that raised error is reported as: a built-in one's is the explainer's own bug; a team pack's
    (one registered from outside this package) is a TeamProbeFailure naming the file and line of the probe that
    raised."""
    what = f"{type(error).__name__}: {error}"
    function = PROBES[name].function if name in PROBES else None
    code = getattr(function, "__code__", None)
    if name in _BUILTIN_NAMES or code is None:
        return f"probe {name!r} failed: {what}"
    line = code.co_firstlineno
    frame = error.__traceback__
    while frame is not None:  # the probe file's innermost line on the way to the raise
        if frame.tb_frame.f_code.co_filename == code.co_filename:
            line = frame.tb_lineno
        frame = frame.tb_next
    return TeamProbeFailure(f"the team probe {name!r} ({shown_file(code.co_filename)}:{line}) raised {what}")


def shown_file(path: str) -> str:
    """path relative to the working directory when it is below it (as `explainer rules check` shows files)."""
    import os

    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith(os.pardir) else relative


BUILTIN_FAMILIES = ("ops", "layers", "runtime", "environment")


def load_builtin_probes() -> dict[str, Probe]:
    """Import every built-in probe module (one per family) for its registrations."""
    import importlib
    import pkgutil

    for family in BUILTIN_FAMILIES:
        package = importlib.import_module(f"{__name__}.{family}")
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return PROBES


__all__ = [
    "MISSING", "Evidence", "FrameRecord", "Location", "ProbeContext", "describe_module", "describe_tensor",
    "failing_expression", "format_shape", "innermost_user_frame", "is_module", "is_tensor", "module_frames",
    "module_repr", "name_module", "probe", "safe_getattr", "tensor_facts", "user_frames",
]
