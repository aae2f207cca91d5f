"""Probes for a None where a value was expected (`'NoneType' object has no attribute 'shape'`, `... is not
subscriptable`, `cannot unpack non-iterable NoneType object`): which expression of the failing line is None, where
the frame assigned it (`img = cv2.imread(path)`, a function of the user's that never returns a value), and for a None
inside a library, the library and the optional import it stands for (`X = None` in an `except ImportError`).

Nothing of the user's runs: the failing line and the function around it are read as source text (ast), names are
looked up in the frame's own tables and attribute chains through safe_getattr; a function's code object is read
only from a plain Python function, a path only when it is a str.
"""

from __future__ import annotations

import ast
import linecache
import os
import re
import sys
import types
from typing import Any

from explainer._inspect import FrameRecord, innermost_user_frame, is_user_file, resolve, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.installed import distributions_providing
from explainer.probes.readers.producer import assignment_of, parsed_file

MAX_CODE_CHARS = 2_000
MAX_PATH_CHARS = 300
# builtins whose argument is iterated: `list(x)`, `zip(a, b)`, `for i, v in enumerate(x)`
ITERATING_CALLS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "enumerate", "zip", "dict", "sum",
                             "max", "min", "any", "all", "map", "filter", "reversed"})
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})


# --- the failing line: which sub-expression the operation needs ----------------------------------------

def parse_code(text: str) -> ast.AST | None:
    """A code line as an AST: an expression, a statement, or the head of a block (`if x.shape[0]:`)."""
    text = (text or "").strip()
    if not text or len(text) > MAX_CODE_CHARS:
        return None
    for attempt in (text, text + " pass", text.rstrip("(\\[{,").strip()):
        try:
            return ast.parse(attempt, mode="exec")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
    return None


def _unpacked(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
        return [node.value]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, (ast.Tuple, ast.List)):
        return [node.iter]
    return []


def _iterated(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.iter]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ITERATING_CALLS:
        return list(node.args)
    if isinstance(node, (ast.Starred, ast.YieldFrom)):
        return [node.value]
    if isinstance(node, ast.Compare):  # `k in x`: "argument of type 'NoneType' is not iterable"
        return [c for op, c in zip(node.ops, node.comparators) if isinstance(op, (ast.In, ast.NotIn))]
    return _unpacked(node)


def _operands(node: ast.AST, operation: str, attribute: str | None) -> list[ast.AST]:
    """The sub-expressions of node that the failing operation was applied to."""
    if operation == "attribute":
        return [node.value] if isinstance(node, ast.Attribute) and node.attr == attribute else []
    if operation in ("subscriptable", "assignment", "deletion"):
        ctx = {"subscriptable": ast.Load, "assignment": ast.Store, "deletion": ast.Del}[operation]
        return [node.value] if isinstance(node, ast.Subscript) and isinstance(node.ctx, ctx) else []
    if operation == "callable":
        return [node.func] if isinstance(node, ast.Call) else []
    if operation == "len":
        is_len = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
        return list(node.args[:1]) if is_len else []
    if operation == "unpack":
        return _unpacked(node)
    if operation == "iterable":
        return _iterated(node)
    return []


def candidates(code: str, operation: str, attribute: str | None = None) -> list[ast.AST]:
    """Each distinct expression of the code line that the operation applies to, in source order."""
    tree = parse_code(code)
    if tree is None:
        return []
    found: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        for operand in _operands(node, operation, attribute):
            found.setdefault(ast.unparse(operand), operand)
    return sorted(found.values(), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))


def operation_of(facts: dict[str, Any]) -> tuple[str | None, str | None]:
    """(operation, attribute) from the message's facts: `none_attribute` or the word of `none_operation`."""
    attribute = facts.get("none_attribute")
    if isinstance(attribute, str):
        return "attribute", attribute
    operation = facts.get("none_operation")
    return (operation if isinstance(operation, str) else None), None


# --- message only: the failing line as the paste shows it --------------------------------------------

