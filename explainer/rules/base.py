"""The rule base: every loaded rule, in the order they are tried, and message matching."""

from __future__ import annotations

import copy
import functools
import marshal
import os
import re
import threading
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from typing import Any

from explainer._cache import (NO_CACHE, cache_file, folder_index_path, load_index, load_marshal, open_cache, save_index,
                              save_marshal, sha1)
from explainer._errors import RuleError
from explainer._gc import collecting_gc, paused_gc
from explainer._lazyre import lazy_compile

from .engine import engine_stamp, known_codes, parsed_codes
from .packs import Pack, discover_packs, display_path, team_problems_line
from .prefilter import Sample, gated_rules, gates, open_gates, required_runs
from .files import builtin_rules_dir, installed_folder_stats, rule_file_stats
from .rule import (DETAIL_FIELDS, MATCH_FIELDS, Rule, load_rule_file, rule_to_data, rules_from_index,
                   text_may_match)

MATCH_TIMEOUT_S = 0.1
MAX_MATCH_CHARS = 100_000


# Plain classes, not dataclasses: this module is imported at a crash, where making a dataclass costs a fraction
# of a millisecond each (issue 14's crash-time budget). Neither is repr'd or compared.
class Match:
    """A rule that matched, the values its pattern's named groups took and which pattern it was."""

    __slots__ = ("rule", "groups", "pattern_index")

    def __init__(self, rule: Rule, groups: dict[str, Any], pattern_index: int) -> None:
        self.rule = rule
        self.groups = groups
        self.pattern_index = pattern_index


class RuleBase:
    """The rules in the order they are tried, with what went wrong loading them."""

    def __init__(self, rules: list[Rule], problems: list[RuleError] | None = None, timeouts: set[str] | None = None,
                 packs: list[Pack] | None = None, team_problems: list[RuleError] | None = None,
                 probe_registry: LazyProbes | None = None) -> None:
        self.rules = rules
        self.problems = [] if problems is None else problems
        self.timeouts = set() if timeouts is None else timeouts
        self.packs = [] if packs is None else packs
        # The part of problems that comes from team packs: skipped at run time and reported once.
        self.team_problems = [] if team_problems is None else team_problems
        # Where a matched rule's probes come from when they are imported on demand (LazyProbes), else None.
        self.probe_registry = probe_registry
        # Rules not tried (one explanation's rules that stepped aside), and rules whose text failed to render (why).
        self.skipped, self.failed_texts = frozenset(), {}
        # Higher priority first; at equal priority, the order packs were given (team packs before
        # the built-in rules, so a team rule wins a tie), then by id.
        pack_order = {}
        for rule in self.rules:
            pack_order.setdefault(rule.pack, len(pack_order))
        self.rules.sort(key=lambda r: (-r.priority, pack_order[r.pack], r.id))
        self.by_id = {r.id: r for r in self.rules}
        self._gates: tuple | None = None
        self._opened: tuple[str, list[Rule]] | None = None

    def candidates(self, text: str) -> list[Rule]:
        """The rules whose required text text may hold, in the order they are tried: one look-up of the
        text's words for every rule, instead of each rule's literals in turn."""
        if self._opened is not None and self._opened[0] == text:
            return self._opened[1]
        if self._gates is None:
            self._gates = _cached_gated_rules([rule.gates for rule in self.rules])
        opened = [self.rules[position] for position in open_gates(text, *self._gates)]
        self._opened = (text, opened)
        return opened

    def match(self, text: str, kind: str = "error", code: str | None = None) -> Match | None:
        """The first rule of this kind that matches text; code: the raising frame's code line, where the caller
        knows it (else a rule's `code` patterns read the line printed just above the error in text)."""
        for found in self.iter_matches(text, kind, code):
            return found
        return None

    def match_above(self, text: str, found: Match | None, code: str | None = None) -> Match | None:
        """The first error rule of a higher priority than found's that matches text (any rule when found is
        None): a second reading of the same error with more context, tried only where it could win."""
        text = text[:MAX_MATCH_CHARS]
        for rule in self.candidates(text):
            if found is not None and rule.priority <= found.rule.priority:
                return None
            if rule.kind == "error" and rule.id not in self.timeouts and rule.id not in self.skipped:
                if (more := match_rule(rule, text, self.timeouts, code)) is not None:
                    return self._ready(more)
        return None

    def foreign_match(self, text: str) -> Match | None:
        """The first rule saying that text was printed by another framework, not by PyTorch."""
        return self.match(text, "foreign")

    def claim(self, text: str) -> Match | None:
        """The rule a pasted text is answered with: another framework's first, then PyTorch's."""
        return self.foreign_match(text) or self.match(text)

    def iter_matches(self, text: str, kind: str = "error", code: str | None = None):
        """Every rule of this kind that matches text, in the order they are tried."""
        text = text[:MAX_MATCH_CHARS]
        for rule in self.candidates(text):
            # A rule whose pattern once ran past the timeout is not tried again in this process:
            # a log with thousands of errors must not pay the timeout thousands of times.
            if rule.kind != kind or rule.id in self.timeouts or rule.id in self.skipped:
                continue
            found = match_rule(rule, text, self.timeouts, code)
            if found is not None:
                yield self._ready(found)

    def without(self, rule_id: str) -> RuleBase:
        """This rule base less one rule, for one explanation (the rule stepped aside): shares all else."""
        other = copy.copy(self)
        other.skipped, other._opened = self.skipped | {rule_id}, None
        return other

    def _ready(self, found: Match) -> Match:
        """found, with its rule's probes registered (a match is what needs them)."""
        if self.probe_registry is not None and found.rule.probes:
            self.probe_registry.ensure(found.rule.probes)
        return found


