"""The common part of jinja2's template language, rendered without importing jinja2 (about 20 ms at a crash).

Rule templates are rendered by a jinja2 ImmutableSandboxedEnvironment with StrictUndefined (templates.py).
Most of those that are more than `{{ name }}` fields use only `{% if %}` / `{% elif %}` / `{% else %}`, the
tests `defined`, `undefined` and `none`, `and` / `or` / `not`, comparisons, `+ - * / // % ~`, inline `x if c
else y`, string literals (with escapes) and number literals, list, tuple and dict literals, a few filters,
subscripts and slices (`x[0]`, `x[-1]`, `x[:3]`, `x[1:]`), calls of a fixed list of str methods
(`x.split('.')`, `x.startswith('a')`, `x.strip().lower()`: template_values.STR_METHODS, positional arguments
only) and `{% set name = expr %}`. This module reads such a template once (a tokenizer and a recursive-descent
parser that mirror jinja2's lexer and parser rule for rule) into Python closures, and renders it with jinja2's
semantics: Python's operators and truthiness, jinja2's filters as jinja2 defines them, and an undefined value
that fails on any use but `is defined` / `is none` / `default`, as StrictUndefined does. There is no eval, no
attribute access, and no call but of those str methods, on values that are str (a method of another value, a
str key a subscript does not find, or one of jinja2's globals such as `namespace` where no fact has its name,
raises LeftToJinja when rendering: jinja2 renders it). A template that needs anything else (`{% for %}`, other
attributes, methods, filters or calls, keyword arguments) is not in the subset (`parse` returns None) and goes
to jinja2, which stays the reference (tests/rules/test_template_subset.py compares the two on every built-in
template).
"""

from __future__ import annotations

import operator
import re
from functools import lru_cache
from typing import Any, Callable

from explainer._lazyre import cached_compile

from .template_values import (FILTERS, MAX_ARGUMENTS, STR_METHODS, UNDEFINED, Assign, Expr, If, UndefinedFact,
                              Undefined, binary, both, chain, conditional, constant, either, global_name, joined,
                              mapping, method_call, sequence, sliced, subscript, write)


class NotInSubset(Exception):
    """The template uses something this module does not render: jinja2 does."""


# Names jinja2 always treats specially (self), and words its parser reads: left to jinja2.
_RESERVED = frozenset({"self", "and", "or", "not", "in", "is", "if", "else", "elif", "endif"})
# jinja2's globals: a fact of the name hides them; without one, jinja2 renders the template.
_GLOBALS = frozenset({"range", "dict", "lipsum", "cycler", "joiner", "namespace"})
# Names that jinja2 reads specially in macros, loops and blocks (none in the subset), not set here.
_NOT_ASSIGNED = _RESERVED | _GLOBALS | {"loop", "super", "caller", "varargs", "kwargs"}
_CONSTANTS = {"true": True, "True": True, "false": False, "False": False, "none": None, "None": None}

# Inside a tag: what jinja2's lexer reads, less what the subset leaves out (number forms other than 12 and
# 1.5); `**` is read so that it is not taken for `* *`.
_TOKEN_RE = cached_compile(r"""
    (?P<space>\s+)
  | (?P<float>\d+\.\d+)
  | (?P<integer>0(?![\d_])|[1-9]\d*(?![\d_]))
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*")
  | (?P<operator>//|\*\*|==|!=|<=|>=|[-+*/%~|(),<>\[\]{}.:=])
""", re.VERBOSE | re.DOTALL)
_TAG_START_RE = cached_compile(r"\{[{%#]")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


# Reading: text, and the tokens of each {{ }} and {% %} tag.

def _tag_tokens(source: str, pos: int, end: str) -> tuple[list[tuple[str, Any]], int]:
    """The tokens of one tag from pos up to its end ("}}" or "%}"), and the position after it."""
    tokens: list[tuple[str, Any]] = []
    open_brackets: list[str] = []
    while True:
        if not open_brackets and source.startswith(end, pos):
            return tokens + [("end", None)], pos + len(end)
        if not open_brackets and (source.startswith("-" + end, pos) or source.startswith("+%}", pos)):
            raise NotInSubset("whitespace control")
        found = _TOKEN_RE.match(source, pos)
        if found is None:
            raise NotInSubset(f"unread text at {pos}")
        pos = found.end()
        kind, text = found.lastgroup, found.group()
        if kind != "space":
            _track_brackets(text if kind == "operator" else "", open_brackets)
            tokens.append(_token(kind, text))


