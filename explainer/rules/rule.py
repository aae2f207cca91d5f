"""Loading and validating rule files: one Markdown file per rule, YAML front matter plus runbook text."""

from __future__ import annotations

import marshal
import os
import re
from pathlib import Path
from typing import Any, NamedTuple, Sequence

from explainer._cache import NO_CACHE, RuleCache
from explainer._diagnosis import CATEGORIES
from explainer._errors import RuleError
from explainer._lazyre import lazy_compile

from .engine import compile_pattern
from .prefilter import IGNORE_CASE, gates, required_runs, text_may_match  # noqa: F401 (this module's API too)
from .templates import TemplateProblem, required_fields, template_fields

ID_RE = lazy_compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
FRONT_MATTER_RE = lazy_compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n?(.*)\Z", re.S)
KNOWN_FIELDS = {
    "id", "kind", "category", "title", "priority", "patterns", "summary", "fixes", "probes",
    "examples", "counter_examples", "fixture", "related", "tags", "facts", "context", "joins", "code",
    "code_gates", "requires",
}
# "error" rules match exception messages; "signal" rules are raised by the training monitor and
# curve analysis from measured facts, so they have no patterns.
# error: a PyTorch failure; signal: raised from training measurements; foreign: a message printed by
# another framework, or a traceback a library caught and logged (explained as not a PyTorch failure, never matched
# as one).
KINDS = ("error", "signal", "foreign")
# Facts every diagnosis has, whatever the pattern: usable in any template.
COMMON_FACTS = frozenset({"error_type", "message"})


class StepAside(Exception):
    """A matched rule that does not answer this error (its `requires` facts were not found, or its text failed to
    render: failure), so that the next rule does."""

    def __init__(self, rule_id: str, failure: str | None = None) -> None:
        super().__init__(rule_id)
        self.rule_id, self.failure = rule_id, failure


class Example(NamedTuple):  # a named tuple: made at import far faster than a dataclass (the crash-time budget)
    """A real message a rule claims (or, as a counter-example, must not) and where it came from."""

    message: str
    source: str
    line: int | None = None


class Rule:  # a plain class, not a dataclass: made at every crash's import (a dataclass costs ~1 ms here)
    """A validated rule. Patterns compile on first use; `literals` lets matching skip a pattern
    whose required text is absent without compiling it. Never compared, and no repr: it would print every
    field of every example."""

    def __init__(self, *, id: str, category: str, title: str, pattern_sources: list[str], groups: set[str],
                 summary: list[str], fixes: list[tuple[str, ...]], probes: list[str], examples: list[Example],
                 counter_examples: list[Example], body: str, file: str, priority: int = 0, fixture: str | None = None,
                 related: Sequence[str] = (), tags: Sequence[str] = (), pack: str = "builtin", line: int = 1,
                 kind: str = "error", facts: Sequence[str] = (), literals: Sequence[list[list[str]] | None] = (),
                 context_sources: Sequence[str] = (), code_sources: Sequence[str] = (),
                 code_gates: Sequence[int] = (), joins: Sequence[str] = (), requires: Sequence[str] = (),
                 _compiled: list[Any] | None = None) -> None:
        self.id, self.category, self.title = id, category, title
        self.pattern_sources, self.groups = pattern_sources, groups
        self.summary = summary
        self.fixes = fixes  # each fix: alternative templates, the first that can be filled is shown
        self.probes, self.examples, self.counter_examples = probes, examples, counter_examples
        self.body, self.file, self.priority, self.fixture = body, file, priority, fixture
        self.related, self.tags, self.pack, self.line, self.kind = list(related), list(tags), pack, line, kind
        self.facts = list(facts)
        self.literals = list(literals) or [required_runs(source) for source in pattern_sources]
        # per pattern, one key per alternative of its literals: what RuleBase looks up for all rules at once
        self.gates = [gates(required) for required in self.literals]
        # patterns for the lines a log printed just before the error: values its own text leaves out
        self.context_sources = list(context_sources)
        # patterns one of which the raising frame's code line must match for the rule to answer (`B, H, Q, KV = mask.shape`)
        self.code_sources = list(code_sources)
        # the (zero-based) patterns the code signs gate; empty: every pattern. An ungated pattern answers without a sign
        # (the signs' groups are then facts where the code line has one)
        self.code_gates = list(code_gates)
        # rule ids (globs) of the errors this record is part of when printed next to one (anomaly mode's warning)
        self.joins = list(joins)
        # facts the rule answers only with (a team probe's, where it found the team's object): else it steps aside
        self.requires = list(requires)
        # each pattern's code as regex's parser made it (engine.codes_of), kept in the folder index: built without the parser
        self.pattern_codes: dict[str, tuple] = {}
        self._compiled = _compiled

    def __getattr__(self, name: str) -> Any:
        """Only for a field not set yet: a rule read back from a folder index has its match fields, and
        reads the others from its marshalled details on first use (a crash, for the rule that matched)."""
        details = self.__dict__.pop("_details", None)
        if details is None:
            raise AttributeError(name)
        values = dict(zip(DETAIL_FIELDS, marshal.loads(details)))
        for key in ("examples", "counter_examples"):
            values[key] = [Example(*item) for item in values[key]]
        values["groups"] = set(values["groups"])
        self.__dict__.update(values)
        return getattr(self, name)

    @property
    def patterns(self) -> list[Any]:
        return [self.pattern(index) for index in range(len(self.pattern_sources))]

    def pattern(self, index: int) -> Any:
        """One compiled pattern: compiled when first needed, since compiling costs more than matching."""
        if self._compiled is None:
            self._compiled = [None] * len(self.pattern_sources)
        compiled = self._compiled[index]
        if compiled is None:
            compiled = self._compiled[index] = self.compiled(self.pattern_sources[index])
        return compiled

    def compiled(self, source: str) -> Any:
        """One of the rule's patterns, context patterns or code signs compiled, from the code the folder index kept for
        it where it has one (compile_pattern keeps it for the process)."""
        return compile_pattern(source, self.pattern_codes.get(source))

    @property
    def templates(self) -> list[str]:
        """Every template of the rule: the summaries, then each fix's alternatives."""
        return [*self.summary, *(source for alternatives in self.fixes for source in alternatives)]

    @property
    def group_names(self) -> set[str]:
        return set(self.groups)


