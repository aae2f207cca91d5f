"""`explainer rules check/test/new`: validate rule files, test them against their examples, scaffold one.

Findings print as `file:line: rule ID: message` so editors and CI logs link to the line.
"""

from __future__ import annotations

import re
import re._constants as _sre
import re._parser as _sre_parser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import regex
import yaml

from ._diagnosis import CATEGORIES
from ._errors import RuleError
from ._packs import PACK_FILE, RESERVED_PREFIXES, Pack, discover_packs, display_path, read_pack
from ._rulebase import MATCH_TIMEOUT_S, RuleBase, build_rulebase, match_rule
from ._rules import (FRONT_MATTER_RE, ID_RE, Example, Rule, _display,
                     parse_yaml_with_lines, builtin_rules_dir, rule_files)


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
    problems: list[Finding]  # problems in scope that keep rules from loading or from being tested
    runbook: list[Finding] = field(default_factory=list)  # runbook text problems: `check` reports them


# Runbook pages share these sections, so every page reads the same way (runbooks/shape/matmul.md).
SECTIONS = ("What it means", "Likely causes", "How to confirm", "Fix")
# Problems build_rulebase finds between files, after loading; check recomputes duplicates over
# every file, loaded or not, so that one run reports them all.
_DUPLICATE = "duplicate id:"
_OUTSIDE_PREFIX = "id does not start with the pack's prefix"


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
    load_errors: dict[str, RuleError] = {}
    for problem in rulebase.problems:
        if problem.message.startswith(_DUPLICATE):
            continue
        if in_scope(problem.file, problem.message):
            findings.append(from_error(problem))
        if not problem.message.startswith(_OUTSIDE_PREFIX):
            load_errors.setdefault(problem.file, problem)
    loaded = {r.file: r for r in rulebase.rules}
    runbook: list[Finding] = []
    first_file: dict[str, str] = {}  # id -> the file that defines it first, in the order rules load
    for path, shown, pack in _files_in_load_order(rulebase, builtin):
        rule, error, wanted = loaded.get(shown), load_errors.get(shown), in_scope(shown)
        page = _read_page(path) if wanted or rule is None else None
        if rule is not None:
            rule_id, line = rule.id, rule.line
            if wanted and pack is not None:
                findings.extend(_missing_sources(rule.file, rule.id, rule.line, _rule_sources(rule),
                                                 rule.fixture, pack))
        else:
            rule_id, line = _raw_id(page), (page.lines.get("id", 2) if page else None)
            if wanted and page is not None and page.data is not None:
                if error is not None:
                    findings.extend(from_error(problem) for problem in error.problems[1:])
                if pack is not None:
                    findings.extend(_missing_sources(shown, rule_id, line, _raw_sources(page),
                                                     page.data.get("fixture"), pack))
        if wanted and page is not None and page.body.strip():
            runbook.extend(_missing_sections(page, shown, rule_id))
        if rule is None and rule_id is not None and pack is not None and not rule_id.startswith(pack.prefix + "."):
            if wanted and error is not None:  # without a load error, build_rulebase reported it
                findings.append(_outside_prefix(shown, line, rule_id, pack))
            continue  # never loaded, as a rule outside its prefix never is
        if rule_id is None:
            continue
        if rule_id in first_file:
            if wanted:
                findings.append(Finding(shown, line, rule_id, f"id: {_DUPLICATE} also defined in {first_file[rule_id]}",
                                        hint="ids are unique across the built-in rules and every pack: rename one"))
        else:
            first_file[rule_id] = shown
    return Scope(rulebase, subjects, findings, runbook)


def _files_in_load_order(rulebase: RuleBase, builtin: Path):
    """(path, file as rules and problems show it, its team pack or None), in the order build_rulebase loads."""
    for pack in rulebase.packs:
        for path in rule_files(pack.folder):
            yield path, _display(path, Path.cwd()), pack
    for path in rule_files(builtin):
        yield path, _display(path, None), None


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


@dataclass
class _Page:
    """A rule file read without validation: its front matter (None when unreadable) and body."""

    data: dict | None
    lines: dict[str, int]  # field -> line in the file, as the loader numbers them
    body: str
    body_line: int  # where the body starts (the closing '---' when nothing follows it)


def _read_page(path: Path) -> _Page | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    match = FRONT_MATTER_RE.match(text)
    if not match:
        return None
    body_line = text.count("\n", 0, match.start(2)) + (1 if match.start(2) < len(text) else 0)
    try:
        data, lines = parse_yaml_with_lines(match.group(1))
    except yaml.YAMLError:
        return _Page(None, {}, match.group(2), body_line)
    if not isinstance(data, dict):
        return _Page(None, {}, match.group(2), body_line)
    # +1 for the opening '---' line, +1 because YAML marks count from zero.
    return _Page(data, {k: v + 2 for k, v in lines.items()}, match.group(2), body_line)


