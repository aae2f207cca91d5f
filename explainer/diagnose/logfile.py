"""Reading a large log file fast: grep finds the lines that could start an error, Python reads only those.

`grep -F` searches a file for many fixed strings at once far faster than Python can, so for a large
file it runs alongside the reader and reports the byte offsets of the trigger literals (or rather of
parts of them: logpatterns.GREP_LITERALS); blocks of the file with none of them, read while no error is
open, are counted and skipped without being decoded. Without grep, or if it fails, the file is read the plain
way; the errors found are the same either way.

A file is read as what it is, judged by its first bytes rather than its name: decompressed as a stream (gzip, bzip2,
xz), UTF-16 or UTF-32 with or without a byte order mark, UTF-8 whose stray bytes are cp1252's, a saved notebook as the
text of its outputs; a file that is no text raises NotText, which the command says instead of "no error found".
"""

from __future__ import annotations

import codecs
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
from typing import IO, Iterator, TextIO

from .logblocks import LEGACY_ERRORS, SkippableBlock
from .logpatterns import ANSI_RE, GREP_LITERALS

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


HEAD_BYTES = 8 << 10  # what a file's format is judged by
# Compressed logs, known by their magic number (not their name): read decompressed, as a stream (memory stays flat).
COMPRESSED = ((b"\x1f\x8b", "gzip", "gzip"), (b"BZh", "bzip2", "bz2"), (b"\xfd7zXZ\x00", "xz", "lzma"))
# A NUL byte beside every ASCII character, at these places of every 4 bytes: UTF-32 or UTF-16 written without a BOM.
WIDE_NULS = (((False, True, True, True), "utf-32-le"), ((True, True, True, False), "utf-32-be"),
             ((False, True, False, True), "utf-16-le"), ((True, False, True, False), "utf-16-be"))
# Bytes no text log holds many of (NUL and the control characters but tab, line ends, backspace and ESC).
CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\v\f\r\x08\x1b") + b"\x7f"
# What a file that is no text log probably is, by its first bytes: said instead of "no error found".
BINARY_KINDS = ((b"PK\x03\x04", "zip data: a torch.save checkpoint"), (b"\x89PNG", "a PNG image"),
                (b"\xff\xd8\xff", "a JPEG image"), (b"%PDF", "a PDF document"), (b"\x7fELF", "an executable"),
                (b"\x28\xb5\x2f\xfd", "zstd data"), (b"7z\xbc\xaf", "7z data"))


class NotText(OSError):
    """The file is no text log (binary data, damaged compressed data): said so, never "no error found"."""


def _file_head(path: str, size: int = HEAD_BYTES) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _compression(head: bytes) -> tuple[bytes, str, str] | None:
    return next((c for c in COMPRESSED if head.startswith(c[0]) and (c[1] != "bzip2" or head[3:4].isdigit())), None)


def _wide_without_bom(head: bytes) -> str | None:
    size = len(head) // 4 * 4
    if size < 16:
        return None
    shares = [head[at:size:4].count(0) * 4 / size for at in range(4)]
    if any(0.1 < share < 0.5 for share in shares):
        return None
    seen = tuple(share >= 0.5 for share in shares)
    return next((codec for pattern, codec in WIDE_NULS if pattern == seen), None)


def text_codec(head: bytes, packed: str = "") -> str:
    """The codec a log starting with head (decompressed from packed, if named) is read in: what its byte order mark
    says, UTF-16 or UTF-32 where its NUL bytes say so (written without a BOM), else UTF-8; NotText where it is no text."""
    codec = wide_encoding(head) or _wide_without_bom(head)
    if codec:
        return codec
    kind = "tar data" if head[257:262] == b"ustar" else next((k for magic, k in BINARY_KINDS if head.startswith(magic)), "")
    if kind or (len(head) - len(head.translate(None, CONTROL_BYTES))) * 20 > len(head):  # (more than 5%)
        kind = kind or ("pickle data" if head[:1] == b"\x80" else "binary data")
        raise NotText(f"not a text log ({packed + '-compressed ' if packed else ''}{kind}?)")
    return "utf-8"


