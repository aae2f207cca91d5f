"""`explainer explain FILE...`: explain every PyTorch error found in pasted messages and logs."""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import sys
from typing import Iterable, TextIO

from explainer._diagnosis import Diagnosis, printed_part
from explainer._lazyre import lazy_compile
from explainer.diagnose.explain import explain_text, rerender
from explainer.diagnose.logblocks import scan_blocks
from explainer.diagnose.logpatterns import dedupe_key
from explainer.diagnose.logscan import FoundError
from explainer.diagnose.render import (add_format_argument, first_line, render_json, render_nothing, render_text,
                                       use_colour)
from explainer.diagnose.sourceplaces import PYTEST_ID_RE, logged_source, torch_source
from explainer.diagnose.textframes import raising_frames
from explainer.rules.base import RuleBase, default_rulebase, problems_notice

from .placing import (drop_spans, frame_fact, merge_ranks, merge_spans, note_outer_caller, note_raising_frame, note_span,
                      printed_together, printed_values, raised_last_first)
from .ranks import (FIRST_RANK, launcher_rulebase, link_root_cause, quote_explained, quotes_a_rank,  # noqa: F401
                    ranks_note)

BARE_MESSAGE_LINES = 200  # an input this short with no 'Error:' line is read as one pasted message
MAX_DISTINCT = 1000
MAX_ALSO_AT = 20  # places listed for the warnings of one rule
FOLD_LINES = 400
MAX_VARIANTS = 3  # copies of one error with other values, shown under the first
BLOCK_CHARS = 1 << 18
NUMBER_RE = lazy_compile(r"\b(?=[a-f]*\d)[0-9a-f]{6,}\b|\d+")  # (and a hex digest or address: two hashes differ)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_argument(parser, "one JSON object per line on stdout")
    parser.add_argument("files", nargs="+", metavar="FILE", help="a log or pasted message; '-' reads stdin")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from explainer.diagnose.render import command_format

    fmt = command_format(args.format)
    out = sys.stdout
    status = 0
    for name in args.files:
        try:
            diagnoses = explain_input(name)
        except OSError as exc:  # (a binary file or damaged compressed data too: logfile.NotText)
            sys.stderr.write(f"explainer: cannot read {name}: {exc.strerror or exc}\n")
            out.write(render_nothing(name, exc.strerror or str(exc)) if fmt == "json" else "")
            status = 2
            continue
        for diagnosis in diagnoses:
            out.write(render_json(diagnosis, input=name) if fmt == "json" else _text_block(name, diagnosis, use_colour(out)))
        if not diagnoses:
            out.write(render_nothing(name) if fmt == "json" else f"{name}: no error found\n")
    out.flush()
    sys.stderr.write(problems_notice())  # broken team rules and timed-out patterns, said as the hook says them
    return status


def explain_input(name: str) -> list[Diagnosis]:
    from explainer.diagnose.logfile import GrepFailed, NotebookText, open_log, skippable_blocks, stdin_text, unnumbered

    if name == "-":
        return explain_stream(stdin_text())
    blocks = skippable_blocks(name)
    if blocks is not None:
        try:
            return explain_found(scan_blocks(blocks, lone_lines=True))
        except GrepFailed:
            pass  # read it again the plain way
    with open_log(name) as handle:  # (a saved notebook's outputs: their lines are none of the file's)
        return explain_stream(handle) if not isinstance(handle, NotebookText) else unnumbered(explain_stream(handle))


def explain_stream(stream: TextIO) -> list[Diagnosis]:
    """Every distinct error in stream, explained; repeats (e.g. one per rank) are folded together. A short input
    is one pasted message (paste.py)."""
    head = stream.read(BLOCK_CHARS)
    if head.strip() and head.count("\n") <= BARE_MESSAGE_LINES and len(head) < BLOCK_CHARS:
        from .paste import explain_paste

        return explain_paste(head)
    blocks = itertools.chain([head], iter(lambda: stream.read(BLOCK_CHARS), ""))
    return explain_found(scan_blocks(blocks, lone_lines=True))


