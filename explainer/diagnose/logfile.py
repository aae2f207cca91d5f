"""Reading a large log file fast: grep finds the lines that could start an error, Python reads only those.

`grep -F` searches a file for many fixed strings at once far faster than Python can, so for a large
file it runs alongside the reader and reports the byte offsets of the trigger literals (or rather of
parts of them: logpatterns.GREP_LITERALS); blocks of the file with none of them, read while no error is
open, are counted and skipped without being decoded. Without grep, or if it fails, the file is read the plain
way; the errors found are the same either way.
"""

from __future__ import annotations

import codecs
import io
import os
import shutil
import subprocess
import sys
from typing import IO, Iterator, TextIO

from .logblocks import SkippableBlock
from .logpatterns import GREP_LITERALS

GREP_MIN_BYTES = 256 << 10  # below this, starting grep saves little (benchmarks/log_grep_bound.py)
BLOCK_BYTES = 1 << 20
PIECE_BYTES = 16 << 10


def _pieces(data: bytes, begin: int, end: int) -> Iterator[tuple[int, int]]:
    """data[begin:end] (whole lines) as (begin, end) of pieces of about PIECE_BYTES: only the pieces around a
    trigger are decoded and read."""
    while begin < end:
        cut = data.find(b"\n", begin + PIECE_BYTES - 1, end) + 1 or end
        yield begin, cut
        begin = cut


class GrepFailed(Exception):
    """grep stopped early or could not run: its offsets cannot be trusted."""


def grep_command() -> list[str] | None:
    grep = shutil.which("grep")
    if grep is None:
        return None
    patterns = [arg for literal in GREP_LITERALS for arg in ("-e", literal)]
    return [grep, "-n", "-b", "-o", "-a", "-F", *patterns]


def trigger_hits(stdout: IO[bytes]) -> Iterator[tuple[int, int]]:
    """(line number, byte offset) of each trigger match, in file order, from `grep -n -b -o` output."""
    for line in stdout:
        parts = line.split(b":", 2)
        if len(parts) < 3 or not (parts[0].isdigit() and parts[1].isdigit()):
            raise GrepFailed(line[:80])
        yield int(parts[0]), int(parts[1])


# Byte order marks of the wide encodings (UTF-32's first: UTF-16 LE's is its prefix). Windows PowerShell 5.1's
# `>` writes UTF-16 LE with one: read as UTF-8, every other byte is a NUL and nothing reads as an error.
WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
             (codecs.BOM_UTF16_BE, "utf-16"))


def wide_encoding(head: bytes) -> str | None:
    """The codec of a text that starts with a UTF-16 or UTF-32 byte order mark, else None (UTF-8)."""
    return next((codec for bom, codec in WIDE_BOMS if head.startswith(bom)), None)


