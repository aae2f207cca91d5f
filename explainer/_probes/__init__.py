"""Live probes: small named functions that read the failing process and return evidence.

A probe receives a ProbeContext and returns Evidence, or None when it has nothing to say. Rules
name the probes they use; an unknown name is a rule-load error. A probe never calls user code.

Importing every probe module is on the crash path, so they keep module-level work small: patterns
stay strings, compiled by `re` (and cached) the first time a probe runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .._diagnosis import Location
from .._inspect import FrameRecord


@dataclass
class ProbeContext:
    exception: BaseException | None
    records: list[FrameRecord]
    facts: dict[str, Any]  # values read from the message so far


@dataclass
class Evidence:
    facts: dict[str, Any] = field(default_factory=dict)
    culprits: list[dict[str, Any]] = field(default_factory=list)
    location: Location | None = None


@dataclass(frozen=True)
class Probe:
    name: str
    function: Callable[[ProbeContext], Evidence | None]
    provides: tuple[str, ...]
    doc: str
    live: bool = True  # False: reads only ctx.facts, so it also runs for pasted messages and logs


PROBES: dict[str, Probe] = {}


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
        return function

    return register


def _origin(function: Callable) -> tuple[str, str]:
    return function.__module__, function.__qualname__


def load_builtin_probes() -> dict[str, Probe]:
    """Import every module of this package (one per family) for its registrations."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return PROBES
