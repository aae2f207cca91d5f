"""`explainer explain FILE...`: explain every PyTorch error found in pasted messages and logs."""

from __future__ import annotations

import argparse
import itertools
import sys
from typing import TextIO

from ._diagnosis import Diagnosis
from ._explain import explain_text
from ._logscan import dedupe_key, scan_blocks
from ._render import add_format_argument, render_json, render_text, use_colour

BARE_MESSAGE_LINES = 200  # an input this short with no 'Error:' line is read as one pasted message
MAX_DISTINCT = 1000
FOLD_LINES = 400
BLOCK_CHARS = 1 << 18


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_argument(parser, "one JSON object per line on stdout")
    parser.add_argument("files", nargs="+", metavar="FILE", help="a log or pasted message; '-' reads stdin")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ._render import choose_format

    fmt = choose_format(args.format)
    out = sys.stdout
    status = 0
    for name in args.files:
        try:
            diagnoses = explain_input(name)
        except OSError as exc:
            sys.stderr.write(f"explainer: cannot read {name}: {exc.strerror or exc}\n")
            status = 2
            continue
        for diagnosis in diagnoses:
            if fmt == "json":
                out.write(render_json(diagnosis, input=name))
            else:
                out.write(_text_block(name, diagnosis, use_colour(out)))
        if not diagnoses and fmt == "text":
            out.write(f"{name}: no error found\n")
    out.flush()
    return status


def explain_input(name: str) -> list[Diagnosis]:
    if name == "-":
        return explain_stream(sys.stdin)
    with open(name, encoding="utf-8", errors="replace") as handle:
        return explain_stream(handle)


def explain_stream(stream: TextIO) -> list[Diagnosis]:
    """Every distinct error in stream, explained; repeats (e.g. one per rank) are folded together."""
    head = stream.read(BLOCK_CHARS)
    blocks = itertools.chain([head], iter(lambda: stream.read(BLOCK_CHARS), ""))
    seen: dict[str, Diagnosis] = {}
    unexplained_warnings: set[str] = set()
    logged_lines: dict[str, str] = {}  # rule -> key of a one-line record it explained
    for found in scan_blocks(blocks):
        key = dedupe_key(found.text)
        if key in unexplained_warnings:
            continue
        if key in seen:
            _merge_ranks(seen[key], found.ranks)
            seen[key].facts["occurrences"] = seen[key].facts.get("occurrences", 1) + 1
            continue
        if len(seen) >= MAX_DISTINCT:
            continue
        diagnosis = explain_text(found.text, location=found.location())
        if found.warning and diagnosis.rule is None:
            # Logs are full of harmless warnings: only the ones a rule explains are news.
            if len(unexplained_warnings) < MAX_DISTINCT:
                unexplained_warnings.add(key)
            continue
        diagnosis.facts["input_line"] = found.line
        _note_raising_frame(diagnosis, found)
        _merge_ranks(diagnosis, found.ranks)
        logged = logged_lines.get(diagnosis.rule) if diagnosis.rule else None
        if logged is not None and found.line - seen[logged].facts["input_line"] <= FOLD_LINES:
            # A one-line log record and the fuller report after it are one failure: keep the one that
            # knows more, with the other's facts filling its gaps.
            earlier = seen.pop(logged)
            key, diagnosis = _fold(earlier, diagnosis, key, logged)
        if found.logged_line and diagnosis.rule:
            logged_lines[diagnosis.rule] = key
        seen[key] = diagnosis
    if seen:
        # Several ranks' streams finish at different times: report in the order errors began.
        return sorted(seen.values(), key=lambda d: d.facts.get("input_line", 0))
    if head.strip() and head.count("\n") <= BARE_MESSAGE_LINES and len(head) < BLOCK_CHARS:
        text = head.strip().strip("`").strip()
        if text:
            diagnosis = explain_text(text)
            if diagnosis.rule is not None:
                return [diagnosis]
    return []


def _fold(earlier: Diagnosis, later: Diagnosis, later_key: str, earlier_key: str) -> tuple[str, Diagnosis]:
    def known(d: Diagnosis) -> int:
        return sum(1 for k in d.facts if not k.startswith("_") and k not in ("input_line", "occurrences"))

    keep, other, key = (later, earlier, later_key) if known(later) >= known(earlier) else (earlier, later, earlier_key)
    for name, value in other.facts.items():
        keep.facts.setdefault(name, value)
    keep.facts["input_line"] = min(earlier.facts["input_line"], later.facts["input_line"])
    return key, keep


def _note_raising_frame(diagnosis: Diagnosis, found) -> None:
    """A pasted traceback's innermost frame (often torch's: `return F.conv2d(...)`), when it is not the
    user's line already shown as the location: it names the operation that failed."""
    if not found.frames:
        return
    frame = found.frames[-1]
    where = diagnosis.location
    if where is not None and (where.file, where.line) == (frame.file, frame.line):
        return
    diagnosis.facts["raised_in"] = {"file": frame.file, "line": frame.line, "code": frame.code}


def _merge_ranks(diagnosis: Diagnosis, ranks: list[int]) -> None:
    if ranks:
        merged = sorted(set(diagnosis.facts.get("ranks", [])) | set(ranks))
        diagnosis.facts["ranks"] = merged


def _text_block(name: str, diagnosis: Diagnosis, colour: bool) -> str:
    line = diagnosis.facts.get("input_line")
    where = f"{name}:{line}" if line else name
    return f"== {where}\n{render_text(diagnosis, colour=colour)}\n"
