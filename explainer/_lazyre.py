"""The explainer's own regular expressions (the stdlib `re` ones, not the rules'), built cheaply.

Compiling them was a tenth of the explainer's own time at a crash and on a log: most are compiled at their first use
(`lazy_compile`), and each is built from the code `re`'s parser made for it in an earlier process (the arguments `re`
gives its engine, `_sre.compile`), kept in a cache file per Python build and written at exit when a pattern was new.
The pattern objects are the same either way; without the cache (or on a build whose code differs) `re.compile` does
the work."""

from __future__ import annotations

import re
import sys
import threading
from contextlib import contextmanager
from re import _compiler
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from pathlib import Path

# What code calls on a pattern: bound once to the instance, so later calls cost what they cost on the
# compiled pattern itself (no __getattr__ in the way).
_BOUND = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern", "flags",
          "groupindex", "groups")

_engine = _compiler._sre
_codes: dict[tuple[str, int], tuple] | None = None  # (pattern, flags) -> _sre.compile's arguments
_added = False  # a pattern this process compiled that the cache did not hold: written at exit
_lock = threading.Lock()


def cached_compile(pattern: str, flags: int = 0) -> re.Pattern:
    """re.compile(pattern, flags), from the code an earlier process kept where there is one."""
    global _added
    key = (pattern, int(flags))
    codes = _load_codes()
    args = codes.get(key)
    if args is not None:
        try:
            return _engine.compile(*args)
        except Exception:  # not this engine's code after all: compiled again below
            pass
    compiled, args = _recorded_compile(pattern, flags)
    if args is not None:
        if not _added:
            import atexit

            atexit.register(_save_codes)
        codes[key], _added = args, True
    return compiled


@contextmanager
def engine_calls(owner: Any, attribute: str) -> Iterator[list[tuple]]:
    """The arguments of every `compile` call made through `owner.<attribute>` (a regex engine: re's `_sre`, regex's
    `_regex`) inside the block: each pattern's code as its parser made it, in the engine's own layout. One swap at a
    time; another thread's compile meanwhile goes to the same engine, and is noted too."""
    engine = getattr(owner, attribute)
    calls: list[tuple] = []

    class _Recorder:
        def __getattr__(self, name: str) -> Any:
            return getattr(engine, name)

        @staticmethod
        def compile(*args: Any) -> Any:
            calls.append(args)
            return engine.compile(*args)

    with _lock:
        setattr(owner, attribute, _Recorder())
        try:
            yield calls
        finally:
            setattr(owner, attribute, engine)


def _recorded_compile(pattern: str, flags: int) -> tuple[re.Pattern, tuple | None]:
    """re.compile's work, with the arguments it gives the engine (None where the layout is not the one this module
    knows)."""
    with engine_calls(_compiler, "_sre") as calls:
        compiled = _compiler.compile(pattern, flags)
    seen = [args for args in calls if args and args[0] == pattern]
    if len(seen) != 1 or len(seen[0]) != 6:
        return compiled, None
    source, all_flags, code, groups, groupindex, indexgroup = seen[0]
    return compiled, (source, int(all_flags), [int(op) for op in code], int(groups), dict(groupindex),
                      tuple(indexgroup))


def _cache_path() -> Path | None:
    from explainer._cache import cache_file

    return cache_file("re-code", f"{sys.version}|{_engine.MAGIC}|{_engine.CODESIZE}")


def _load_codes() -> dict[tuple[str, int], tuple]:
    global _codes
    if _codes is None:
        from explainer._cache import load_marshal

        try:
            loaded = load_marshal(_cache_path())
        except Exception:
            loaded = None
        _codes = loaded if isinstance(loaded, dict) else {}
    return _codes


def _save_codes() -> None:
    try:
        from explainer._cache import save_marshal

        save_marshal(_cache_path(), _codes)
    except Exception:
        pass  # a cache that cannot be written is built again next time


class LazyPattern:
    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # reached only before the first compile, and for attributes outside _BOUND
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = cached_compile(*self._source)
            for attribute in _BOUND:
                setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> LazyPattern:
    """re.compile(pattern, flags), done when the pattern is first used."""
    return LazyPattern(pattern, flags)
