"""The Diagnosis: what the explainer found, independent of how it is shown."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

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
        return {
            "rule": self.rule,
            "category": self.category,
            "title": self.title,
            "summary": self.summary,
            "error": self.error,
            "location": self.location.to_dict() if self.location else None,
            "culprits": [dict(c) for c in self.culprits],
            "fixes": list(self.fixes),
            "runbook": self.runbook,
            "facts": _jsonable(self.facts),
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