def _file_head(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(4)
    except OSError:
        return b""


def open_log(path: str) -> TextIO:
    """A log or paste file as text: UTF-8 (undecodable bytes replaced), or what its byte order mark says."""
    return open(path, encoding=wide_encoding(_file_head(path)) or "utf-8", errors="replace")


def stdin_text() -> TextIO:
    """sys.stdin, or read in the wide encoding its first bytes' byte order mark names (a UTF-16 file piped in)."""
    buffer = getattr(sys.stdin, "buffer", None)
    try:
        codec = wide_encoding(buffer.peek(4)[:4]) if buffer is not None else None
    except (AttributeError, OSError, ValueError):
        codec = None
    return io.TextIOWrapper(buffer, encoding=codec, errors="replace") if codec else sys.stdin


def skippable_blocks(path: str) -> Iterator[SkippableBlock] | None:
    """The file in blocks of whole lines that know whether grep found a trigger in them; None when
    grep is not worth starting (a small file, a pipe) or not there, or the file is not UTF-8 (grep's
    literals are UTF-8 bytes)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < GREP_MIN_BYTES:
            return None
    except OSError:
        return None
    if wide_encoding(_file_head(path)):
        return None
    command = grep_command()
    if command is None:
        return None
    return _blocks(path, command)


class _Places:
    """grep's places of the trigger literals, taken as the file is cut into blocks, and the lone \\r counted so far."""

    def __init__(self, hits: Iterator[tuple[int, int]]) -> None:
        self.hits = hits
        self.next = next(hits, None)
        self.lone_cr = 0

    def before(self, offset: int) -> bool:
        """Whether the next place is before the byte offset (in the file)."""
        return self.next is not None and self.next[1] < offset

    def counted(self, data: bytes, begin: int, stop: int) -> None:
        if data.find(b"\r", begin, stop) != -1:
            self.lone_cr += data.count(b"\r", begin, stop) - data.count(b"\r\n", begin, stop)

    def quiet(self, data: bytes, begin: int, stop: int) -> SkippableBlock:
        """data[begin:stop], with no place in it: a view, never copied."""
        self.counted(data, begin, stop)
        return SkippableBlock(memoryview(data)[begin:stop], False)


def _region_blocks(data: bytes, end: int, start: int, places: _Places) -> Iterator[SkippableBlock]:
    """data[:end], whole lines from the file's byte offset start, as blocks: each piece with a place in it (numbered),
    and the stretches between them, each in one block however many pieces it spans."""
    if not places.before(start + end):
        yield places.quiet(data, 0, end)
        return
    quiet_from = 0
    for begin, stop in _pieces(data, 0, end):
        if not places.before(start + stop):
            continue
        if quiet_from < begin:
            yield places.quiet(data, quiet_from, begin)
        first_line = places.next[0] + places.lone_cr - data.count(b"\n", begin, places.next[1] - start)
        at = []
        while places.before(start + stop):
            at.append(places.next[1] - start - begin)  # (where in the piece)
            places.next = next(places.hits, None)
        yield SkippableBlock(data[begin:stop], True, first_line, at)
        places.counted(data, begin, stop)
        quiet_from = stop
    if quiet_from < end:
        yield places.quiet(data, quiet_from, end)


def _blocks(path: str, command: list[str]) -> Iterator[SkippableBlock]:
    """Blocks of the file as it is now (a log still being written is read up to its present size).

    grep numbers lines by their \\n; Python's text mode also ends a line at a lone \\r (progress bars),
    so the lone \\r before a block are counted to give its first line the number Python would."""
    env = {**os.environ, "LC_ALL": "C"}  # bytes, not characters: offsets are byte offsets
    size = os.path.getsize(path)
    with subprocess.Popen([*command, "--", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          stdin=subprocess.DEVNULL, env=env, bufsize=1 << 16) as grep, open(path, "rb") as handle:
        places = _Places(trigger_hits(grep.stdout))
        start = 0
        finished = False
        try:
            while start < size:
                chunk = handle.read(min(BLOCK_BYTES, size - start))
                if not chunk:
                    break
                # whole lines: the block up to its last newline, then the line it cut, finished by readline
                # (no copy of the block itself: a block without a trigger is never even sliced)
                cut = len(chunk) if chunk.endswith(b"\n") or start + len(chunk) >= size else chunk.rfind(b"\n") + 1
                regions = [(chunk, cut)]
                if cut < len(chunk):
                    regions.append((chunk[cut:] + handle.readline(max(size - start - len(chunk), 0)), None))
                for data, end in regions:
                    end = len(data) if end is None else end
                    if not end:
                        continue  # a block inside one long line: all of it is in the next region
                    yield from _region_blocks(data, end, start, places)
                    start += end
            for _ in places.hits:  # matches in what was appended meanwhile: let grep finish
                pass
            finished = grep.wait() in (0, 1)  # 1: no match at all
        finally:
            if not finished:
                grep.kill()
        if not finished:
            raise GrepFailed(f"grep exited with {grep.returncode}")
