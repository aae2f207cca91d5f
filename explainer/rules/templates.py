"""Rule templates: a jinja2 sandbox, so a rule file can fill in values but never run code.

Most templates are only `{{ name }}` fields (some with our `plural` filter). Those are read and
filled without jinja2 (the same result, since facts are plain data). Most others use only conditions,
comparisons, literals (dicts included), a few filters, subscripts and slices, read-only str methods
(`.split()`, `.startswith()` ...) and `{% set %}`: template_subset.py renders those without jinja2, with
jinja2's results. A crash pays for importing jinja2 (about 20 ms) only when a rule uses more than that
(`{% for %}`, `.get()`, the `map` filter, another attribute or call), or when a value makes the subset hand
a rendering over.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from explainer._pycode import assignable_expression, module_expression
from explainer._lazyre import cached_compile

from .template_values import plural as _plural

_LITERAL = r"""(?:'[^'{}]*'|"[^"{}]*"|-?\d+(?:\.\d+)?)"""
_FILTER = rf"\|\s*\w+(?:\(\s*{_LITERAL}(?:\s*,\s*{_LITERAL})*\s*\))?\s*"
_FIELD = rf"\{{\{{\s*([A-Za-z_]\w*)\s*(?:{_FILTER})*\}}\}}"  # compiled when rules are validated, not at a crash
# {{ name }}, or {{ name | plural('word') }} (the one filter of our own): filled in without jinja2.
_PLAIN_FIELD_RE = cached_compile(r"""\{\{\s*([A-Za-z_]\w*)\s*(?:\|\s*plural\(\s*(?:'([^'\\{}]*)'|"([^"\\{}]*)")\s*\)\s*)?\}\}""")
_JINJA_TOKENS = ("{{", "{%", "{#")


class TemplateProblem(ValueError):
    """A template that does not parse."""


# Part of the name of the folder compiled templates are kept in: change it with the environment below.
COMPILED_VERSION = 1


@lru_cache(maxsize=1)
def _environment():
    from jinja2 import BaseLoader, StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class SourceLoader(BaseLoader):
        """A template's name is its source: so that get_template can use the compiled-template cache."""

        def get_source(self, environment, template):
            return template, None, lambda: True

    environment = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False,
                                                keep_trailing_newline=False, loader=SourceLoader(),
                                                bytecode_cache=_compiled_cache(), cache_size=2048)
    environment.filters["plural"] = _plural
    environment.filters["pyexpr"] = module_expression
    environment.filters["pytarget"] = assignable_expression
    return environment


def _compiled_cache():
    """Compiled templates kept across processes (jinja2's own bytecode cache, one file per template, in
    a folder named by the jinja2 version and this environment's), or None: compiling costs a few ms."""
    from jinja2 import FileSystemBytecodeCache, __version__

    from explainer._cache import cache_dir

    base = cache_dir()
    if base is None:
        return None
    folder = base / f"templates-v{COMPILED_VERSION}-jinja2-{__version__}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return FileSystemBytecodeCache(str(folder))


@lru_cache(maxsize=8192)
def template_fields(source: str) -> frozenset[str]:
    """The facts a template uses. Raises TemplateProblem if it does not parse."""
    if not any(token in re.sub(_FIELD, "", source) for token in _JINJA_TOKENS):
        return frozenset(found.group(1) for found in re.finditer(_FIELD, source))
    used = _analysed(source)[0]
    if isinstance(used, str):
        raise TemplateProblem(used)
    return used


