"""Loading and validating rule files: one Markdown file per rule, YAML front matter plus runbook text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex
import yaml
from jinja2 import TemplateSyntaxError, meta

from ._diagnosis import CATEGORIES
from ._errors import RuleError
from ._templates import ENVIRONMENT

ID_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n?(.*)\Z", re.S)
KNOWN_FIELDS = {
    "id", "kind", "category", "title", "priority", "patterns", "summary", "fixes", "probes",
    "examples", "counter_examples", "fixture", "related", "tags", "facts",
}
# "error" rules match exception messages; "signal" rules are raised by the training monitor and
# curve analysis from measured facts, so they have no patterns.
KINDS = ("error", "signal")
GUIDES_DIR = "guides"
# Facts every diagnosis has, whatever the pattern: usable in any template.
COMMON_FACTS = frozenset({"error_type", "message"})


@dataclass
class Example:
    message: str
    source: str
    line: int | None = None


@dataclass
class Rule:
    """A validated rule. Patterns are compiled; templates are compiled jinja2 sandbox templates."""

    id: str
    category: str
    title: str
    patterns: list[Any]
    summary: list[str]
    fixes: list[str]
    probes: list[str]
    examples: list[Example]
    counter_examples: list[Example]
    body: str
    file: str
    priority: int = 0
    fixture: str | None = None
    related: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    pack: str = "builtin"
    line: int = 1
    kind: str = "error"
    facts: list[str] = field(default_factory=list)

    @property
    def group_names(self) -> set[str]:
        names: set[str] = set()
        for pattern in self.patterns:
            names.update(pattern.groupindex)
        return names


def builtin_rules_dir() -> Path:
    """runbooks/ in a source checkout (editable install) or explainer/runbooks in a wheel."""
    from importlib import resources

    try:
        return Path(str(resources.files("explainer.runbooks")))
    except (ModuleNotFoundError, TypeError):
        return Path(__file__).resolve().parent.parent / "runbooks"


def rule_files(folder: Path) -> list[Path]:
    """Every rule file below folder, in a stable order. README/index pages and guides/ are not rules."""
    return sorted(
        p for p in folder.rglob("*.md")
        if p.name.lower() not in {"readme.md", "index.md"} and p.relative_to(folder).parts[0] != GUIDES_DIR
    )


def load_rule_file(path: Path, *, pack: str = "builtin", known_probes: dict[str, Any] | None = None,
                   display_root: Path | None = None) -> Rule:
    """Parse and validate one rule file; raises RuleError naming the file, line, rule and field."""
    shown = _display(path, display_root)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(shown, f"cannot read the file: {exc}") from None
    match = FRONT_MATTER_RE.match(text)
    if not match:
        raise RuleError(shown, "no YAML front matter", line=1,
                        hint="start the file with a line '---', the rule's fields, then another '---'")
    header, body = match.group(1), match.group(2)
    try:
        data, lines = _parse_front_matter(header)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(shown, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                        line=(mark.line + 2) if mark else None) from None
    if not isinstance(data, dict):
        raise RuleError(shown, "the front matter must be a mapping of fields", line=2)
    # +1 for the opening '---' line, +1 because YAML marks count from zero.
    lines = {k: v + 2 for k, v in lines.items()}
    return _build_rule(data, body, shown, lines, pack, known_probes)


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)


# libyaml when PyYAML was built with it: rule loading happens at the moment of a crash.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse_front_matter(header: str) -> tuple[Any, dict[str, int]]:
    """The front matter's data and the line of each field, from one safe parse."""
    loader = _SAFE_LOADER(header)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, (_field_lines(node) if node is not None else {})


