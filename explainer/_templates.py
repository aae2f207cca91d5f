"""Rendering rule templates: a jinja2 sandbox, so a rule file can fill in values but never run code."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError


def _plural(count: Any, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


ENVIRONMENT = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
ENVIRONMENT.filters["plural"] = _plural


@lru_cache(maxsize=2048)
def _compile(source: str):
    return ENVIRONMENT.from_string(source)


def render(source: str, facts: dict[str, Any]) -> str | None:
    """The filled-in text, or None when the template needs a fact this diagnosis does not have."""
    try:
        return _compile(source).render(facts).strip()
    except (UndefinedError, SecurityError, TypeError, ValueError, ArithmeticError):
        return None


def render_first(sources: list[str], facts: dict[str, Any]) -> str | None:
    for source in sources:
        text = render(source, facts)
        if text:
            return text
    return None
