"""Reading the lines of a traceback into frames: a frame line, its code, the rest of a line the terminal cut, IPython's
context lines and arrows, the forward call's frames anomaly mode prints, loguru's values under a frame's code. The
scanner of a stream (logscan.py) is a TracebackReader."""

from __future__ import annotations

import re
from collections import deque
from typing import Iterator

from .loglines import FoundError, Line
from .logpatterns import BARE_TYPE_RE, PYTEST_MARKED_LINE, SOURCE_DEF_RE, WORKER_HEAD_RE
from .textframes import (ARROW_RE, CALL_LINE_RE, CONTEXT_LINE_RE, FRAME_RE, MAX_VALUE_CHARS, PDB_CODE_MARK, PDB_FRAME_RE,
                         RAISE_RE, WRAP_WIDTH, Frame, annotated_name, frame_match)

MAX_VALUES = 12  # of one frame's code, as loguru printed them
MAX_PYTEST_FRAMES = 200
# A line that stands for frames a paste left out: "...", "……", "[...]", "⋮"
ELISION_CHARS = frozenset(".…⋮[]() ")
MARK_CHARS = frozenset("^~ ")  # Python 3.11 marks the failing part of a code line with them


def position_marks(stripped: str) -> bool:
    """Python 3.11's markers under a frame's code line ("~~~~^^^^"), or an empty line."""
    return set(stripped) <= MARK_CHARS