def explain_found(found_errors: Iterable[FoundError]) -> list[Diagnosis]:
    """The errors a scan found, explained; repeats (e.g. one per rank) are folded together, and so are warnings
    of one rule (a TracerWarning at each place a trace met a tensor turned into a Python value): one diagnosis
    listing every place (facts.also_at)."""
    seen: dict[str, Diagnosis] = {}
    unexplained_warnings: set[str] = set()
    warned: dict[str, str] = {}  # rule -> key of the first warning it explained
    book = _FoldBook()
    handling: dict[int, int] = {}  # a record's line -> the line of the record it was raised while handling
    summaries: dict[str, FoundError] = {}  # torchrun's summaries that a rule of the rank's error they quote explains
    for found in found_errors:
        if found.handling:
            handling[found.line] = found.handling
        key = dedupe_key(found.text)
        if key in unexplained_warnings:
            continue
        summary = _summarises(found)
        if summary and _summary_of_reported(seen, found, key):
            continue
        if key in seen:
            _note_repeat(seen[key], found)
            continue
        if len(seen) >= MAX_DISTINCT:
            continue
        diagnosis = _explained(found)
        if quotes_a_rank(found, diagnosis):
            summaries[key] = found
        if found.warning and diagnosis.rule is None:
            # Logs are full of harmless warnings: only the ones a rule explains are news.
            if len(unexplained_warnings) < MAX_DISTINCT:
                unexplained_warnings.add(key)
            continue
        if found.warning and warned.get(diagnosis.rule) in seen:
            first = seen[warned[diagnosis.rule]]
            first.facts["occurrences"] = first.facts.get("occurrences", 1) + 1
            merge_ranks(first, found.ranks)
            _also_at(first, found)
            _show_variant(first, diagnosis)  # (the compute-before-update warning of each of three metrics)
            continue
        if found.warning and diagnosis.rule:
            warned[diagnosis.rule] = key
        partner, copy = book.partner(diagnosis.rule, found)
        if partner is None and not summary and (first := book.variant_of(diagnosis.rule, found)) in seen \
                and found.line - seen[first].facts["input_line"] <= FOLD_LINES:
            _add_variant(seen[first], diagnosis)
            continue
        if partner in seen and found.line - seen[partner].facts["input_line"] <= FOLD_LINES:
            earlier = seen.pop(partner)
            key, diagnosis = _fold(earlier, diagnosis, key, partner, keep_later=copy)
            book.folded(diagnosis.rule, found, partner, key)
        else:
            book.add(diagnosis.rule, found, key)
        seen[key] = diagnosis
    _reread_summaries(seen, summaries)
    # Several ranks' streams finish at different times: report in the order errors began.
    diagnoses = sorted(seen.values(), key=lambda d: d.facts.get("input_line", 0))
    diagnoses = drop_spans(join_companions(diagnoses))
    link_root_cause(diagnoses)
    return raised_last_first(diagnoses, handling)


def _reread_summaries(seen: dict[str, Diagnosis], summaries: dict[str, FoundError]) -> None:
    """torchrun's summary quotes the failed rank's traceback (its error file): where the rank's own output has that
    error too, the summary is the launcher's report of it (distributed.child_failed, a consequence), read with the
    launcher's rules alone and joined with the agent's line before it, as it is when no rule claims the quote."""
    for key, found in summaries.items():
        quoted = seen.get(key)
        if quoted is None or not quote_explained(found, quoted, [d for d in seen.values() if d is not quoted]):
            continue
        report = _explained(found, launcher_rulebase())
        if report.rule is None:
            continue
        del seen[key]
        partner = next((k for k, d in seen.items() if d.rule == report.rule and 0 <= found.line
                        - d.facts.get("input_line", 0) <= FOLD_LINES), None)
        if partner is not None:
            key, report = _fold(seen.pop(partner), report, key, partner)
        seen[key] = report


def _summary_of_reported(seen: dict[str, Diagnosis], found: FoundError, key: str) -> bool:
    """pytest's short summary line of a failure its report above already showed: the failed test's id goes to that
    diagnosis (a line cut at the terminal's width, "... shapes canno...", to the first report it begins that no summary
    line has named yet). False where no report stands for it."""
    reported = _cut_summary_of(seen, found)
    if reported is None:
        reported = seen.get(key)
    if reported is None:
        return False
    note_logged_place(reported, found.logged_at)
    return True


