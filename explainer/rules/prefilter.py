"""The literal prefilter: the plain text every match of a pattern must contain, read from the pattern's
syntax tree, so that matching can skip (and never compile) a pattern whose required text is absent."""

from __future__ import annotations

import re

from explainer._lazyre import cached_compile

MAX_ALTERNATIVES = 16
MIN_RUN = 2
# First in an alternative whose runs are to be looked for in the case-folded text (a pattern that
# ignores case); a run is never empty, and the empty string is in any text.
IGNORE_CASE = ""
WORD_RE = cached_compile(r"\w+")
# A gate: the one key per alternative looked up for every rule at once (RuleBase.candidates). "w" a whole
# word of the text, "s" a run found anywhere in it; capitals look in the case-folded text.
WORD_GATE, TEXT_GATE = "w", "s"


def required_runs(source: str) -> list[list[str]] | None:
    """What every match of the pattern must contain, as alternatives of plain-text runs: the pattern can
    match text only if, for one alternative, every run is in the text. None: no shortcut.

    Read from the pattern's syntax tree (the standard library's parser; a pattern it cannot read gives
    None, which only means "no shortcut"; one that ignores case, its ASCII runs case-folded, marked
    IGNORE_CASE). Runs inside optional parts, classes, backreferences and lookarounds are not required;
    alternation gives alternatives.
    """
    try:
        from re import _parser as parser  # the stdlib's own; private, so any failure means "no shortcut"

        # group names do not change what is required, and `regex` allows one name twice; a backreference
        # requires nothing (in its place, text of any length, which also ends the run before it)
        tree = parser.parse(re.sub(r"\(\?P=\w+\)", "(?:.*)", re.sub(r"\(\?P<\w+>", "(?:", source)))
        found = _requirements(list(tree), parser)
    except Exception:
        return None
    if not found or any(not alternative for alternative in found):
        return None
    if tree.state.flags & re.IGNORECASE:
        found = [{IGNORE_CASE, *alternative} for alternative in found]
    if any(IGNORE_CASE in alternative for alternative in found):
        # An alternative with runs that ignore case is looked for in the case-folded text, all its runs
        # case-folded (plain ASCII: any text the pattern matches holds them there).
        if not all(run.isascii() for alternative in found if IGNORE_CASE in alternative for run in alternative):
            return None
        found = [{run.casefold() for run in alternative} if IGNORE_CASE in alternative else alternative
                 for alternative in found]
    # an alternative that holds more than another adds nothing: the smaller one is tried first anyway
    minimal = {frozenset(a) for a in found if not any(b < a for b in found)}
    return sorted(sorted(alternative) for alternative in minimal)


def _requirements(items: list, parser) -> list[set[str]]:
    """Alternatives (sets of runs) a sequence of parsed items requires; past MAX_ALTERNATIVES, the runs
    they all share."""
    constants = parser  # opcode names are module constants there
    result: list[set[str]] = [set()]
    run: list[str] = []

    def close() -> None:
        if len(run) >= MIN_RUN:
            for alternative in result:
                alternative.add("".join(run))
        run.clear()

    for op, value in items:
        if op is constants.LITERAL:
            run.append(chr(value))
            continue
        close()
        inner: list[set[str]] = []
        if op is constants.SUBPATTERN:
            _group, add_flags, _del_flags, body = value
            inner = _requirements(list(body), parser)
            if add_flags & re.IGNORECASE:  # (?i:...): its plain-ASCII runs, in the case-folded text (required_runs)
                ascii_only = all(run.isascii() for alternative in inner for run in alternative)
                inner = [{IGNORE_CASE, *alternative} for alternative in inner if alternative] if ascii_only else []
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT, constants.POSSESSIVE_REPEAT):
            low, _high, body = value
            if low >= 1:
                inner = _requirements(list(body), parser)
        elif op is constants.ATOMIC_GROUP:
            inner = _requirements(list(value), parser)
        elif op is constants.BRANCH:
            inner = [alternative for branch in value[1] for alternative in _requirements(list(branch), parser)]
        if inner:
            result = _combined(result, inner)
    close()
    return result


def _combined(before: list[set[str]], inner: list[set[str]]) -> list[set[str]]:
    """What a sequence requires from what its start and its next item each require. Past MAX_ALTERNATIVES
    alternatives, what either part requires on its own (the one whose weakest alternative holds the longer
    run: the rarer text; the start's on a tie), else what all share."""
    product = [a | b for a in before for b in inner]
    if len(product) <= MAX_ALTERNATIVES:
        return product
    parts = [part for part in (before, inner) if len(part) <= MAX_ALTERNATIVES and all(part)]
    if parts:
        return max(parts, key=lambda part: min(max(len(run) for run in alternative) for alternative in part))
    return [set.intersection(*product)]  # what every alternative needs: still required


