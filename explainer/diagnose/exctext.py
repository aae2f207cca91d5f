"""An exception's text ('RuntimeError: ...') without running the user's code again.

Python's traceback already called the exception's __str__ once. Calling it again could take as long
(a __str__ that sleeps or does I/O) or do anything, so the hook records what the previous hook wrote
to sys.stderr and reads each exception's text from there. Only when that is impossible (another hook
printed elsewhere, an exception group, `explain()` called by hand) is the text computed again, in a
helper thread with a time limit, falling back to the type name.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Callable

from explainer._lazyre import lazy_compile

MAX_RECORDED_CHARS = 8 << 20
TEXT_TIMEOUT_S = 1.0
SEPARATOR_RE = lazy_compile(r"\n\n(?:The above exception was the direct cause of the following exception:|"
                          r"During handling of the above exception, another exception occurred:)\n\n")
TRACEBACK_HEADER = "Traceback (most recent call last):"


class _Recorder:
    """Stands in for sys.stderr while the previous hook prints: passes everything through, keeps a copy."""

    def __init__(self, stream: Any):
        self._stream = stream
        self._parts: list[str] = []
        self._size = 0
        self.failed = False  # the stream refused Python's own traceback (a closed pipe)

    def write(self, text: str) -> int:
        try:
            written = self._stream.write(text)
        except BaseException:
            self.failed = True
            raise
        if isinstance(text, str) and self._size <= MAX_RECORDED_CHARS:
            self._parts.append(text)
            self._size += len(text)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def text(self) -> str | None:
        return "".join(self._parts) if self._size <= MAX_RECORDED_CHARS else None


def call_recording_stderr(hook: Callable[..., Any], *args: Any) -> tuple[str | None, bool]:
    """Run hook(*args) with writes to sys.stderr recorded: (what it wrote or None if unknowable,
    whether the stream refused any of it)."""
    stream = sys.stderr
    if stream is None:
        hook(*args)
        return None, False
    recorder = _Recorder(stream)
    sys.stderr = recorder
    try:
        hook(*args)
    finally:
        if sys.stderr is recorder:
            sys.stderr = stream
    return recorder.text(), recorder.failed


def qualified_type_name(exc: BaseException) -> str:
    """The type as Python's traceback names it: module-qualified unless builtins or __main__."""
    cls = type(exc)
    try:
        module, name = cls.__module__, cls.__qualname__
    except Exception:  # a metaclass with odd attributes
        module, name = None, None
    if not isinstance(name, str):
        name = cls.__name__
    if not isinstance(module, str) or module in ("builtins", "__main__"):
        return name
    return f"{module}.{name}"


def texts_from_printed(printed: str | None, chain: list[BaseException]) -> dict[int, str]:
    """{id(exception): text} for the exceptions of chain (outermost first) whose text printed shows.

    Python prints a chain innermost first, one segment per exception, joined by the two chaining
    sentences; inside a segment, the text is everything from the first line at column 0 after the
    'Traceback' header. A segment whose text does not start with its exception's type is not used.
    """
    if not printed or not chain:
        return {}
    segments = SEPARATOR_RE.split(printed.rstrip("\n"))
    found: dict[int, str] = {}
    for exc, segment in zip(chain, reversed(segments)):
        text = _segment_text(segment)
        if text is None:
            break
        expected = qualified_type_name(exc)
        if not (text == expected or text.startswith(expected + ":") or text.startswith(expected + "\n")):
            break
        found[id(exc)] = text
    return found


def _segment_text(segment: str) -> str | None:
    # What another hook printed before the traceback ("Exception in thread t:", a team's banner) is skipped.
    start = segment.find("\n" + TRACEBACK_HEADER)
    if not segment.startswith(TRACEBACK_HEADER) and start >= 0:
        segment = segment[start + 1:]
    lines = segment.split("\n")
    if lines[0].startswith(TRACEBACK_HEADER):
        for index, line in enumerate(lines[1:], start=1):
            if line and not line[0].isspace():
                return "\n".join(lines[index:])
        return None
    if lines[0] and not lines[0][0].isspace():
        return segment
    return None


def bounded_exception_text(exc: BaseException, timeout: float = TEXT_TIMEOUT_S) -> str:
    """format_exception_only(exc), computed in a daemon thread; the type name if it takes too long or fails."""
    result: list[str] = []

    def compute() -> None:
        try:
            result.append("".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n"))
        except BaseException:  # noqa: BLE001 - a failing __str__ is the user's, not ours
            pass

    worker = threading.Thread(target=compute, name="explainer-exception-text", daemon=True)
    worker.start()
    worker.join(timeout)
    return result[0] if result else qualified_type_name(exc)


class ExceptionTexts:
    """Each exception's text, at most once: from the recorded traceback, else computed with a bound."""

    def __init__(self, chain: list[BaseException], printed: str | None = None):
        self._texts = texts_from_printed(printed, chain)

    def __call__(self, exc: BaseException) -> str:
        text = self._texts.get(id(exc))
        if text is None:
            text = self._texts[id(exc)] = bounded_exception_text(exc)
        return text