def _note_repeat(diagnosis: Diagnosis, found: FoundError) -> None:
    """Another copy of an error already explained (another rank's, a warning issued again): counted, its ranks and
    places added."""
    merge_ranks(diagnosis, found.ranks)
    diagnosis.facts["occurrences"] = diagnosis.facts.get("occurrences", 1) + 1
    if found.warning:
        _also_at(diagnosis, found)
    elif diagnosis.location is None and found.frames and "raised_in" not in diagnosis.facts:
        # a copy that comes with frames (a worker's "Unexpected bus error" line, once per worker, then the traceback
        # the paste ends with, no error line under it): where the error explained happened; the first copy (the
        # earliest rank) keeps its values
        diagnosis.location = found.location()
        note_raising_frame(diagnosis, found)
    elif not found.warning and found.frames:
        note_outer_caller(diagnosis, found)
    _note_raised_from(diagnosis, found.text)


def _explained(found: FoundError, rulebase: RuleBase | None = None) -> Diagnosis:
    """One record explained, with what the scan read around its text: its frames, the values loguru printed in
    them, the C++ source its glog prefix named, the ComfyUI node, its ranks, the error it was raised from."""
    extra = {"direct_cause": found.direct_cause} if found.direct_cause else None
    before = "\n".join(found.before)
    diagnosis = explain_text(found.text, location=found.location(), frames=found.frames, before=before, extra_facts=extra,
                             rulebase=rulebase,
                             context=f"{before}\n{found.issued}" if found.issued else None)  # (the place it was issued at)
    diagnosis.facts["input_line"] = found.line
    note_span(diagnosis, found)
    if found.node:
        diagnosis.facts["comfyui_node"] = found.node
    note_raising_frame(diagnosis, found)
    if found.values and not diagnosis.culprits:
        diagnosis.culprits = printed_values(found.values)
    if found.logged_at:
        note_logged_place(diagnosis, found.logged_at)  # the glog prefix of its first line
    merge_ranks(diagnosis, found.ranks)
    if found.ranks:
        diagnosis.facts[FIRST_RANK] = found.ranks[0]
    return diagnosis


LOG_PLACES = ("torch_source", "logged_from")


def _summarises(found: FoundError) -> bool:
    """found is a line of pytest's short test summary ("FAILED tests/test_x.py::test_y - RuntimeError: ...")."""
    return not found.frames and PYTEST_ID_RE.match(found.logged_at or "") is not None


def _cut_summary_of(seen: dict[str, Diagnosis], found: FoundError) -> Diagnosis | None:
    """The report a line of pytest's short summary that the terminal's width cut ("RuntimeError: mat1 and mat2 shapes
    canno...") summarises: the first one whose error line it begins, with no failed test named yet; None for a line
    not cut."""
    text = first_line(found.text)
    if not text.endswith("...") or len(text) < 8:
        return None
    head = text[:-3]
    return next((d for d in seen.values() if "failed_test" not in d.facts and d.error.startswith(head)), None)


def _note_raised_from(diagnosis: Diagnosis, text: str) -> None:
    """A copy of a logged message that says where torch's C++ raised it (glog's line, then "Exception raised from X at
    Y" under the copy TCPStore logged): that place is torch_source, the place the first copy's prefix named logged_from."""
    known = diagnosis.facts.get("torch_source")
    if "\nException raised from " not in text or (isinstance(known, dict) and known.get("function")):
        return
    if (source := torch_source(text)) is not None:
        if known is not None:
            diagnosis.facts.setdefault("logged_from", known)
        diagnosis.facts["torch_source"] = source


def note_logged_place(diagnosis: Diagnosis, place: str, lead: str = "") -> None:
    """Where torch's C++ or Python logged the record, as its glog prefix names it: facts.torch_source, or logged_from
    where the message names another place in torch's C++ (TCPStore's "recvValue failed", logged at TCPStore.cpp:125,
    says "Exception raised from recvBytes at .../Utils.hpp:671")."""
    logged = logged_source(place)
    if logged is None:
        return
    key, fact = logged
    if lead and key == "logged_from":
        fact["code"] = lead  # what the app's log line said before the error it logged
    known = diagnosis.facts.get(key)
    if known is None:
        diagnosis.facts[key] = fact
    elif isinstance(known, dict) and (known.get("file"), known.get("line")) != (fact["file"], fact["line"]):
        diagnosis.facts.setdefault("logged_from", fact)


