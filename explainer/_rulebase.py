"""The rule base: every loaded rule, in the order they are tried, and message matching."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import RuleError
from ._rules import Rule, builtin_rules_dir, load_rule_file, rule_files

MATCH_TIMEOUT_S = 0.1
MAX_MATCH_CHARS = 100_000


@dataclass
class Match:
    rule: Rule
    groups: dict[str, Any]
    pattern_index: int


@dataclass
class RuleBase:
    rules: list[Rule]
    problems: list[RuleError] = field(default_factory=list)
    timeouts: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # Higher priority first; at equal priority, the order packs were given, then by id.
        pack_order = {}
        for rule in self.rules:
            pack_order.setdefault(rule.pack, len(pack_order))
        self.rules.sort(key=lambda r: (-r.priority, pack_order[r.pack], r.id))
        self.by_id = {r.id: r for r in self.rules}

    def match(self, text: str) -> Match | None:
        for found in self.iter_matches(text):
            return found
        return None

    def iter_matches(self, text: str):
        """Every rule that matches text, in the order they are tried."""
        text = text[:MAX_MATCH_CHARS]
        for rule in self.rules:
            if rule.kind != "error":
                continue
            found = match_rule(rule, text, self.timeouts)
            if found is not None:
                yield found


def match_rule(rule: Rule, text: str, timeouts: set[str] | None = None) -> Match | None:
    for index, pattern in enumerate(rule.patterns):
        try:
            found = pattern.search(text, timeout=MATCH_TIMEOUT_S)
        except TimeoutError:
            # A catastrophic pattern: skip it, and let the caller report it once.
            if timeouts is not None:
                timeouts.add(rule.id)
            continue
        if found is not None:
            groups = {k: _number(v) for k, v in found.groupdict().items() if v is not None}
            return Match(rule, groups, index)
    return None


def _number(value: str) -> Any:
    stripped = value.strip()
    if stripped.lstrip("-").isdigit() and len(stripped) < 30:
        return int(stripped)
    return value


def load_folder(folder: Path, *, pack: str, known_probes, display_root: Path | None = None,
                ) -> tuple[list[Rule], list[RuleError]]:
    rules, problems = [], []
    for path in rule_files(folder):
        try:
            rules.append(load_rule_file(path, pack=pack, known_probes=known_probes, display_root=display_root))
        except RuleError as exc:
            problems.append(exc)
    return rules, problems


def build_rulebase(folders: list[tuple[str, Path]], known_probes) -> RuleBase:
    """Load (pack name, folder) pairs in order; duplicate ids are problems naming both files."""
    rules: list[Rule] = []
    problems: list[RuleError] = []
    seen: dict[str, Rule] = {}
    for pack, folder in folders:
        loaded, errors = load_folder(folder, pack=pack, known_probes=known_probes)
        problems.extend(errors)
        for rule in loaded:
            if rule.id in seen:
                problems.append(RuleError(rule.file, f"duplicate id: also defined in {seen[rule.id].file}",
                                          line=rule.line, rule=rule.id, field="id"))
                continue
            seen[rule.id] = rule
            rules.append(rule)
    return RuleBase(rules, problems)


_lock = threading.Lock()
_default: RuleBase | None = None


def default_rulebase() -> RuleBase:
    """The built-in rules, loaded once per process."""
    global _default
    with _lock:
        if _default is None:
            from ._probes import load_builtin_probes

            probes = load_builtin_probes()
            _default = build_rulebase([("builtin", builtin_rules_dir())], probes)
        return _default


def reset_default_rulebase() -> None:
    global _default
    with _lock:
        _default = None