def _track_brackets(text: str, open_brackets: list[str]) -> None:
    if text in _CLOSERS:
        open_brackets.append(_CLOSERS[text])
    elif text in (")", "]", "}"):
        if not open_brackets or open_brackets.pop() != text:
            raise NotInSubset("unbalanced brackets")


def _token(kind: str, text: str) -> tuple[str, Any]:
    if kind == "integer":
        return "value", int(text)
    if kind == "float":
        return "value", float(text)
    if kind == "string" and "\\" in text:  # jinja2's lexer reads escapes as Python's unicode-escape does
        try:
            return "string", text[1:-1].encode("ascii", "backslashreplace").decode("unicode-escape")
        except UnicodeDecodeError:
            raise NotInSubset("a bad escape") from None
    if kind == "string":
        return "string", text[1:-1]
    return kind, text


def _pieces(source: str) -> list[tuple[str, Any]]:
    """("text", str), ("output", tokens) and ("statement", tokens), in order."""
    if "\r" in source:
        raise NotInSubset("carriage return")  # jinja2 rewrites newlines; not worth copying
    pieces: list[tuple[str, Any]] = []
    pos = 0
    while (start := _TAG_START_RE.search(source, pos)) is not None:
        if start.start() > pos:
            pieces.append(("text", source[pos:start.start()]))
        opener = start.group()
        if opener == "{#" or source[start.end():start.end() + 1] in ("-", "+"):
            raise NotInSubset("comment or whitespace control")
        tokens, pos = _tag_tokens(source, start.end(), "}}" if opener == "{{" else "%}")
        pieces.append(("output" if opener == "{{" else "statement", tokens))
    if pos < len(source):
        pieces.append(("text", source[pos:]))
    return pieces


# Expressions: jinja2's parser, method for method (parse_condexpr, parse_or, ... parse_primary).

_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge, "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
_ADD = {"+": operator.add, "-": operator.sub}
_MULTIPLY = {"*": operator.mul, "/": operator.truediv, "//": operator.floordiv, "%": operator.mod}
_UNARY = {"-": operator.neg, "+": operator.pos}
_TESTS = {"defined": lambda value: not isinstance(value, Undefined),
          "undefined": lambda value: isinstance(value, Undefined), "none": lambda value: value is None}