def _cached_gated_rules(all_gates: list) -> tuple:
    """gated_rules(all_gates), as an earlier process with the same rules' gates worked it out (a few ms at each crash
    otherwise): kept under a digest of the gates themselves, so any change of a rule's required text misses it."""
    data = marshal.dumps(all_gates)
    path = cache_file("gate-table", sha1(data).hexdigest())  # runs grouped by their text since 2026-12-07
    kept = load_marshal(path)
    if isinstance(kept, tuple) and len(kept) == 3:
        return kept
    built = gated_rules(all_gates)
    save_marshal(path, built)
    return built


def match_rule(rule: Rule, text: str, timeouts: set[str] | None = None, code: str | None = None) -> Match | None:
    """The rule's first pattern that matches text; for a rule with `code` patterns, only where one of them also
    matches the raising frame's code line (code, where the caller knows it, else the line just above the match), or
    where the pattern is not one of the rule's code_gates."""
    code_possible = None
    for index, required in enumerate(rule.literals):
        if not text_may_match(required, text):
            continue  # cannot match: no need to compile or run the pattern
        if code is not None and rule.code_sources and (not rule.code_gates or index in rule.code_gates):
            code_possible = _code_may_match(rule, code) if code_possible is None else code_possible
            if not code_possible:
                continue  # no code sign can match the known code line: the pattern could not answer
        pattern = rule.pattern(index)
        try:
            found = pattern.search(text, timeout=MATCH_TIMEOUT_S)
        except TimeoutError:
            # A catastrophic pattern: skip it, and let the caller report it once.
            if timeouts is not None:
                timeouts.add(rule.id)
            continue
        if found is not None:
            if not rule.code_sources:
                return Match(rule, _groups(found), index)
            signs = _code_signs(rule, pasted_code_line(text, found.start()) if code is None else code)
            if signs is not None or (rule.code_gates and index not in rule.code_gates):
                return Match(rule, {**(signs or {}), **_groups(found)}, index)
    return None


def pasted_code_line(text: str, at: int) -> str:
    """The raising frame's code line in a traceback pasted whole, for an error matched at position at: the line just
    above the error; for an error pasted first with its traceback under it, the last line, under the last frame."""
    above = line_above(text, at)
    if above or not FRAME_LINE_RE.search(text, at):
        return above
    lines = text.rstrip().rsplit("\n", 2)
    return lines[-1].strip() if len(lines) == 3 and FRAME_LINE_RE.match(lines[-2]) else ""