# A rule in the folder index: its id, order and gates, read back for every rule at every crash, then the
# other fields (required text, patterns, templates, examples, runbook text) marshalled once more, read only
# for a rule whose gate is in the message (or that is used otherwise).
DATA_FIELDS = ("id", "category", "title", "pattern_sources", "groups", "summary", "fixes", "probes", "examples",
               "counter_examples", "body", "file", "priority", "fixture", "related", "tags", "pack", "line", "kind",
               "facts", "literals", "gates", "context_sources", "code_sources", "code_gates", "joins", "requires", "pattern_codes")
MATCH_FIELDS = ("id", "category", "priority", "pack", "kind", "gates")
DETAIL_FIELDS = tuple(name for name in DATA_FIELDS if name not in MATCH_FIELDS)


def rule_to_data(rule: Rule) -> tuple:
    """A validated rule as plain data (marshal-able), for the folder index (_rulecache): its match
    fields, then its detail fields as one marshalled bytes object."""
    details = [getattr(rule, name) for name in DETAIL_FIELDS]
    for index, name in enumerate(DETAIL_FIELDS):
        if name in ("examples", "counter_examples"):
            details[index] = [(e.message, e.source, e.line) for e in details[index]]
        elif name == "groups":
            details[index] = sorted(rule.groups)
    return (*[getattr(rule, name) for name in MATCH_FIELDS], marshal.dumps(tuple(details)))


def rules_from_index(items: list[tuple], details: memoryview) -> list[Rule]:
    """The rules of a folder index (load_index): each with its match fields, its details a slice of the details
    file, unmarshalled on first use. A plain loop over __new__ and one dict per rule: this runs at every crash."""
    width, rules, new = len(MATCH_FIELDS), [], Rule.__new__
    for item in items:
        rule = new(Rule)
        values = dict(zip(MATCH_FIELDS, item))
        values["_compiled"] = None
        values["_details"] = details[item[width]:item[width] + item[width + 1]]
        rule.__dict__ = values
        rules.append(rule)
    return rules