def _raw_id(page: _Page | None) -> str | None:
    value = page.data.get("id") if page is not None and page.data is not None else None
    return value if isinstance(value, str) and ID_RE.match(value) else None


def _outside_prefix(file: str, line: int | None, rule_id: str, pack: Pack) -> Finding:
    return Finding(file, line, rule_id, f"id: {_OUTSIDE_PREFIX} '{pack.prefix}.' "
                   f"(declared in {display_path(pack.pack_file)})",
                   hint=f"rename it '{pack.prefix}.{rule_id.split('.', 1)[-1]}'")


def _missing_sections(page: _Page, file: str, rule_id: str | None) -> list[Finding]:
    return [Finding(file, page.body_line, rule_id, f"runbook text: section '## {name}' is missing",
                    hint="the runbook text has four sections, in order: " + ", ".join(f"'## {s}'" for s in SECTIONS))
            for name in SECTIONS
            if not re.search(rf"^##[ \t]+{re.escape(name)}[ \t]*$", page.body, re.MULTILINE | re.IGNORECASE)]


def _rule_sources(rule: Rule) -> list[tuple[str, int, str, int | None]]:
    entries = [("example", i, e.source, e.line) for i, e in enumerate(rule.examples, 1)]
    return entries + [("counter-example", i, e.source, e.line) for i, e in enumerate(rule.counter_examples, 1)]


def _raw_sources(page: _Page) -> list[tuple[str, int, str, int | None]]:
    entries = []
    for fld, what in (("examples", "example"), ("counter_examples", "counter-example")):
        value = page.data.get(fld)
        for i, item in enumerate(value if isinstance(value, list) else []):
            if isinstance(item, dict) and isinstance(item.get("source"), str) and item["source"].strip():
                entries.append((what, i + 1, item["source"], page.lines.get(f"{fld}[{i}]")))
    return entries


def _missing_sources(file: str, rule_id: str | None, line: int | None, sources, fixture, pack: Pack) -> list[Finding]:
    """A team rule's fixture and example sources are files of its pack (or URLs)."""
    found = []
    for what, number, source, source_line in sources:
        if not source.startswith(("http://", "https://")) and not (pack.folder / source).is_file():
            found.append(Finding(file, source_line, rule_id,
                                 f"{what} {number}: source {source} is not a file of the pack",
                                 hint=f"sources are URLs or paths relative to {display_path(pack.folder)}"))
    if isinstance(fixture, str) and not (pack.folder / fixture).is_file():
        found.append(Finding(file, line, rule_id, f"fixture {fixture} is not a file of the pack",
                             hint=f"paths are relative to {display_path(pack.folder)}"))
    return found


def run_check(scope: Scope) -> list[Finding]:
    """Every problem in scope (schema, patterns, templates, probes, ids, prefixes, sources, runbook text)."""
    return sorted(scope.problems + scope.runbook, key=lambda f: (f.file, f.line or 0))


def run_test(scope: Scope) -> list[Finding]:
    """Examples claimed by their own rule, counter-examples not matched by it, no ambiguity."""
    findings: list[Finding] = []
    rulebase = scope.rulebase
    for rule in scope.subjects:
        if rule.kind == "signal":
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
    claimed = rulebase.foreign_match(example.message) or rulebase.match(example.message)
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

# 'ErrorType: message': a dotted class name, capitalised or named like an exception.
TYPE_PREFIX_RE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:_*[A-Z]\w*|\w*(?:Error|Exception|Warning|Interrupt|Exit))): \S")


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
        example = derive_example(pattern)
        if example is None:
            raise ScaffoldError("cannot make up a message that --match finds as the last traceback line "
                                "('ErrorType: message'): pass --example with a message exactly as it prints")
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
        try:
            declared = read_pack(folder, "--dir").prefix
        except RuleError as exc:
            raise ScaffoldError(str(exc)) from None
        if declared != prefix:
            raise ScaffoldError(f"{display_path(pack_file)} declares prefix {declared!r}, not {prefix!r}")
    return folder


def derive_example(pattern: str) -> str | None:
    """A message `pattern` finds, as the last traceback line: 'ErrorType: message', or None.

    A message without an exception type is raised as a RuntimeError, when the pattern still finds it.
    """
    try:
        text = _Shortest().walk(_sre_parser.parse(pattern))
        compiled = regex.compile(pattern)
    except (re.error, regex.error, _Unsupported, RecursionError):
        return None  # regex-only syntax (\p{..}, fuzzy matching): the user gives the example
    for candidate in (text, f"RuntimeError: {text}"):
        if TYPE_PREFIX_RE.match(candidate) and compiled.search(candidate) is not None:
            return candidate
    return None