FRAME_LINE_RE = lazy_compile(r'^\s*File "[^"\n]+", line \d+', re.M)


def line_above(text: str, at: int) -> str:
    """The last line with text before position at (where the match starts): in a traceback pasted whole, the
    code line Python printed under the innermost frame, just above the error."""
    end = text.rfind("\n", 0, at)
    while end > 0:
        start = text.rfind("\n", 0, end)
        line = text[start + 1:end].strip()
        if line.strip("^~ "):  # (not Python 3.11's carets under the code)
            return line
        end = start
    return ""


def _code_may_match(rule: Rule, code: str) -> bool:
    """Whether one of the rule's code patterns may match a line of code, by their literal runs: a bare KeyError on a
    line that reads no checkpoint then costs no pattern compile (nor the `regex` import)."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    return any(text_may_match(_code_runs(source), line) for source in rule.code_sources for line in lines)


@functools.lru_cache(maxsize=None)
def _code_runs(source: str) -> list[list[str]] | None:
    return required_runs(source)


def _code_signs(rule: Rule, code: str) -> dict[str, Any] | None:
    """The groups of the first of the rule's code patterns that a code line matches (code: the raising frame's line,
    then the user's outer line where the error was raised below it, in a library), each read on its own; None if none
    does."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if not lines:
        return None
    for source in rule.code_sources:
        pattern = rule.compiled(source)
        for line in lines:
            try:
                found = pattern.search(line, timeout=MATCH_TIMEOUT_S)
            except TimeoutError:
                break
            if found is not None:
                return _groups(found)
    return None


def context_facts(rule: Rule, before: str) -> dict[str, Any]:
    """What the rule's context patterns find in the lines a log printed just before the error."""
    if not rule.context_sources or not before:
        return {}
    facts: dict[str, Any] = {}
    for source in rule.context_sources:
        try:
            found = rule.compiled(source).search(before, timeout=MATCH_TIMEOUT_S)
        except TimeoutError:
            continue
        if found is not None:
            facts = {**_groups(found), **facts}  # the first pattern that names a fact keeps it
    return facts


def _groups(found: Any) -> dict[str, Any]:
    """A match's named groups that took part, numbers as ints."""
    return {k: _number(v) for k, v in found.groupdict().items() if v is not None}


def _number(value: str) -> Any:
    stripped = value.strip()
    if stripped.lstrip("-").isdigit() and len(stripped) < 30:
        return int(stripped)
    return value


def load_folder(folder: Path, *, pack: str, known_probes, display_root: Path | None = None,
                cached: bool = False) -> tuple[list[Rule], list[RuleError]]:
    """Every rule file of folder; cached=True reuses what earlier processes learned (see _rulecache)."""
    files = None
    index = None
    if cached:
        # the index's layout is part of its name: a field moved between the two parts misses it
        layout = f"{','.join(MATCH_FIELDS)}|{','.join(DETAIL_FIELDS)}"
        context = f"{pack}|{display_root}|{_probes_key(known_probes)}|{layout}|{engine_stamp()}"
        installed = installed_folder_stats(folder) if pack == "builtin" else None
        files = None if installed else rule_file_stats(folder)
        index = folder_index_path(folder, installed or files, context)
        built = load_index(index, len(MATCH_FIELDS))
        if built is not None:
            return rules_from_index(*built), []
    files = rule_file_stats(folder) if files is None else files
    cache = open_cache(folder) if cached else NO_CACHE
    # The built-in rules' templates are checked by the test suite and by `explainer rules check`: the index a crash
    # builds does not parse them all with jinja2 again (about a third of the build); a team's rules are checked.
    check_templates = not (cached and pack == "builtin")
    rules, problems = [], []
    with parsed_codes(active=index is not None) as recorded, collecting_gc(active=index is not None):
        for path, _, _ in files:
            try:
                rules.append(load_rule_file(Path(path), pack=pack, known_probes=known_probes,
                                            display_root=display_root, cache=cache, check_templates=check_templates))
            except RuleError as exc:
                problems.append(exc)
    if index is not None and not problems:
        # the index is read at every crash: its gates are the keys fewest of the folder's examples hold
        sample = Sample([example.message for rule in rules for example in rule.examples])
        codes = known_codes(folder, [source for rule in rules for source in regex_sources(rule)], recorded)
        choose = functools.partial(gates, sample=sample)
        for rule in rules:
            rule.gates = [None if required is None else cache.gate_keys(required, choose) for required in rule.literals]
            rule.pattern_codes = {source: codes[source] for source in regex_sources(rule) if source in codes}
        save_index(index, [rule_to_data(rule) for rule in rules])  # a folder with problems is read again
    cache.save()
    return rules, problems