class Sample:
    """Real messages (the rules' examples) to choose gates by: how many of them hold a word, how often they hold a
    run (counted in all of them joined, a pass in C: a rare run is rare either way)."""

    def __init__(self, texts: list[str]) -> None:
        self._texts = {False: texts, True: [text.casefold() for text in texts]}
        self._joined = {folded: "\0".join(found) for folded, found in self._texts.items()}
        self._words: dict[bool, dict[str, int]] = {}
        self._runs: dict[tuple[bool, str], int] = {}

    def holding(self, kind: str, key: str, folded: bool) -> int:
        if kind == WORD_GATE:
            if folded not in self._words:
                counts: dict[str, int] = {}
                for text in self._texts[folded]:
                    for word in set(WORD_RE.findall(text)):
                        counts[word] = counts.get(word, 0) + 1
                self._words[folded] = counts
            return self._words[folded].get(key, 0)
        if (folded, key) not in self._runs:
            self._runs[(folded, key)] = self._joined[folded].count(key)
        return self._runs[(folded, key)]


def gates(required: list[list[str]] | None, sample: Sample | None = None) -> list[str] | None:
    """One key per alternative of required (see required_runs): a text lacking every key cannot match.
    A word a run holds whole (its characters on both sides inside the run are not word characters, so the
    text holds it as a word of its own), else a run; of those, the one fewest messages of sample hold, then
    the longest. None: no shortcut."""
    if required is None:
        return None
    keys = []
    for alternative in required:
        folded = alternative[0] == IGNORE_CASE
        runs = [run for run in alternative if run]
        words = [m.group() for run in runs for m in WORD_RE.finditer(run) if 0 < m.start() and m.end() < len(run)]
        options = [(WORD_GATE, word) for word in words] or [(TEXT_GATE, run) for run in runs]

        def cost(option: tuple[str, str], folded: bool = folded) -> tuple[int, int]:
            return (0 if sample is None else sample.holding(*option, folded)), -len(option[1])

        kind, key = min(options, key=cost) if len(options) > 1 else options[0]  # (a lone option costs no count)
        keys.append((kind.upper() if folded else kind) + key)
    return keys


def gated_rules(all_gates: list[list[list[str] | None]]) -> tuple[dict[str, list[int]], tuple[dict, dict], list[int]]:
    """For rules given by position (each a list of its patterns' gates): which rules each whole-word key opens,
    which rules each run opens (runs looked for in the text, then runs looked for in the case-folded text), and the
    rules with a pattern that has no shortcut (always tried)."""
    words: dict[str, list[int]] = {}
    cased: dict[str, list[int]] = {}
    folded: dict[str, list[int]] = {}
    always = []
    for position, pattern_gates in enumerate(all_gates):
        if any(keys is None for keys in pattern_gates):
            always.append(position)
            continue
        for key in sorted({key for keys in pattern_gates for key in keys}):
            if key[0] in (WORD_GATE, WORD_GATE.upper()):
                words.setdefault(key, []).append(position)
            else:
                (folded if key[0].isupper() else cased).setdefault(key[1:], []).append(position)
    return words, (cased, folded), always


def open_gates(text: str, words: dict[str, list[int]], runs: tuple[dict, dict], always: list[int]) -> list[int]:
    """The positions of the rules (see gated_rules) that may match text, in order."""
    folded = text.casefold()
    present = {WORD_GATE + word for word in WORD_RE.findall(text)}
    present.update(WORD_GATE.upper() + word for word in WORD_RE.findall(folded))
    found = set(always)
    for key in present.intersection(words):
        found.update(words[key])
    cased_runs, folded_runs = runs
    # one pass per run text, not per rule: a run many rules require is looked for once
    for haystack, by_run in ((text, cased_runs), (folded, folded_runs)):
        for run in [run for run in by_run if run in haystack]:
            found.update(by_run[run])
    return sorted(found)


def text_may_match(required: list[list[str]] | None, text: str) -> bool:
    if required is None:
        return True
    folded = None
    for alternative in required:
        haystack = text
        if alternative[0] == IGNORE_CASE:  # sorted first: the empty string
            folded = text.casefold() if folded is None else folded
            haystack = folded
        if all(run in haystack for run in alternative):
            return True
    return False