# A test's name followed by one of these would be read by jinja2 as the test's argument.
_TEST_ARGUMENT_STARTS = frozenset({"name", "string", "value", "(", "["})


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]]) -> None:
        self.tokens = tokens
        self.index = 0

    # the token stream

    def peek(self, ahead: int = 0) -> tuple[str, Any]:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def at(self, *values: str) -> bool:
        kind, value = self.peek()
        return kind in ("operator", "name") and value in values

    def take(self, *values: str) -> bool:
        if self.at(*values):
            self.index += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.take(value):
            raise NotInSubset(f"expected {value!r}, found {self.peek()[1]!r}")

    def expect_end(self) -> None:
        if self.peek()[0] != "end":
            raise NotInSubset(f"expected the end of the tag, found {self.peek()[1]!r}")

    def kind_ahead(self) -> str:
        kind, value = self.peek()
        return value if kind == "operator" else kind

    # expressions, loosest binding first

    def tuple_or_expression(self, with_condexpr: bool = True, parenthesised: bool = False) -> Expr:
        """jinja2's parse_tuple: an expression, or a tuple when commas separate several."""
        items: list[Expr] = []
        is_tuple = False
        while True:
            if items:
                self.expect(",")
            if self.peek()[0] == "end" or self.at(")"):
                break
            items.append(self.condexpr() if with_condexpr else self.or_())
            if not self.at(","):
                break
            is_tuple = True
        if not is_tuple and items:
            return items[0]
        if not is_tuple and not parenthesised:
            raise NotInSubset("empty expression")
        return sequence(items, tuple)

    def condexpr(self) -> Expr:
        result = self.or_()
        while self.take("if"):
            test = self.or_()
            if not self.take("else"):
                # jinja2 names the template in the code it generates for a missing else, and its source is
                # the template's name here: a quote in it can break that code. Left to jinja2.
                raise NotInSubset("an inline if without else")
            result = conditional(test, result, self.condexpr())
        return result

    def or_(self) -> Expr:
        result = self.and_()
        while self.take("or"):
            result = either(result, self.and_())
        return result

    def and_(self) -> Expr:
        result = self.not_()
        while self.take("and"):
            result = both(result, self.not_())
        return result

    def not_(self) -> Expr:
        if self.take("not"):
            operand = self.not_()
            return lambda facts: not operand(facts)
        return self.compare()

    def compare(self) -> Expr:
        first = self.math1()
        comparisons: list[tuple[Callable, Expr]] = []
        while True:
            if self.at(*_COMPARE):
                op = self.peek()[1]
                self.index += 1
            elif self.at("not") and self.peek(1) == ("name", "in"):
                self.index += 2
                op = "not in"
            else:
                break
            comparisons.append((_COMPARE[op], self.math1()))
        return chain(first, comparisons) if comparisons else first

    def math1(self) -> Expr:
        result = self.concat()
        while self.at(*_ADD):
            op = _ADD[self.peek()[1]]
            self.index += 1
            result = binary(op, result, self.concat())
        return result

    def concat(self) -> Expr:
        parts = [self.math2()]
        while self.take("~"):
            parts.append(self.math2())
        return parts[0] if len(parts) == 1 else joined(parts)

    def math2(self) -> Expr:
        result = self.unary()
        while self.at(*_MULTIPLY):
            op = _MULTIPLY[self.peek()[1]]
            self.index += 1
            result = binary(op, result, self.unary())
        if self.at("**"):
            raise NotInSubset("**")
        return result

    def unary(self, with_filter: bool = True) -> Expr:
        if self.at(*_UNARY):
            op = _UNARY[self.peek()[1]]
            self.index += 1
            operand = self.unary(False)
            node = lambda facts: op(operand(facts))  # noqa: E731
        else:
            node = self.postfix(self.primary())
        return self.filters_and_tests(node) if with_filter else node

    def postfix(self, node: Expr) -> Expr:
        """jinja2's parse_postfix, for what the subset reads: subscripts, slices, and calls of the str methods."""
        while True:
            if self.take("["):
                node = self.subscript(node)
            elif self.take("."):
                kind, name = self.peek()
                if kind != "name" or name not in STR_METHODS or self.peek(1) != ("operator", "("):
                    raise NotInSubset(f"attribute {name!r}")
                self.index += 2
                node = method_call(node, name, self.comma_separated(")"))
            elif self.at("("):
                raise NotInSubset("call")
            else:
                return node

    def subscript(self, node: Expr) -> Expr:
        """jinja2's parse_subscribed, `[` read: x[i] or a slice x[a:b:c] (a tuple of several is left out)."""
        start = None
        if not self.at(":"):
            start = self.condexpr()
            if not self.at(":"):
                self.expect("]")
                return subscript(node, start)
        self.index += 1
        bounds = [start, self.slice_bound()]
        if self.take(":"):
            bounds.append(self.slice_bound())
        self.expect("]")
        return sliced(node, bounds)

    def slice_bound(self) -> Expr | None:
        return None if self.at(":", "]", ",") else self.condexpr()

    def primary(self) -> Expr:
        kind, value = self.peek()
        self.index += 1
        if kind == "name" and value in _CONSTANTS:
            return constant(_CONSTANTS[value])
        if kind == "name" and value in _GLOBALS:
            return global_name(value)
        if kind == "name" and value not in _RESERVED:
            return lambda facts: facts.get(value, UNDEFINED)
        if kind == "string":
            while self.peek()[0] == "string":  # 'a' 'b' is 'ab', as in Python
                value += self.peek()[1]
                self.index += 1
            return constant(value)
        if kind == "value":
            return constant(value)
        if (kind, value) == ("operator", "("):
            inner = self.tuple_or_expression(parenthesised=True)
            self.expect(")")
            return inner
        if (kind, value) == ("operator", "["):
            return self.list_()
        if (kind, value) == ("operator", "{"):
            return self.dict_()
        raise NotInSubset(f"unexpected {value!r}")

    def dict_(self) -> Expr:
        """jinja2's parse_dict, `{` read: {key: value, ...}, a trailing comma allowed."""
        pairs: list[tuple[Expr, Expr]] = []
        while not self.at("}"):
            if pairs:
                self.expect(",")
                if self.at("}"):
                    break
            key = self.condexpr()
            self.expect(":")
            pairs.append((key, self.condexpr()))
        self.expect("}")
        return mapping(pairs)

    def list_(self) -> Expr:
        return sequence(self.comma_separated("]"), list)

    def comma_separated(self, closer: str) -> list[Expr]:
        """Expressions up to closer (a trailing comma allowed), closer consumed."""
        items: list[Expr] = []
        while not self.at(closer):
            if items:
                self.expect(",")
                if self.at(closer):
                    break
            items.append(self.condexpr())
        self.expect(closer)
        return items

    def filters_and_tests(self, node: Expr) -> Expr:
        while True:
            if self.take("|"):
                node = self.filter_(node)
            elif self.take("is"):
                node = self.test(node)
            elif self.at("("):
                raise NotInSubset("call")
            else:
                return node

    def filter_(self, node: Expr) -> Expr:
        kind, name = self.peek()
        self.index += 1
        if kind != "name" or name not in FILTERS:
            raise NotInSubset(f"filter {name!r}")
        args = self.comma_separated(")") if self.take("(") else []
        if len(args) > MAX_ARGUMENTS.get(name, len(args)):
            raise NotInSubset(f"{name} with {len(args)} arguments")
        function = FILTERS[name]
        return lambda facts: function(node(facts), *(arg(facts) for arg in args))

    def test(self, node: Expr) -> Expr:
        negated = self.take("not")
        kind, name = self.peek()
        self.index += 1
        if kind != "name" or name not in _TESTS:
            raise NotInSubset(f"test {name!r}")
        if self.kind_ahead() in _TEST_ARGUMENT_STARTS and not self.at("else", "or", "and"):
            raise NotInSubset("test argument")
        check = _TESTS[name]
        if negated:
            return lambda facts: not check(node(facts))
        return lambda facts: check(node(facts))


