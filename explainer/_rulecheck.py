"""`explainer rules check/test/new`: validate rule files, test them against their examples, scaffold one.

Findings print as `file:line: rule ID: message` so editors and CI logs link to the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import regex
import yaml

from ._diagnosis import CATEGORIES
from ._errors import RuleError
from ._packs import PACK_FILE, RESERVED_PREFIXES, Pack, discover_packs, display_path
from ._rulebase import MATCH_TIMEOUT_S, RuleBase, build_rulebase, match_rule
from ._templates import TemplateProblem, template_fields
from ._rules import (COMMON_FACTS, FRONT_MATTER_RE, ID_RE, Example, Rule, _field_lines,
                     builtin_rules_dir)


@dataclass
class Finding:
    file: str
    line: int | None
    rule: str | None
    message: str
    hint: str | None = None
    note: bool = False  # information, not a failure

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        who = f" rule {self.rule}:" if self.rule else ""
        text = f"{where}:{who} {'note: ' if self.note else ''}{self.message}"
        return text + (f"\n    hint: {self.hint}" if self.hint else "")


def from_error(error: RuleError) -> Finding:
    message = f"{error.field}: {error.message}" if error.field else error.message
    return Finding(error.file, error.line, error.rule, message, error.hint)


@dataclass
class Scope:
    """The rules a command looks at (subjects) inside everything they compete with (rulebase)."""

    rulebase: RuleBase
    subjects: list[Rule]
    problems: list[Finding]  # load problems inside the scope, all of them


def load_scope(paths: Iterable[str] = ()) -> Scope:
    """Built-in rules plus every discovered pack, plus the packs holding PATHs; subjects under PATHs."""
    from ._probes import load_builtin_probes

    paths = [Path(p) for p in paths]
    probes = load_builtin_probes()
    builtin = builtin_rules_dir()
    findings: list[Finding] = []
    extra: list[tuple[Path, str]] = []
    for path in paths:
        if not path.exists():
            findings.append(Finding(str(path), None, None, "no such file or folder"))
        elif not _under(path, builtin):
            folder = _pack_folder(path)
            if folder is None:
                findings.append(Finding(str(path), None, None, f"not in a rule pack: no {PACK_FILE} here or above",
                                        hint=f"create {PACK_FILE} in the pack's folder with 'prefix: yourteam'"))
            else:
                extra.append((folder, "the command line"))
    packs, pack_problems = discover_packs(extra=extra)
    rulebase = build_rulebase([("builtin", builtin)], probes, packs=packs, pack_problems=pack_problems)

    def in_scope(file: str, text: str = "") -> bool:
        return not paths or any(_under(Path(file), p) or display_path(p) in text for p in paths)

    subjects = [r for r in rulebase.rules if in_scope(r.file)]
    for problem in rulebase.problems:
        if in_scope(problem.file, problem.message):
            findings.append(from_error(problem))
            if problem.line is not None and Path(problem.file).suffix == ".md":
                findings.extend(_more_problems(Path(problem.file), problem, probes))
    pack_of = {p.prefix: p for p in rulebase.packs}
    for rule in subjects:
        if rule.pack in pack_of:
            findings.extend(_missing_sources(rule, pack_of[rule.pack]))
    return Scope(rulebase, subjects, findings)


def _under(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except (ValueError, OSError):
        return False


def _pack_folder(path: Path) -> Path | None:
    start = path.resolve() if path.is_dir() else path.resolve().parent
    for folder in (start, *start.parents):
        if (folder / PACK_FILE).is_file():
            return folder
    return None


def _more_problems(path: Path, first: RuleError, probes) -> list[Finding]:
    """The loader stops at a file's first problem; look at patterns, probes and templates one by one."""
    try:
        match = FRONT_MATTER_RE.match(path.read_text(encoding="utf-8"))
        data = yaml.safe_load(match.group(1)) if match else None
        lines = {k: v + 2 for k, v in _field_lines(yaml.compose(match.group(1), Loader=yaml.SafeLoader)).items()}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    if not isinstance(data, dict):
        return []
    rule_id = data.get("id") if isinstance(data.get("id"), str) else None
    found: list[Finding] = []

    def add(fld: str, message: str, hint: str | None = None) -> None:
        if fld != first.field:
            found.append(Finding(first.file, lines.get(fld), rule_id, f"{fld}: {message}", hint))

    def strings(fld: str) -> list[str]:
        value = data.get(fld)
        value = [value] if isinstance(value, str) else value
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    provided = set(COMMON_FACTS) | set(strings("facts"))
    for i, source in enumerate(strings("patterns")):
        try:
            provided.update(regex.compile(source).groupindex)
        except regex.error as exc:
            add(f"patterns[{i}]", f"pattern does not compile: {exc}")
    for i, name in enumerate(strings("probes")):
        if name in probes:
            provided.update(probes[name].provides)
        else:
            add(f"probes[{i}]", f"unknown probe {name!r}")
    for fld in ("summary", "fixes"):
        for i, source in enumerate(strings(fld)):
            try:
                missing = sorted(template_fields(source) - provided)
            except TemplateProblem as exc:
                add(f"{fld}[{i}]", f"template does not parse: {exc}")
                continue
            if missing:
                add(f"{fld}[{i}]", f"template uses {', '.join(missing)}, which no pattern group or probe provides")
    return found


