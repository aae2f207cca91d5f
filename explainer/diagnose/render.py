"""Diagnosis -> text for people, or one line of JSON for scripts."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

from explainer._diagnosis import Diagnosis, error_type, shown_place

FORMATS = ("text", "json")
MAX_FIELD = 500
# A rule's summary and fixes are its own sentences with the message's values in them, often longer than a field of the
# message (a fifth of the examples' summaries are over 500 characters): shown whole up to these, then cut with "…"
# (the JSON output keeps them whole).
MAX_SUMMARY = 2000
MAX_FIX = 1000


def add_format_argument(parser, json_means: str) -> None:
    """The --format option every subcommand shares; json_means says where the JSON goes."""
    parser.add_argument("--format", choices=FORMATS, default=None, type=str.lower,
                        help=f"text (default, or $EXPLAINER_FORMAT) or json: {json_means}")


def choose_format(requested: str | None) -> str:
    """The output format: requested (a caller's own choice: an unknown one is its error), else $EXPLAINER_FORMAT in any
    case, else text; an $EXPLAINER_FORMAT that names no format is text too (format_notice says so)."""
    if requested:
        if requested.lower() not in FORMATS:
            raise ValueError(f"unknown format {requested!r}: use one of {', '.join(FORMATS)}")
        return requested.lower()
    fmt = os.environ.get("EXPLAINER_FORMAT", "").strip().lower()
    return fmt if fmt in FORMATS else "text"


def format_notice(requested: str | None) -> str:
    """One line when $EXPLAINER_FORMAT, read because nothing was requested, names no format; else ''."""
    value = os.environ.get("EXPLAINER_FORMAT", "")
    if requested or not value.strip() or value.strip().lower() in FORMATS:
        return ""
    return (f"torch-explainer: EXPLAINER_FORMAT={_safe(value, 40)!r} is not a format ({' or '.join(FORMATS)}, any "
            "case): the text format is used\n")


def command_format(requested: str | None) -> str:
    """choose_format for a command (`explainer explain`, ...): the notice about $EXPLAINER_FORMAT goes to stderr."""
    import sys

    sys.stderr.write(format_notice(requested))
    return choose_format(requested)


def use_colour(stream: TextIO) -> bool:
    """Colour and layout (rich) only on a terminal that can show them: never with NO_COLOR, TERM=dumb,
    a pipe or file, or an encoding other than UTF-8 (then the plain text, exactly as documented)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        if not stream.isatty():
            return False
    except (AttributeError, ValueError, OSError):
        return False
    return _is_utf8(getattr(stream, "encoding", None))


def _is_utf8(encoding: str | None) -> bool:
    import codecs

    try:
        return codecs.lookup(encoding or "ascii").name == "utf-8"
    except LookupError:
        return False


# Characters a terminal acts on: C0 controls but tab and newline (ESC starts ANSI and OSC sequences, BEL and
# ESC-backslash end OSC ones, CR rewrites the line), DEL, C1 controls (CSI, OSC, ST as one byte) and the
# bidirectional overrides that make text read differently from what it is.
# A translation table rather than a pattern: str.translate needs no compile at the crash.
_UNSAFE = {code: f"\\x{code:02x}" for code in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}
_UNSAFE.update({code: f"\\u{code:04x}" for code in (0x200e, 0x200f, *range(0x202a, 0x202f), *range(0x2066, 0x206a))})


def escape_controls(text: str) -> str:
    """Untrusted text (the error message, a log, a checkpoint's keys) made inert: every character a
    terminal would act on is shown as its escape, `\\x1b`, instead of being sent."""
    return text.translate(_UNSAFE)


def _safe(text: Any, limit: int = MAX_FIELD) -> str:
    return _cap(escape_controls(str(text)), limit)


class _Row:
    """One line of the text diagnosis: a lead-in (indent, label) and a body that wraps under itself."""

    def __init__(self, lead: list[tuple[str, str | None]], body: list[tuple[str, str | None]], *,
                 wrap: bool = True, link: str | None = None):
        self.lead, self.body, self.wrap, self.link = lead, body, wrap, link

    def plain(self) -> str:
        return "".join(text for text, _ in self.lead + self.body)


# Facts that place the error beyond its location, each a frame {"file", "line", "function", "code"}, in the
# order they are shown, with their labels (statement: the user's line a paste began with, its frame line cut off: no
# file, no line).
FRAME_FACTS = (("statement", "at "), ("called_from", "called from "), ("called_via", "via "), ("entered_via", "via "), ("raised_in", "raised in "),
               ("reraised_at", "re-raised in the parent process at "), ("script_source", "in the scripted code at "),
               ("torch_source", "in torch's C++ at "), ("extension_source", "in the extension's C++ at "),
               ("logged_from", "logged from "), ("failed_test", "in the failed test "))


def _rows(diagnosis: Diagnosis) -> list[_Row]:
    if diagnosis.rule is None and not diagnosis.runbook:
        line = f"torch-explainer: {diagnosis.title.lower()}{_unmatched(diagnosis)}."
        return [_Row([], [(line, "dim")]), *_printed_with_rows(diagnosis.facts.get("printed_with"))]
    # No rule but a runbook: the message is another framework's (a foreign rule), said as plainly.
    rows = [
        _Row([], [("torch-explainer", "bold magenta"), (" ", None), (f"[{diagnosis.rule}]", "dim"), (" ", None),
                  (_safe(diagnosis.title), "bold")]) if diagnosis.rule else
        _Row([], [("torch-explainer: ", "bold magenta"), (_safe(diagnosis.title), "bold")]),
        _Row([("  ", None)], [(_safe(diagnosis.summary, MAX_SUMMARY), None)]),
    ]
    if diagnosis.location is not None:
        where = escape_controls(f"{diagnosis.location.file}:{diagnosis.location.line}")
        if diagnosis.location.function and diagnosis.location.function != "<module>":
            where += escape_controls(f" in {diagnosis.location.function}")
        code = f"   {diagnosis.location.code}" if diagnosis.location.code else ""
        rows.append(_Row([("  ", None)], [("at ", "dim"), (where, "cyan"), (_safe(code), None)]))
    node = diagnosis.facts.get("comfyui_node")
    if isinstance(node, str) and node:
        rows.append(_Row([("  ", None)], [("in ComfyUI node ", "dim"), (escape_controls(node), "cyan")]))
    rank = _rank_line(diagnosis.facts.get("process"))
    if rank:
        rows.append(_Row([("  ", None)], [(rank, "dim")]))
    rows += _frame_rows(diagnosis.facts)
    rows += _printed_with_rows(diagnosis.facts.get("printed_with"), diagnosis.rule)
    if diagnosis.culprits:
        rows.append(_Row([("  ", None)], [("culprits:", "bold")]))
        width = min(max(len(str(c.get("name", ""))) for c in diagnosis.culprits), 40)
        for culprit in diagnosis.culprits:
            name = escape_controls(str(culprit.get("name", "?")))
            rows.append(_Row([("    ", None), (name.ljust(width), "yellow"), ("  ", None)],
                             [(_describe(culprit), None)]))
    if diagnosis.fixes:
        rows.append(_Row([("  ", None)], [("fix:", "bold green")]))
        rows.extend(_Row([("    - ", None)], [(_safe(fix, MAX_FIX), None)]) for fix in diagnosis.fixes)
    if diagnosis.runbook:
        url = escape_controls(diagnosis.runbook)
        rows.append(_Row([("  ", None)], [("runbook: ", "dim"), (url, "underline")], wrap=False,
                         link=url if url == diagnosis.runbook else None))
    return rows


def _unmatched(diagnosis: Diagnosis) -> str:
    """' (ValueError at train.py:12)': the error's type and place, never its message, which can hold tensor values
    or private data (and was printed just above)."""
    found = error_type(diagnosis.error)
    parts = [found] if found else []
    place = shown_place(diagnosis)
    if isinstance(place, dict) and place.get("file"):
        parts.append(f"at {place['file']}:{place.get('line')}")
    return f" ({_safe(' '.join(parts), 300)})" if parts else ""


def _frame_rows(facts: dict[str, Any]) -> list[_Row]:
    """The frames that place the error beyond its location (FRAME_FACTS), then the other places a warning of the same
    rule was issued at (facts.also_at)."""
    rows = []
    for key, label in FRAME_FACTS:
        frame = facts.get(key)
        if isinstance(frame, dict):
            if not frame.get("file"):  # only the statement was pasted above the error: no file, no line
                code = f"   {frame.get('code')}" if frame.get("code") else ""
                if frame.get("line") and frame.get("function"):  # a frame line cut before its file: "line 260, in train"
                    code = f" line {frame.get('line')} in {frame.get('function')}{code}"
                rows.append(_Row([("  ", None)], [("raised at" if key == "raised_in" else label.rstrip(), "dim"),
                                                  (_safe(code), None)]))
                continue
            rows.append(_place_row("  ", label, frame, function=True))
    for place in facts.get("also_at") or ():
        if isinstance(place, dict) and place.get("file"):
            rows.append(_place_row("  ", "also at ", place))
    return rows


def _place_row(indent: str, label: str, place: dict, function: bool = False) -> _Row:
    """'label file:line[ in function]   code': one place in the user's or a library's code."""
    where = escape_controls(f"{place.get('file')}:{place.get('line')}" if place.get("line") is not None else place.get("file"))
    if function and place.get("function"):
        where += escape_controls(f" in {place['function']}")
    code = f"   {place.get('code')}" if place.get("code") else ""
    return _Row([(indent, None)], [(label, "dim"), (where, "cyan"), (_safe(code), None)])


def _printed_with_rows(parts: Any, rule: str | None = None) -> list[_Row]:
    """Records printed with the error that belong to it (facts.printed_with: anomaly mode's warning, a warning a paste
    holds above its error; another copy of the error, with other values: "also ..."; the error it was raised while
    handling: "raised while handling ...")."""
    rows = []
    for part in parts if isinstance(parts, list) else ():
        label = [("raised while handling ", "dim"), (f"[{_safe(str(part.get('rule')))}] ", "dim")] \
            if part.get("handled") else [("also ", "dim")] if rule and part.get("rule") == rule else \
            [("with ", "dim"), (f"[{_safe(str(part.get('rule')))}] ", "dim")]
        rows.append(_Row([("  ", None)], [*label, (_safe(str(part.get("summary", ""))), None)]))
        where = part.get("location")
        if isinstance(where, dict) and where.get("file"):
            rows.append(_place_row("    ", "at ", where))
    return rows


def _rank_line(rank: Any) -> str | None:
    """facts["process"] of a torchrun worker: 'rank 3/8, local rank 3, host node1' (the parts that are known)."""
    if not isinstance(rank, dict) or rank.get("rank") is None:
        return None
    parts = [f"rank {rank['rank']}" + (f"/{rank['world_size']}" if rank.get("world_size") is not None else "")]
    if rank.get("local_rank") is not None:
        parts.append(f"local rank {rank['local_rank']}")
    if rank.get("host"):
        parts.append(f"host {rank['host']}")
    return escape_controls(", ".join(parts))


def render_text(diagnosis: Diagnosis, *, colour: bool = False, width: int | None = None,
                note: str | None = None) -> str:
    """The diagnosis for people. colour: laid out by rich for a terminal (styles, wrapped to width, default
    the terminal's); otherwise plain lines. note: a line under the runbook link (the local site's state)."""
    rows = _rows(diagnosis)
    if note:
        rows.append(_Row([("  ", None)], [(f"({escape_controls(note)})", "dim")]))
    if not colour:
        return "\n".join(row.plain() for row in rows) + "\n"
    return _rich_text(rows, width or _terminal_width(None))


def _terminal_width(stream: TextIO | None) -> int:
    import shutil

    try:
        return os.get_terminal_size(stream.fileno()).columns or 80 if stream is not None \
            else shutil.get_terminal_size().columns
    except (AttributeError, ValueError, OSError):
        return shutil.get_terminal_size().columns


def _rich_text(rows: list[_Row], width: int) -> str:
    # rich is imported only here: the crash path pays for it only when a terminal shows the result.
    import io

    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=max(width, 20), force_terminal=True, color_system="standard",
                      markup=False, emoji=False, highlight=False, legacy_windows=False, no_color=False)

    def text(segments: list[tuple[str, str | None]]) -> Text:
        out = Text()
        for part, style in segments:
            out.append(part, style)
        return out

    for row in rows:
        lead, body = text(row.lead), text(row.body)
        if not row.wrap:
            if row.link:  # our own URL (control characters refused above): the terminal may make it clickable
                body.stylize(Style(link=row.link), len(body) - len(row.body[-1][0]))
            console.print(lead + body, soft_wrap=True)  # a URL stays whole, so the terminal can open it
            continue
        hang = Text(" " * lead.cell_len)
        for index, line in enumerate(body.wrap(console, max(console.width - lead.cell_len, 10))):
            line.rstrip()
            console.print((lead if index == 0 else hang) + line, soft_wrap=True)
    return buffer.getvalue()


