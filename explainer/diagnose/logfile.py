"""Reading a large log file fast: grep finds the lines that could start an error, Python reads only those.

`grep -F` searches a file for many fixed strings at once far faster than Python can, so for a large
file it runs alongside the reader and reports the byte offsets of the trigger literals
(_logpatterns.TRIGGER_LITERALS); blocks of the file with none of them, read while no error is open, are
counted and skipped without being decoded. Without grep, or if it fails, the file is read the plain
way; the errors found are the same either way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import IO, Iterator

from .logblocks import SkippableBlock
from .logpatterns import TRIGGER_LITERALS

GREP_MIN_BYTES = 16 << 20  # below this, starting grep costs more than it saves
BLOCK_BYTES = 1 << 20
PIECE_BYTES = 16 << 10


def _pieces(data: bytes) -> Iterator[bytes]:
    """Whole lines in pieces of about PIECE_BYTES: only the pieces around a trigger are decoded and read."""
    begin = 0
    while begin < len(data):
        cut = data.find(b"\n", begin + PIECE_BYTES - 1) + 1 or len(data)
        yield data[begin:cut]
        begin = cut


class GrepFailed(Exception):
    """grep stopped early or could not run: its offsets cannot be trusted."""


def grep_command() -> list[str] | None:
    grep = shutil.which("grep")
    if grep is None:
        return None
    patterns = [arg for literal in TRIGGER_LITERALS for arg in ("-e", literal)]
    return [grep, "-n", "-b", "-o", "-a", "-F", *patterns]


def trigger_hits(stdout: IO[bytes]) -> Iterator[tuple[int, int]]:
    """(line number, byte offset) of each trigger match, in file order, from `grep -n -b -o` output."""
    for line in stdout:
        parts = line.split(b":", 2)
        if len(parts) < 3 or not (parts[0].isdigit() and parts[1].isdigit()):
            raise GrepFailed(line[:80])
        yield int(parts[0]), int(parts[1])


def skippable_blocks(path: str) -> Iterator[SkippableBlock] | None:
    """The file in blocks of whole lines that know whether grep found a trigger in them; None when
    grep is not worth starting (a small file, a pipe) or not there."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < GREP_MIN_BYTES:
            return None
    except OSError:
        return None
    command = grep_command()
    if command is None:
        return None
    return _blocks(path, command)


def _blocks(path: str, command: list[str]) -> Iterator[SkippableBlock]:
    """Blocks of the file as it is now (a log still being written is read up to its present size).

    grep numbers lines by their \\n; Python's text mode also ends a line at a lone \\r (progress bars),
    so the lone \\r before a block are counted to give its first line the number Python would."""
    env = {**os.environ, "LC_ALL": "C"}  # bytes, not characters: offsets are byte offsets
    size = os.path.getsize(path)
    with subprocess.Popen([*command, "--", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          stdin=subprocess.DEVNULL, env=env, bufsize=1 << 16) as grep, open(path, "rb") as handle:
        hits = trigger_hits(grep.stdout)
        hit = next(hits, None)
        start, lone_cr, rest = 0, 0, b""
        finished = False
        try:
            while start + len(rest) < size:
                chunk = handle.read(min(BLOCK_BYTES, size - start - len(rest)))
                if not chunk:
                    break
                data = rest + chunk
                cut = len(data) if start + len(data) >= size else data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data  # a line longer than a block: read on
                    continue
                data, rest = data[:cut], data[cut:]
                pieces = _pieces(data) if hit is not None and hit[1] < start + len(data) else (data,)
                for piece in pieces:
                    end = start + len(piece)
                    first_line = None
                    if hit is not None and hit[1] < end:
                        first_line = hit[0] + lone_cr - piece.count(b"\n", 0, hit[1] - start)
                        while hit is not None and hit[1] < end:
                            hit = next(hits, None)
                    yield SkippableBlock(piece, first_line is not None, first_line)
                    if b"\r" in piece:
                        lone_cr += piece.count(b"\r") - piece.count(b"\r\n")
                    start = end
            for _ in hits:  # matches in what was appended meanwhile: let grep finish
                pass
            finished = grep.wait() in (0, 1)  # 1: no match at all
        finally:
            if not finished:
                grep.kill()
        if not finished:
            raise GrepFailed(f"grep exited with {grep.returncode}")