@lru_cache(maxsize=8192)
def _analysed(source: str) -> tuple[frozenset[str] | str, frozenset[str], str | None]:
    """One parse of a template read three ways (`rules check` used to parse each template four times): (the names it
    uses, or why jinja2 cannot tell them, those it reads outside a guard, the unknown filter or test it names, as compile_problem words it, or None).
    Raises TemplateProblem if it does not parse. find_undeclared_variables reads the tree last: its code generator
    folds constant expressions in place (never one holding a name, an unknown filter or an unknown test)."""
    from jinja2 import TemplateSyntaxError, meta, nodes

    environment = _environment()
    try:
        tree = environment.parse(source)
    except TemplateSyntaxError as exc:
        raise TemplateProblem(exc.message or str(exc)) from None
    unknown = next((f"no {kind} named {node.name!r}" for node in tree.find_all((nodes.Filter, nodes.Test))
                    for kind, known in [("filter", environment.filters) if isinstance(node, nodes.Filter)
                                        else ("test", environment.tests)] if node.name not in known), None)
    unguarded = frozenset(_unguarded(tree, frozenset(), nodes))
    try:
        return frozenset(meta.find_undeclared_variables(tree)), unguarded, unknown
    except TemplateSyntaxError as exc:  # an unknown filter outside a condition: template_fields raises it
        return exc.message or str(exc), unguarded, unknown


@lru_cache(maxsize=2048)
def required_fields(source: str) -> frozenset[str]:
    """The facts a template cannot render without: those it uses (template_fields) less those it reads only under a
    guard (`{% if x is defined %}...{% endif %}`, `x if x is defined else y`, `x | default(...)`, `x is defined`), the
    names a `{% set %}` or a loop declares being no facts at all. Raises TemplateProblem if it does not parse."""
    used = template_fields(source)
    if not any(token in source for token in _JINJA_TOKENS):
        return used
    return used & _analysed(source)[1]


def _unguarded(node, guarded: frozenset[str], nodes) -> set[str]:
    """The names node reads outside a guard that tests them."""
    if isinstance(node, nodes.Name):
        return set() if node.name in guarded or node.ctx != "load" else {node.name}
    if isinstance(node, nodes.Test) and node.name in ("defined", "undefined") and isinstance(node.node, nodes.Name):
        return set()
    if isinstance(node, nodes.Filter) and node.name == "default" and isinstance(node.node, nodes.Name):
        return set().union(*(_unguarded(arg, guarded, nodes) for arg in node.args))
    if isinstance(node, (nodes.If, nodes.CondExpr)):
        test = node.test
        defined = _tested_defined(test, nodes)
        names = _unguarded(test, guarded, nodes)
        if isinstance(node, nodes.If):
            body, other = node.body, [*node.elif_, *node.else_]
        else:
            body, other = [node.expr1], [node.expr2] if node.expr2 is not None else []
        for child in body:
            names |= _unguarded(child, guarded | defined, nodes)
        for child in other:
            names |= _unguarded(child, guarded, nodes)
        return names
    return set().union(*(_unguarded(child, guarded, nodes) for child in node.iter_child_nodes()))


def _tested_defined(test, nodes) -> frozenset[str]:
    """The names a condition requires to be defined where it holds: `x is defined`, joined with `and`."""
    if isinstance(test, nodes.Test) and test.name == "defined" and isinstance(test.node, nodes.Name):
        return frozenset({test.node.name})
    if isinstance(test, nodes.And):
        return _tested_defined(test.left, nodes) | _tested_defined(test.right, nodes)
    return frozenset()


@lru_cache(maxsize=8192)
def _plain_fields(source: str) -> tuple[str, ...] | None:
    """The fields of a template made only of text and {{ name }} (or {{ name | plural('word') }}), or None."""
    if any(token in _PLAIN_FIELD_RE.sub("", source) for token in _JINJA_TOKENS):
        return None
    return tuple(found.group(1) for found in _PLAIN_FIELD_RE.finditer(source))


def _fill(found: re.Match, facts: dict[str, Any]) -> str:
    value = facts[found.group(1)]
    word = found.group(2) if found.group(2) is not None else found.group(3)
    return str(value) if word is None else _plural(value, word)


def _compile(source: str):
    return _environment().get_template(source)  # compiled once per process (the environment's cache)


def compile_problem(source: str) -> str | None:
    """What jinja2 raises compiling a template that parses (`rules check`): an unknown filter or test, or Python
    it cannot compile, as an inline `x if cond` without an else makes of a template with a quote in it (jinja2
    writes the template's name, here its source, into the code it generates); None when it compiles."""
    if _plain_fields(source) is not None:
        return None
    from jinja2 import TemplateError

    try:
        _compile(source)
    except TemplateError as exc:
        return exc.message or str(exc)
    except SyntaxError as exc:
        hint = " (give each inline `x if cond` an else: `x if cond else ''`)" if " if " in source else ""
        return f"jinja2 cannot compile it: {exc.msg}{hint}"
    return _analysed(source)[2]  # jinja2 leaves an unknown filter or test under a condition to fail when it renders