@probe("none_operand_text", provides=("none_expr", "none_owner", "none_code"), live=False)
def none_operand_text(ctx: ProbeContext) -> Evidence | None:
    """The failing line as the message shows it, and its one expression that the message's operation applies to
    (`img` in `h, w = img.shape[:2]` for `has no attribute 'shape'`): that is the None, when the line holds only one.
    The line is the raising frame's code (`none_line`, the code sign) when it reads as code, else the line printed
    just above the error (`none_before_line`) when it holds the operation (a code line pasted without its frame)."""
    operation, attribute = operation_of(ctx.facts)
    line = ctx.facts.get("none_line")
    if not isinstance(line, str) or parse_code(line) is None:
        line = ctx.facts.get("none_before_line")
        if operation is None or not isinstance(line, str) or not candidates(line, operation, attribute):
            return None  # no code line, or a line of prose above the error
    facts: dict[str, Any] = {"none_code": line.strip()}
    found = candidates(line, operation, attribute) if operation is not None else []
    if len(found) == 1:
        facts.update(expression_facts(found[0]))
    return Evidence(facts)


def expression_facts(node: ast.AST) -> dict[str, Any]:
    """The None expression's text, and for an attribute chain the object it is a field of (`outputs` of
    `outputs.logits`)."""
    facts: dict[str, Any] = {"none_expr": ast.unparse(node)}
    if isinstance(node, ast.Attribute):
        facts["none_owner"] = ast.unparse(node.value)
    return facts


# --- live: the value that is None, and where it came from --------------------------------------------

def _is_none_operand(record: FrameRecord, operation: str, attribute: str | None) -> ast.AST | None:
    """The expression of the record's failing line (its exact sub-expression first) that holds None now."""
    namespace = record.namespace()
    texts = [record.segment() or "", record.code]
    for text in texts:
        for node in candidates(text, operation, attribute):
            if resolve(node, namespace) is None and _readable(node):
                return node
    # a call's result used directly (`a, b = split(x)`): the line's only such operand is the None
    found = candidates(record.code, operation, attribute)
    return found[0] if len(found) == 1 and isinstance(found[0], ast.Call) else None


def _readable(node: ast.AST) -> bool:
    """A plain name or attribute chain: what resolve could read (anything else resolved to MISSING)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _plain_function(value: Any) -> types.FunctionType | None:
    # type(), not isinstance: isinstance may read a user object's own `__class__` property
    if type(value) is types.MethodType:
        value = value.__func__
    return value if type(value) is types.FunctionType else None




def _def_node(filename: str, first_line: int) -> ast.AST | None:
    tree = parsed_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if first_line in [node.lineno] + [d.lineno for d in node.decorator_list]:
                return node
    return None


def _own_nodes(function: ast.AST):
    """The nodes of a def's body, not those of the defs, lambdas and classes nested in it."""
    stack = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def returns_of(function: ast.AST) -> str:
    """'never': no `return` of a value anywhere (it falls off its end, or returns bare); 'some paths': it returns a
    value on some paths, but a bare `return`, `return None` or its last statement lets others give None; else ''."""
    returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
    valued = [r for r in returns if r.value is not None and not (isinstance(r.value, ast.Constant)
                                                                  and r.value.value is None)]
    if not valued:
        return "never"
    body = getattr(function, "body", [])
    falls_off = bool(body) and not isinstance(body[-1], (ast.Return, ast.Raise, ast.While, ast.Try))
    return "some paths" if falls_off or len(valued) < len(returns) else ""


def _library_function_facts(filename: str, node: ast.AST | None, qualname: str, module: str) -> dict[str, Any]:
    """A library function that returns a module global its source sets to None when an optional import fails
    (torch.backends.opt_einsum.get_opt_einsum returns `_opt_einsum`): the module that did not import."""
    returned = {r.value.id for r in _own_nodes(node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)} \
        if node is not None else set()
    for name in sorted(returned):
        missing = optional_import(filename, name)
        if missing is not None:
            return {"none_function": qualname, "none_missing_module": missing, "none_function_module": module,
                    **_installed(missing)}
    return {}


def _installed(module: str) -> dict[str, Any]:
    from importlib.util import find_spec  # a top-level name: nothing is imported

    try:
        return {"none_missing_installed": find_spec(module) is not None}
    except (ImportError, ValueError):
        return {}


