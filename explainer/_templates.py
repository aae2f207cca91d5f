"""Rule templates: a jinja2 sandbox, so a rule file can fill in values but never run code.

Most templates are only `{{ name }}` fields. Those are read and filled without jinja2 (the same
result, since facts are plain data), so a crash pays for importing jinja2 only when a rule uses
more than that.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_LITERAL = r"""(?:'[^'{}]*'|"[^"{}]*"|-?\d+(?:\.\d+)?)"""
_FILTER = rf"\|\s*\w+(?:\(\s*{_LITERAL}(?:\s*,\s*{_LITERAL})*\s*\))?\s*"
_FIELD_RE = re.compile(rf"\{{\{{\s*([A-Za-z_]\w*)\s*(?:{_FILTER})*\}}\}}")
_PLAIN_FIELD_RE = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_JINJA_TOKENS = ("{{", "{%", "{#")


class TemplateProblem(ValueError):
    """A template that does not parse."""


def _plural(count: Any, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


@lru_cache(maxsize=1)
def _environment():
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False,
                                                keep_trailing_newline=False)
    environment.filters["plural"] = _plural
    return environment


@lru_cache(maxsize=8192)
def template_fields(source: str) -> frozenset[str]:
    """The facts a template uses. Raises TemplateProblem if it does not parse."""
    if not any(token in _FIELD_RE.sub("", source) for token in _JINJA_TOKENS):
        return frozenset(found.group(1) for found in _FIELD_RE.finditer(source))
    from jinja2 import TemplateSyntaxError, meta

    try:
        return frozenset(meta.find_undeclared_variables(_environment().parse(source)))
    except TemplateSyntaxError as exc:
        raise TemplateProblem(exc.message or str(exc)) from None


@lru_cache(maxsize=8192)
def _plain_fields(source: str) -> tuple[str, ...] | None:
    """The fields of a template made only of text and {{ name }}, or None."""
    if any(token in _PLAIN_FIELD_RE.sub("", source) for token in _JINJA_TOKENS):
        return None
    return tuple(found.group(1) for found in _PLAIN_FIELD_RE.finditer(source))


@lru_cache(maxsize=2048)
def _compile(source: str):
    return _environment().from_string(source)


def render(source: str, facts: dict[str, Any]) -> str | None:
    """The filled-in text, or None when the template needs a fact this diagnosis does not have."""
    plain = _plain_fields(source)
    if plain is not None:
        if any(name not in facts for name in plain):
            return None
        return _PLAIN_FIELD_RE.sub(lambda found: str(facts[found.group(1)]), source).strip()
    from jinja2 import UndefinedError
    from jinja2.sandbox import SecurityError

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