def regex_sources(rule: Rule) -> tuple[str, ...]:
    """Every pattern of a rule: its patterns, its context patterns and its code signs."""
    return (*rule.pattern_sources, *rule.context_sources, *rule.code_sources)


def _probes_key(known_probes) -> str:
    """What validating against known_probes depended on, for the folder index's name."""
    if known_probes is None:
        return "*"
    signature = getattr(known_probes, "signature", None)
    return signature() if signature is not None else ",".join(sorted(known_probes))


class LazyProbes(Mapping):
    """The probe registry of the default rule base. The built-in probe modules are imported only when a
    rule must be validated against them (a folder index miss) or when a matched rule's probes run, and
    then only the modules those probes are in (which module registers which probe is cached)."""

    def __init__(self) -> None:
        from explainer import probes as _probes

        self._registry = _probes.PROBES
        self._load_all = _probes.load_builtin_probes
        self._package = _probes.__name__
        self._folder = _probes.__path__[0]
        self._files: str | None = None
        self._all_loaded = False

    def _file_signature(self) -> str:
        if self._files is None:
            found = []
            for folder, _, names in os.walk(self._folder):
                where = os.path.relpath(folder, self._folder)
                for name in names:
                    if name.endswith(".py"):
                        stat = os.stat(os.path.join(folder, name))
                        found.append(f"{where}/{name}|{stat.st_size}|{stat.st_mtime_ns}")
            self._files = ",".join(sorted(found))
        return self._files

    def signature(self) -> str:
        """The built-in probe files as they are, and the names of the probes registered from elsewhere."""
        others = sorted(name for name, found in self._registry.items()
                        if not found.function.__module__.startswith(self._package + "."))
        return f"files:{self._file_signature()}|others:{','.join(others)}"

    def load_all(self) -> dict[str, Any]:
        if self._all_loaded:
            return self._registry
        self._load_all()
        self._all_loaded = True
        where = {name: found.function.__module__ for name, found in self._registry.items()
                 if found.function.__module__.startswith(self._package + ".")}
        path = cache_file("probes", self._file_signature())
        if load_marshal(path) != where:
            save_marshal(path, where)
        return self._registry

    def ensure(self, names: list[str]) -> None:
        """Make sure the named probes are registered: import their modules, or every module."""
        missing = [name for name in names if name not in self._registry]
        if not missing:
            return
        where = load_marshal(cache_file("probes", self._file_signature()))
        modules = {where.get(name) for name in missing} if isinstance(where, dict) else {None}
        if None in modules:
            self.load_all()
            return
        for module in sorted(modules):
            import_module(module)
        if any(name not in self._registry for name in missing):
            self.load_all()

    def __getitem__(self, name: str) -> Any:
        if name not in self._registry:
            self.load_all()
        return self._registry[name]

    def __iter__(self):
        return iter(self.load_all())

    def __len__(self) -> int:
        return len(self.load_all())


def load_pack(pack: Pack, known_probes, cached: bool = False) -> tuple[list[Rule], list[RuleError]]:
    """A team pack's rules (rule.pack is its prefix); an id outside the pack's prefix is a problem."""
    loaded, problems = load_folder(pack.folder, pack=pack.prefix, known_probes=known_probes,
                                   display_root=Path.cwd(), cached=cached)
    rules = []
    for rule in loaded:
        if not rule.id.startswith(pack.prefix + "."):
            problems.append(RuleError(
                rule.file, f"id does not start with the pack's prefix '{pack.prefix}.' "
                f"(declared in {display_path(pack.pack_file)})", line=rule.line, rule=rule.id, field="id",
                hint=f"rename it '{pack.prefix}.{rule.id.split('.', 1)[-1]}'"))
            continue
        rules.append(rule)
    return rules, problems


