"""Probes for a name Python could not find (`NameError: name 'F' is not defined`, an UnboundLocalError's `local
variable 'x' referenced before assignment`): where the failing file binds the name, if anywhere (an import or
assignment only inside another function, only under an `if` or in a `try` whose `except ImportError` swallowed the
import, only after the failing line), for an UnboundLocalError the assignment that makes the name local and whether a
global of that name exists, a notebook cell, and for a NameError raised inside a library, the library and its release.

Nothing of the user's runs: the file is read as source text (linecache, ast), the frame's tables by key.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from explainer._inspect import FrameRecord
from explainer._lazyre import cached_compile
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.environment.none_values import IMPORT_ERRORS, library_and_caller
from explainer.probes.readers.producer import parsed_file

MAX_PLACES = 4
NOTEBOOK_RE = cached_compile(r"^<ipython-input-\d+-|[/\\]ipykernel_\d+[/\\]\d+\.py$|^<cell line|^/tmp/ipykernel_")


def _binds(node: ast.AST, name: str) -> str | None:
    """How node binds name at its own level: 'import', 'def', 'class', 'assignment', 'loop variable', ..."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound == name:
                return "import"
        return None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ("class" if isinstance(node, ast.ClassDef) else "def") if node.name == name else None
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    elif isinstance(node, ast.NamedExpr):
        targets = [node.target]
    elif isinstance(node, ast.ExceptHandler):
        return "except ... as" if node.name == name else None
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store):
                kind = "loop variable" if isinstance(node, (ast.For, ast.AsyncFor)) else "assignment"
                return "`with ... as`" if isinstance(node, ast.withitem) else kind
    return None


def _catches_import(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(k, ast.Name) and k.id in IMPORT_ERRORS for k in kinds)


def bindings(tree: ast.AST, name: str) -> list[dict[str, Any]]:
    """Every place the module binds name: its line, how, the function it is inside (None at module level), and the
    innermost `if`/`try` around it (a `try` whose handlers catch ImportError is marked)."""
    found: list[dict[str, Any]] = []

    def visit(node: ast.AST, function: str | None, guard: str | None, guard_line: int | None) -> None:
        for child in ast.iter_child_nodes(node):
            kind = _binds(child, name)
            if kind is not None:
                found.append({"line": getattr(child, "lineno", 0), "kind": kind, "function": function,
                              "guard": guard, "guard_line": guard_line,
                              "code": ast.unparse(child).split("\n")[0][:120] if kind == "import" else None})
            inner_function, inner_guard, inner_line = function, guard, guard_line
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner_function = getattr(child, "name", "<lambda>")
            elif isinstance(child, ast.ClassDef):
                inner_function = f"class {child.name}"
            elif isinstance(child, ast.If):
                inner_guard, inner_line = "if", child.lineno
            elif isinstance(child, ast.Try) or type(child).__name__ == "TryStar":
                imports = any(_catches_import(h) for h in child.handlers)
                inner_guard, inner_line = ("try-import" if imports else "try"), child.lineno
            visit(child, inner_function, inner_guard, inner_line)
            if len(found) > 50:
                return

    visit(tree, None, None, None)
    return found


def _function_of(tree: ast.AST, line: int) -> ast.AST | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def _place(binding: dict[str, Any]) -> str:
    text = f"line {binding['line']}"
    if binding["function"] is not None:
        text += f" inside `{binding['function']}`"
    if binding["guard"] == "try-import":
        text += f" in the `try` at line {binding['guard_line']} whose `except ImportError` hides a failure"
    elif binding["guard"] is not None:
        text += f" under the `{binding['guard']}` at line {binding['guard_line']}"
    return text


def name_facts(record: FrameRecord, name: str, unbound: bool) -> dict[str, Any]:
    """Where the failing frame's file binds name, measured against the failing line."""
    facts: dict[str, Any] = {}
    if NOTEBOOK_RE.search(record.filename):
        facts["name_notebook"] = True
    tree = parsed_file(record.filename)
    if tree is None:
        return facts
    found = bindings(tree, name)
    function = _function_of(tree, record.lineno)
    function_name = getattr(function, "name", None)
    if unbound and function is not None:
        local = [b for b in found if b["function"] == function_name and function.lineno <= b["line"]
                 <= (function.end_lineno or 0)]
        after = [b for b in local if b["line"] >= record.lineno]
        chosen = (after or local)[:1]
        if chosen:
            facts["name_local_line"] = chosen[0]["line"]
            facts["name_local_kind"] = chosen[0]["kind"]
            if chosen[0]["guard"] is not None:
                facts["name_local_guard"] = f"{chosen[0]['guard'].replace('try-import', 'try')} at line " \
                                            f"{chosen[0]['guard_line']}"
        table = record.globals
        facts["name_global_exists"] = isinstance(table, dict) and name in table
        return facts
    if not found:
        facts["name_bound_nowhere"] = True
        return facts
    module_level = [b for b in found if b["function"] is None]
    swallowed = [b for b in module_level if b["guard"] == "try-import" and b["kind"] == "import"]
    if swallowed:
        facts["name_swallowed_line"] = swallowed[0]["line"]
        facts["name_swallowed_import"] = swallowed[0]["code"] or f"import {name}"
    later = [b for b in found if b["line"] > record.lineno and (b["function"] is None or b["function"] ==
                                                                function_name)]
    if later and not [b for b in found if b["line"] < record.lineno]:
        facts["name_defined_later"] = _place(later[0])
    elsewhere = [b for b in found if b["function"] is not None and b["function"] != function_name]
    if elsewhere and not module_level:
        facts["name_only_inside"] = "; ".join(_place(b) for b in elsewhere[:MAX_PLACES])
    guarded = [b for b in module_level if b["guard"] in ("if", "try") and not swallowed]
    if guarded and len(guarded) == len(module_level):
        facts["name_only_guarded"] = "; ".join(_place(b) for b in guarded[:MAX_PLACES])
    facts["name_bindings"] = "; ".join(f"{_place(b)} ({b['kind']})" for b in found[:MAX_PLACES])
    return facts


@probe("name_binding_live", provides=(
    "name_place", "name_in_function", "name_code", "name_notebook", "name_local_line", "name_local_kind",
    "name_local_guard", "name_global_exists", "name_bound_nowhere", "name_swallowed_line", "name_swallowed_import",
    "name_defined_later", "name_only_inside", "name_only_guarded", "name_bindings", "name_library",
    "name_library_version", "name_user_place", "name_user_code"))
def name_binding_live(ctx: ProbeContext) -> Evidence | None:
    """Where the file of the failing frame binds the missing name (read as source), an UnboundLocalError's local
    assignment and global, a notebook cell; for a NameError inside a library, the library and the user's call."""
    name = ctx.facts.get("missing_name")
    if not isinstance(name, str) or not ctx.records:
        return None
    raising = ctx.records[-1]
    unbound = isinstance(ctx.exception, UnboundLocalError) or ctx.facts.get("name_kind") in ("local", "free")
    facts: dict[str, Any] = {"name_place": f"{os.path.basename(raising.filename)}:{raising.lineno}",
                             "name_in_function": raising.name, "name_code": raising.code[:300]}
    facts.update(name_facts(raising, name, unbound))
    if not raising.is_user:
        facts.update(library_and_caller(ctx.records, raising, "name"))
    return Evidence(facts)


__all__ = ["bindings", "name_binding_live", "name_facts"]