def _missing_sources(rule: Rule, pack: Pack) -> list[Finding]:
    """A team rule's fixture and example sources are files of its pack (or URLs)."""
    found = []
    entries = [("example", i, e) for i, e in enumerate(rule.examples, 1)]
    entries += [("counter-example", i, e) for i, e in enumerate(rule.counter_examples, 1)]
    for what, number, example in entries:
        if not example.source.startswith(("http://", "https://")) and not (pack.folder / example.source).is_file():
            found.append(Finding(rule.file, example.line, rule.id,
                                 f"{what} {number}: source {example.source} is not a file of the pack",
                                 hint=f"sources are URLs or paths relative to {display_path(pack.folder)}"))
    if rule.fixture and not (pack.folder / rule.fixture).is_file():
        found.append(Finding(rule.file, rule.line, rule.id, f"fixture {rule.fixture} is not a file of the pack",
                             hint=f"paths are relative to {display_path(pack.folder)}"))
    return found


def run_check(scope: Scope) -> list[Finding]:
    """Every load problem in scope (schema, patterns, templates, probes, ids, prefixes, runbook text)."""
    return sorted(scope.problems, key=lambda f: (f.file, f.line or 0))


def run_test(scope: Scope) -> list[Finding]:
    """Examples claimed by their own rule, counter-examples not matched by it, no ambiguity."""
    findings: list[Finding] = []
    rulebase = scope.rulebase
    for rule in scope.subjects:
        if rule.kind != "error":
            continue
        for number, example in enumerate(rule.examples, 1):
            findings.extend(_test_example(rulebase, rule, number, example))
        for number, example in enumerate(rule.counter_examples, 1):
            timeouts: set[str] = set()
            if match_rule(rule, example.message, timeouts) is not None:
                findings.append(Finding(rule.file, example.line, rule.id,
                                        f"counter-example {number} matches the rule",
                                        hint="make the pattern more precise so this near miss is left alone"))
            elif timeouts:
                findings.append(_timeout(rule, example, f"counter-example {number}"))
    return findings


def _test_example(rulebase: RuleBase, rule: Rule, number: int, example: Example) -> list[Finding]:
    timeouts: set[str] = set()
    if match_rule(rule, example.message, timeouts) is None:
        if timeouts:
            return [_timeout(rule, example, f"example {number}")]
        return [Finding(rule.file, example.line, rule.id, f"example {number} does not match the rule's patterns",
                        hint="examples are verbatim 'ErrorType: message' lines; test the pattern with "
                             "regex.search(pattern, message)")]
    claimed = rulebase.match(example.message)
    if claimed is None or claimed.rule.id == rule.id:
        return []
    other = claimed.rule
    if rule.pack == "builtin" and other.pack != "builtin":
        return [Finding(rule.file, example.line, rule.id,
                        f"example {number} is claimed first by team rule {other.id} ({other.file}:{other.line}), "
                        "which takes precedence", note=True)]
    return [Finding(rule.file, example.line, rule.id,
                    f"example {number} is claimed first by {other.id} ({other.file}:{other.line})",
                    hint=f"make one of the two patterns more precise, or set this rule's priority above "
                         f"{other.priority} (rules are tried by priority, higher first)")]


def _timeout(rule: Rule, example: Example, what: str) -> Finding:
    return Finding(rule.file, example.line, rule.id,
                   f"{what}: a pattern took over {MATCH_TIMEOUT_S}s to match and was stopped",
                   hint="the pattern backtracks catastrophically: avoid nested repeats such as (a|aa)+ or (\\w+\\s?)*")


# --- scaffolding -------------------------------------------------------------------------------

TYPE_PREFIX_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)): \S")


class ScaffoldError(Exception):
    """`rules new` cannot write the rule (bad arguments, existing files)."""