def _describe(culprit: dict[str, Any]) -> str:
    kind = culprit.get("kind", "")
    if "repr" in culprit:
        text = str(culprit["repr"])
    elif "shape" in culprit:
        dims = culprit["shape"]
        shape = "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")" if dims is not None \
            else f"ragged, {culprit.get('ndim')} dims"
        text = f"{kind} shape={shape} dtype={culprit.get('dtype')} device={culprit.get('device')}"
        if culprit.get("layout"):
            text += f" layout={culprit['layout']}"
        if culprit.get("requires_grad"):
            text += " requires_grad=True"
        if culprit.get("grad_fn"):
            text += f" grad_fn={culprit['grad_fn']}"
    else:
        text = kind
    note = culprit.get("note")
    return _safe(f"{text}  ({note})" if note else text)


def _cap(text: str, limit: int = MAX_FIELD) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def render_json(diagnosis: Diagnosis, **extra: Any) -> str:
    return diagnosis.to_json(**extra) + "\n"


def render_nothing(name: str, unreadable: str | None = None) -> str:
    """`explainer explain --format json`'s line for an input with no error in it ("found": 0), or one it could not read
    (and why: "unreadable")."""
    return json.dumps({"input": name, "found": 0, **({"unreadable": unreadable} if unreadable else {})}) + "\n"