def _function_facts(function: types.FunctionType) -> dict[str, Any]:
    code = function.__code__
    node = _def_node(code.co_filename, code.co_firstlineno)
    if not is_user_file(code.co_filename):
        return _library_function_facts(code.co_filename, node, function.__qualname__, function.__module__)
    verdict = returns_of(node) if node is not None else ""
    if not verdict:
        return {}
    return {"none_function": function.__qualname__, "none_function_returns": verdict,
            "none_function_place": f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"}


def _module_file(module: Any) -> str | None:
    """A module's source file from its own __dict__ (its spec's origin): also for a wrapper module whose attributes
    live elsewhere (torch.backends' PropModule)."""
    own = _own_file(module)
    if own is not None:
        return own
    # a wrapper without a spec (torch.backends' modules): the file under the nearest enclosing package that has one
    name = safe_getattr(module, "__name__")
    parts = name.split(".") if type(name) is str else []
    for cut in range(len(parts) - 1, 0, -1):
        found = _own_file(sys.modules.get(".".join(parts[:cut])))
        if found is not None and os.path.basename(found) == "__init__.py":
            base = os.path.join(os.path.dirname(found), *parts[cut:])
            for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
                if os.path.isfile(candidate):
                    return candidate
            return None
    return None


def _own_file(module: Any) -> str | None:
    origin = safe_getattr(safe_getattr(module, "__spec__"), "origin")
    if type(origin) is not str:
        origin = safe_getattr(module, "__file__")
    return origin if type(origin) is str and origin.endswith(".py") else None


def _module_function_facts(func: ast.AST, namespace: dict[str, Any]) -> dict[str, Any]:
    """`pkg.mod.f()` where f cannot be read as an object: f's def in the module's source file."""
    if not isinstance(func, ast.Attribute):
        return {}
    module = resolve(func.value, namespace)
    filename = _module_file(module) if issubclass(type(module), types.ModuleType) else None
    if filename is None or is_user_file(filename):
        return {}
    tree = parsed_file(filename)
    node = next((n for n in getattr(tree, "body", []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == func.attr), None)
    name = safe_getattr(module, "__name__")
    return _library_function_facts(filename, node, func.attr, name if type(name) is str else ast.unparse(func.value))


def call_facts(call: ast.Call, namespace: dict[str, Any]) -> dict[str, Any]:
    """What the call that gave None was: its callee, its str path argument, and whether the callee is a function of
    the user's that gives None, or a library's that returns a failed optional import."""
    facts: dict[str, Any] = {"none_source_call": ast.unparse(call.func)[:120]}
    callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if isinstance(callee, str):
        facts["none_source_callee"] = callee  # `imread`, `get`, `append`: the rule's table says what gives None
    facts.update(_path_facts(call, namespace))
    function = _plain_function(resolve(call.func, namespace))
    facts.update(_function_facts(function) if function is not None else _module_function_facts(call.func, namespace))
    return facts


def _path_facts(call: ast.Call, namespace: dict[str, Any]) -> dict[str, Any]:
    """The first argument of the call that made the None, when it is a str (a path), and whether it exists."""
    if not call.args:
        return {}
    value = resolve(call.args[0], namespace)
    if isinstance(call.args[0], ast.Constant):
        value = call.args[0].value
    if type(value) is not str or not value or len(value) > MAX_PATH_CHARS:
        return {}
    facts: dict[str, Any] = {"none_source_arg": value}
    try:
        facts["none_path_exists"] = os.path.exists(value)
    except (OSError, ValueError):
        pass
    return facts


def source_facts(record: FrameRecord, name: str) -> dict[str, Any]:
    """Where the frame assigned name before the failing line: the line, and for a call the callee, its str path
    argument, and whether the callee is a function of the user's that gives None."""
    value = assignment_of(record, name)
    if value is None:
        return {}
    line = getattr(value, "lineno", None)
    facts: dict[str, Any] = {"none_source_code": ast.unparse(value)[:300]}
    if isinstance(line, int):
        facts["none_source_line"] = line
        facts["none_source_text"] = linecache.getline(record.filename, line).strip()[:300]
    if isinstance(value, ast.Attribute):
        facts["none_source_attr"] = value.attr  # `g = p.grad`
    if isinstance(value, ast.Call):
        facts.update(call_facts(value, record.namespace()))
    return facts


def _top_module(record: FrameRecord) -> str | None:
    table = record.globals
    name = dict.get(table, "__name__") if isinstance(table, dict) else None
    return name if type(name) is str else None


def _release(top: str) -> str | None:
    """The release of the distribution that provides top; its name too where it differs (yaml: "6.0.2 (PyYAML)")."""
    for name, version in distributions_providing(top):
        same = re.sub(r"[-_.]+", "-", name).lower() == re.sub(r"[-_.]+", "-", top).lower()
        return version if same else f"{version} ({name})"
    return None


def optional_import(filename: str, name: str) -> str | None:
    """The module whose import failed where a library's source sets `name = None` in an `except ImportError`
    (`try: import torch_cluster` / `except ImportError: torch_cluster = None`): its top-level name."""
    tree = parsed_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_sets_none(h, name) for h in node.handlers if _catches_import(h)):
            for stmt in node.body:
                if isinstance(stmt, ast.Import):
                    return stmt.names[0].name.split(".")[0]
                if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                    return stmt.module.split(".")[0]
    return None


def _catches_import(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(k, ast.Name) and k.id in IMPORT_ERRORS for k in kinds)


def _sets_none(handler: ast.ExceptHandler, name: str) -> bool:
    for stmt in ast.walk(handler):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return True
    return False


def library_and_caller(records: list[FrameRecord], raising: FrameRecord, prefix: str) -> dict[str, Any]:
    """For an error raised in an installed library's frame: the library and its version, and the user's call into it
    ({prefix}_library, {prefix}_library_version, {prefix}_user_place, {prefix}_user_code)."""
    facts: dict[str, Any] = {}
    library = library_facts(raising, None)
    if "none_library" in library:
        facts[f"{prefix}_library"] = library["none_library"]
        if "none_library_version" in library:
            facts[f"{prefix}_library_version"] = library["none_library_version"]
    user = innermost_user_frame(records)
    if user is not None:
        facts.update({f"{prefix}_user_place": f"{os.path.basename(user.filename)}:{user.lineno}",
                      f"{prefix}_user_code": user.code[:300]})
    return facts


def library_facts(record: FrameRecord, node: ast.AST | None) -> dict[str, Any]:
    """For a None met inside an installed library: the library, its release, and the optional import the None
    stands for where its source sets the name to None after a failed import."""
    module = _top_module(record)
    if module is None:
        return {}
    top = module.split(".")[0]
    facts: dict[str, Any] = {"none_library": top, "none_library_module": module}
    release = _release(top)
    if release is not None:
        facts["none_library_version"] = release
    local = record.locals
    is_local = isinstance(local, dict) and node is not None and getattr(node, "id", None) in local \
        and local is not record.globals
    if isinstance(node, ast.Name) and not is_local:
        missing = optional_import(record.filename, node.id)
        if missing is not None:
            facts.update({"none_missing_module": missing, **_installed(missing)})
    return facts


@probe("none_value_live", provides=("none_expr", "none_owner", "none_in_function", "none_place", "none_source_code",
                                     "none_source_line", "none_source_text", "none_source_call", "none_source_callee",
                                     "none_source_attr", "none_source_direct", "none_source_arg",
                                     "none_path_exists", "none_function", "none_function_returns",
                                     "none_function_place", "none_function_module", "none_library",
                                     "none_library_module",
                                     "none_library_version", "none_missing_module", "none_missing_installed",
                                     "none_user_place", "none_user_code"))
def none_value_live(ctx: ProbeContext) -> Evidence | None:
    """Which expression of the failing line is None (read from the frame), where its frame assigned it, and, when a
    library's frame raised, the library and the user's line that called into it."""
    operation, attribute = operation_of(ctx.facts)
    if operation is None or not ctx.records:
        return None
    raising = ctx.records[-1]
    facts: dict[str, Any] = {}
    node = _is_none_operand(raising, operation, attribute)
    if node is not None:
        text = ast.unparse(node)
        facts.update({**expression_facts(node), "none_in_function": raising.name,
                      "none_place": f"{os.path.basename(raising.filename)}:{raising.lineno}"})
        if isinstance(node, ast.Name):
            facts.update(source_facts(raising, node.id))
        elif isinstance(node, ast.Call):
            facts.update({"none_source_code": text, "none_source_direct": True,
                          **call_facts(node, raising.namespace())})
    if not raising.is_user:
        facts.update(library_facts(raising, node))
        user = innermost_user_frame(ctx.records)
        if user is not None:
            facts.update({"none_user_place": f"{os.path.basename(user.filename)}:{user.lineno}",
                          "none_user_code": user.code[:300]})
    if not facts:
        return None
    culprits = [{"name": facts["none_expr"], "kind": "value", "type": "NoneType", "repr": "None"}] \
        if "none_expr" in facts else []
    return Evidence(facts, culprits)


__all__ = ["candidates", "none_operand_text", "none_value_live", "operation_of", "optional_import", "parse_code",
           "returns_of", "source_facts"]
