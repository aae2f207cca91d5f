"""Where the user's source built a model on the meta device (`with torch.device("meta"):`, `device="meta"`,
accelerate's `init_empty_weights()`): such a model has shapes but no values until `to_empty()` materializes it.
The source is read (AST), never run."""

from __future__ import annotations

import ast
import linecache
import re
from typing import Any

from explainer._inspect import FrameRecord, user_frames

from .producer import parsed_file

_META_RE = re.compile(r"""device\s*\(\s*["']meta["']|device\s*=\s*["']meta["']|init_empty_weights\s*\(""")


def meta_construction(records: list[FrameRecord], name: str) -> tuple[int, str] | None:
    """(line, code) of the statement that built `name` on the meta device, in a user frame's file, or None."""
    for filename in dict.fromkeys(record.filename for record in user_frames(records)):
        tree = parsed_file(filename)
        if tree is None:
            continue
        found = _built_on_meta(tree, name, linecache.getlines(filename), inside_meta=False)
        if found is not None:
            return found
    return None


def _built_on_meta(node: ast.AST, name: str, lines: list[str], inside_meta: bool) -> tuple[int, str] | None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.With, ast.AsyncWith)):
            meta = inside_meta or any(_META_RE.search(ast.unparse(item.context_expr)) for item in child.items)
            found = _built_on_meta(child, name, lines, meta)
        elif isinstance(child, ast.Assign) and any(_binds(target, name) for target in child.targets):
            built = inside_meta or _META_RE.search(ast.unparse(child.value)) is not None
            line = lines[child.lineno - 1]
            code = line[:child.end_col_offset] if child.end_lineno == child.lineno else line  # no trailing comment
            found = (child.lineno, code.strip()) if built else None
        else:
            found = _built_on_meta(child, name, lines, inside_meta)
        if found is not None:
            return found
    return None


def _binds(target: Any, name: str) -> bool:
    return isinstance(target, ast.Name) and target.id == name
