"""`explainer rules check/test`: validate rule files and test them against their examples.

Findings print as `file:line: rule ID: message` so editors and CI logs link to the line.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from explainer._errors import RuleError

from .base import MATCH_TIMEOUT_S, RuleBase, build_rulebase, match_rule
from .packs import PACK_FILE, Pack, discover_packs, display_path
from .files import builtin_rules_dir, rule_files
from .rule import FRONT_MATTER_RE, ID_RE, Example, Rule, _display, parse_yaml_with_lines


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
    unloaded: int = 0  # rule files in scope that did not load (so `test` cannot test their rules)


# Runbook pages share these sections, so every page reads the same way (runbooks/shape/matmul.md).
SECTIONS = ("What it means", "Likely causes", "How to confirm", "Fix")
# Problems build_rulebase finds between files, after loading; check recomputes duplicates over
# every file, loaded or not, so that one run reports them all.
_DUPLICATE = "duplicate id:"
_OUTSIDE_PREFIX = "id does not start with the pack's prefix"


def load_scope(paths: Iterable[str] = ()) -> Scope:
    """Built-in rules plus every discovered pack, plus the packs holding PATHs; subjects under PATHs."""
    from explainer.probes import load_builtin_probes

    paths = [Path(p) for p in paths]
    probes = load_builtin_probes()
    builtin = builtin_rules_dir()
    findings, extra = _command_line_packs(paths, builtin)
    packs, pack_problems = discover_packs(extra=extra)
    # Checking a team pack: the built-in rules it competes with come from the index their last full load wrote (a
    # folder is indexed only when every rule in it loaded), not parsed and compiled again (seconds per command).
    builtin_from_index = bool(paths) and not any(_under(path, builtin) for path in paths)
    rulebase = build_rulebase([("builtin", builtin)], probes, packs=packs, pack_problems=pack_problems,
                              cached_folders=builtin_from_index)
    in_scope = functools.partial(_in_scope, paths)
    subjects = [r for r in rulebase.rules if in_scope(r.file)]
    load_errors: dict[str, RuleError] = {}
    for problem in rulebase.problems:
        if problem.message.startswith(_DUPLICATE):
            continue
        if in_scope(problem.file, problem.message):
            findings.append(from_error(problem))
        if not problem.message.startswith(_OUTSIDE_PREFIX):
            load_errors.setdefault(problem.file, problem)
    runbook = _check_files(rulebase, builtin, in_scope, load_errors, findings)
    unloaded = {p.file for p in rulebase.problems if p.file.endswith(".md") and in_scope(p.file)}
    return Scope(rulebase, subjects, findings, runbook, len(unloaded - {r.file for r in subjects}))


def _command_line_packs(paths: list[Path], builtin: Path) -> tuple[list[Finding], list[tuple[Path, str]]]:
    """(problems with the PATHs, the pack folders holding them outside the built-in rules)."""
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
    return findings, extra


def _in_scope(paths: list[Path], file: str, text: str = "") -> bool:
    return not paths or any(_under(Path(file), p) or display_path(p) in text for p in paths)


def _check_files(rulebase: RuleBase, builtin: Path, in_scope, load_errors: dict[str, RuleError],
                 findings: list[Finding]) -> list[Finding]:
    """Every rule file, loaded or not, in load order: adds its problems to findings (sources its pack lacks,
    ids outside the pack's prefix, duplicate ids) and returns its runbook text problems."""
    loaded = {r.file: r for r in rulebase.rules}
    runbook: list[Finding] = []
    first_file: dict[str, str] = {}  # id -> the file that defines it first, in the order rules load
    for path, shown, pack in _files_in_load_order(rulebase, builtin):
        rule, error, wanted = loaded.get(shown), load_errors.get(shown), in_scope(shown)
        page = _read_page(path) if wanted or rule is None else None
        rule_id, line = (rule.id, rule.line) if rule is not None else (_raw_id(page), _page_id_line(page))
        if wanted:
            findings.extend(_source_findings(rule, page, shown, rule_id, line, error, pack))
        if wanted and page is not None and page.body.strip():
            runbook.extend(_missing_sections(page, shown, rule_id))
        if rule is None and rule_id is not None and pack is not None and not rule_id.startswith(pack.prefix + "."):
            if wanted and error is not None:  # without a load error, build_rulebase reported it
                findings.append(_outside_prefix(shown, line, rule_id, pack))
            continue  # never loaded, as a rule outside its prefix never is
        if rule_id is None:
            continue
        if rule_id not in first_file:
            first_file[rule_id] = shown
        elif wanted:
            findings.append(Finding(shown, line, rule_id, f"id: {_DUPLICATE} also defined in {first_file[rule_id]}",
                                    hint="ids are unique across the built-in rules and every pack: rename one"))
    return runbook


def _page_id_line(page: _Page | None) -> int | None:
    return page.lines.get("id", 2) if page else None


def _source_findings(rule: Rule | None, page: _Page | None, shown: str, rule_id: str | None, line: int | None,
                     error: RuleError | None, pack: Pack | None) -> list[Finding]:
    """A loaded team rule's sources that its pack lacks; for a file that did not load, its further load
    problems too (the first is reported with the rulebase's)."""
    lines = page.lines if page is not None else {}
    if rule is not None:
        if pack is None:
            return []
        return _missing_sources(rule.file, rule.id, lines.get("fixture", rule.line), _rule_sources(rule, lines),
                                rule.fixture, pack)
    if page is None or page.data is None:
        return []
    found = [from_error(problem) for problem in error.problems[1:]] if error is not None else []
    if pack is not None:
        found += _missing_sources(shown, rule_id, lines.get("fixture", line), _raw_sources(page),
                                  page.data.get("fixture"), pack)
    return found


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


def _rule_sources(rule: Rule, lines: dict[str, int]) -> list[tuple[str, int, str, int | None]]:
    """(what, number, source, the line of its `source:` field, else of its item) of a loaded rule's examples."""
    return [(what, i, e.source, lines.get(f"{fld}[{i - 1}].source", e.line))
            for fld, what, examples in (("examples", "example", rule.examples),
                                        ("counter_examples", "counter-example", rule.counter_examples))
            for i, e in enumerate(examples, 1)]


def _raw_sources(page: _Page) -> list[tuple[str, int, str, int | None]]:
    entries = []
    for fld, what in (("examples", "example"), ("counter_examples", "counter-example")):
        value = page.data.get(fld)
        for i, item in enumerate(value if isinstance(value, list) else []):
            if isinstance(item, dict) and isinstance(item.get("source"), str) and item["source"].strip():
                entries.append((what, i + 1, item["source"],
                                page.lines.get(f"{fld}[{i}].source", page.lines.get(f"{fld}[{i}]"))))
    return entries


def _missing_sources(file: str, rule_id: str | None, line: int | None, sources, fixture, pack: Pack) -> list[Finding]:
    """A team rule's fixture and example sources are files of its pack (or URLs); line: the `fixture:` field's."""
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
    return sorted(scope.problems + scope.runbook + _compile_findings(scope.subjects), key=lambda f: (f.file, f.line or 0))


def _compile_findings(rules: list[Rule]) -> list[Finding]:
    """Templates that parse but that jinja2 cannot compile: loading only parses them, rendering would fail."""
    from .templates import compile_problem

    found = []
    for rule in rules:
        lines = _field_lines_of(rule)
        for fld, source in dict.fromkeys(_template_fields(rule)):
            if (problem := compile_problem(source)) is not None:
                found.append(Finding(rule.file, lines.get(fld, rule.line), rule.id,
                                     f"{fld}: template does not compile: {problem}", hint=f"the template: {source[:120]}"))
    return found


def _template_fields(rule: Rule) -> list[tuple[str, str]]:
    """(field, template) for each of the rule's templates: 'summary[0]', 'fixes[1]', or 'fixes[1][0]' for the first
    alternative of a fix written as a list (as a rule file's field lines name them)."""
    fields = [(f"summary[{i}]", source) for i, source in enumerate(rule.summary)]
    for i, alternatives in enumerate(rule.fixes):
        fields += [(f"fixes[{i}]" if len(alternatives) == 1 else f"fixes[{i}][{j}]", source)
                   for j, source in enumerate(alternatives)]
    return fields


def _field_lines_of(rule: Rule) -> dict[str, int]:
    """The line of each field of the rule's file (a loaded rule keeps only its id's)."""
    page = _read_page(Path(rule.file))
    return page.lines if page is not None else {}


def run_test(scope: Scope, explain: Callable[..., Any] | None = None) -> list[Finding]:
    """Examples claimed by their own rule, counter-examples not matched by it, no ambiguity; with explain
    (explain_text of the diagnose layer), every example's summary rendered from its own message."""
    findings: list[Finding] = []
    rulebase = scope.rulebase
    for rule in scope.subjects:
        if rule.kind == "signal":
            continue
        findings.extend(_unguarded_override(rulebase, rule))
        for number, example in enumerate(rule.examples, 1):
            failed = _test_example(rulebase, rule, number, example)
            if not failed:
                failed = _render_failures(rule, number, example)
            if not failed and explain is not None:
                failed = title_only(rule, number, example, explain(example.message, rulebase=rulebase))
            findings.extend(failed)
        for number, example in enumerate(rule.counter_examples, 1):
            timeouts: set[str] = set()
            if match_rule(rule, example.message, timeouts) is not None:
                findings.append(Finding(rule.file, example.line, rule.id,
                                        f"counter-example {number} matches the rule",
                                        hint="make the pattern more precise so this near miss is left alone"))
            elif timeouts:
                findings.append(_timeout(rule, example, f"counter-example {number}"))
    return findings


def _unguarded_override(rulebase: RuleBase, rule: Rule) -> list[Finding]:
    """A team rule without `requires` that answers built-in rules' own examples before them: it replaces their
    diagnosis for every such error, the team's or not. With `requires`, it steps aside wherever its probes do not
    find what it names (the team's object), and the built-in rule answers."""
    if rule.pack == "builtin" or rule.kind != "error" or rule.requires:
        return []
    taken = [f"{other.id} example {number}" for other in rulebase.rules if other.pack == "builtin" and other.kind == "error"
             for number, example in enumerate(other.examples, 1)
             if match_rule(rule, example.message) is not None and (claimed := rulebase.claim(example.message)) is not None
             and claimed.rule.id == rule.id]
    if not taken:
        return []
    shown = ", ".join(taken[:3]) + (f" and {len(taken) - 3} more" if len(taken) > 3 else "")
    return [Finding(rule.file, _field_lines_of(rule).get("patterns", rule.line), rule.id,
                    f"answers {len(taken)} built-in rule example{'s' if len(taken) != 1 else ''} before their own rule "
                    f"({shown}), whatever raised them",
                    hint="add `requires: [FACT]`, a fact the rule's probe provides only where it finds your object: "
                         "elsewhere the rule steps aside and the next rule answers; or make the patterns more precise")]


def _test_example(rulebase: RuleBase, rule: Rule, number: int, example: Example) -> list[Finding]:
    timeouts: set[str] = set()
    if match_rule(rule, example.message, timeouts) is None:
        if timeouts:
            return [_timeout(rule, example, f"example {number}")]
        return [Finding(rule.file, example.line, rule.id, f"example {number} does not match the rule's patterns",
                        hint="examples are verbatim 'ErrorType: message' lines; test the pattern with "
                             "regex.search(pattern, message)")]
    claimed = rulebase.claim(example.message)
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


def _render_failures(rule: Rule, number: int, example: Example) -> list[Finding]:
    """Each template that raises when rendered with the facts the example's message gives (its pattern's groups,
    error_type, message): a template's own bug (`{{ n / 0 }}`, an attribute of a number), found before a crash does;
    a template that needs a fact the message lacks is passed over, as at run time."""
    from .templates import compile_problem, render_failure

    found = match_rule(rule, example.message)
    if found is None:
        return []
    first = example.message.split("\n", 1)[0]
    facts = {"error_type": first.split(":", 1)[0] if ":" in first else "", "message": example.message, **found.groups}
    failures = [(fld, source, problem) for fld, source in dict.fromkeys(_template_fields(rule))
                if compile_problem(source) is None and (problem := render_failure(source, facts)) is not None]
    lines = _field_lines_of(rule) if failures else {}
    return [Finding(rule.file, lines.get(fld, rule.line), rule.id,
                    f"{fld}: {problem.partition(': ')[0]} rendering it with example {number}'s facts: "
                    f"{problem.partition(': ')[2]}",
                    hint="the template fails with every fact it names known; at run time the rule steps aside for "
                         f"the next one. The template: {source[:120]}")
            for fld, source, problem in failures]


def title_only(rule: Rule, number: int, example: Example, diagnosis: Any) -> list[Finding]:
    """A finding when no summary template rendered for an example, so its diagnosis says only the title."""
    if diagnosis.rule != rule.id or not rule.summary or diagnosis.summary != rule.title:
        return []
    if any(template.strip() == rule.title for template in rule.summary):
        return []
    return [Finding(rule.file, example.line, rule.id,
                    f"example {number}: no summary template renders for it, so its diagnosis says only the title",
                    hint="a template renders only when every fact it names is known: end the summary list with "
                         "one that names only groups this example's pattern captures, or guard the others "
                         "with {% if name is defined %}")]


def _timeout(rule: Rule, example: Example, what: str) -> Finding:
    return Finding(rule.file, example.line, rule.id,
                   f"{what}: a pattern took over {MATCH_TIMEOUT_S}s to match and was stopped",
                   hint="the pattern backtracks catastrophically: avoid nested repeats such as (a|aa)+ or (\\w+\\s?)*")


# --- team rules' fixtures: each run in its own interpreter, as `python FIXTURE` runs it ---

FIXTURE_TIMEOUT_S = 60
_TIMED_OUT = object()
# Writes the message the script raises, as Python prints it, to the file named first (its output is its own).
_RUN_FIXTURE = """\
import os, runpy, sys, traceback
out, path = sys.argv[1], sys.argv[2]
sys.argv, sys.path[0] = [path], os.path.dirname(path)
try:
    runpy.run_path(path, run_name="__main__")
except BaseException as exc:
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("".join(traceback.format_exception_only(type(exc), exc)).rstrip("\\n"))
"""


def run_fixtures(scope: Scope) -> tuple[list[Finding], int]:
    """Run each team rule's `fixture:` script (all at once, one process each, stopped after FIXTURE_TIMEOUT_S) and
    check what it raises: its rule claims the message, and an example whose source is the fixture is that message
    verbatim. Built-in rules' fixtures are the test suite's to run. Returns the findings and how many ran."""
    folders = {pack.prefix: pack.folder for pack in scope.rulebase.packs}
    runs = [(rule, folders[rule.pack]) for rule in scope.subjects
            if rule.pack in folders and rule.fixture and (folders[rule.pack] / rule.fixture).is_file()]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        raised = list(pool.map(lambda run: _raise(run[1] / run[0].fixture, run[1]), runs))
    findings = [f for (rule, _), text in zip(runs, raised) for f in _fixture_findings(scope.rulebase, rule, text)]
    return findings, len(runs)


def _raise(script: Path, pack_folder: Path) -> object:
    """The message script raises (None: it raised nothing; _TIMED_OUT: it was stopped), run from its pack's folder."""
    with tempfile.TemporaryDirectory(prefix="explainer-fixture-") as scratch:
        out = Path(scratch) / "raised.txt"
        try:
            subprocess.run([sys.executable, "-c", _RUN_FIXTURE, str(out), str(script.resolve())], cwd=pack_folder,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=FIXTURE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return _TIMED_OUT
        return out.read_text(encoding="utf-8", errors="replace") if out.is_file() else None


def _fixture_findings(rulebase: RuleBase, rule: Rule, text: object) -> list[Finding]:
    what = f"fixture {rule.fixture}"
    page = _read_page(Path(rule.file))  # for the lines of the fields named (a loaded rule keeps only its id's)
    lines = page.lines if page is not None else {}
    line = lines.get("fixture", rule.line)
    if text is _TIMED_OUT:
        return [Finding(rule.file, line, rule.id, f"{what} ran over {FIXTURE_TIMEOUT_S}s and was stopped",
                        hint="a fixture only raises the rule's error: no training, no waiting")]
    if not isinstance(text, str):
        return [Finding(rule.file, line, rule.id, f"{what} raised no error",
                        hint="the fixture is a script that raises the rule's message when run as `python FIXTURE`")]
    shown = text if len(text) <= 300 else text[:300] + "..."
    claimed = rulebase.claim(text)
    if claimed is None or claimed.rule.id != rule.id:
        by = f"claimed first by {claimed.rule.id}" if claimed else "which no rule matches"
        return [Finding(rule.file, line, rule.id, f"{what} raised {shown!r}, {by}",
                        hint="the error's wording changed, or the script fails before the call: make the pattern "
                             "and the example the message as it prints now")]
    return [Finding(rule.file, lines.get(f"examples[{number - 1}].message", example.line), rule.id,
                    f"example {number} (source {example.source}) is not the message its fixture raises: {shown!r}",
                    hint="examples are verbatim: paste the message exactly as the fixture prints it")
            for number, example in enumerate(rule.examples, 1)
            if example.source == rule.fixture and example.message != text]
