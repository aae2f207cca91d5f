"""Values and operations of the template subset (template_subset.py): jinja2's semantics without jinja2.

A missing fact is UNDEFINED, which fails on every use but `is defined` / `is none` / `default`, as jinja2's
StrictUndefined does; expressions are closures over the facts that apply Python's operators, as jinja2's
compiled templates do; the filters are jinja2 3.1's own (autoescape off), and our `plural`.
"""

from __future__ import annotations

from typing import Any, Callable

Expr = Callable[[dict], Any]


class UndefinedFact(Exception):
    """A missing fact was used (jinja2's UndefinedError under StrictUndefined)."""


def _fail(*args: Any) -> Any:
    raise UndefinedFact()


class Undefined:
    """A missing fact: like jinja2's StrictUndefined, it fails on every use but `is defined`."""

    __slots__ = ()
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _fail
    __pos__ = __neg__ = __call__ = __getitem__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __int__ = __float__ = __complex__ = __pow__ = __rpow__ = _fail
    __iter__ = __str__ = __len__ = __eq__ = __ne__ = __bool__ = __hash__ = __contains__ = _fail

    def __repr__(self) -> str:
        return "Undefined"


UNDEFINED = Undefined()


# What the parsed expressions are: closures over the facts.

def constant(value: Any) -> Expr:
    return lambda facts: value


def sequence(items: list[Expr], kind: type) -> Expr:
    return lambda facts: kind([item(facts) for item in items])


def conditional(test: Expr, then: Expr, otherwise: Expr) -> Expr:
    return lambda facts: then(facts) if test(facts) else otherwise(facts)


def either(left: Expr, right: Expr) -> Expr:
    return lambda facts: left(facts) or right(facts)


def both(left: Expr, right: Expr) -> Expr:
    return lambda facts: left(facts) and right(facts)


def binary(op: Callable, left: Expr, right: Expr) -> Expr:
    return lambda facts: op(left(facts), right(facts))


def joined(parts: list[Expr]) -> Expr:
    return lambda facts: "".join([str(value) for value in [part(facts) for part in parts]])


def chain(first: Expr, comparisons: list[tuple[Callable, Expr]]) -> Expr:
    """a < b < c as Python (and jinja2) reads it: (a < b) and (b < c), b read once."""
    def compare(facts: dict) -> Any:
        left, result = first(facts), True
        for op, right_expr in comparisons:
            right = right_expr(facts)
            result = op(left, right)
            if not result:
                return result
            left = right
        return result
    return compare

# jinja2's filters as jinja2 3.1 defines them (autoescape off), and our own `plural`.

def _soft_str(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _int(value: Any, default: Any = 0, base: Any = 10) -> Any:
    try:
        if isinstance(value, str):
            return int(value, base)
        return int(value)
    except (TypeError, ValueError):
        try:  # "42.23" | int is 42
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def _float(value: Any, default: Any = 0.0) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _default(value: Any, default_value: Any = "", boolean: Any = False) -> Any:
    if isinstance(value, Undefined) or (boolean and not value):
        return default_value
    return value


def _replace(value: Any, old: Any, new: Any, count: Any = None) -> str:
    return str(value).replace(str(old), str(new), -1 if count is None else count)


def _join(value: Any, separator: Any = "") -> str:
    return str(separator).join(map(str, value))


def _first(value: Any) -> Any:
    try:
        return next(iter(value))
    except StopIteration:
        return UNDEFINED


def _round(value: Any, precision: Any = 0) -> Any:
    return round(value, precision)


def plural(count: Any, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


FILTERS: dict[str, Callable] = {
    "int": _int, "float": _float, "round": _round, "default": _default, "string": _soft_str,
    "replace": _replace, "join": _join, "first": _first, "length": len, "count": len, "plural": plural,
    "lower": lambda value: _soft_str(value).lower(), "upper": lambda value: _soft_str(value).upper(),
    "trim": lambda value, chars=None: _soft_str(value).strip(chars),
    "format": lambda value, *args: _soft_str(value) % args,
}


# join's third argument reads attributes, round's second is a method jinja2 checks: left to jinja2.
MAX_ARGUMENTS = {"join": 1, "round": 1}