def load_rule_file(path: Path, *, pack: str = "builtin", known_probes: dict[str, Any] | None = None,
                   display_root: Path | None = None, cache: RuleCache = NO_CACHE, check_templates: bool = True) -> Rule:
    """Parse and validate one rule file; raises RuleError naming the file, line, rule and field.

    With a cache, a file seen unchanged before is not parsed again, its patterns compile on first
    use and its templates are not re-read; every check on its fields still runs (its templates' only with
    check_templates).
    """
    shown = _display(path, display_root)
    key = cache.file_key(path)
    known = cache.entry(key)
    if known is not None:
        data, lines, body = known["data"], known["lines"], known["body"]
    else:
        data, lines, body = _read_rule_file(path, shown)
    rule = _build_rule(data, body, shown, lines, pack, known_probes, cache,
                       set(known["groups"]) if known else None, known.get("literals") if known else None,
                       check_templates)
    cache.remember_file(key, {"data": data, "lines": lines, "body": body, "groups": sorted(rule.groups),
                              "literals": rule.literals})
    return rule


def _read_rule_file(path: Path, shown: str) -> tuple[dict, dict[str, int], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(shown, f"cannot read the file: {exc}") from None
    match = FRONT_MATTER_RE.match(text)
    if not match:
        raise RuleError(shown, "no YAML front matter", line=1,
                        hint="start the file with a line '---', the rule's fields, then another '---'")
    header, body = match.group(1), match.group(2)
    import yaml

    try:
        data, lines = parse_yaml_with_lines(header)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(shown, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                        line=(mark.line + 2) if mark else None) from None
    if not isinstance(data, dict):
        raise RuleError(shown, "the front matter must be a mapping of fields", line=2)
    # +1 for the opening '---' line, +1 because YAML marks count from zero.
    return data, {k: v + 2 for k, v in lines.items()}, body


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        base = os.path.abspath(root) + os.sep
        full = os.path.abspath(path)
        if full.startswith(base):
            return full[len(base):]
    return str(path)


def parse_yaml_with_lines(header: str) -> tuple[Any, dict[str, int]]:
    """YAML's data and the (zero-based) line of each field, from one safe parse: rule front matter,
    pack files. PyYAML is imported here, not when the module loads: cached rules are not parsed again."""
    import yaml

    # libyaml when PyYAML was built with it: rule loading happens at the moment of a crash.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(header)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, (_field_lines(node) if node is not None else {})


def _field_lines(node: Any, prefix: str = "") -> dict[str, int]:
    """Map 'field', 'field[2]' and 'field[2].message' to the zero-based line where each starts."""
    import yaml

    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = f"{prefix}.{key.value}" if prefix else str(key.value)
            lines[name] = key.start_mark.line
            lines.update(_field_lines(value, name))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            name = f"{prefix}[{i}]"
            lines[name] = item.start_mark.line
            lines.update(_field_lines(item, name))
    return lines


def _build_rule(data: dict, body: str, file: str, lines: dict[str, int], pack: str,
                known_probes: dict[str, Any] | None, cache: RuleCache, cached_groups: set[str] | None,
                cached_literals: list[list[list[str]] | None] | None, check_templates: bool = True) -> Rule:
    """Validate every field; on problems, raise the first with all of them in its `problems`."""
    rule_id = data.get("id")
    problems: list[RuleError] = []

    def fail(fld: str, message: str, hint: str | None = None) -> None:
        problems.append(RuleError(file, message, line=lines.get(fld, lines.get(fld.split("[")[0], 2)),
                                  rule=rule_id if isinstance(rule_id, str) and ID_RE.match(rule_id) else None,
                                  field=fld, hint=hint))

    category, title, priority, kind = _check_header(data, fail)
    is_signal = kind == "signal"
    if is_signal and data.get("patterns"):
        fail("patterns", "a signal rule has no patterns: it is raised from measured facts",
             "list the facts its templates use under 'facts'")
    declared_facts = _string_list(data.get("facts"), "facts", fail)
    raw_patterns = _string_list(data.get("patterns"), "patterns", fail, required=not is_signal)
    if cached_groups is not None:
        compiled, groups, patterns_ok = None, cached_groups, True
    else:
        compiled, groups, patterns_ok = _compile_patterns(raw_patterns, fail)
    probes = _string_list(data.get("probes"), "probes", fail)
    context = _string_list(data.get("context"), "context", fail)
    context_groups = _compile_patterns(context, fail, "context")[1]
    code = _string_list(data.get("code"), "code", fail)
    code_groups = _compile_patterns(code, fail, "code")[1]  # known whenever the rule answers, as the patterns' are
    code_gates = _code_gates(data.get("code_gates"), len(raw_patterns), bool(code), fail)
    groups_known = groups | (set() if code_gates else code_groups)  # (with gates, only where a sign was found)
    provided = set(COMMON_FACTS) | groups_known | code_groups | context_groups | set(declared_facts) | _probe_facts(probes, known_probes, fail)
    requires = _string_list(data.get("requires"), "requires", fail)
    for i, name in enumerate(requires):
        if name not in provided and patterns_ok and known_probes is not None:
            fail(f"requires[{i}]", f"requires {name!r}, which no pattern group or probe provides",
                 f"facts the patterns and probes provide: {', '.join(sorted(provided - set(COMMON_FACTS)))}")
    summary = _string_list(data.get("summary"), "summary", fail, required=True)
    fixes = _fix_list(data.get("fixes"), fail)
    if check_templates:
        _check_templates(summary, fixes, provided, groups_known if patterns_ok and not is_signal else None, fail,
                         cache, patterns_ok)
    examples = _examples(data.get("examples"), "examples", fail, lines, required=not is_signal)
    counter_examples = _examples(data.get("counter_examples"), "counter_examples", fail, lines)
    fixture = data.get("fixture")
    if fixture is not None and not isinstance(fixture, str):
        fail("fixture", "fixture must be a path to a script, relative to the repository root")
    related = _string_list(data.get("related"), "related", fail)
    tags = _string_list(data.get("tags"), "tags", fail)
    joins = _string_list(data.get("joins"), "joins", fail)
    if not body.strip():
        fail("id", "the runbook text (the Markdown after the front matter) is empty",
             "write what the error means, its causes, how to confirm and how to fix it")
    if problems:
        first = problems[0]
        first.problems = problems
        raise first
    return Rule(
        id=rule_id, category=category, title=title.strip(), pattern_sources=raw_patterns, groups=groups,
        _compiled=compiled, summary=summary,
        fixes=fixes, probes=probes, examples=examples, counter_examples=counter_examples,
        body=body, file=file, priority=priority, fixture=fixture, related=related, tags=tags,
        pack=pack, line=lines.get("id", 2), kind=kind, facts=declared_facts, literals=cached_literals or [],
        context_sources=context, code_sources=code, code_gates=code_gates, joins=joins, requires=requires,
    )


def _code_gates(value: Any, patterns: int, has_code: bool, fail) -> list[int]:
    """The indexes of the patterns the rule's code signs gate (code_gates: [0, 2]); [] for all of them."""
    if value is None:
        return []
    if not isinstance(value, list) or not value or not all(type(v) is int and 0 <= v < patterns for v in value):
        fail("code_gates", f"code_gates must be a non-empty list of pattern indexes (0 to {patterns - 1})")
        return []
    if not has_code:
        fail("code_gates", "code_gates names the patterns the rule's `code` signs gate: the rule has no `code`")
    return sorted(set(value))


def _check_header(data: dict, fail) -> tuple[Any, str, Any, Any]:
    """id, field names, category, title, priority and kind: (category, title, priority, kind)."""
    rule_id = data.get("id")
    if not isinstance(rule_id, str) or not ID_RE.match(rule_id):
        fail("id", f"missing or invalid id {rule_id!r}",
             "an id is a prefix and a name joined by dots, lower case: 'shape.matmul'")
    for name in sorted(set(map(str, data)) - KNOWN_FIELDS):
        fail(name, f"unknown field {name!r}", f"known fields: {', '.join(sorted(KNOWN_FIELDS))}")
    category = data.get("category")
    if category not in CATEGORIES:
        fail("category", f"category {category!r} is not one of {', '.join(CATEGORIES)}")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        fail("title", "a rule needs a one-line title")
        title = ""
    priority = data.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        fail("priority", f"priority must be an integer, not {priority!r}")
    kind = data.get("kind", "error")
    if kind not in KINDS:
        fail("kind", f"kind {kind!r} is not one of {', '.join(KINDS)}")
    return category, title, priority, kind


def _compile_patterns(sources: list[str], fail, fld: str = "patterns") -> tuple[list, set[str], bool]:
    """(compiled patterns, their named groups, whether all compiled)."""
    import regex

    from .engine import compile_recorded

    compiled, groups, ok = [], set(), True
    for i, source in enumerate(sources):
        try:
            compiled.append(compile_recorded(source))
            groups.update(compiled[-1].groupindex)
        except regex.error as exc:
            fail(f"{fld}[{i}]", f"pattern does not compile: {exc}")
            ok = False
    return compiled, groups, ok


def _probe_facts(probes: list[str], known_probes: dict[str, Any] | None, fail) -> set[str]:
    """The facts the named probes provide; an unknown name fails (when the known probes are given)."""
    if known_probes is None:
        return set()
    provided: set[str] = set()
    for i, name in enumerate(probes):
        if name in known_probes:
            provided.update(known_probes[name].provides)
        else:
            fail(f"probes[{i}]", f"unknown probe {name!r}",
                 f"known probes: {', '.join(sorted(known_probes)) or 'none'}")
    return provided


def _check_templates(summary: list[str], fixes: list[tuple[str, ...]], provided: set[str],
                     message_groups: set[str] | None, fail, cache: RuleCache, patterns_ok: bool) -> None:
    """Every template uses provided fields only; with message_groups, one summary needs nothing but the message."""
    # A pattern that did not compile hides its groups: then no claim about the fields templates use.
    templates_ok = all([_check_template(source, f"summary[{i}]", provided, fail, cache, patterns_ok)
                        for i, source in enumerate(summary)])
    for i, alternatives in enumerate(fixes):
        for source in alternatives:
            _check_template(source, f"fixes[{i}]", provided, fail, cache, patterns_ok)
    from_message = set(COMMON_FACTS) | message_groups if message_groups is not None else set()
    # (a fact the template reads only under `{% if x is defined %}`, or a name its `{% set %}` declares, is not needed)
    if message_groups is not None and templates_ok and summary and not any(
            _cached_fields(s, cache) <= from_message or required_fields(s) <= from_message for s in summary):
        fail("summary", "no summary template can be filled from the message alone",
             "add a last summary that uses only the patterns' named groups, for pasted messages")


def _string_list(value: Any, fld: str, fail, *, required: bool = False) -> list[str]:
    if value is None:
        if required:
            fail(fld, f"{fld} is required")
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        fail(fld, f"{fld} must be a string or a list of strings")
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    if required and not value:
        fail(fld, f"{fld} must not be empty")
    return list(value)


def _fix_list(value: Any, fail) -> list[tuple[str, ...]]:
    """Each fix is a template, or a list of alternatives of which the first that can be filled is shown:
    a fix with the live values, then the same advice from the message alone, never both."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        fail("fixes", "fixes must be a list of templates")
        return []
    fixes = []
    for i, item in enumerate(value):
        alternatives = [item] if isinstance(item, str) else item
        if not isinstance(alternatives, list) or not alternatives or not all(isinstance(a, str) for a in alternatives):
            fail(f"fixes[{i}]", "a fix is a template or a non-empty list of alternative templates")
            continue
        fixes.append(tuple(alternatives))
    return fixes


def _examples(value: Any, fld: str, fail, lines: dict[str, int], *, required: bool = False) -> list[Example]:
    if value is None:
        if required:
            fail(fld, "at least one verbatim example message is required",
                 "paste the message exactly as torch prints it, with its source (fixture path or URL)")
        return []
    if not isinstance(value, list):
        fail(fld, f"{fld} must be a list of {{message, source}} entries")
        return []
    out = []
    for i, item in enumerate(value):
        message = item.get("message") if isinstance(item, dict) else None
        source = item.get("source") if isinstance(item, dict) else None
        if not isinstance(message, str) or not message.strip():
            fail(f"{fld}[{i}]", "each entry needs a non-empty 'message'")
            continue
        if not isinstance(source, str) or not source.strip():
            fail(f"{fld}[{i}]", "each entry needs a 'source': the fixture script or the URL it was copied from")
            continue
        out.append(Example(message.rstrip("\n"), source, lines.get(f"{fld}[{i}]")))
    if required and not out and not value:
        fail(fld, "at least one verbatim example message is required")
    return out


def _cached_fields(source: str, cache: RuleCache) -> frozenset[str]:
    fields = cache.template_fields(source)
    if fields is None:
        fields = template_fields(source)
        cache.remember_template(source, fields)
    return fields


def _check_template(source: str, fld: str, provided: set[str], fail, cache: RuleCache,
                    check_fields: bool = True) -> bool:
    """Whether the template parses; reports fields nothing provides (unless check_fields is off)."""
    try:
        used = _cached_fields(source, cache)
    except TemplateProblem as exc:
        fail(fld, f"template does not parse: {exc}")
        return False
    missing = sorted(used - provided)
    if missing and check_fields:
        fail(fld, f"template uses {', '.join(missing)}, which no pattern group or probe provides",
             f"available: {', '.join(sorted(provided))}")
    return True
