"""Values and operations of the template subset (template_subset.py): jinja2's semantics without jinja2.

A missing fact is UNDEFINED, which fails on every use but `is defined` / `is none` / `default`, as jinja2's
StrictUndefined does; expressions are closures over the facts that apply Python's operators, as jinja2's
compiled templates do; the filters are jinja2 3.1's own (autoescape off), and our `plural`. Subscripts and
slices behave as the sandbox's getitem does (an index out of range or of the wrong type is undefined), and
the whitelisted str methods are called only on values that are str. Where the sandbox would do something
the subset does not copy (look for an attribute named by a str key that was not found, call a method of a
value that is neither a str nor a number), rendering raises LeftToJinja and jinja2 renders the template.
"""

from __future__ import annotations

from typing import Any, Callable

from explainer._pycode import assignable_expression, module_expression

Expr = Callable[[dict], Any]


class UndefinedFact(Exception):
    """A missing fact was used (jinja2's UndefinedError under StrictUndefined)."""


class NotText(UndefinedFact):
    """A str method called on a number (undefined in jinja2's sandbox too): the number may be digits read as one."""


class LeftToJinja(Exception):
    """This rendering needs what only jinja2's sandbox does (its attribute lookup): jinja2 renders the template."""


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


def mapping(pairs: list[tuple[Expr, Expr]]) -> Expr:
    return lambda facts: {key(facts): value(facts) for key, value in pairs}


def global_name(name: str) -> Expr:
    """range, namespace ...: a fact of that name, else jinja2's own global (LeftToJinja)."""
    def read(facts: dict) -> Any:
        if name in facts:
            return facts[name]
        raise LeftToJinja(f"jinja2's global {name}")
    return read


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


# Subscripts, slices and str methods, as the sandbox's getitem, compiled slices and getattr + call do.

def subscript(node: Expr, key_expr: Expr) -> Expr:
    def get(facts: dict) -> Any:
        value, key = node(facts), key_expr(facts)
        try:
            return value[key]  # an undefined value (or key of a dict) fails here, as StrictUndefined does
        except (TypeError, LookupError):
            if isinstance(key, str):
                raise LeftToJinja("a str key not found: the sandbox then looks for an attribute") from None
            return UNDEFINED
    return get


def sliced(node: Expr, bounds: list[Expr | None]) -> Expr:
    """x[a:b:c]: jinja2 compiles a slice to Python's (no getitem), so a wrong type fails."""
    return lambda facts: node(facts)[slice(*(None if bound is None else bound(facts) for bound in bounds))]


# What a template may call on a str: methods that only read it. (format is not here: the sandbox checks it.)
STR_METHODS: dict[str, Callable] = {name: getattr(str, name) for name in (
    "split", "rsplit", "splitlines", "partition", "rpartition", "replace", "strip", "lstrip", "rstrip",
    "count", "find", "rfind", "startswith", "endswith", "upper", "lower", "title", "capitalize",
    "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isidentifier")}
# Values that have none of those methods: the sandbox's getattr gives undefined, and calling it fails.
_WITHOUT_METHODS = (int, float, bool, type(None))


def method_call(node: Expr, name: str, args: list[Expr]) -> Expr:
    method = STR_METHODS[name]

    def call(facts: dict) -> Any:
        value = node(facts)
        if type(value) is str:  # noqa: E721 (a subclass of str may override the method)
            return method(value, *[arg(facts) for arg in args])
        if type(value) is int:
            raise NotText()
        if isinstance(value, Undefined) or type(value) in _WITHOUT_METHODS:
            raise UndefinedFact()
        raise LeftToJinja(f"{name} of a {type(value).__name__}")  # list.count, a dict's key ...
    return call


# Statements of a parsed template, and how they render.

class If:
    def __init__(self, branches: list[tuple[Expr, list]], otherwise: list) -> None:
        self.branches = branches
        self.otherwise = otherwise

    def chosen(self, facts: dict) -> list:
        for test, body in self.branches:
            if test(facts):
                return body
        return self.otherwise


class Assign:
    """{% set name = expr %}: later reads of name, in this template, see the value (as jinja2's do: an if
    opens no scope of its own)."""

    def __init__(self, name: str, value: Expr) -> None:
        self.name = name
        self.value = value


def write(body: list, facts: dict, out: list[str]) -> None:
    for node in body:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, If):
            write(node.chosen(facts), facts, out)
        elif isinstance(node, Assign):
            facts[node.name] = node.value(facts)
        else:
            out.append(str(node(facts)))


# jinja2's filters as jinja2 3.1 defines them (autoescape off), and our own `plural`, `pyexpr` (a module path as code) and
# `pytarget` (the same as an assignment's target).

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
    "pyexpr": module_expression, "pytarget": assignable_expression,
    "lower": lambda value: _soft_str(value).lower(), "upper": lambda value: _soft_str(value).upper(),
    "trim": lambda value, chars=None: _soft_str(value).strip(chars),
    "format": lambda value, *args: _soft_str(value) % args,
}


# join's third argument reads attributes, round's second is a method jinja2 checks: left to jinja2.
MAX_ARGUMENTS = {"join": 1, "round": 1}