# Statements: text, {{ output }}, {% if %} ... {% elif %} ... {% else %} ... {% endif %}, {% set name = expr %}.

def _set(tokens: list[tuple[str, Any]]) -> Assign:
    kind, name = tokens[1]
    if kind != "name" or name in _NOT_ASSIGNED or name in _CONSTANTS or tokens[2] != ("operator", "="):
        raise NotInSubset("a set other than {% set name = expr %}")
    return Assign(name, _expression(tokens, 3, with_condexpr=True))


def _expression(tokens: list[tuple[str, Any]], start: int, with_condexpr: bool) -> Expr:
    parser = _Parser(tokens)
    parser.index = start
    expr = parser.tuple_or_expression(with_condexpr=with_condexpr)
    parser.expect_end()
    return expr


def _tag_name(tokens: list[tuple[str, Any]]) -> str:
    kind, name = tokens[0]
    if kind != "name":
        raise NotInSubset("a statement without a name")
    return name


def _bare(tokens: list[tuple[str, Any]]) -> None:
    """{% else %} and {% endif %} take nothing after their name."""
    if len(tokens) != 2:
        raise NotInSubset(f"{tokens[0][1]} followed by more")


def _body(pieces: list, index: int, ends: tuple[str, ...]) -> tuple[list, int, list | None]:
    """The nodes from pieces[index] up to a statement named in ends: (nodes, index after it, its tokens)."""
    body: list = []
    while index < len(pieces):
        kind, content = pieces[index]
        index += 1
        if kind == "text":
            body.append(content)
        elif kind == "output":
            body.append(_expression(content, 0, with_condexpr=True))
        elif _tag_name(content) in ends:
            return body, index, content
        elif _tag_name(content) == "if":
            node, index = _if(pieces, index, content)
            body.append(node)
        elif _tag_name(content) == "set":
            body.append(_set(content))
        else:
            raise NotInSubset(f"statement {_tag_name(content)!r}")
    if ends:
        raise NotInSubset("an if without endif")
    return body, index, None


def _if(pieces: list, index: int, tokens: list) -> tuple[If, int]:
    branches = []
    while True:
        test = _expression(tokens, 1, with_condexpr=False)
        body, index, tokens = _body(pieces, index, ("elif", "else", "endif"))
        branches.append((test, body))
        if _tag_name(tokens) != "elif":
            break
    otherwise: list = []
    if _tag_name(tokens) == "else":
        _bare(tokens)
        otherwise, index, tokens = _body(pieces, index, ("endif",))
    _bare(tokens)
    return If(branches, otherwise), index


class SubsetTemplate:
    """A template of the subset, parsed: render(facts) gives what jinja2 renders, or raises what it would."""

    def __init__(self, body: list) -> None:
        self.body = body

    def render(self, facts: dict) -> str:
        """Raises one of RENDER_ERRORS where jinja2 fails, LeftToJinja where only jinja2 knows the result."""
        out: list[str] = []
        write(self.body, dict(facts), out)  # a copy: {% set %} writes into it
        return "".join(out)


# What rendering raises where jinja2 raises UndefinedError, TypeError, ValueError or ArithmeticError.
RENDER_ERRORS = (UndefinedFact, TypeError, ValueError, ArithmeticError)


@lru_cache(maxsize=8192)
def parse(source: str) -> SubsetTemplate | None:
    """The template, read once per process; None when it is not in the subset (jinja2 renders it)."""
    try:
        body, _, _ = _body(_pieces(source), 0, ())
    except NotInSubset:
        return None
    return SubsetTemplate(body)
