"""Finding PyTorch errors in pasted text and whole logs, streaming line by line.

Handles tracebacks (Python's, IPython's, pytest's report of a failed test in its layouts, and frames a paste ran
together with their code and error line), bare 'SomeError: message' lines, log-line prefixes ([rank0]:, timestamps,
log levels, glog headers, Ray's and vLLM's, a tqdm bar the line was printed after), markdown
backticks and quotes, ANSI colours, multi-line messages (TorchScript's source quotes, blank lines included), a
DataLoader worker's embedded "Original Traceback" (put back where the paste lost it), and an error inside a
JSON "message" string. Reading one line is loglines.py's job.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Iterable, Iterator

from .loglines import (MAX_MESSAGE_CHARS, FoundError, Line, clean_line_record, exception_header, interleaved_header,
                       issued_at, json_error, uncoloured)
from .logpatterns import (AFTER_BLANK_RE, CHAIN_RE, FORWARD_TRACE_RE, HERE_MARK,
                          INLINE_CODE_RE, LOGGED_OPENERS, ORIGINAL_TRACEBACK, PYTEST_CRASH_RE, PYTEST_PLACE_RE, REPRO_PART_RE,
                          SCRIPT_QUOTE_RE, TERMINATE_OPENER, TRACEBACK_END_RE, TRACEBACK_RE, VSCODE_OPENER,
                          WARNING_OPENER, WHAT_RE, WORKER_HEAD_RE, comfyui_title, introduces_inner, node_named,
                          pytest_section)
from .textframes import (ANNOTATION_RE, CALL_LINE_RE, FRAME_RE, TRACEBACK_TITLE, Frame, RichBox, frame_match, frames_below,
                         glued_traceback, in_call_order, unglued, with_failing_line, word_rejoined)
from .tracelines import TracebackReader

MAX_MESSAGE_LINES = 80

STALE_LINES = 256
MAX_STREAMS = 1024
MAX_CAUSE_CHARS = 500
BEFORE_LINES = 4  # log lines kept as what was printed just before an error (rules' context patterns read them)
RAISED_FROM = "Exception raised from "  # c10::Error's place in torch's C++, on the line under its message


class _Stream(TracebackReader):
    """The scanning state of one output stream: the untagged lines, or one rank's lines. A rank's stream reads the
    untagged stream's lines outside records too (shared): what a rank's process printed without its prefix (the
    autotuner's "precompiling for 18 choices") is also what that rank printed just before its error."""

    def __init__(self, shared: _Stream | None = None, clock: Iterator[int] | None = None) -> None:
        self.frames: list[Frame] = []
        self.in_traceback = False
        self.current: FoundError | None = None
        self.lines: list[str] = []
        self.embedded_depth = 0
        self.vscode = False
        self.terminate = False  # the open record is a C++ exception std::terminate reported
        self.forward_trace = False  # the open record is anomaly mode's warning: the forward call's frames follow
        self.bare_type = False  # the open record is an error type alone ("ValueError"), with no message
        self.source_line_next = False  # the open record is a warning: the indented line under it is its source line
        self.blank_lines = 0
        self.fence = ""  # "closed", "reopened": a code block ended inside a message
        self.previous = ""  # the line before, for wrapped lines and a statement pasted above its error
        self.repl_statement = ""  # the last '>>> ' line: the code of a "<stdin>" frame
        self.node = ""  # the ComfyUI node named last, given to the next error found
        self.titled = False  # that node was a paste's first line, not a line that names it
        self.rich = RichBox()
        self.wrapped_tail = ""
        self.logged_at = ""  # the C++ source place the line's glog prefix named ("python_anomaly_mode.cpp:104")
        self.glog = ""  # the line's glog prefix
        self.values: list[tuple[str, str]] = []  # loguru's values printed with no frame line above them
        self.last_done: FoundError | None = None  # the last record finished
        self.chained_from: FoundError | None = None  # that record, when Python said the next one was chained to it
        self.direct_chain = False  # ... as its direct cause ("raise X from e"), not as the error it was handling
        # lines outside records since the last one ended, each with its place in the input (the clock, shared by the
        # streams of one input), so that the untagged lines of the shared stream can be put among them in order
        self.recent: deque[tuple[int, str]] = deque(maxlen=BEFORE_LINES)
        self.shared = shared
        self.clock = clock if clock is not None else itertools.count()
        self.ended = -1  # the clock when the last record ended: the shared stream's lines before it are not read
        self.pytest_frames: list[Frame] = []
        self.marked_code = self.marked_func = ""
        self.traceback_type = ""
        self.reported = False  # a record was found in this stream
        self.raised_from_next = False  # the open record is a marker line's: only an "Exception raised from" line goes on
        self.unended: list[Frame] = []  # the frames of the last traceback a line outside it ended, with no error line

    def finish(self) -> FoundError | None:
        done = self.current
        if done is not None:
            lines = self.lines
            if len(lines) > 1 and self.vscode:
                # VS Code's "Exception has occurred: RuntimeError" puts the message on the next line
                # and the frames below it, innermost first.
                lines = [f"{lines[0]}: {lines[1].strip()}", *lines[2:]]
                lines, below = frames_below(lines)
                done.frames = done.frames or below
            done.text = word_rejoined("\n".join(lines).rstrip())[:MAX_MESSAGE_CHARS]
            done.frames = in_call_order(done.frames)
            if done.frames:
                done.text = with_failing_line(done.text, done.frames[-1].code)
        self.current, self.lines, self.embedded_depth, self.blank_lines, self.fence = None, [], 0, 0, ""
        self.wrapped_tail = ""  # the last line of the message as printed, where it was joined to the one above
        self.raised_from_next = False
        if done is not None:
            self.rich.width = 0
            self.recent.clear()
            self.unended = []  # (a traceback cut before the record is not the record's, nor one after it)
            self.ended = next(self.clock)
            self.last_done = done
            self.pytest_frames = []
        return done

    def feed(self, number: int, line: str, rank: int | None, new_record: bool) -> Iterator[FoundError]:
        if self.raised_from_next:  # a marker record: the line under it may say where torch's C++ raised it
            if RAISED_FROM in line:
                self.lines.append(line.strip())
                yield from self._finished()
                return
            yield from self._finished()
        if "└" in line and self.current is None and (note := ANNOTATION_RE.match(line)) is not None:
            self.annotate(len(note.group("lead")), note.group("value"))
            return
        if (boxed := self.rich.unbox(line)) is not None:
            line = boxed
        if ", in " in line and ((parts := unglued(line)) is not None or
                                (TRACEBACK_TITLE in line and (parts := glued_traceback(line)) is not None)):
            for part in parts:  # a frame, its code and the error run together on one line: read one by one
                yield from self.feed(number, part, rank, new_record)
                new_record = False
            return
        if line.startswith((">>> ", ">> ")):  # (a markdown quote took one '>'); a prompt before an error line is not Python's
            if exception_header(rest := line.split(" ", 1)[1]) is None:
                self.repl_statement = rest.strip()
            else:
                line = rest
        elif node := node_named(line):
            self.node, self.titled = node, False
        elif number == 1 and (title := comfyui_title(line)):
            self.node, self.titled = title, True  # ComfyUI's error dialog: the node, then its error
        idle = self.current is None and not self.in_traceback
        for found in self._feed(number, line, rank, new_record):
            self.reported = True
            yield found
        if idle and self.current is None and not self.in_traceback and (kept := line.strip()) and kept.strip("-"):
            self.recent.append((next(self.clock), kept))  # (not a line of dashes: IPython's over its traceback)
        self.opened, self.previous = number if idle and self.in_traceback else self.opened, line

    def before(self) -> list[str]:
        """The last lines printed outside records since the last record ended: this stream's, and where it is a
        rank's, the untagged lines among them."""
        lines = list(self.recent)
        if self.shared is not None and self.shared.recent:
            lines = sorted(lines + [(at, line) for at, line in self.shared.recent if at > self.ended])[-BEFORE_LINES:]
        return [line for _, line in lines]

    def _feed(self, number: int, line: str, rank: int | None, new_record: bool) -> Iterator[FoundError]:
        seen = Line.read(line)
        if self.in_traceback and self.frames and seen.header is None and (self.frames[-1].code or self.frames[-1].ipython):
            # the line that ends a traceback names the error's type whatever it is called (triton's OutOfResources, or
            # the type IPython's header named: queue's "Empty: ")
            seen.header = TRACEBACK_END_RE.match(line) or self._named_end(line)
        was_open = self.current is not None
        # the record still open with no blank line after it: an error line right under it is the next of its chain
        adjacent = was_open and not self.blank_lines and not self.current.warning and bool(self.current.frames)
        if was_open:
            if self.forward_trace and self._forward_frame(seen):
                return
            if self._held_back(seen):
                return
            yield from self._close_fence(seen)
            yield from self._close_after_blank(seen)
            if self.current is not None and len(self.lines) == 1 and self.bare_type and FRAME_RE.match(line):
                # Python prints no frame under its error line: another process's traceback interleaved with this
                # one's, the rest of its error line printed elsewhere. A fragment, not an error of its own.
                self.finish()
            if self.current is not None and self.source_line_next and seen.line.startswith("  ") and seen.stripped:
                # the source line `warnings` prints under its warning: its frame's code (kept in the text too, where
                # rules read it; what follows may still be a part of the message: the error a library caught)
                self.current.frames[-1].code = seen.stripped
                self.source_line_next = False
            if self.current is not None:
                if not self._ends_message(seen, new_record):
                    self._extend_message(seen)
                    return
                yield from self._finished()
        if (opened := TRACEBACK_RE.match(line)) is not None:
            self.in_traceback, self.frames, self.pytest_frames, self.opened = True, [], [], number
            self.traceback_type = (opened.group("ipython") or "").strip()  # IPython's header names the error's type
            return
        frame = None if seen.header else frame_match(line)
        if self._traceback_detail(seen, frame):
            return
        ranks = [rank] if rank is not None else []
        if seen.header or seen.opener:
            self._open_message(number, seen, ranks, was_open)
            if adjacent and seen.header and not self.current.frames and not self.current.warning:
                # (a paste that lost Python's "During handling of the above exception" line and the frames under it)
                self.current.frames = list(self.last_done.frames)
        elif seen.marker is not None:
            # complete in one line, but for the place torch's C++ raised it, which may follow: held for one line
            self.current = seen.marker_record(number, ranks, self.before(), self.logged_at)
            self.lines, self.raised_from_next = [self.current.text], True
        else:
            yield from self._outside_message(number, line, rank, ranks)

    def goes_on(self, line: str, new_record: bool) -> bool:
        """Whether line, read next, would be a part of the open record's message."""
        if self.raised_from_next:
            return RAISED_FROM in line
        seen = Line.read(line)
        return not TRACEBACK_RE.match(line) and not self._ends_message(seen, new_record)

    def _finished(self) -> Iterator[FoundError]:
        done = self.finish()
        if done is not None:
            yield done

    def _held_back(self, seen: Line) -> bool:
        """A blank line, or a code fence closed and reopened mid-message: kept back until the next line says
        whether the message goes on."""
        if not seen.stripped and seen.line and self._indented_block():
            self.lines.append("")  # a whitespace-only line inside an indented list (TorchScript's variants)
            return True
        if not seen.stripped and not self.embedded_depth:
            self.blank_lines += 1  # the end of the message, unless a part of it that follows blank lines comes next
            return True
        if seen.line.startswith("```") and not self.blank_lines:
            # A code block closed mid-sentence ("...operation: ") and another opened: one message in two blocks.
            if self.fence == "" and self.lines[-1].rstrip().endswith(":"):
                self.fence = "closed"
                return True
            if self.fence == "closed":
                self.fence = "reopened"
                return True
        return False

    def _indented_block(self) -> bool:
        last = self.lines[-1] if self.lines else ""
        return not self.blank_lines and (last.rstrip().endswith(":") or last[:1].isspace() or last == "")

    def _close_fence(self, seen: Line) -> Iterator[FoundError]:
        if not self.fence:
            return
        reopened, self.fence = self.fence == "reopened", ""
        continues = reopened and not (seen.header or seen.opener or seen.marker or TRACEBACK_RE.match(seen.line))
        if not continues:
            yield from self._finished()

    def _close_after_blank(self, seen: Line) -> Iterator[FoundError]:
        if self.current is None or not self.blank_lines:
            return
        # TorchScript's errors are 'RuntimeError: ', then the message after a blank line.
        header_only = len(self.lines) == 1 and self.lines[0].rstrip().endswith(":")
        repro = self._offers_repro() and REPRO_PART_RE.match(seen.stripped)
        # VS Code's frames may follow its message after a blank line
        frames_below = self.vscode and frame_match(seen.line) is not None
        if self._worker_frames(seen):
            pass  # the worker's own traceback, its "Original Traceback" line lost
        elif (crash := PYTEST_CRASH_RE.match(seen.stripped)) is not None:
            # pytest's "path.py:1529: UnpicklingError" under the error it reported: where that error was raised
            self.current.frames.append(self.pytest_place(crash.group("path"), crash.group("line")))
            yield from self._finished()
        elif AFTER_BLANK_RE.match(seen.stripped) or header_only or repro or frames_below or self._goes_on_indented(seen):
            self.lines.extend([""] * self.blank_lines)
        else:
            yield from self._finished()
        self.blank_lines = 0

    def _goes_on_indented(self, seen: Line) -> bool:
        """An indented line after blank lines that the message announced: a list after a line ending with ':'
        (TorchScript's "arguments for call are not valid:"), or more of the source a TorchScript error quotes,
        before its "~~~ <--- HERE" line."""
        if not seen.line[:1].isspace() or frame_match(seen.line) is not None:
            return False
        if self.lines[-1].rstrip().endswith(":"):
            return True
        return not any(HERE_MARK in line for line in self.lines) and any(SCRIPT_QUOTE_RE.match(line) for line in self.lines)

    def _worker_frames(self, seen: Line) -> bool:
        """A DataLoader worker's re-raise ("Caught X in DataLoader worker process 0.") pasted without the
        "Original Traceback" line under it, then the worker's frames: that line is put back, so the record
        reads as Python printed it and the worker's own error is found in it."""
        if len(self.lines) != 1 or self.embedded_depth or frame_match(seen.line) is None \
                or not WORKER_HEAD_RE.search(self.lines[0]):
            return False
        self.lines.append(ORIGINAL_TRACEBACK)
        self.embedded_depth = 1
        return True

    def _offers_repro(self) -> bool:
        """cuDNN's report: a repro script and the convolution's parameters follow, after blank lines."""
        return any(line.startswith("You can try to repro this exception") for line in self.lines)

    def _ends_message(self, seen: Line, new_record: bool) -> bool:
        line = seen.line
        if TRACEBACK_RE.match(line) or CHAIN_RE.match(line) or line.startswith("```") or pytest_section(line):
            return True
        if len(self.lines) == 1 and self.terminate and WHAT_RE.match(line):
            return False  # what() says what the exception named on the line before was
        if seen.header is not None and introduces_inner(self.lines) and len(self.lines) < MAX_MESSAGE_LINES:
            return False  # "... raised:" then its inner error, even when each line has a log prefix of its own
        if seen.marker is not None and self._header_only():
            return False  # the message the header announced ("ProcessRaisedException: ", then "-- Process 0 terminated")
        if len(self.lines) <= 2 and (", in " in line or ".py(" in line) and self.traceback_below(line):
            return True
        if len(self.lines) >= MAX_MESSAGE_LINES or new_record or seen.marker or seen.opener:
            return True
        return seen.header is not None and not self.embedded_depth

    def _header_only(self) -> bool:
        """The open record is a header with no message yet (blank lines may follow it)."""
        return self.lines[0].rstrip().endswith(":") and not any(line.strip() for line in self.lines[1:])

    def _extend_message(self, seen: Line) -> None:
        if self.rich.width and not self.embedded_depth and self.lines \
                and (joint := self.rich.rewrapped(self.wrapped_tail or self.lines[-1], seen.line)) is not None:
            self.lines[-1] += joint + seen.line  # the error line under a rich box, wrapped at the box's width
            self.wrapped_tail = seen.line
            return
        self.wrapped_tail = ""
        if self._worker_frames(seen):
            pass
        elif seen.stripped.startswith(("Original Traceback (most recent call last)", "Traceback of TorchScript")):
            self.embedded_depth = 1  # (TorchScript's interpreter: its frames, then the error it raised)
        elif self.embedded_depth and seen.header:
            self.embedded_depth = 0
        self.lines.append(seen.line)

    def _open_message(self, number: int, seen: Line, ranks: list[int], was_open: bool) -> None:
        header, opener = seen.header, seen.opener
        first = interleaved_header(header) or seen.stripped if header else opener.group("message").strip()
        if opener is not None and opener.groupdict().get("type"):
            first = f"{opener.group('type')}: {first}"  # a logger's "<class 'X'> at f.py:N - text"
        warning = (header.group("type") if header else first.split(":", 1)[0]).endswith("Warning")
        frames = [*self.pytest_frames, *(self.frames if self.in_traceback else [])]  # pytest's, then Python's own
        self.pytest_frames = []
        for frame in frames:
            if frame.file == "<stdin>" and not frame.code:
                frame.code = self.repl_statement
        if not frames and not was_open and header and CALL_LINE_RE.match(statement := self.repl_statement if self.previous[:2] == ">>" else self.previous):
            frames = [Frame("", 0, code=statement.strip())]  # no file known, only the statement (typed at a prompt)
        frames, logged_at, issued = issued_at(opener, frames, self.logged_at, seen.stripped)
        self.source_line_next = opener is not None and opener.re is WARNING_OPENER and bool(frames)
        node = "" if self.titled and number > 3 else self.node  # a title names the error just below it
        self.terminate = opener is not None and opener.re is TERMINATE_OPENER
        self.bare_type = header is not None and header.group("msg") is None
        # std::terminate's what() repeats a failure (a CUDA error thrown again while the process unwinds after
        # Python's report of it): folded with a report of the same rule next to it, like a marker line
        logged = opener is not None and opener.re in LOGGED_OPENERS
        values = next((frame.values for frame in reversed(frames) if frame.values), None) or self.values
        chained = self.chained_from
        cause = chained if self.direct_chain else None
        before = self.before() or (cause.before if cause is not None else [])  # one failure: the cause's lines
        self.current = FoundError("", frames, number, ranks, warning=warning, node=node, before=before,
                                  logged_line=logged, logged_by=opener.re.pattern if logged else "", issued=issued,
                                  logged_at=logged_at, values=list(values), first=self.opened * self.in_traceback,
                                  direct_cause=cause.text.split("\n", 1)[0][:MAX_CAUSE_CHARS] if cause else "",
                                  handling=chained.line if chained is not None and cause is None else 0)
        self.values, self.chained_from = [], None
        self.node, self.titled = "", False
        self.lines = [first]
        self.vscode = opener is not None and opener.re is VSCODE_OPENER
        self.forward_trace = bool(FORWARD_TRACE_RE.search(first))
        if self.forward_trace:
            self.current.frames = []  # where the warning was issued (torch's autograd) says nothing
            self.source_line_next = False
        if first.endswith("Traceback (most recent call last):"):
            self.embedded_depth = 1  # torch 0.4's worker re-raise: "IndexError: Traceback (most ...", frames, error
        self.in_traceback, self.frames = False, []

    def _outside_message(self, number: int, line: str, rank: int | None, ranks: list[int]) -> Iterator[FoundError]:
        if self.in_traceback and not line.startswith((" ", "\t")):
            yield from self.traceback_ended(number, rank)
        if ".py:" in line and (place := PYTEST_PLACE_RE.match(line)) is not None:
            self.keep_pytest_frames([self.pytest_place(place.group("path"), place.group("line"))])
        elif pytest_section(line):
            self.pytest_frames, self.marked_code, self.marked_func = [], "", ""  # another test's report
        if self.values and line.strip():
            self.values = []  # values printed under code the paste left out belong to the error right below them
        if ("direct cause" in line or "During handling" in line) and CHAIN_RE.match(line):
            self.chained_from, self.direct_chain = self.last_done, "direct cause" in line
        elif self.chained_from is not None and line.strip().strip("-"):
            self.chained_from = None  # other output between the two (not IPython's line of dashes): no longer one chain
        if ".py:" in line and (crash := PYTEST_CRASH_RE.match(line)) is not None:
            # pytest's crash line with no error above it (a paste cut there): the place, kept as a frame
            self.in_traceback, self.frames = True, [Frame(crash.group("path"), int(crash.group("line")))]
        for inline in INLINE_CODE_RE.finditer(line):
            if exception_header(inline.group(1)):
                yield FoundError(inline.group(1).strip(), [], number, ranks)
        if '"message"' in line and (text := json_error(line)):
            yield FoundError(text, [], number, ranks, before=self.before())


class Scanner:
    """Lines in, errors out. Lines tagged with a rank ([rank3]:) are scanned as that rank's own
    stream, so tracebacks that several processes print at once, interleaved, are still read whole."""

    def __init__(self) -> None:
        self.streams: dict[int | None, _Stream] = {}
        self.last_line: dict[int | None, int] = {}
        # the frames of a traceback the input ended in, with no error line under them (a paste that put the error
        # first, or cut it): read by the short-paste reading, which gives them to the error the paste holds
        self.dangling: list[Frame] = []
        self.clock = itertools.count()  # orders the lines kept before records across streams
        self.previous_rank: int | None = None  # the rank of the stream the line before went to
        self.held: _Stream | None = None  # the stream whose marker record waits for the line under it

    def idle(self) -> bool:
        return all(s.current is None and not s.in_traceback for s in self.streams.values())

    def ranks_waiting(self) -> bool:
        """Only ranked streams' messages are open (no traceback), and no untagged line can go on to one: a line with no
        rank's tag changes nothing but when they expire (logblocks skips a stretch of such lines)."""
        return self.previous_rank is None and self.held is None and all(
            not s.in_traceback and (rank is not None or s.current is None) for rank, s in self.streams.items())

    def expire(self, number: int) -> Iterator[FoundError]:
        """Close what a stream left open when it has been silent for STALE_LINES lines: a rank whose
        traceback ended the log's output for that rank must not hold its error back until the end."""
        for rank, last in self.last_line.items():
            if number - last > STALE_LINES:
                stream = self.streams[rank]
                cut = stream.cut_traceback(last, rank)
                if cut is not None:
                    yield cut
                stream.in_traceback, stream.frames = False, []
                done = stream.finish()
                if done is not None:
                    yield done

    def _stream(self, rank: int | None) -> _Stream | None:
        """The rank's stream, opened on its first line (None past MAX_STREAMS ranks)."""
        stream = self.streams.get(rank)
        if stream is None and len(self.streams) < MAX_STREAMS:
            shared = self._stream(None) if rank is not None else None
            stream = self.streams[rank] = _Stream(shared, self.clock)
        return stream

    def feed(self, number: int, raw: str) -> Iterator[FoundError]:
        raw = uncoloured(raw)  # (pytest's coloured report: "\x1b[1m\x1b[31m>       loss.backward()")
        line, rank, new_record, source, glog = clean_line_record(raw)
        if rank is None and self.previous_rank is not None and line.strip():
            rank = self._continued_rank(line, new_record)
        stream = self._stream(rank)
        if stream is None:
            return
        if self.held is not None and self.held is not stream:
            yield from self.held._finished()  # the line under a marker record went to another stream: it ended there
        self.previous_rank = rank
        self.last_line[rank] = number
        if glog and glog == stream.glog and stream.current is not None:
            new_record = False  # torch's Python logs put the same prefix (time, process, place) on each line of a record
        stream.glog = glog
        stream.logged_at = source
        if raw[:1] in (">", " "):
            stream.pytest_source(raw)
        yield from stream.feed(number, line, rank, new_record)
        self.held = stream if stream.raised_from_next else None
        if number % STALE_LINES == 0:
            yield from self.expire(number)

    def _continued_rank(self, line: str, new_record: bool) -> int | None:
        """The rank whose record an untagged line goes on, or None: a rank's prefix is put on each write, so the lines
        of a message with line breaks in it ("ZeRORuntimeException: " then the reason; glog's message, then "Exception
        raised from checkTimeout at ...") come untagged right under its first line."""
        ranked = self.streams.get(self.previous_rank)
        untagged = self.streams.get(None)
        if ranked is None or ranked.current is None or ranked.blank_lines or \
                (untagged is not None and (untagged.current is not None or untagged.in_traceback)):
            return None
        return self.previous_rank if ranked.goes_on(line, new_record) else None

    def unended(self) -> list[Frame]:
        """The frames of the last traceback a line outside it ended with no error line under it, in any stream."""
        return next((stream.unended for stream in self.streams.values() if stream.unended), [])

    def catch_up(self, number: int, tail: list[str]) -> Iterator[FoundError]:
        """The last lines of a stretch skipped unread (no error was open), the last of them line number: read as every
        line is, since a traceback may open on a line with no trigger literal (IPython's "----> 7 y = f(x)", Python
        3.11's carets under a code line)."""
        for at, raw in enumerate(tail, number - len(tail) + 1):
            yield from self.feed(at, raw)

    def finish(self) -> Iterator[FoundError]:
        for rank, stream in self.streams.items():
            last = self.last_line.get(rank, 0)
            cut = stream.cut_traceback(last, rank)
            if cut is not None:
                yield cut
            elif stream.in_traceback and stream.frames and stream.current is None:
                self.dangling = stream.frames
                if (headed := stream.headed_traceback(last, rank)) is not None:
                    yield headed
            done = stream.finish()
            if done is not None:
                yield done


def scan(lines: Iterable[str]) -> Iterator[FoundError]:
    """Every error in the input, in order, as soon as it is complete (memory stays flat)."""
    scanner = Scanner()
    for number, raw in enumerate(lines, start=1):
        yield from scanner.feed(number, raw)
    yield from scanner.finish()
