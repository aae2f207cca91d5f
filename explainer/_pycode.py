"""How a module path is written as Python code, for the fixes that name a submodule."""

from __future__ import annotations

import ast
from typing import Any


def module_expression(path: Any) -> Any:
    """A dotted module path as Python code reaches it: 'backbone.0.weight' is `backbone[0].weight` (nn.Sequential
    and nn.ModuleList children are indexed, not attributes). Anything else ('the input', a call) comes back as is."""
    parts = path.split(".") if isinstance(path, str) else [""]
    if not parts[0].isidentifier() or not all(part.isidentifier() or part.isdigit() for part in parts[1:]):
        return path
    return parts[0] + "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts[1:])


def assignable_expression(path: Any) -> str:
    """module_expression for the left side of an assignment (`backbone[0] = nn.Conv2d(...)`); a ValueError where
    the path is no target (a constructor called inline, "the input"), so that a fix built on it is left out."""
    expression = module_expression(path)
    try:
        ast.parse(f"{expression} = None")
    except (SyntaxError, ValueError, TypeError) as error:
        raise ValueError(f"{path!r} cannot be assigned to") from error
    return expression