def render(source: str, facts: dict[str, Any]) -> str | None:
    """The filled-in text, or None when the template needs a fact this diagnosis does not have."""
    text, numbers_in_the_way = _render_once(source, facts)
    if text is None and numbers_in_the_way:
        text = next(filter(None, (_render_once(source, as_text)[0] for as_text in numbers_as_text(facts))), None)
    return text


def numbers_as_text(facts: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """facts with their ints read as digits: all of them, then each alone. The engine reads a group of digits as a
    number (a count compares as one), where a template may read the same group as text (`'ckpt' in name`,
    `size.split()`) for a message whose value happened to be all digits."""
    numbers = [name for name, value in facts.items() if type(value) is int]
    for names in ([numbers] if numbers else []) + ([[name] for name in numbers] if len(numbers) > 1 else []):
        yield {**facts, **{name: str(facts[name]) for name in names}}


def _render_once(source: str, facts: dict[str, Any]) -> tuple[str | None, bool]:
    """(the text or None, whether it failed otherwise than for want of a fact: a number may have been read as text)."""
    plain = _plain_fields(source)
    if plain is not None:
        if any(name not in facts for name in plain):
            return None, False
        return _PLAIN_FIELD_RE.sub(lambda found: _fill(found, facts), source).strip(), False
    from .template_subset import RENDER_ERRORS, parse  # imported when a template needs it (about 1 ms)
    from .template_values import LeftToJinja, NotText, UndefinedFact

    subset = parse(source)
    if subset is not None:
        try:
            return subset.render(facts).strip(), False
        except UndefinedFact as missing:
            return None, isinstance(missing, NotText)
        except RENDER_ERRORS:
            return None, True
        except LeftToJinja:  # a case only jinja2's sandbox knows (a method of a list, a str key not found)
            pass
    from jinja2 import TemplateError, UndefinedError

    try:
        return _compile(source).render(facts).strip(), False
    except UndefinedError as undefined:
        return None, "is undefined" not in str(undefined)
    except (TemplateError, TypeError, ValueError, ArithmeticError):  # (sandboxed, unknown filter ...)
        return None, True


def render_first(sources: list[str], facts: dict[str, Any]) -> str | None:
    for source in sources:
        text = render(source, facts)
        if text:
            return text
    return None


def render_failure(source: str, facts: dict[str, Any]) -> str | None:
    """What rendering source with facts raises although every fact it needs is known ("ZeroDivisionError: division by
    zero", "UndefinedError: 'int object' has no attribute 'foo'"): the template's own bug, where render only gives
    None; None when it renders, or when it lacks a fact (the ordinary reason a template is passed over). A template
    that renders once its numbers are read as text (see render) has no bug."""
    problem = _failure_once(source, facts)
    if problem is not None and any(_failure_once(source, as_text) is None for as_text in numbers_as_text(facts)):
        return None
    return problem


def _failure_once(source: str, facts: dict[str, Any]) -> str | None:
    try:
        if not required_fields(source) <= facts.keys():
            return None
        _compile(source).render(facts)
    except Exception as error:  # noqa: BLE001 - whatever jinja2 or a filter raises is the template's to report
        return f"{type(error).__name__}: {error}"
    return None


def summary_failure(sources: list[str], facts: dict[str, Any]) -> str | None:
    """Why no summary template rendered, where one failed with every fact it needs known: "ZeroDivisionError in
    summary 1: division by zero" (numbered from 1, as `rules test` numbers examples); None otherwise."""
    for number, source in enumerate(sources, 1):
        if (failure := render_failure(source, facts)) is not None:
            kind, _, detail = failure.partition(": ")
            return f"{kind} in summary {number}: {detail}" if detail else f"{kind} in summary {number}"
    return None