class _Unpacked(io.RawIOBase):
    """A compressed file's bytes; its decompressor's errors (EOFError for a cut file, zlib.error, lzma.LZMAError ...)
    raised as NotText."""

    def __init__(self, path: str, kind: tuple[bytes, str, str]) -> None:
        super().__init__()
        self.label = kind[1]
        self.inner = importlib.import_module(kind[2]).open(path, "rb")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            return self.inner.readinto(buffer)
        except Exception as exc:  # (each decompressor raises its own)
            raise NotText(f"{self.label} data cut short or damaged ({exc})") from exc

    def close(self) -> None:
        self.inner.close()
        super().close()


def open_log(path: str) -> TextIO:
    """A log or paste file as text: decompressed (gzip, bzip2, xz), in the wide encoding its byte order mark or its NUL
    bytes say, else UTF-8 (bytes that are not UTF-8 read as cp1252); a saved notebook as the text of its outputs.
    NotText where it is no text."""
    head = _file_head(path)
    kind = _compression(head)
    binary: IO[bytes] = io.BufferedReader(_Unpacked(path, kind), 1 << 16) if kind else open(path, "rb")
    try:
        head = binary.peek(HEAD_BYTES)[:HEAD_BYTES] if kind else head
        codec = text_codec(head, kind[1] if kind else "")
        text = _decoded(binary, codec)
    except BaseException:
        binary.close()
        raise
    if head.lstrip()[:1] == b"{" and (path.lower().endswith(".ipynb") or b'"cells"' in head[:100]):
        return _notebook(text)
    return text


class NotebookText(io.StringIO):
    """The text of a saved notebook's outputs."""


def unnumbered(diagnoses: list) -> list:
    """Diagnoses of a notebook's outputs: the line numbers of that text are none of the file's (the place is the
    cell's: "Cell In[2], line 2")."""
    for diagnosis in diagnoses:
        diagnosis.facts.pop("input_line", None)
    return diagnoses


def _notebook(text: TextIO) -> TextIO:
    """A saved Jupyter notebook: the text of its outputs (notebook_text); a JSON file that is none, as it is."""
    with text:
        raw = text.read()
    try:
        notebook = json.loads(raw)
    except ValueError:
        notebook = None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    return NotebookText(notebook_text(cells)) if isinstance(cells, list) else io.StringIO(raw)


def notebook_text(cells: list) -> str:
    """What a notebook's outputs show, one after another: each error's traceback as IPython printed it (its colours
    taken off: "Cell In[2], line 2" and the frames), and what the cells printed (a shell command's log, a warning)."""
    shown = []
    for cell in cells:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else []:
            kind = output.get("output_type") if isinstance(output, dict) else None
            if kind == "error":
                lines = output.get("traceback")
                shown.append("\n".join(map(str, lines)) if isinstance(lines, list) and lines
                             else f"{output.get('ename')}: {output.get('evalue')}")
            elif kind == "stream":
                text = output.get("text")
                shown.append("".join(map(str, text)) if isinstance(text, list) else str(text or ""))
    return ANSI_RE.sub("", "\n".join(part.rstrip("\n") for part in shown)) + "\n"


def stdin_text() -> TextIO:
    """sys.stdin read as a log file is (a UTF-16 file piped in, with a byte order mark or without; UTF-8 with bytes
    that are not UTF-8 read as cp1252); sys.stdin itself where its bytes cannot be peeked at."""
    buffer = getattr(sys.stdin, "buffer", None)
    try:
        head = buffer.peek(HEAD_BYTES)[:HEAD_BYTES] if buffer is not None else None
    except (AttributeError, OSError, ValueError):
        head = None
    if head is None:
        return sys.stdin
    return _decoded(buffer, wide_encoding(head) or _wide_without_bom(head) or "utf-8")


def _decoded(binary: IO[bytes], codec: str) -> TextIO:
    """binary read as text in codec: UTF-8's stray bytes read as cp1252, a wide codec's broken ones replaced."""
    return io.TextIOWrapper(binary, encoding=codec, errors=LEGACY_ERRORS if codec == "utf-8" else "replace")


def skippable_blocks(path: str) -> Iterator[SkippableBlock] | None:
    """The file in blocks of whole lines that know whether grep found a trigger in them; None when
    grep is not worth starting (a small file, a pipe) or not there, or the file is not UTF-8 (grep's
    literals are UTF-8 bytes)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < GREP_MIN_BYTES:
            return None
    except OSError:
        return None
    head = _file_head(path)
    try:
        if _compression(head) or text_codec(head) != "utf-8":
            return None
    except NotText:
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
