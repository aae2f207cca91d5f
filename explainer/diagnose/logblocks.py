"""Scanning text that arrives in large blocks: a block that cannot start an error, read while no error is
open, is skipped without the per-line work (logfile.py marks such blocks with grep's help)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from .logpatterns import TRIGGER_RE
from .logscan import FoundError, Scanner

MAX_PENDING_CHARS = 1 << 20
TAIL_BYTES = 4096  # of a skipped block, read for its last lines
TAIL_LINES = 16


def tail_lines(tail: str, cut: bool) -> list[str]:
    """The last whole lines of a block, from its last TAIL_BYTES (cut: the block was longer, so the first
    line of tail may be the end of a longer one, and is dropped)."""
    lines = tail.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")[cut:] or [""]
    return lines[-TAIL_LINES:]


@dataclass
class SkippableBlock:
    """Whole lines of a file, undecoded: whether a trigger literal occurs in them (found by grep), and
    the number of their first line where it is known (always when they hold a trigger)."""

    data: bytes | memoryview  # a view of the block read: skipped blocks are never copied
    has_trigger: bool
    first_line: int | None = None

    def decode(self) -> str:
        text = str(self.data, "utf-8", "replace")
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text  # universal newlines

    def last_lines(self) -> list[str]:
        return tail_lines(str(self.data[-TAIL_BYTES:], "utf-8", "replace"), len(self.data) > TAIL_BYTES)


def scan_blocks(blocks: Iterable[str | SkippableBlock], scanner: Scanner | None = None) -> Iterator[FoundError]:
    """scan() over text read in large blocks: a block with nothing that could start an error, read
    while no error is open, is skipped whole, so a long healthy training log costs one regex search
    per block rather than the full treatment of every line. A SkippableBlock (whole lines) says
    itself whether it holds a trigger and is decoded only when it is read. scanner: one whose state the caller
    reads afterwards (the frames the input ended in)."""
    scanner = scanner if scanner is not None else Scanner()
    number = 0
    pending = ""
    for block in blocks:
        if isinstance(block, SkippableBlock):
            if scanner.idle() and not block.has_trigger and not pending:
                scanner.remember(block.last_lines())  # not counted: the next block read knows its first line
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
        if scanner.idle() and not TRIGGER_RE.search(body):
            number += body.count("\n") + (not body.endswith("\n"))
            # the last lines may be the statement an error in the next block names, or its context
            scanner.remember(tail_lines(body[-TAIL_BYTES:], len(body) > TAIL_BYTES))
            continue
        lines = body.split("\n")
        if lines[-1] == "":
            lines.pop()
        for raw in lines:
            number += 1
            yield from scanner.feed(number, raw)
    if pending:
        yield from scanner.feed(number + 1, pending)
    yield from scanner.finish()
