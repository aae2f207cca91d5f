"""The explainer's own exceptions."""

from __future__ import annotations


class ExplainerError(Exception):
    """Base class for errors of the explainer itself (never the user's error)."""


class RuleError(ExplainerError):
    """A rule file is invalid: names the file, line, rule id and field, with a hint."""

    def __init__(self, file: str, message: str, *, line: int | None = None, rule: str | None = None,
                 field: str | None = None, hint: str | None = None):
        self.file = file
        self.line = line
        self.rule = rule
        self.field = field
        self.message = message
        self.hint = hint
        self.problems: list[RuleError] = [self]  # every problem of the file, this one first
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        who = f" rule {self.rule}:" if self.rule else ""
        what = f" {self.field}:" if self.field else ""
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{where}:{who}{what} {self.message}{hint}"
