"""Scanning text that arrives in large blocks: a block that cannot start an error, read while no error is
open, is skipped without the per-line work (logfile.py marks such blocks with grep's help), and so is a stretch of a
file's block between the lines that hold a trigger literal."""

from __future__ import annotations

import bisect
import codecs
import itertools
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from .loglines import MAX_MESSAGE_CHARS, clean_line_record, only_mentions
from .logpatterns import EMBEDDED_RE, RANK_TAG_RES, TRACEBACK_RE, TRIGGER_RE
from .logscan import STALE_LINES, FoundError, Scanner, scan
from .textframes import frame_match

MAX_PENDING_CHARS = 1 << 20
TAIL_BYTES = 4096  # of a skipped block, read for its last lines
TAIL_LINES = 16
LEGACY_ERRORS = "explainer-cp1252"  # a codec error handler: bytes that are not UTF-8 read as Windows' cp1252


def _legacy_bytes(exc: UnicodeError) -> tuple[str, int]:
    """A log written in a Windows or Latin-1 locale (a user's folder named andr\\xe9): its bytes that are not UTF-8 read
    as cp1252 (latin-1 for the five it leaves undefined), never U+FFFD; the rest of the text stays UTF-8."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    text = "".join(bytes((byte,)).decode("cp1252", "ignore") or chr(byte) for byte in exc.object[exc.start:exc.end])
    return text, exc.end


codecs.register_error(LEGACY_ERRORS, _legacy_bytes)

LONE_LINES = 32  # the last lines with a trigger literal kept, for a log in which no record is found


class LoneLines:
    """The last lines of a log that hold a trigger literal ("Got cutlass error: Error Internal at: 363", printed
    just before a process exits): in a log where no record (error line, traceback, marker) is found, each is tried
    as a message of its own, reported only when a rule explains it. Found by searching each block read for the
    trigger literals, so lines without one cost nothing."""

    def __init__(self) -> None:
        self.lines: deque[tuple[int, str]] = deque(maxlen=LONE_LINES)

    def collect(self, lines: list[str], triggers: list[int], number: int) -> None:
        """The lines of a block (its first numbered number + 1) that hold a trigger literal (triggers: _trigger_lines)."""
        self.lines.extend((number + 1 + at, lines[at]) for at in triggers)

    def add(self, numbered: list[tuple[int, str]]) -> None:
        self.lines.extend(numbered)

    def records(self) -> Iterator[FoundError]:
        for number, raw in self.lines:
            line, rank, *_ = clean_line_record(raw)
            text = line.strip()
            if text and frame_match(line) is None and not TRACEBACK_RE.match(line):
                yield FoundError(text[:MAX_MESSAGE_CHARS], [], number, [rank] if rank is not None else [], warning=True)


def tail_lines(tail: str, cut: bool) -> list[str]:
    """The last whole lines of a block, from its last TAIL_BYTES (cut: the block was longer, so the first
    line of tail may be the end of a longer one, and is dropped)."""
    text = tail.replace("\r\n", "\n").replace("\r", "\n")
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")[cut:] or [""]  # (empty lines count: numbered)
    return lines[-TAIL_LINES:]


@dataclass
class SkippableBlock:
    """Whole lines of a file, undecoded: whether a trigger literal occurs in them (found by grep), and
    the number of their first line where it is known (always when they hold a trigger)."""

    data: bytes | memoryview  # a view of the block read: skipped blocks are never copied
    has_trigger: bool
    first_line: int | None = None
    hits: list[int] | None = None  # where in data grep found a part of a trigger literal (where it was asked)

    def decode(self) -> str:
        text = str(self.data, "utf-8", LEGACY_ERRORS)
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text  # universal newlines

    def last_lines(self) -> list[str]:
        return tail_lines(str(self.data[-TAIL_BYTES:], "utf-8", LEGACY_ERRORS), len(self.data) > TAIL_BYTES)

    def mentions_only(self, numbered: bool) -> list[tuple[int, str]] | None:
        """The lines with a trigger literal in a block whose every such line only names an error word in passing
        (loglines.only_mentions), with their numbers (0 unless numbered); None where one may be more, or where the
        lines are not known (a block without grep's places, or with a lone \\r in it). Decodes those lines alone."""
        data, found, begun = self.data, [], -1
        if not self.hits or self.first_line is None or b"\r" in data:
            return None
        for at in self.hits:
            start = data.rfind(b"\n", 0, at) + 1
            if start == begun:
                continue  # (another part on the same line)
            begun, end = start, data.find(b"\n", at)
            line = str(data[start:end if end != -1 else len(data)], "utf-8", LEGACY_ERRORS)
            if TRIGGER_RE.search(line) is None:
                continue  # a part that is no trigger literal here ("called" without "terminate")
            if not only_mentions(line):
                return None
            found.append((self.first_line + data.count(b"\n", 0, start) if numbered else 0, line))
        return found


def _trigger_lines(body: str, pattern=TRIGGER_RE) -> list[int]:
    """The (zero-based) lines of body that hold a trigger literal (or pattern), in order."""
    found, line, counted = [], 0, 0
    for trigger in pattern.finditer(body):
        line += body.count("\n", counted, trigger.start())
        counted = trigger.start()
        if not found or found[-1] != line:
            found.append(line)
    return found


def _quiet_until(triggers: list[int], index: int, count: int) -> int:
    """Where the stretch of lines from index without a trigger literal ends (the next line with one, or count), if it
    is longer than TAIL_LINES; else index."""
    at = bisect.bisect_left(triggers, index)
    ahead = triggers[at] if at < len(triggers) else count
    return ahead if ahead - index > TAIL_LINES else index


def _quiet_end(scanner: Scanner, triggers: list[int], body: str, index: int, count: int,
               stops: list[int] | None) -> tuple[int, list[int] | None]:
    """Where the stretch of a block's lines from index that need not be read one by one ends (index if it is short or
    there is none), and the block's stops (_stops, found when first needed): while nothing is open, the lines before a
    trigger's; while only ranks' messages are (one stays open until STALE_LINES lines pass), the lines before a
    trigger's or a rank's tag."""
    if scanner.idle():
        return _quiet_until(triggers, index, count), stops
    if not scanner.ranks_waiting():
        return index, stops
    stops = _stops(triggers, body) if stops is None else stops
    return _quiet_until(stops, index, count), stops


def _stops(triggers: list[int], body: str) -> list[int]:
    """The lines of body a stretch skipped while ranks' messages are open must not pass: a trigger's, or a rank's tag."""
    return sorted(set(triggers).union(*(_trigger_lines(body, pattern) for pattern in RANK_TAG_RES)))


def _expire_skipped(scanner: Scanner, first: int, last: int) -> Iterator[FoundError]:
    """The expiry checks Scanner.feed makes on lines first..last, skipped unread while only ranks' messages were open
    (each of those lines would have gone to the untagged stream); nothing while nothing is open."""
    for number in range(-(-first // STALE_LINES) * STALE_LINES, last + 1, STALE_LINES):
        if scanner.idle():
            return
        scanner.last_line[None] = number
        yield from scanner.expire(number)
    if last >= first and not scanner.idle():
        scanner.last_line[None] = last


def _lines(stretch: SkippableBlock | list[str]) -> list[str]:
    """The last lines of a quiet stretch: a block skipped unread, or the lines kept of one."""
    return stretch.last_lines() if isinstance(stretch, SkippableBlock) else stretch


def _after(before: SkippableBlock | list[str] | None, stretch: SkippableBlock | list[str],
           whole: bool) -> SkippableBlock | list[str]:
    """The quiet stretch to read once a line is read: stretch, after the end of the one before it when stretch is
    short and whole, at most TAIL_BYTES (a traceback may open in the first, on IPython's "----> 7 y = f(x)", and go on
    in the second)."""
    if before is None or not whole:
        return stretch
    lines = _lines(stretch)
    if len(lines) >= TAIL_LINES:
        return stretch
    return (_lines(before) + lines)[-TAIL_LINES:]


def _catch_up(scanner: Scanner, quiet: SkippableBlock | list[str] | None, number: int) -> Iterable[FoundError]:
    """The scanner reading the last lines of the stretch skipped unread (a block, or its lines), if any; the last of
    them is line number."""
    return scanner.catch_up(number, _lines(quiet)) if quiet is not None else ()


def _passing(block: SkippableBlock, scanner: Scanner, lone: LoneLines | None) -> bool:
    """A block, read while nothing is open, whose lines with a trigger literal only name error words in passing (a
    log's "WARNING ... no RuntimeError" every thousand lines): skipped as a block without one is, where no stream keeps
    something that reading such a line would let go (loguru's values, a chained exception's line). Its lines are
    still tried alone if the log holds no record (lone)."""
    if any(stream.values or stream.chained_from is not None for stream in scanner.streams.values()):
        return False
    lines = block.mentions_only(numbered=lone is not None)
    if lines is not None and lone is not None:
        lone.add(lines)
    return lines is not None


def scan_blocks(blocks: Iterable[str | SkippableBlock], scanner: Scanner | None = None,
                lone_lines: bool = False) -> Iterator[FoundError]:
    """scan() over text read in large blocks: a block with nothing that could start an error, read
    while no error is open, is skipped whole, so a long healthy training log costs one regex search
    per block rather than the full treatment of every line. A SkippableBlock (whole lines) says
    itself whether it holds a trigger and is decoded only when it is read; in one that holds a trigger, the lines
    more than TAIL_LINES before the next line with one are skipped alike while no error is open. scanner: one whose state the caller
    reads afterwards (the frames the input ended in). lone_lines: in a log where no record is found, its last lines
    with a trigger literal are tried one by one (LoneLines)."""
    scanner = scanner if scanner is not None else Scanner()
    lone = LoneLines() if lone_lines else None
    number = 0
    counted = 0  # the last line fed, or passed over while ranks' messages were open (_expire_skipped)
    pending = ""
    # The latest stretch skipped unread: only its last lines are read (Scanner.catch_up), and only once something
    # after it is read, so a long quiet log pays for one tail, not one per block.
    quiet: SkippableBlock | list[str] | None = None
    numbered = True  # whether number is the last line of quiet (a block skipped unread is not counted)
    for block in blocks:
        from_file = isinstance(block, SkippableBlock)
        if from_file:
            if scanner.idle() and not pending and (not block.has_trigger or _passing(block, scanner, lone)):
                # (not counted: the next block read knows its first line)
                quiet = _after(quiet, block, len(block.data) <= TAIL_BYTES)
                numbered = False
                continue
            if block.first_line is not None:
                number = block.first_line - 1
            block = block.decode()
        text = pending + block
        cut = text.rfind("\n") + 1
        if cut == 0 and len(text) < MAX_PENDING_CHARS:
            pending = text
            continue
        if cut == 0:  # no newline in a huge run of text (binary junk): treat it as one line
            cut = len(text)
        body, pending = text[:cut], text[cut:]
        # (the line still pending counts: a paste's last line, with no newline after it, may be the error that the
        # lines above it, pytest's short frames, lead to)
        if scanner.idle() and not TRIGGER_RE.search(text):
            number += body.count("\n") + (not body.endswith("\n"))
            # the last lines may be the statement an error in the next block names, or its context
            quiet = _after(quiet, tail_lines(body[-TAIL_BYTES:], len(body) > TAIL_BYTES), len(body) <= TAIL_BYTES)
            numbered = True
            continue
        lines = (body[:-1] if body.endswith("\n") else body).split("\n")
        triggers = _trigger_lines(body) if from_file or lone is not None else []
        if lone is not None:
            lone.collect(lines, triggers, number)
        index, stops = 0, None
        while index < len(lines):
            ahead, stops = _quiet_end(scanner, triggers, body, index, len(lines), stops) if from_file else (index, stops)
            if ahead > index:  # a quiet stretch inside the block: skipped as a quiet block is
                # (ranks' messages left open are closed where reading each line would close them)
                before_tail = number + ahead - index - TAIL_LINES  # the last line skipped before the tail kept
                yield from _expire_skipped(scanner, counted + 1, before_tail)
                counted = max(counted, before_tail)
                quiet, numbered = lines[ahead - TAIL_LINES:ahead], True  # (its tail read once a line is read)
                number += ahead - index
                index = ahead
                continue
            for found in itertools.chain(_catch_up(scanner, quiet, number), scanner.feed(number + 1, lines[index])):
                found.end = found.end or number  # (a record ends where a line read after it says so)
                lone = None  # a record found: lines are no longer tried alone
                yield found
            quiet = None
            number += 1
            counted = number
            index += 1
    if pending and lone is not None:
        lone.collect([pending], _trigger_lines(pending), number)  # (a last line with no newline after it)
    # (a file's last blocks, skipped unread, end at a line whose number is not known: only what follows needs them)
    for found in itertools.chain(_catch_up(scanner, quiet if numbered else None, number),
                                 scanner.feed(number + 1, pending) if pending else (), scanner.finish()):
        found.end = found.end or number + bool(pending)
        lone = None
        yield found
    if lone is not None:
        yield from lone.records()


def split_embedded(text: str) -> tuple[str, FoundError] | None:
    """A DataLoader worker's re-raise: (the wrapper's first line, the original error inside it)."""
    found = EMBEDDED_RE.match(text)
    if not found:
        return None
    inner = list(scan(["Traceback (most recent call last):", *found.group("rest").splitlines()]))
    if not inner:
        return None
    return (found.group("type") or found.group("head")).strip(), inner[-1]
