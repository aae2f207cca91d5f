"""One line of pasted text or a log, read: its log prefixes taken off, what it opens (an error header, an opener
phrase, a one-line marker), and the record the scanner (logscan.py) makes of an error."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from explainer._diagnosis import Location

from .logpatterns import (ANSI_RE, ANSI_RESIDUE_LEAD_RE, ANSI_RESIDUE_RE, AUTOLINK_RE, CONTINUATION_PREFIXES, EMPTY_AFTER_PREFIX, EXCEPTION_RE,
                          JSON_MESSAGE_RE, MENTION_BLOCKERS_RE, MENTION_WORDS, OUTER_PREFIXES, PREFIX_TABLE,
                          QUOTE_PREFIX_RE, RANK_RE, TQDM_BAR_RE, TRIGGER_RE, could_open, marker_match, opener_match)
from .textframes import Frame, frame_match, frames_location

MAX_MESSAGE_CHARS = 100_000
MAX_LINE_CHARS = 20_000
MARKDOWN_LEADS = "`\"'*#_"  # the first characters of a line _unmarked may change


@dataclass
class FoundError:
    """One error found in text: its 'Type: message' text and the frames printed above it."""

    text: str
    frames: list[Frame] = field(default_factory=list)
    line: int = 0  # 1-based line in the input where it starts
    ranks: list[int] = field(default_factory=list)
    count: int = 1
    warning: bool = False  # a warning is worth reporting only when a rule explains it
    logged_line: bool = False  # one log line (a marker), often followed by a fuller report of the same failure
    logged_by: str = ""  # what printed that line (the marker's pattern): two components' lines may report one failure
    node: str = ""  # the ComfyUI node that was running, where the log names it
    before: list[str] = field(default_factory=list)  # the last lines outside any record printed before it
    logged_at: str = ""  # the source place a glog prefix on its first line named ("python_anomaly_mode.cpp:104")
    values: list[tuple[str, str]] = field(default_factory=list)  # (name, value) loguru printed in its raising frame
    direct_cause: str = ""  # the first line of the error it was raised from ("The above exception was the direct cause")
    handling: int = 0  # the line of the record it was raised while handling ("During handling of the above exception")
    issued: str = ""  # its first line as printed, where that names the place it was issued at ("f.py:3: UserWarning: ...")
    first: int = 0  # the line its traceback began on (0: line)
    end: int = 0  # the last line read with it, blank lines after it included (0: not known)

    def location(self) -> Location | None:
        return frames_location(self.frames)


def uncoloured(line: str) -> str:
    """The line without ANSI colour codes, or what a paste left of them (codes that lost their escape character, at
    the start of the line)."""
    if "\x1b" in line:
        line = ANSI_RE.sub("", line)
    if line[:1] == "[" and ANSI_RESIDUE_LEAD_RE.match(line) is not None:
        line = ANSI_RESIDUE_RE.sub("", line)
    return line


def clean_line_record(line: str) -> tuple[str, int | None, bool, str, str]:
    """The line without ANSI colours and log prefixes, the rank it was tagged with, whether a timestamp
    or log-level prefix began a new log record there, the source place a glog prefix named ("" if none), and that
    glog prefix (torch's Python logs put the same prefix on every line of one record)."""
    line = uncoloured(line.rstrip("\r\n"))[:MAX_LINE_CHARS]
    if "](http" in line:
        line = AUTOLINK_RE.sub(lambda link: link.group(1) or link.group(2), line)
    new_record = False
    rank = None
    source = glog = ""
    if "%|" in line and (bar := TQDM_BAR_RE.match(line)) is not None and bar.end() < len(line):
        line = line[bar.end():]  # what was printed where a progress bar ended
    if line[:1] == "`" and line[-1:] == "`" and line[1:2] != "`" and len(line) > 2:
        line = line[1:-1]  # each line of a paste in inline code, a log prefix inside: "`[1,0]<stderr>:  File ...`"
    found = RANK_RE.match(line)
    if found:
        rank = int(found.group("rank") or found.group("mpi_rank"))
        line = line[found.end():]
    found = _log_prefix(line)
    if found is not None:
        prefix, found = found
        line, new_record = line[found.end():], prefix not in CONTINUATION_PREFIXES
        groups = found.groupdict()
        source = groups.get("src") or ""
        glog = found.group() if source else ""
        if rank is None and groups.get("rank"):
            rank = int(groups["rank"])  # the worker's rank in its prefix
        if rank is None and (tagged := _rank_tagged(line)) is not None:
            # a rank's line as Ray or vLLM printed it: "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] "
            rank, line = tagged
            line, new_record, source, glog = _inner_prefix(line, new_record, source, glog)
        elif prefix in OUTER_PREFIXES and line:
            # what a worker printed through Ray or docker, with its own prefix: "(WorkerDict pid=798105) [W1110
            # 10:14:58.148276805 TCPStore.cpp:125] "
            line, new_record, source, glog = _inner_prefix(line, new_record, source, glog)
    if line[:1] in MARKDOWN_LEADS or line[-1:] in ("`", "_") or line[:3] == " **":
        line = _unmarked(line)
        if rank is None and (tagged := _rank_tagged(line)) is not None:
            rank, line = tagged  # a rank's line pasted in bold and quotes
    return line, rank, new_record, source, glog


def _rank_tagged(line: str) -> tuple[int, str] | None:
    """(N, the rest of the line) for a line that begins with a rank's "[rankN]:" tag, else None."""
    tagged = RANK_RE.match(line) if line[:5] == "[rank" else None
    return (int(tagged.group("rank")), line[tagged.end():]) if tagged is not None else None


def _unmarked(line: str) -> str:
    """The line without the markdown around an error line: inline code, a code block on one line, quotes, bold,
    italics, a heading."""
    if line.startswith("`") and line.rstrip().endswith("`") and not line.startswith("```"):
        line = line.strip().strip("`")
    elif line[:1] == "`" and not line.startswith("```") and line.count("`") % 2:
        line = line[1:]  # an inline code span opened here and closed lines below ("` C = C.reshape(...)")
    elif line.endswith("`") and not line.endswith("```") and line.count("`") % 2:
        line = line[:-1]  # ... and closed here ("For debugging consider passing CUDA_LAUNCH_BLOCKING=1.`")
    elif line.startswith("```") and line.rstrip().endswith("```") and len(line.strip()) > 6:
        line = line.strip()[3:-3].strip()  # a code block opened and closed on one line
    elif line[:1] in "\"'" and len(stripped := line.rstrip()) > 2 and stripped[-1] == line[0]:
        if EXCEPTION_RE.match(core := stripped[1:-1]):
            line = core  # an error line in quotes ("RuntimeError: Expected 4-dimensional input ...")
    elif line.lstrip(" ")[:1] in "*#" or line[:1] == "_" and line.rstrip()[-1:] == "_":
        core = line.strip().strip("*_").lstrip("# ").strip("*_")  # markdown bold, italics, headings (not `_pickle.X`)
        if len(core) > 2 and core[0] in "\"'" and core[-1] == core[0]:
            core = core[1:-1]  # quotes inside the bold: **"[rank0]: RuntimeError: ..."**
        if core and (EXCEPTION_RE.match(core) or core.startswith('File "') and line.lstrip(" ")[:2] == "**"
                     or _rank_tagged(core) is not None):
            line = core  # (and the first frame of a traceback pasted in bold: ' **File "x.py", line 1, in f')
    elif line[:1] != "_" and line.rstrip()[-2:] != "__" and (alone := EXCEPTION_RE.match(line.rstrip()[:-1])) \
            and alone.group("msg") is None:
        line = line.rstrip()[:-1]  # italics closed after the error's type alone, opened lines above ("AssertionError_")
    return line


def _inner_prefix(line: str, new_record: bool, source: str, glog: str) -> tuple[str, bool, str, str]:
    """A log prefix under another one (a rank's glog line as Ray or vLLM printed it): taken off too."""
    found = _log_prefix(line)
    if found is None or found[0] is QUOTE_PREFIX_RE:  # (">>> ", quoted or not, is Python's prompt)
        return line, new_record, source, glog
    source = found[1].groupdict().get("src") or ""
    return (line[found[1].end():], new_record or found[0] not in CONTINUATION_PREFIXES, source,
            found[1].group() if source else "")


def _log_prefix(line: str) -> tuple[re.Pattern, re.Match] | None:
    """The log prefix line begins with (the pattern, its match), where something follows it or it may stand alone."""
    head = line[:1]
    for prefix, first in PREFIX_TABLE:
        if first is not None and (not head or head not in first):
            continue
        found = prefix.match(line)
        if found is not None and found.end() and (line[found.end():].strip() or prefix in EMPTY_AFTER_PREFIX):
            return prefix, found
    return None


def issued_at(opener: re.Match | None, frames: list[Frame], logged_at: str, line: str) -> tuple[list[Frame], str, str]:
    """The frames and the C++ place of a record whose opener names where it was issued: a warning's Python file and
    line ("train.py:12: UserWarning: ..."), or torch's C++ source for a warning its C++ issued ("..\\aten\\src\\ATen\\
    native\\TensorFactories.cpp:361: UserWarning: ..."); and then line, the opener's line as printed, where it names
    a place (rules' context patterns read it: the place is not in the record's text)."""
    path = opener.groupdict().get("path") if opener is not None else None
    if not path:
        return frames, logged_at, ""
    if path.endswith(".py") or path.startswith("<ipython-input-"):
        return [Frame(path, int(opener.group("line")))], logged_at, line
    return [], f"{path}:{opener.group('line')}", line


def exception_header(line: str) -> re.Match | None:
    if line[:1].isspace():
        return None
    return EXCEPTION_RE.match(line.strip())


def interleaved_header(header: re.Match) -> str:
    """The error line two processes wrote at once, each write of one interleaved with the other's ("KeyErrorKeyError: :
    'input_ids_j'": the type twice, then the colons): the line one of them printed; "" for any other line."""
    kind, message = header.group("type"), header.group("msg") or ""
    half = len(kind) // 2
    if len(kind) % 2 or kind[:half] != kind[half:] or not message.startswith(":"):
        return ""
    line = f"{kind[:half]}: {message[1:].strip()}"
    return line if exception_header(line) else ""


@dataclass
class Line:
    """One cleaned line and what it opens: an 'Error:' header, an opener phrase or a one-line marker."""

    line: str
    stripped: str
    header: re.Match | None
    opener: re.Match | None
    marker: re.Match | None

    @classmethod
    def read(cls, line: str) -> Line:
        header = exception_header(line)
        opener = marker = None
        if header is None and could_open(line):
            opener = opener_match(line)
            marker = None if opener else marker_match(line)
        return cls(line, line.strip(), header, opener, marker)

    def marker_record(self, number: int, ranks: list[int], before: list[str], logged_at: str) -> FoundError:
        """The record of a message logged without an 'Error:' header (the NCCL watchdog): complete in one line."""
        marker = self.marker
        marker_rank = marker.groupdict().get("rank")
        if marker_rank is not None and not ranks:
            ranks = [int(marker_rank)]
        text = self.line[marker.start("message"):].strip()
        if marker_rank is not None and not text.startswith("[PG "):  # (a process group's prefix names it already)
            text = f"[Rank {marker_rank}] {text}"  # the rank the component named, kept in the message
        return FoundError(text[:MAX_MESSAGE_CHARS], [], number, ranks, logged_line=True, before=before,
                          logged_by=marker.re.pattern, logged_at=logged_at)


def only_mentions(raw: str) -> bool:
    """Whether raw, a line that holds a trigger literal, is a log record that only names an error word in passing
    ("2026-12-07 10:00:00,000 WARNING dataloader.py:88] worker 3 slow (0 errors so far, no RuntimeError)"): read while
    nothing is open, it begins no record and no traceback and changes nothing a later line is read with, so it may be
    skipped as a line without a trigger is. A log record of its own (a time or level prefix, no rank's tag) whose
    trigger literals are all error words (logpatterns.MENTION_WORDS) and that is no header, opener, marker or frame."""
    line, rank, new_record, _, _ = clean_line_record(raw)
    if not new_record or rank is not None or MENTION_BLOCKERS_RE.search(line) is not None:
        return False
    if any(word.group() not in MENTION_WORDS for word in TRIGGER_RE.finditer(line)):
        return False
    seen = Line.read(line)
    return seen.header is None and seen.opener is None and seen.marker is None and frame_match(line) is None


def json_error(line: str) -> str:
    """The error a JSON "message" string holds (torchelastic's error file, as its error handler logs it), or ""."""
    found = JSON_MESSAGE_RE.match(line)
    if found is None:
        return ""
    try:
        text = json.loads(f'"{found.group("text")}"')
    except ValueError:
        return ""
    return text.strip()[:MAX_MESSAGE_CHARS] if exception_header(text.split("\n", 1)[0]) else ""
