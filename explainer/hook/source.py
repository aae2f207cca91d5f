"""The script compiled as `python SCRIPT` compiles it, failing with the SyntaxError Python would report.

compile() decodes the whole source before parsing (skipping the bytes of comments) and checks it for null bytes
first. Python's file reader decodes line by line as the parser asks for lines, so for a script that is not UTF-8
(with no coding cookie), holds a null byte or declares an unknown encoding it reports another error, or one where
compile() reports none; these are rebuilt here. Every other SyntaxError is compile()'s own, which is Python's.
The reader's errors rebuilt are those of Python 3.11 to 3.13; under 3.10, whose reader says a line later, links the
old PEP address and takes a null byte for the end of its line, those scripts' reports can differ from Python's.
"""

from __future__ import annotations

import codecs
import io
import re
import types

_COOKIE_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT_RE = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")
_DETECTED_AT_RE = re.compile(r"\(detected at line (\d+)\)")
# A line that stops the tokenizer as soon as it reads it, wherever the parser is (but inside a string).
_STOP_LINE = b"\x01"


def compile_script(filename: str) -> types.CodeType:
    with io.open_code(filename) as handle:
        source = handle.read()
    code, failure = None, None
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        failure = error
    # (compile() skips the bytes of a comment: a script it compiles may still be one Python refuses to read)
    if code is None or _first_non_utf8(source) is not None:
        unreadable = _reader_error(source, filename)
        if unreadable is not None:
            raise unreadable
    if code is None:
        raise failure
    return code


def _reader_error(source: bytes, filename: str) -> SyntaxError | None:
    """The error Python's file reader raises reading source (None: it reads it, and compile() is right)."""
    bom = source.startswith(codecs.BOM_UTF8)
    if bom:
        source = source[len(codecs.BOM_UTF8):]
    cookie = _coding_cookie(source)
    if cookie is not None:
        try:
            codecs.lookup(cookie)
        except LookupError:
            return SyntaxError(f"encoding problem: {cookie}")
        if bom and cookie != "utf-8":
            return SyntaxError(f"encoding problem: {cookie} with BOM")
    encoding = cookie or "utf-8"
    lines = source.splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        head, null, _ = line.partition(b"\0")
        bad = _first_non_utf8(head) if cookie is None and not bom else None
        if bad is not None:
            return _unless_reported_before(lines, number, filename, SyntaxError(
                f"Non-UTF-8 code starting with '\\x{bad:02x}' in file {filename} on line {number}, but no "
                "encoding declared; see https://peps.python.org/pep-0263/ for details"))
        if null:
            text = head.decode(encoding, "replace")
            return _unless_reported_before(lines, number, filename, SyntaxError(
                "source code cannot contain null bytes", (filename, number, None, text)))
    return None


def _first_non_utf8(line: bytes) -> int | None:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as undecodable:
        return line[undecodable.start]
    return None


def _unless_reported_before(lines: list[bytes], number: int, filename: str, error: SyntaxError) -> SyntaxError:
    """error, raised when the reader reaches line `number`, unless the parser stops before it reads that line.

    The lines before it are compiled with a line after them that stops the tokenizer the moment it is read: an
    error found first is Python's (a parser error is not: Python then reads on through the file for a tokenizer
    error, and that reading reaches the line)."""
    try:
        compile(b"".join(lines[:number - 1]) + _STOP_LINE, filename, "exec", dont_inherit=True)
    except SyntaxError as earlier:
        detected = _DETECTED_AT_RE.search(earlier.msg or "")
        last = max(earlier.lineno or 0, int(detected.group(1)) if detected else 0)
        if last < number:
            return earlier.with_traceback(None)
    except ValueError:
        pass
    return error


def _coding_cookie(source: bytes) -> str | None:
    """The encoding a `# -*- coding: X -*-` line declares (line 1, or line 2 under a blank or comment line 1),
    normalised as Python's tokenizer names it in its errors."""
    for index, line in enumerate(source.splitlines()[:2]):
        found = _COOKIE_RE.match(line)
        if found:
            return _normal_name(found.group(1).decode("ascii"))
        if index == 0 and not _BLANK_OR_COMMENT_RE.match(line):
            return None
    return None


def _normal_name(name: str) -> str:
    lowered = name[:12].lower().replace("_", "-")
    if lowered == "utf-8" or lowered.startswith("utf-8-"):
        return "utf-8"
    if lowered in ("latin-1", "iso-8859-1", "iso-latin-1") or lowered.startswith(
            ("latin-1-", "iso-8859-1-", "iso-latin-1-")):
        return "iso-8859-1"
    return name
