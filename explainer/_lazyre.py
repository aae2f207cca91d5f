"""Module-level regular expressions compiled at their first use: at a crash most of them never run, and
compiling them all at import was a tenth of the explainer's own time there."""

from __future__ import annotations

import re
from typing import Any

# What code calls on a pattern: bound once to the instance, so later calls cost what they cost on the
# compiled pattern itself (no __getattr__ in the way).
_BOUND = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern", "flags",
          "groupindex", "groups")


class LazyPattern:
    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # reached only before the first compile, and for attributes outside _BOUND
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(*self._source)
            for attribute in _BOUND:
                setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> LazyPattern:
    """re.compile(pattern, flags), done when the pattern is first used."""
    return LazyPattern(pattern, flags)