def build_rulebase(folders: list[tuple[str, Path]], known_probes, *, packs: list[Pack] = (),
                   pack_problems: list[RuleError] = (), cached: bool = False,
                   cached_folders: bool | None = None) -> RuleBase:
    """Team packs, then (pack name, folder) pairs, in order; duplicate ids are problems naming both files.

    pack_problems are discovery problems of the team packs (see discover_packs); cached_folders: whether the folders
    (not the packs) are read from the cache, as cached says unless given.
    """
    rules: list[Rule] = []
    problems: list[RuleError] = []
    team_problems: list[RuleError] = list(pack_problems)
    seen: dict[str, Rule] = {}
    from_cache = cached if cached_folders is None else cached_folders
    builtin = [(load_folder(folder, pack=name, known_probes=known_probes, cached=from_cache), problems)
               for name, folder in folders]
    # Any prefix a built-in id uses is reserved, beyond the categories read_pack already refuses.
    taken = {rule.id.split(".")[0]: rule for (loaded, _), _ in builtin for rule in loaded}
    accepted, team = [], []
    for pack in packs:
        if pack.prefix in taken:
            team_problems.append(RuleError(
                display_path(pack.pack_file), f"prefix {pack.prefix!r} is used by the built-in rules "
                f"({taken[pack.prefix].file})", hint="use your team's or company's name"))
            continue
        accepted.append(pack)
        team.append((load_pack(pack, known_probes, cached), team_problems))
    for (loaded, errors), sink in team + builtin:
        sink.extend(errors)
        for rule in loaded:
            if rule.id in seen:
                sink.append(RuleError(rule.file, f"duplicate id: also defined in {seen[rule.id].file}",
                                      line=rule.line, rule=rule.id, field="id"))
                continue
            seen[rule.id] = rule
            rules.append(rule)
    return RuleBase(rules, team_problems + problems, packs=accepted, team_problems=team_problems)


_lock = threading.Lock()
_default: RuleBase | None = None
_noticed: set[str] = set()


def default_rulebase() -> RuleBase:
    """The built-in rules plus every discovered team pack (see _packs), loaded once per process."""
    global _default
    with _lock:
        if _default is None:
            probes = LazyProbes()
            try:
                # A pack's probes are imported after the built-in ones, as a clash must be reported there.
                packs, pack_problems = discover_packs(before_probes=probes.load_all)
            except Exception as exc:  # a broken environment must not cost the built-in rules
                packs, pack_problems = [], [RuleError("team rule packs", f"discovery failed: {exc!r}")]
            with paused_gc():
                _default = build_rulebase([("builtin", builtin_rules_dir())], probes, packs=packs,
                                          pack_problems=pack_problems, cached=True)
            _default.probe_registry = probes
        return _default


def reset_default_rulebase() -> None:
    global _default
    with _lock:
        _default = None
        _noticed.clear()


def problems_notice() -> str:
    """Lines for the hook, each printed once per process: broken team rules, patterns that timed out, and rules whose
    text failed to render."""
    with _lock:
        rulebase = _default
        if rulebase is None:
            return ""
        lines = []
        if rulebase.team_problems and "load" not in _noticed:
            _noticed.add("load")
            lines.append(team_problems_line(rulebase.team_problems))
        for rule_id in sorted(rulebase.timeouts - _noticed):
            _noticed.add(rule_id)
            lines.append(f"torch-explainer: rule {rule_id} took over {MATCH_TIMEOUT_S}s to match and was "
                         f"skipped; run 'explainer rules test'\n")
        for rule_id, failure in sorted(rulebase.failed_texts.items()):
            if (key := f"text {rule_id}") not in _noticed:
                _noticed.add(key)
                lines.append(f"torch-explainer: rule {rule_id}'s text failed to render ({failure}) and it was "
                             f"skipped; run 'explainer rules test'\n")
        return "".join(lines)