def _also_at(diagnosis: Diagnosis, found: FoundError) -> None:
    """Another place a warning of the diagnosis's rule was issued: where the user's code (or the library's) met it,
    else where it was raised."""
    where = found.location()
    frame = raising_frames(found.frames)[-1] if found.frames else None
    place = where.to_dict() if where is not None else frame_fact(frame) if frame is not None else None
    if place is None:
        return
    places = diagnosis.facts.get("also_at", [])
    known = [*places, *([diagnosis.location.to_dict()] if diagnosis.location is not None else [])]
    if isinstance(diagnosis.facts.get("raised_in"), dict):
        known.append(diagnosis.facts["raised_in"])
    if len(places) < MAX_ALSO_AT and all((p.get("file"), p.get("line")) != (place["file"], place["line"])
                                         for p in known):
        diagnosis.facts["also_at"] = [*places, place]


class _FoldBook:
    """The earlier records a new one is a part of, by rule: one failure printed as several records.

    A one-line log record (a marker) and the fuller report of the same rule after it are one failure: the one
    that knows more is kept, the other's facts filling its gaps. The record may also come after the report (a
    kernel's assertion printed after the Python error). Two one-line records of one component are two events
    (two collectives that timed out), never folded together; two components' lines are one failure (a kernel's
    assertion, then THC's check that found it). A report printed without frames and, within FOLD_LINES, the
    same message (but its numbers) at the end of a traceback are copies of one error that several processes
    printed, interleaved: the traceback's own error is kept.
    """

    def __init__(self) -> None:
        self.logged: dict[str, tuple[str, set[str]]] = {}  # rule -> one-line record not yet folded, its printers
        self.reports: dict[str, str] = {}  # rule -> key of the last fuller report it explained
        self.frameless: dict[tuple[str, str], str] = {}  # (rule, message but numbers) -> key of a report without frames

    def partner(self, rule: str | None, found: FoundError) -> tuple[str | None, bool]:
        """The key of the record found folds into, and whether found is a copy (kept over the other)."""
        if not rule:
            return None, False
        if not found.logged_line:
            if rule in self.logged:
                return self.logged.pop(rule)[0], False
            if found.frames:
                return self.frameless.pop((rule, _numberless(found.text)), None), True
            return None, False
        if rule in self.reports:
            return self.reports[rule], False
        logged = self.logged.get(rule)
        if logged is not None and found.logged_by not in logged[1]:
            return logged[0], False
        return None, False

    def variant_of(self, rule: str | None, found: FoundError) -> str | None:
        """The key of an earlier report without frames of which found, also without frames, is a copy with other
        values (two ranks' "shape '[4, 1024, 64, 128]' is invalid for input of size 4194304" and "... '[1, 2048, 64,
        128]' ... 2097152"): one failure, each copy's values worth naming."""
        if not rule or found.frames or found.logged_line or found.warning:
            return None
        return self.frameless.get((rule, _numberless(found.text)))

    def folded(self, rule: str, found: FoundError, partner: str, key: str) -> None:
        if self.reports.get(rule) == partner:
            self.reports[rule] = key
        if found.logged_line and rule in self.logged:
            self.logged[rule] = (key, self.logged[rule][1] | {found.logged_by})

    def add(self, rule: str | None, found: FoundError, key: str) -> None:
        if not rule:
            return
        if found.logged_line:
            self.logged[rule] = (key, {found.logged_by})
            return
        self.reports[rule] = key
        if not found.frames:
            self.frameless[(rule, _numberless(found.text))] = key


def _add_variant(first: Diagnosis, other: Diagnosis) -> None:
    """Another copy of first's error, printed with other values (another rank's): counted, and its summary shown
    under first's (facts.printed_with), a few at most."""
    first.facts["occurrences"] = first.facts.get("occurrences", 1) + other.facts.get("occurrences", 1)
    merge_ranks(first, other.facts.get("ranks", []))
    _show_variant(first, other)


def _show_variant(first: Diagnosis, other: Diagnosis) -> None:
    """other's summary shown under first's where it says something else (other values), a few at most."""
    shown = first.facts.get("printed_with", [])
    if len(shown) < MAX_VARIANTS and other.summary != first.summary \
            and all(part.get("summary") != other.summary for part in shown):
        first.facts["printed_with"] = [*shown, {"rule": other.rule, "summary": other.summary,
                                                "input_line": other.facts.get("input_line"), "location": None}]