def scaffold(rule_id: str, pattern: str, *, example: str | None = None, category: str = "other",
             title: str | None = None, folder: Path | None = None, packs: list[Pack] = ()) -> list[Path]:
    """Write a rule file and a script reproducing its example into a pack; returns the files written."""
    if not ID_RE.match(rule_id):
        raise ScaffoldError(f"invalid id {rule_id!r}: lower-case words joined by dots, e.g. 'acme.loader.timeout'")
    prefix, rest = rule_id.split(".", 1)
    if prefix in RESERVED_PREFIXES:
        raise ScaffoldError(f"prefix {prefix!r} belongs to the built-in rules: use your pack's prefix")
    if category not in CATEGORIES:
        raise ScaffoldError(f"category {category!r} is not one of {', '.join(CATEGORIES)}")
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ScaffoldError(f"--match does not compile: {exc}") from None
    if example is None:
        example = _literal(pattern)
        if example is None or not TYPE_PREFIX_RE.match(example):
            raise ScaffoldError("pass --example with a message exactly as it prints ('ErrorType: message'): "
                                "an example can only be derived from a pattern that is that whole line, "
                                "literally")
    if compiled.search(example) is None:
        raise ScaffoldError(f"--match does not match the example {example!r}")
    if not TYPE_PREFIX_RE.match(example):
        raise ScaffoldError(f"the example must be the whole last traceback line, 'ErrorType: message', "
                            f"not {example[:80]!r}")
    folder = _target_folder(prefix, folder, packs)
    rule_path = folder.joinpath(*rest.split(".")[:-1], rest.split(".")[-1] + ".md")
    script = f"repro/{rest.replace('.', '_')}.py"
    for path in (rule_path, folder / script):
        if path.exists():
            raise ScaffoldError(f"{display_path(path)} already exists")
    title = title or rest.replace(".", " ").replace("_", " ").capitalize()
    groups = list(compiled.groupindex)
    summary = title.rstrip(".") + (" (" + ", ".join(f"{g} {{{{ {g} }}}}" for g in groups) + ")." if groups else ".")
    front = {"id": rule_id, "category": category, "title": title, "patterns": [pattern], "summary": [summary],
             "examples": [{"message": example, "source": script}], "fixture": script}
    written = []
    if not (folder / PACK_FILE).exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PACK_FILE).write_text(f"prefix: {prefix}\n", encoding="utf-8")
        written.append(folder / PACK_FILE)
    rule_path.parent.mkdir(parents=True, exist_ok=True)
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10**6)
    rule_path.write_text(f"---\n{header}---\n{_BODY}", encoding="utf-8")
    (folder / script).parent.mkdir(parents=True, exist_ok=True)
    (folder / script).write_text(_repro_script(rule_id, example), encoding="utf-8")
    return written + [rule_path, folder / script]


def _target_folder(prefix: str, folder: Path | None, packs: list[Pack]) -> Path:
    if folder is None:
        matching = [p for p in packs if p.prefix == prefix]
        if not matching:
            raise ScaffoldError(f"no discovered pack has the prefix {prefix!r}: pass --dir with its folder")
        return matching[0].folder
    pack_file = folder / PACK_FILE
    if pack_file.is_file():
        declared = (yaml.safe_load(pack_file.read_text(encoding="utf-8")) or {}).get("prefix")
        if declared != prefix:
            raise ScaffoldError(f"{display_path(pack_file)} declares prefix {declared!r}, not {prefix!r}")
    return folder


def _literal(pattern: str) -> str | None:
    """The text a pattern matches when it is a plain string (escapes allowed), else None."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1].isalnum():
                return None
            out.append(pattern[i + 1])
            i += 2
            continue
        if char in ".^$*+?{}[]|()":
            return None
        out.append(char)
        i += 1
    return "".join(out)


def _repro_script(rule_id: str, example: str) -> str:
    type_name, message = example.split(": ", 1)
    module, _, name = type_name.rpartition(".")
    import builtins

    if not module and isinstance(getattr(builtins, name, None), type):
        return (f"# Raises the message of {rule_id} exactly as it prints. Replace the raise with the call\n"
                f"# into your code that fails this way, so the example keeps being checked against it.\n"
                f"raise {name}({message!r})\n")
    # Python prints a class's module before its name, except for __main__: keep the example's spelling.
    module_line = f"    __module__ = {module!r}\n" if module else "    pass\n"
    return (f"# Raises the message of {rule_id} exactly as it prints. Replace this class and the raise with\n"
            f"# the call into your code that fails this way, so the example keeps being checked against it.\n"
            f"class {name}(Exception):\n{module_line}\n\nraise {name}({message!r})\n")


_BODY = """## What it means

What this error means in your system, in two or three sentences.

## Likely causes

1. The most common cause, with the value to look for.
2. The next one.

## How to confirm

The command or check that tells the causes apart.

## Fix

Before and after code for the most common cause.
"""
