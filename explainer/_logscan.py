"""Finding PyTorch errors in pasted text and whole logs, streaming line by line.

Handles tracebacks, bare 'SomeError: message' lines, log-line prefixes ([rank0]:, timestamps,
log levels, glog headers), markdown backticks and quotes, ANSI colours, multi-line messages, and a
DataLoader worker's embedded "Original Traceback".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ._diagnosis import Location

MAX_MESSAGE_LINES = 80
MAX_MESSAGE_CHARS = 100_000
MAX_LINE_CHARS = 20_000

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RANK_RE = re.compile(r"^\s*\[(?:rank|default)(?P<rank>\d+)\]:\s?")
PREFIX_RES = [
    # 2024-05-01 10:00:00,123 - trainer - ERROR - ...   /  [2024-05-01 10:00:00] ERROR: ...
    re.compile(r"^\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
               r"(?:\s*[-|:]?\s*(?:\[?[\w.]+\]?\s*[-|:]\s*)?(?:\[?(?:ERROR|WARNING|WARN|INFO|CRITICAL|DEBUG|FATAL)\]?)\s*[-|:]?)?\s*"),
    # glog: E0501 10:00:00.123456 1234 file.cpp:12] ...
    re.compile(r"^[EWIF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+[^\]]+\]\s*"),
    # ERROR:root:...  /  ERROR: ...
    re.compile(r"^(?:ERROR|CRITICAL|FATAL):(?:[\w.]+:)?\s*"),
    # markdown quotes
    re.compile(r"^>\s?"),
]
TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?\s*$')
EXCEPTION_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning)|Exception|"
    r"OutOfMemoryError|AcceleratorError))(?::\s?(?P<msg>.*))?$")
CHAIN_RE = re.compile(r"^\s*(During handling of the above exception|The above exception was the direct cause)")
EMBEDDED_RE = re.compile(r"^(?P<head>.*?)\n\s*Original Traceback \(most recent call last\):\s*\n(?P<rest>.*)\Z", re.S)
WORKER_RE = re.compile(r"in DataLoader worker process (?P<worker>\d+)")
RANK_WORDS_RE = re.compile(r"(?i)\b(rank|process|pid)\s*[=:]?\s*\d+")


@dataclass
class Frame:
    file: str
    line: int
    func: str = ""
    code: str = ""


@dataclass
class FoundError:
    """One error found in text: its 'Type: message' text and the frames printed above it."""

    text: str
    frames: list[Frame] = field(default_factory=list)
    line: int = 0  # 1-based line in the input where it starts
    ranks: list[int] = field(default_factory=list)
    count: int = 1

    def location(self) -> Location | None:
        return frames_location(self.frames)


def frames_location(frames: list[Frame]) -> Location | None:
    for frame in reversed(frames):
        if looks_like_user_path(frame.file):
            return Location(frame.file, frame.line, frame.code)
    return None


def looks_like_user_path(path: str) -> bool:
    """From text alone: not an installed package, not the standard library, not torch."""
    if path.startswith("<frozen") or not path:
        return False
    lowered = path.replace("\\", "/")
    if "/site-packages/" in lowered or "/dist-packages/" in lowered:
        return False
    if re.search(r"/lib/python\d\.\d+/", lowered) or re.search(r"(^|/)torch/(nn|_tensor|autograd|utils|functional)", lowered):
        return False
    return True


def clean_line(line: str) -> tuple[str, int | None]:
    """The line without ANSI colours and log prefixes, and the rank it was tagged with."""
    line = ANSI_RE.sub("", line.rstrip("\r\n"))[:MAX_LINE_CHARS]
    rank = None
    found = RANK_RE.match(line)
    if found:
        rank = int(found.group("rank"))
        line = line[found.end():]
    for prefix in PREFIX_RES:
        stripped = prefix.sub("", line, count=1)
        if stripped != line:
            line = stripped
            break
    if line.startswith("`") and line.rstrip().endswith("`") and not line.startswith("```"):
        line = line.strip().strip("`")
    return line, rank


def exception_header(line: str) -> re.Match | None:
    if line[:1].isspace():
        return None
    return EXCEPTION_RE.match(line.strip())


def scan(lines: Iterable[str]) -> Iterator[FoundError]:
    """Every error in the input, in order, as soon as it is complete (memory stays flat)."""
    frames: list[Frame] = []
    in_traceback = False
    current: FoundError | None = None
    current_lines: list[str] = []
    embedded_depth = 0

    def finish() -> FoundError | None:
        nonlocal current, current_lines, embedded_depth
        done = current
        if done is not None:
            done.text = "\n".join(current_lines).rstrip()[:MAX_MESSAGE_CHARS]
        current, current_lines, embedded_depth = None, [], 0
        return done

    for number, raw in enumerate(lines, start=1):
        line, rank = clean_line(raw)
        stripped = line.strip()
        if current is not None:
            ends = (not stripped and not embedded_depth) or TRACEBACK_RE.match(line) or CHAIN_RE.match(line) \
                or line.startswith("```") or len(current_lines) >= MAX_MESSAGE_LINES
            if not ends:
                if stripped.startswith("Original Traceback (most recent call last)"):
                    embedded_depth = 1
                elif embedded_depth and exception_header(line):
                    embedded_depth = 0
                current_lines.append(line)
                if rank is not None and rank not in current.ranks:
                    current.ranks.append(rank)
                continue
            done = finish()
            if done is not None:
                yield done
        if TRACEBACK_RE.match(line):
            in_traceback, frames = True, []
            continue
        if in_traceback:
            frame = FRAME_RE.match(line)
            if frame:
                frames.append(Frame(frame.group("file"), int(frame.group("line")), (frame.group("func") or "").strip()))
                continue
            if line.startswith("    ") and frames and not frames[-1].code:
                frames[-1].code = stripped
                continue
            if not stripped or set(stripped) <= set("^~ "):
                continue
        header = exception_header(line)
        if header:
            current = FoundError("", frames if in_traceback else [], number, [rank] if rank is not None else [])
            current_lines = [line.strip()]
            in_traceback, frames = False, []
            continue
        if in_traceback and not line.startswith(" "):
            in_traceback, frames = False, []
    done = finish()
    if done is not None:
        yield done


def split_embedded(text: str) -> tuple[str, FoundError] | None:
    """A DataLoader worker's re-raise: (the wrapper's first line, the original error inside it)."""
    found = EMBEDDED_RE.match(text)
    if not found:
        return None
    inner = list(scan(["Traceback (most recent call last):", *found.group("rest").splitlines()]))
    if not inner:
        return None
    return found.group("head").strip(), inner[-1]


def dedupe_key(text: str) -> str:
    """Messages that differ only by rank or process number are the same error."""
    return RANK_WORDS_RE.sub(r"\1 N", text)
