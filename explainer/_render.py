"""Diagnosis -> text for people, or one line of JSON for scripts."""

from __future__ import annotations

import os
from typing import Any, TextIO

from ._diagnosis import Diagnosis

FORMATS = ("text", "json")
MAX_FIELD = 500


def add_format_argument(parser, json_means: str) -> None:
    """The --format option every subcommand shares; json_means says where the JSON goes."""
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help=f"text (default, or $EXPLAINER_FORMAT) or json: {json_means}")


def choose_format(requested: str | None) -> str:
    fmt = requested or os.environ.get("EXPLAINER_FORMAT") or "text"
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    return fmt


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class _Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text


def render_text(diagnosis: Diagnosis, *, colour: bool = False) -> str:
    style = _Style(colour)
    if diagnosis.rule is None:
        return style("2", f"torch-explainer: {diagnosis.title.lower()} ({_cap(_first_line(diagnosis.error), 120)}).") + "\n"
    lines = [
        style("1;35", "torch-explainer") + " " + style("2", f"[{diagnosis.rule}]") + " " + style("1", diagnosis.title),
        "  " + _cap(diagnosis.summary),
    ]
    if diagnosis.location is not None:
        where = f"{diagnosis.location.file}:{diagnosis.location.line}"
        code = f"   {diagnosis.location.code}" if diagnosis.location.code else ""
        lines.append("  " + style("2", "at ") + style("36", where) + _cap(code))
    raised_in = diagnosis.facts.get("raised_in")
    if isinstance(raised_in, dict):
        code = f"   {raised_in.get('code')}" if raised_in.get("code") else ""
        lines.append("  " + style("2", "raised in ") + style("36", f"{raised_in.get('file')}:{raised_in.get('line')}")
                     + _cap(code))
    reraised = diagnosis.facts.get("reraised_at")
    if isinstance(reraised, dict):
        code = f"   {reraised.get('code')}" if reraised.get("code") else ""
        lines.append("  " + style("2", "re-raised in the parent process at ")
                     + style("36", f"{reraised.get('file')}:{reraised.get('line')}") + _cap(code))
    if diagnosis.culprits:
        lines.append("  " + style("1", "culprits:"))
        width = min(max(len(str(c.get("name", ""))) for c in diagnosis.culprits), 40)
        for culprit in diagnosis.culprits:
            lines.append(f"    {style('33', str(culprit.get('name', '?')).ljust(width))}  {_describe(culprit)}")
    if diagnosis.fixes:
        lines.append("  " + style("1;32", "fix:"))
        lines.extend(f"    - {_cap(fix)}" for fix in diagnosis.fixes)
    if diagnosis.runbook:
        lines.append("  " + style("2", "runbook: ") + style("4", diagnosis.runbook))
    return "\n".join(lines) + "\n"


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
    return _cap(f"{text}  ({note})" if note else text)


def _cap(text: str, limit: int = MAX_FIELD) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def render_json(diagnosis: Diagnosis, **extra: Any) -> str:
    return diagnosis.to_json(**extra) + "\n"


def render(diagnosis: Diagnosis, fmt: str, stream: TextIO, **extra: Any) -> str:
    if fmt == "json":
        return render_json(diagnosis, **extra)
    return render_text(diagnosis, colour=use_colour(stream))


def internal_failure_line(error: BaseException | str, outcome: str = "no diagnosis") -> str:
    what = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return f"torch-explainer: internal error, {outcome} ({_cap(str(what))}); set EXPLAINER_DEBUG=1 for details\n"