def _numberless(text: str) -> str:
    return NUMBER_RE.sub("N", first_line(text))


def join_companions(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """A record whose rule `joins` others (anomaly mode's "Error detected in X", printed before or after
    the error it annotates) is part of the explained error next to it in the log: one failure, shown once,
    led by that error with the companion's summary and location under it (facts.printed_with). Two companions of one
    rule (two scripts' imports failing in one paste) are one failure too: the later one goes under the earlier."""
    rules = default_rulebase().by_id if any(d.rule for d in diagnoses) else {}
    joins = {id(d): rules[d.rule].joins for d in diagnoses if d.rule in rules and rules[d.rule].joins}
    if not joins:
        return diagnoses
    kept = list(diagnoses)
    for companion in diagnoses:
        patterns = joins.get(id(companion))
        if not patterns:
            continue
        at = next(i for i, d in enumerate(kept) if d is companion)  # by identity: equal diagnoses may repeat
        line = companion.facts.get("input_line", 0)
        warning = _is_warning(companion)  # (a warning is a remark on an error next to it, not on another warning)
        neighbours = [d for d in kept[max(at - 1, 0):at] + kept[at + 1:at + 2]
                      if d.rule and (id(d) not in joins or (d.rule == companion.rule and d.facts.get("input_line", 0) < line))
                      and printed_together(companion, d)
                      and not (warning and _is_warning(d) and not _error_follows(kept, d))
                      and any(fnmatch.fnmatchcase(d.rule, p) for p in patterns)]
        if not neighbours:
            continue
        lead = min(neighbours, key=lambda d: abs(d.facts.get("input_line", 0) - line))
        lead.facts.setdefault("printed_with", []).append(printed_part(companion, line))
        merge_ranks(lead, companion.facts.get("ranks", []))
        del kept[at]
    return kept


def _error_follows(diagnoses: list[Diagnosis], warning: Diagnosis) -> bool:
    """An error comes right after the warning: the warnings before it may be one failure with it."""
    at = next(i for i, d in enumerate(diagnoses) if d is warning)
    return at + 1 < len(diagnoses) and not _is_warning(diagnoses[at + 1])


def _is_warning(diagnosis: Diagnosis) -> bool:
    """The diagnosis explains a warning ("UserWarning: ..."), not an error."""
    return first_line(diagnosis.error).split(":", 1)[0].strip().endswith("Warning")


def _fold(earlier: Diagnosis, later: Diagnosis, later_key: str, earlier_key: str,
          keep_later: bool = False) -> tuple[str, Diagnosis]:
    def known(d: Diagnosis) -> int:  # (not the place a glog prefix names: where a line was printed, not what failed)
        return sum(1 for k in d.facts if not k.startswith("_") and k not in ("input_line", "occurrences", *LOG_PLACES))

    keep, other, key = (later, earlier, later_key) if keep_later or known(later) >= known(earlier) \
        else (earlier, later, earlier_key)
    if keep_later:  # copies of one error: counted, and only the kept one's values are shown
        keep.facts["occurrences"] = keep.facts.get("occurrences", 1) + other.facts.get("occurrences", 1)
        merge_ranks(keep, other.facts.get("ranks", []))
    else:
        added = [name for name in other.facts if name not in keep.facts]
        for name in added:
            keep.facts[name] = other.facts[name]
        if any(not name.startswith("_") and name not in ("input_line", "occurrences", "ranks") for name in added):
            rerender(keep)
    if FIRST_RANK in earlier.facts:
        keep.facts[FIRST_RANK] = earlier.facts[FIRST_RANK]
    keep.facts["input_line"] = min(earlier.facts["input_line"], later.facts["input_line"])
    merge_spans(keep, earlier, later)
    if keep.location is None:
        keep.location = other.location
    return key, keep


def _text_block(name: str, diagnosis: Diagnosis, colour: bool) -> str:
    line = diagnosis.facts.get("input_line")
    where = f"{name}:{line}" if line else name
    return f"== {where}{ranks_note(diagnosis)}\n{render_text(diagnosis, colour=colour)}\n"
