"""The Diagnosis: what the explainer found, independent of how it is shown."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from ._lazyre import lazy_compile

CATEGORIES = ("shape", "device", "dtype", "memory", "autograd", "data", "distributed", "numerics", "compile", "other")


@dataclass
class Location:
    """The innermost frame of the user's own code on the failing path."""

    file: str
    line: int
    code: str = ""
    function: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function, "code": self.code}


@dataclass
class Diagnosis:
    """One explained error (or training signal). `to_dict()` is the documented JSON contract."""

    rule: str | None
    category: str
    title: str
    summary: str
    error: str = ""
    location: Location | None = None
    culprits: list[dict[str, Any]] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    runbook: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    # The explainer's own failures while building this (a probe that crashed): reported, not serialised.
    internal_errors: list[str] = field(default_factory=list, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract. Like the text, it never repeats values of the user's tensors: an error no rule explains
        is named by its type only (its message is the user's own, printed just above), torch's printout of a tensor
        in a message or a fact is `tensor(...)`, and a shape read from a message is written `(3,)` as the text
        writes it."""
        return {
            "rule": self.rule,
            "category": self.category,
            "title": self.title,
            "summary": self.summary,
            "error": error_type(self.error) if self.rule is None and not self.runbook else values_hidden(self.error),
            "location": self.location.to_dict() if self.location else None,
            "culprits": [dict(c) for c in self.culprits],
            "fixes": list(self.fixes),
            "runbook": self.runbook,
            "facts": {str(k): _shape_written(str(k), v) for k, v in _jsonable(self.facts).items()},
        }

    def __str__(self) -> str:
        """The text a crash prints after the traceback (plain, no colour): `print(diagnosis)`."""
        if _text_renderer is not None:
            return _text_renderer(self)
        return f"torch-explainer [{self.rule}] {self.title}\n  {self.summary}\n"

    def to_json(self, **extra: Any) -> str:
        data = self.to_dict()
        data.update(extra)
        # ASCII only: the line must stay valid JSON whatever the stream's encoding (PYTHONIOENCODING=ascii).
        return json.dumps(data, ensure_ascii=True, sort_keys=False)


# The renderer lives in the diagnose layer, above this one; it registers itself there (every Diagnosis the
# explainer builds comes through that layer).
_text_renderer: Callable[[Diagnosis], str] | None = None


def set_text_renderer(render: Callable[[Diagnosis], str]) -> None:
    global _text_renderer
    _text_renderer = render


def shown_place(diagnosis: Diagnosis) -> dict[str, Any] | None:
    """Where diagnosis says the error happened: the user's frame, else the frame a pasted traceback raised in."""
    return diagnosis.location.to_dict() if diagnosis.location else diagnosis.facts.get("raised_in")


def printed_part(diagnosis: Diagnosis, line: int | None, *, handled: bool = False) -> dict[str, Any]:
    """diagnosis as a record shown under another's (facts.printed_with): its rule, summary, line and place;
    handled marks the error the other was raised while handling."""
    part = {"rule": diagnosis.rule, "summary": diagnosis.summary, "input_line": line, "location": shown_place(diagnosis)}
    if handled:
        part["handled"] = True
    return part


def _jsonable(value: Any) -> Any:
    """Facts are plain data; anything else becomes a type marker (str() could run user code)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return f"<{type(value).__name__}>"


# The type that leads an error line as Python prints it ("ValueError", "torch.OutOfMemoryError"), message or not.
_ERROR_TYPE_RE = lazy_compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?=:|$)")
# Where torch (or NumPy) printed an array's values: `tensor([0.12, nan])`, `tensor(3.)`, `array([[1, 2]])`; not a call
# a message quotes (`torch.tensor(sourceTensor)`).
_PRINTED_ARRAY_RE = lazy_compile(r"(?<![\w.])(?:tensor|array)\((?=\[|-?\d|-?(?:nan|inf)\b|True\b|False\b)")
# A shape as a message's group holds it, without its parentheses: "3," or "16, 3, 32, 32".
_BARE_SHAPE_RE = lazy_compile(r"\d+(?:, ?\d+)*,?")


def error_type(text: str) -> str:
    """The type that leads the error's first line ('ValueError'), without the message; '' when none does. A
    SyntaxError's text, as Python prints it, starts with its indented place and source line: its type leads the first
    line at column 0."""
    lines = text.splitlines() if text else [""]
    found = _ERROR_TYPE_RE.match(lines[0].strip())
    if found is None and lines[0][:1].isspace():
        found = next(filter(None, (_ERROR_TYPE_RE.match(line) for line in lines if not line[:1].isspace())), None)
    return found.group() if found else ""


def values_hidden(text: str) -> str:
    """text with the values of every array torch or NumPy printed in it cut out: `tensor([0.12, nan])` reads
    `tensor(...)`, up to its closing parenthesis (or the end, where the text was cut)."""
    if "(" not in text:
        return text
    parts, end = [], 0
    for found in _PRINTED_ARRAY_RE.finditer(text):
        if found.start() < end:
            continue  # inside an array already cut
        parts.append(text[end:found.end()] + "...)")
        end = _closing(text, found.end())
    return "".join(parts) + text[end:] if parts else text


def _closing(text: str, start: int) -> int:
    """The index just past the parenthesis that closes the one opened before start (len(text) when none does)."""
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _shape_written(key: str, value: Any) -> Any:
    """A fact as the JSON writes it: a shape a message gave without its parentheses ('3,', '16, 3') written as the
    text writes shapes, '(3,)'; a string with printed tensor values in it, without them."""
    if isinstance(value, str):
        if (key == "shape" or key.endswith("_shape")) and _BARE_SHAPE_RE.fullmatch(value.strip()):
            dims = [d.strip() for d in value.split(",") if d.strip()]
            return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
        return values_hidden(value)
    if isinstance(value, dict):
        return {k: _shape_written(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape_written(key, v) for v in value]
    return value