class TracebackReader:
    """The frames of the traceback being read (in_traceback, frames), the line before (previous), the record open
    (current), loguru's values printed with no frame line above them (values), pytest's report (pytest_frames)."""

    frames: list[Frame]
    in_traceback: bool
    current: FoundError | None
    previous: str
    values: list[tuple[str, str]]
    pytest_frames: list[Frame]  # the entries of pytest's report read so far, for the error it ends with
    marked_code: str  # the source line pytest marked with ">" in the entry being read (--tb=long)
    marked_func: str  # the function whose "def" line that entry's source began with
    recent: deque[tuple[int, str]]  # the lines outside records printed since the last one ended
    traceback_type: str  # the error's type, where IPython's header of the traceback being read named it
    reported: bool  # a record was found in this stream
    last_done: FoundError | None  # the last record finished
    elided: bool = False  # the line before stood for frames the paste left out
    opened: int = 0  # the line the traceback being read began on
    unended: list[Frame]  # the frames of the last traceback a line outside it ended, with no error line under them
    lines: list[str]  # the open record's lines
    embedded_depth: int
    vscode: bool

    def cut_traceback(self, number: int, rank: int | None) -> FoundError | None:
        """A traceback that ends without its error line, at a `raise Type("text")` statement."""
        if self.current is not None or not self.in_traceback or not self.frames:
            return None
        found = RAISE_RE.match(self.frames[-1].code)
        if found is None:
            return None
        text = f"{found.group('type')}: {found.group('msg')}"
        return FoundError(text, self.frames, number, [rank] if rank is not None else [], before=self.before())

    def traceback_ended(self, number: int, rank: int | None) -> Iterator[FoundError]:
        """A traceback a line outside it ended: the error its `raise` statement names; else pytest's short entries kept
        (a long one follows in its default layout); else its frames kept as unended, with no error line under them (an
        error printed above its traceback: Chainer's "Exception in main training loop: ...", then the traceback, then
        "Will finalize trainer extensions and updater before reraising the exception.")."""
        cut = self.cut_traceback(number, rank)
        if cut is not None:
            yield cut
        elif self.frames and self.frames[-1].pytest:
            self.keep_pytest_frames(self.frames)
        elif self.frames:
            self.unended = self.frames
        self.in_traceback, self.frames = False, []

    def traceback_below(self, line: str) -> bool:
        """A frame line right under a one-line error (or a type alone, "TraceError:", and its message's line): its traceback,
        put after it (not a worker's re-raise's frames, nor TorchScript's quote of its source, which names no function);
        or the place pdb stopped at, which pdb prints under the error it stopped on."""
        frame, (first, *rest) = FRAME_RE.match(line) or PDB_FRAME_RE.match(line), self.lines
        one_line = BARE_TYPE_RE.match(first) and rest[0][:1] not in ("", " ", "\t") if rest else not first.rstrip().endswith(":")
        return bool(one_line and frame is not None and frame.group("func") and not self.embedded_depth and not self.vscode
                    and not WORKER_HEAD_RE.search(first))

    def _named_end(self, line: str) -> re.Match | None:
        """The error line of IPython's traceback whose header named its type, when no other reading knows the type."""
        named = self.traceback_type
        if not named or not line.startswith(named) or line[len(named):len(named) + 1] not in ("", ":"):
            return None
        return re.match(rf"(?P<type>{re.escape(named)})(?::\s?(?P<msg>.*))?$", line)

    def headed_traceback(self, number: int, rank: int | None) -> FoundError | None:
        """An input that ends in IPython's traceback, cut before its error line, with no other error in it: the error
        its header named ("ProcessExitedException      Traceback (most recent call last)"), with no message."""
        if self.current is not None or not self.in_traceback or not self.frames or not self.traceback_type \
                or self.reported or self.last_done is not None:
            return None
        return FoundError(self.traceback_type, self.frames, number, [rank] if rank is not None else [], before=self.before())

    def pytest_source(self, raw: str) -> None:
        """A line of the source pytest prints for an entry of its report: the failing line, marked, or a def line."""
        if raw.startswith(PYTEST_MARKED_LINE):
            self.marked_code = raw[len(PYTEST_MARKED_LINE):].strip()
        elif "def " in raw and (found := SOURCE_DEF_RE.match(raw)) is not None:
            self.marked_func = found.group("name")

    def pytest_place(self, path: str, line: str) -> Frame:
        """The frame of an entry of pytest's --tb=long report, from the place printed under its source."""
        frame = Frame(path, int(line), self.marked_func, self.marked_code, pytest=True)
        self.marked_code = self.marked_func = ""
        return frame

    def keep_pytest_frames(self, frames: list[Frame]) -> None:
        if len(self.pytest_frames) < MAX_PYTEST_FRAMES:
            self.pytest_frames.extend(frames[:MAX_PYTEST_FRAMES - len(self.pytest_frames)])

    def annotate(self, column: int, value: str) -> None:
        """A value loguru printed under the code of the frame above, or under code the paste left out."""
        frame = self.frames[-1] if self.in_traceback and self.frames else None
        values = frame.values if frame is not None else self.values
        if len(values) < MAX_VALUES:
            values.insert(0, (annotated_name(frame, column), value[:MAX_VALUE_CHARS]))  # printed rightmost first

    def _forward_frame(self, seen: Line) -> bool:
        """A frame of the forward call anomaly mode printed, or its code: the record's frames, not its text."""
        frames = self.current.frames
        frame = frame_match(seen.line)
        if frame is not None:
            frames.append(frame)
            return True
        if frames and seen.line.startswith("  ") and seen.stripped:
            if position_marks(seen.stripped):
                return True
            if not frames[-1].code:
                frames[-1].code = seen.stripped
                return True
        return False

    def _traceback_detail(self, seen: Line, frame: Frame | None) -> bool:
        """Whether the line was a part of a traceback (a frame, its code, a wrapped piece, IPython context)."""
        if frame is not None or seen.header is not None:
            self.elided = False
        elif self.in_traceback and self.frames and self._elision(seen):
            return True
        if self.in_traceback and seen.header is None and frame is None and self.frames \
                and not seen.line[:1].isspace() and self._unindented_frame_part(seen):
            return True
        if (frame is None or not frame.file) and seen.stripped[:5] == "line " and self.previous.rstrip().endswith('",'):
            frame = frame_match(f"{self.previous.rstrip()} {seen.stripped}")  # 'File "x.py", ' broken before its line
        if frame is not None and not self.in_traceback:
            self.in_traceback, self.frames = True, []  # a traceback pasted without its first lines
            if self.recent and self.recent[-1][1] == self.previous.strip() and CALL_LINE_RE.match(self.previous):
                # ... from the code line of its first frame ("loss_D.backward()"): the statement, in a frame of no file
                self.frames.append(Frame("", 0, code=self.previous.strip()))
        elif frame is None and not self.in_traceback and ARROW_RE.match(seen.line) and "-" in seen.line.split(">", 1)[0]:
            self.in_traceback, self.frames = True, []  # IPython's arrow atop a paste that kept only a cell's lines
        elif frame is None and not self.in_traceback and "^" in seen.stripped and position_marks(seen.stripped) \
                and self.previous[:1].isspace() and any(ch.isalnum() for ch in self.previous):
            # Python 3.11's carets under a code line: a traceback pasted from its last frame's code line on (not a
            # compiler's caret under a lone "}")
            self.in_traceback, self.frames = True, [Frame("", 0, code=self.previous.strip())]
            return True
        if self.in_traceback and seen.header is None:
            return self._traceback_line(seen, frame)
        return False

    def _elision(self, seen: Line) -> bool:
        """A line standing for frames the paste left out ("……"), or the code line under it: the code of a frame whose
        own line was left out (a frame with no file, the statement that ran), as in "……" then
        "next_tokens = torch.multinomial(probs, num_samples=1)" over the error."""
        stripped = seen.stripped
        elided, self.elided = self.elided, False
        # (a vertical ellipsis typed as one dot a line, "   ." three times, counts as well)
        dots = "…" in stripped or "..." in stripped or "⋮" in stripped or stripped == "."
        if dots and set(stripped) <= ELISION_CHARS and not self.frames[-1].ipython:
            self.elided = True
            return True
        if elided and stripped and not ARROW_RE.match(seen.line) and not position_marks(stripped):
            self.frames.append(Frame("", 0, code=stripped))
            return True
        return False

    def _unindented_frame_part(self, seen: Line) -> bool:
        """The rest of a frame line cut at the terminal's width, or a frame's code pasted without its indent."""
        line, stripped = seen.line, seen.stripped
        after_frame = frame_match(self.previous) is not None
        wrapped = self._wrapped(line, after_frame)
        # "ackward": the rest of a cut name; ", in backward": the function of a frame line cut before it
        fragment = not any(c.isspace() for c in stripped) or stripped.startswith(", in ")
        if wrapped and (fragment or not after_frame):
            joined = frame_match(self.previous + line)
            if joined is not None:
                if after_frame:
                    joined.code = self.frames.pop().code
                self.frames.append(joined)
                return True
        last = self.frames[-1]
        if after_frame and not last.code and not last.ipython and stripped and not ARROW_RE.match(line):
            last.code = stripped.removeprefix(PDB_CODE_MARK)  # (pdb's "-> " before the line it stopped at)
            return True
        return wrapped

    def _traceback_line(self, seen: Line, frame: Frame | None) -> bool:
        if frame is not None:
            self.frames.append(frame)
            return True
        line, stripped = seen.line, seen.stripped
        last = self.frames[-1] if self.frames else None
        arrow = ARROW_RE.match(line)
        if arrow and (last is None or last.ipython and last.code) and "-" in line.split(">", 1)[0]:
            # IPython's arrow under no frame line (a paste that kept only the code), or a second arrow: the
            # frame of its own that IPython left out ("...")
            self.frames.append(Frame("", int(arrow.group("line")), code=arrow.group("code").strip(), ipython=True))
            return True
        if arrow and last is not None and last.ipython:
            last.line = last.line or int(arrow.group("line"))
            last.code = arrow.group("code").strip()
            return True
        if last is not None and last.ipython and (CONTEXT_LINE_RE.match(line) or stripped == "..."):
            return True
        if line.startswith(("    ", "\t")) and last is not None and not last.code:  # (or a tab: "\traise ...")
            last.code, last.code_at = stripped, len(line) - len(line.lstrip())
            return True
        return position_marks(stripped)

    def _wrapped(self, line: str, after_frame: bool) -> bool:
        """An unindented line inside a traceback that is the rest of the line before it, cut at the terminal's
        width (after_frame: that line was a frame)."""
        previous = self.previous
        if not line or len(previous) < WRAP_WIDTH or ARROW_RE.match(line):
            return False
        return after_frame or previous.lstrip().startswith("File \"") or len(line) < WRAP_WIDTH