def _field_lines(node: Any, prefix: str = "") -> dict[str, int]:
    """Map 'field', 'field[2]' and 'field[2].message' to the zero-based line where each starts."""
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
                known_probes: dict[str, Any] | None) -> Rule:
    rule_id = data.get("id")

    def fail(fld: str, message: str, hint: str | None = None):
        raise RuleError(file, message, line=lines.get(fld, lines.get(fld.split("[")[0], 2)),
                        rule=rule_id if isinstance(rule_id, str) else None, field=fld, hint=hint)

    if not isinstance(rule_id, str) or not ID_RE.match(rule_id):
        fail("id", f"missing or invalid id {rule_id!r}",
             "an id is a prefix and a name joined by dots, lower case: 'shape.matmul'")
    unknown = sorted(set(data) - KNOWN_FIELDS)
    if unknown:
        fail(unknown[0], f"unknown field {unknown[0]!r}", f"known fields: {', '.join(sorted(KNOWN_FIELDS))}")
    category = data.get("category")
    if category not in CATEGORIES:
        fail("category", f"category {category!r} is not one of {', '.join(CATEGORIES)}")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        fail("title", "a rule needs a one-line title")
    priority = data.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        fail("priority", f"priority must be an integer, not {priority!r}")

    kind = data.get("kind", "error")
    if kind not in KINDS:
        fail("kind", f"kind {kind!r} is not one of {', '.join(KINDS)}")
    is_signal = kind == "signal"
    if is_signal and data.get("patterns"):
        fail("patterns", "a signal rule has no patterns: it is raised from measured facts",
             "list the facts its templates use under 'facts'")
    declared_facts = _string_list(data.get("facts"), "facts", fail)
    raw_patterns = _string_list(data.get("patterns"), "patterns", fail, required=not is_signal)
    patterns = []
    for i, source in enumerate(raw_patterns):
        try:
            patterns.append(regex.compile(source))
        except regex.error as exc:
            fail(f"patterns[{i}]", f"pattern does not compile: {exc}")

    probes = _string_list(data.get("probes"), "probes", fail)
    if known_probes is not None:
        for i, name in enumerate(probes):
            if name not in known_probes:
                fail(f"probes[{i}]", f"unknown probe {name!r}",
                     f"known probes: {', '.join(sorted(known_probes)) or 'none'}")

    groups: set[str] = set()
    for pattern in patterns:
        groups.update(pattern.groupindex)
    provided = set(COMMON_FACTS) | groups | set(declared_facts)
    for name in probes:
        if known_probes is not None and name in known_probes:
            provided.update(known_probes[name].provides)

    summary = _string_list(data.get("summary"), "summary", fail, required=True)
    fixes = _string_list(data.get("fixes"), "fixes", fail)
    for fld, templates in (("summary", summary), ("fixes", fixes)):
        for i, source in enumerate(templates):
            _check_template(source, f"{fld}[{i}]", provided, fail)
    if not is_signal and not any(_template_fields(s) <= (set(COMMON_FACTS) | groups) for s in summary):
        fail("summary", "no summary template can be filled from the message alone",
             "add a last summary that uses only the patterns' named groups, for pasted messages")

    examples = _examples(data.get("examples"), "examples", fail, lines, required=not is_signal)
    counter_examples = _examples(data.get("counter_examples"), "counter_examples", fail, lines)
    fixture = data.get("fixture")
    if fixture is not None and not isinstance(fixture, str):
        fail("fixture", "fixture must be a path to a script, relative to the repository root")
    related = _string_list(data.get("related"), "related", fail)
    tags = _string_list(data.get("tags"), "tags", fail)
    if not body.strip():
        fail("id", "the runbook text (the Markdown after the front matter) is empty",
             "write what the error means, its causes, how to confirm and how to fix it")
    return Rule(
        id=rule_id, category=category, title=title.strip(), patterns=patterns, summary=summary,
        fixes=fixes, probes=probes, examples=examples, counter_examples=counter_examples,
        body=body, file=file, priority=priority, fixture=fixture, related=related, tags=tags,
        pack=pack, line=lines.get("id", 2), kind=kind, facts=declared_facts,
    )


def _string_list(value: Any, fld: str, fail, *, required: bool = False) -> list[str]:
    if value is None:
        if required:
            fail(fld, f"{fld} is required")
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        fail(fld, f"{fld} must be a string or a list of strings")
    if required and not value:
        fail(fld, f"{fld} must not be empty")
    return list(value)


def _examples(value: Any, fld: str, fail, lines: dict[str, int], *, required: bool = False) -> list[Example]:
    if value is None:
        if required:
            fail(fld, "at least one verbatim example message is required",
                 "paste the message exactly as torch prints it, with its source (fixture path or URL)")
        return []
    if not isinstance(value, list):
        fail(fld, f"{fld} must be a list of {{message, source}} entries")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("message"), str) or not item["message"].strip():
            fail(f"{fld}[{i}]", "each entry needs a non-empty 'message'")
        source = item.get("source")
        if not isinstance(source, str) or not source.strip():
            fail(f"{fld}[{i}]", "each entry needs a 'source': the fixture script or the URL it was copied from")
        line = lines.get(f"{fld}[{i}]")
        out.append(Example(item["message"].rstrip("\n"), source, line))
    if required and not out:
        fail(fld, "at least one verbatim example message is required")
    return out


_LITERAL = r"""(?:'[^'{}]*'|"[^"{}]*"|-?\d+(?:\.\d+)?)"""
_FILTER = rf"\|\s*\w+(?:\(\s*{_LITERAL}(?:\s*,\s*{_LITERAL})*\s*\))?\s*"
# {{ name }} and {{ name | filter('literal') }}: most templates are only these, and reading their
# fields with a regex instead of jinja2's parser keeps loading rules fast at the moment of a crash.
_SIMPLE_FIELD_RE = re.compile(rf"\{{\{{\s*([A-Za-z_]\w*)\s*(?:{_FILTER})*\}}\}}")


@lru_cache(maxsize=8192)
def _template_fields(source: str) -> frozenset[str]:
    rest = _SIMPLE_FIELD_RE.sub("", source)
    if not any(token in rest for token in ("{{", "{%", "{#")):
        return frozenset(found.group(1) for found in _SIMPLE_FIELD_RE.finditer(source))
    return frozenset(meta.find_undeclared_variables(ENVIRONMENT.parse(source)))


def _check_template(source: str, fld: str, provided: set[str], fail) -> None:
    try:
        used = _template_fields(source)
    except TemplateSyntaxError as exc:
        fail(fld, f"template does not parse: {exc.message}")
        return
    missing = sorted(used - provided)
    if missing:
        fail(fld, f"template uses {', '.join(missing)}, which no pattern group or probe provides",
             f"available: {', '.join(sorted(provided))}")