def render(diagnosis: Diagnosis, fmt: str, stream: TextIO, **extra: Any) -> str:
    if fmt == "json":
        return render_json(diagnosis, **extra)
    colour = use_colour(stream)
    return render_text(diagnosis, colour=colour, width=_terminal_width(stream) if colour else None,
                       note=runbook_note(diagnosis, start_build=_isatty(stream)))


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def runbook_note(diagnosis: Diagnosis, *, start_build: bool) -> str | None:
    """Where the link is the local site's and its page is not there yet, say so, and what to run; on a
    terminal (someone who may click it), start the one background build."""
    if not diagnosis.runbook or diagnosis.rule is None:
        return None
    from explainer._config import local_site_dir, local_site_state, open_command, start_local_build, unbuildable_note

    state = local_site_state(diagnosis.runbook)
    if state is None:
        return None
    open_it = f"`{open_command(diagnosis.rule)}`"
    if state == "stale":
        return f"this page is newer than the local runbook site; {open_it} rebuilds the site and opens it"
    if state == "building":
        return f"the local runbook site is being built in the background; {open_it} waits for it and opens the page"
    unbuildable = unbuildable_note(diagnosis.rule)
    if unbuildable:
        return unbuildable
    if state == "failed":
        return (f"the last build of the local runbook site failed (see {local_site_dir().parent / 'build.log'}); "
                f"{open_it} builds it now and shows why")
    if start_build and start_local_build():
        return f"the local runbook site is being built in the background, once; {open_it} waits for it and opens the page"
    return f"the local runbook site is not built yet; {open_it} builds it now and opens the page"


def internal_failure_line(error: BaseException | str, outcome: str = "no diagnosis") -> str:
    what = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return f"torch-explainer: internal error, {outcome} ({_cap(str(what))}); set EXPLAINER_DEBUG=1 for details\n"