class _Unsupported(Exception):
    pass


_CATEGORY_CHARS = {"DIGIT": "0", "NOT_DIGIT": "x", "SPACE": " ", "NOT_SPACE": "x", "WORD": "a", "NOT_WORD": " ",
                   "LINEBREAK": "\n", "NOT_LINEBREAK": "x"}
_CATEGORY_TESTS = {"DIGIT": str.isdecimal, "SPACE": str.isspace, "WORD": lambda c: c.isalnum() or c == "_",
                   "LINEBREAK": lambda c: c == "\n"}
# Tried in order for a negated class such as [^:\s].
_CANDIDATE_CHARS = "xa0 _-.:/X9Z,;#@!"


def _category(code) -> tuple[bool, str]:
    """CATEGORY_UNI_NOT_DIGIT -> (True, 'DIGIT')."""
    name = str(code).removeprefix("CATEGORY_").removeprefix("UNI_").removeprefix("LOC_")
    return name.startswith("NOT_"), name.removeprefix("NOT_")


class _Shortest:
    """A short string a parsed pattern matches: literals as they are, \\d 0, \\w a, \\s space, \\S and . x,
    a class's first member, repeats at least once, the first alternative; anchors and lookarounds add
    nothing (derive_example checks the result with the real pattern)."""

    def __init__(self) -> None:
        self.groups: dict[int, str] = {}

    def walk(self, items) -> str:
        return "".join(self.item(op, av) for op, av in items)

    def item(self, op, av) -> str:
        if op is _sre.LITERAL:
            return chr(av)
        if op is _sre.NOT_LITERAL:
            return "y" if chr(av) == "x" else "x"
        if op is _sre.ANY:
            return "x"
        if op is _sre.IN:
            return self.member(av)
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            low, high, sub = av
            return self.walk(sub) * max(low, min(1, high))
        if op is _sre.SUBPATTERN:
            group, _add_flags, _del_flags, sub = av
            text = self.walk(sub)
            if group is not None:
                self.groups[group] = text
            return text
        if op is _sre.ATOMIC_GROUP:
            return self.walk(av)
        if op is _sre.BRANCH:
            return self.walk(av[1][0])
        if op is _sre.GROUPREF:
            return self.groups.get(av, "")
        if op is _sre.GROUPREF_EXISTS:
            group, yes, no = av
            return self.walk(yes) if group in self.groups else self.walk(no or [])
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            return ""
        raise _Unsupported(str(op))

    def member(self, items) -> str:
        if items and items[0][0] is _sre.NEGATE:
            for char in _CANDIDATE_CHARS:
                if not self.contains(items[1:], char):
                    return char
            raise _Unsupported("negated class")
        op, av = items[0]
        if op is _sre.LITERAL:
            return chr(av)
        if op in (_sre.RANGE, _sre.RANGE_UNI_IGNORE):
            return chr(av[0])
        if op is _sre.CATEGORY:
            negated, name = _category(av)
            return _CATEGORY_CHARS["NOT_" + name if negated else name]
        raise _Unsupported(str(op))

    def contains(self, items, char: str) -> bool:
        for op, av in items:
            if op is _sre.LITERAL and chr(av) == char:
                return True
            if op in (_sre.RANGE, _sre.RANGE_UNI_IGNORE) and av[0] <= ord(char) <= av[1]:
                return True
            if op is _sre.CATEGORY:
                negated, name = _category(av)
                if _CATEGORY_TESTS[name](char) != negated:
                    return True
        return False


def _repro_script(rule_id: str, example: str) -> str:
    type_name, message = example.split(": ", 1)
    module, _, name = type_name.rpartition(".")
    import builtins

    if not module and _prints_verbatim(getattr(builtins, name, None), message):
        return (f"# Raises the message of {rule_id} exactly as it prints. Replace the raise with the call\n"
                f"# into your code that fails this way, so the example keeps being checked against it.\n"
                f"raise {name}({message!r})\n")
    # Python prints a class's module before its name, except for __main__: keep the example's spelling.
    module_line = f"    __module__ = {module!r}\n" if module else "    pass\n"
    return (f"# Raises the message of {rule_id} exactly as it prints. Replace this class and the raise with\n"
            f"# the call into your code that fails this way, so the example keeps being checked against it.\n"
            f"class {name}(Exception):\n{module_line}\n\nraise {name}({message!r})\n")


def _prints_verbatim(cls, message: str) -> bool:
    """Whether `raise cls(message)` prints 'Name: message' (KeyError quotes it, SyntaxError reformats it)."""
    if not (isinstance(cls, type) and issubclass(cls, Exception)) or issubclass(cls, SyntaxError):
        return False
    try:
        return str(cls(message)) == message
    except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError needs five arguments
        return False


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
