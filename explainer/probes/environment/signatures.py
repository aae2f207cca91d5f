"""The callee of a call whose arguments Python refused to bind ("got an unexpected keyword argument", "missing 1
required positional argument", "takes 2 positional arguments but 3 were given"): found from the failing call's
source through names and module/class dictionaries (nothing evaluated, no inspect.signature of user objects), its
parameters read from its code object, the module and installed release that define it, and the release of the
library that made the call when the call is not in the user's code."""

from __future__ import annotations

import ast
import difflib
import sys
import types
from typing import Any

from explainer._inspect import MISSING, FrameRecord, is_user_file, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.installed import distributions_providing, installed_package

MAX_PARAMS = 24
CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


@probe("call_signature", provides=(
    "callee_text", "callee_name", "callee_params", "callee_param_count", "callee_module", "callee_file", "callee_line",
    "callee_dist", "callee_version", "callee_is_user", "callee_takes_kwargs", "callee_counts_self", "close_matches",
    "call_code", "call_forwards_kwargs",
    "call_in_library", "caller_package", "caller_dist", "caller_version"))
def call_signature(ctx: ProbeContext) -> Evidence | None:
    """The refused call's callee (a function, or the class whose __init__/__new__ refused), what it takes, where it
    is defined and the installed release, and the library that made the call when it was not the user's code."""
    if not ctx.records:
        return None
    record = ctx.records[-1]  # a refused binding raises before the callee's frame exists: the caller is innermost
    wanted = str(ctx.facts.get("function") or "")
    found = _failing_call(record, wanted.rsplit(".", 1)[-1])
    facts: dict[str, Any] = {}
    if not record.is_user:
        facts.update(_caller_release(record.filename))
    if found is None:
        return Evidence(facts) if facts else None
    node, callee = found
    facts.update(callee_text=ast.unparse(node.func), call_code=record.code)
    if any(k.arg is None for k in node.keywords):
        facts["call_forwards_kwargs"] = True  # `f(**kwargs)`: the keyword came from whoever filled kwargs
    function, bound = _function_of(callee, wanted.rsplit(".", 1)[-1])
    if function is not None:
        facts.update(_describe_function(function, bound, ctx.facts))
        if isinstance(callee, type):  # the class's module, not its generated __init__'s
            facts = {k: v for k, v in facts.items() if k not in ("callee_dist", "callee_version")}
            facts.update(_defined_in(callee, record))
    return Evidence(facts)


# --- the failing call ---------------------------------------------------------------------------------------


def _failing_call(record: FrameRecord, method: str) -> tuple[ast.Call, Any] | None:
    """(the callee's source text, its live value) of the call on the frame's failing line that refused its
    arguments: the instruction's own call where positions are known, else the line's call whose name fits."""
    calls = _calls(record.segment()) or _calls(record.code)
    namespace = _namespace(record)
    fallback = None
    for node in calls:
        value = _resolve(node.func, namespace, record)
        if value is MISSING:
            continue
        function, _bound = _function_of(value, method)
        if function is not None and function.__name__ == method:
            return node, value
        fallback = fallback or (node, value)
    return fallback if fallback is not None and len(calls) == 1 else None


def _calls(source: str | None) -> list[ast.Call]:
    """The calls in source, outermost first (the segment of a refused call is that call itself)."""
    if not source:
        return []
    text = source.strip().rstrip(":").rstrip(",")
    for candidate in (text, text + ")", text + "))"):
        try:
            tree = ast.parse(candidate, mode="exec")
        except SyntaxError:
            continue
        return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    return []


def _namespace(record: FrameRecord) -> dict[str, Any]:
    namespace = record.namespace()
    builtins = record.globals.get("__builtins__") if isinstance(record.globals, dict) else None
    if isinstance(builtins, types.ModuleType):
        builtins = safe_getattr(builtins, "__dict__")
    if isinstance(builtins, dict):
        namespace = {**builtins, **namespace}
    return namespace


def _resolve(node: ast.AST, namespace: dict[str, Any], record: FrameRecord) -> Any:
    """The value of a name, an attribute chain or `super().name`, read from dictionaries only."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id, MISSING)
    if not isinstance(node, ast.Attribute):
        return MISSING
    if _is_super_call(node.value):
        given = [_resolve(arg, namespace, record) for arg in node.value.args]
        return _super_attribute(record, node.attr, given)
    base = _resolve(node.value, namespace, record)
    if base is MISSING:
        return MISSING
    return _attribute(base, node.attr)


def _is_super_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _attribute(base: Any, name: str) -> Any:
    """base.name from a module's, a class's MRO's or an instance's own dictionary (its class's for methods)."""
    if isinstance(base, type):
        return _class_lookup(base, name)
    value = safe_getattr(base, name)  # a module's globals, an instance's own attributes
    if value is MISSING and not isinstance(base, types.ModuleType):
        value = _class_lookup(type(base), name)
        if isinstance(value, types.FunctionType):
            return types.MethodType(value, base)  # bound, so that `self` is not counted (never called)
    return value


def _class_lookup(cls: type, name: str, after: type | None = None) -> Any:
    """name in the __dict__ of cls's MRO (after `after`, as super() looks), bypassing any metaclass."""
    try:
        mro = type.__getattribute__(cls, "__mro__")
    except (AttributeError, TypeError):
        return MISSING
    if after is not None:
        mro = mro[list(mro).index(after) + 1:] if after in mro else ()
    for klass in mro:
        table = type.__getattribute__(klass, "__dict__")
        if name in table:
            value = table[name]
            if isinstance(value, (staticmethod, classmethod)):
                return value.__func__
            return value
    return MISSING


def _super_attribute(record: FrameRecord, name: str, given: list[Any]) -> Any:
    """`super().name` (the method's __class__ cell and first argument) or `super(Cls, obj).name`."""
    if len(given) == 2:
        owner, first = given
    else:
        table = record.locals if isinstance(record.locals, dict) else {}
        code = record.frame.f_code if record.frame is not None else None
        if given or code is None or not code.co_argcount:
            return MISSING
        owner, first = table.get("__class__"), table.get(code.co_varnames[0], MISSING)
    if not isinstance(owner, type) or first is MISSING:
        return MISSING
    cls = first if isinstance(first, type) else type(first)
    value = _class_lookup(cls, name, after=owner)
    return types.MethodType(value, first) if isinstance(value, types.FunctionType) else value


def _function_of(callee: Any, method: str) -> tuple[types.FunctionType | None, bool]:
    """(the Python function whose parameters refused the call, whether its first parameter is already bound)."""
    if isinstance(callee, types.MethodType):
        function = callee.__func__
        return (function, True) if isinstance(function, types.FunctionType) else (None, False)
    if isinstance(callee, types.FunctionType):
        return callee, False
    if isinstance(callee, type):
        name = "__new__" if method == "__new__" else "__init__"
        function = _class_lookup(callee, name)
        if isinstance(function, types.FunctionType):
            return function, True  # self (or cls for __new__) is passed by the class call
    return None, False


def _code(function: types.FunctionType) -> types.CodeType:
    return function.__code__  # FunctionType's own slot: no user code runs


# --- what the callee takes ----------------------------------------------------------------------------------


def parameters(function: types.FunctionType, bound: bool) -> tuple[list[str], list[str]]:
    """(each parameter as `name`, `name=…`, `*args`, `*`, `**kwargs`; the names a keyword may take)."""
    code = _code(function)
    names = code.co_varnames
    positional = list(names[:code.co_argcount])
    keyword_only = list(names[code.co_argcount:code.co_argcount + code.co_kwonlyargcount])
    rest = code.co_argcount + code.co_kwonlyargcount
    star = names[rest] if code.co_flags & CO_VARARGS else None
    double = names[rest + (1 if star else 0)] if code.co_flags & CO_VARKEYWORDS else None
    defaults = function.__defaults__ or ()
    keyword_defaults = function.__kwdefaults__ or {}
    first_default = len(positional) - len(defaults)
    shown = [f"{n}=…" if i >= first_default else n for i, n in enumerate(positional)]
    if bound and shown:
        shown, positional = shown[1:], positional[1:]
    if star:
        shown.append(f"*{star}")
    elif keyword_only:
        shown.append("*")
    shown += [f"{n}=…" if n in keyword_defaults else n for n in keyword_only]
    if double:
        shown.append(f"**{double}")
    keywords = positional[code.co_posonlyargcount - (1 if bound and code.co_posonlyargcount else 0):] + keyword_only
    return shown, keywords


def _describe_function(function: types.FunctionType, bound: bool, message: dict[str, Any]) -> dict[str, Any]:
    shown, keywords = parameters(function, bound)
    code = _code(function)
    module = function.__module__ if isinstance(function.__module__, str) else None
    facts: dict[str, Any] = {
        "callee_name": function.__qualname__, "callee_param_count": len(shown),
        "callee_params": ", ".join(shown[:MAX_PARAMS]) + (f", … ({len(shown) - MAX_PARAMS} more)"
                                                         if len(shown) > MAX_PARAMS else ""),
        "callee_file": code.co_filename, "callee_line": code.co_firstlineno, "callee_is_user": is_user_file(code.co_filename),
        "callee_takes_kwargs": bool(code.co_flags & CO_VARKEYWORDS), "callee_counts_self": bound}
    if module:
        facts["callee_module"] = module
        facts.update(_release(module.split(".")[0], "callee"))
    kwarg = message.get("kwarg")
    if isinstance(kwarg, str) and keywords:
        close = difflib.get_close_matches(kwarg, keywords, n=3, cutoff=0.6)
        if close:
            facts["close_matches"] = ", ".join(f"`{c}`" for c in close)
    return facts


def _defined_in(cls: type, record: FrameRecord) -> dict[str, Any]:
    """A class's own module, file and release: a namedtuple's or a dataclass's generated methods say "<string>"."""
    module = type.__getattribute__(cls, "__dict__").get("__module__")
    if not isinstance(module, str):
        return {}
    facts: dict[str, Any] = {"callee_module": module}
    if isinstance(record.globals, dict) and record.globals.get("__name__") == module:
        filename = record.filename  # the calling module's own class (a script run as __main__ by runpy, too)
    else:
        loaded = sys.modules.get(module)
        filename = safe_getattr(loaded, "__file__") if loaded is not None else MISSING
    if isinstance(filename, str):
        facts.update(callee_file=filename, callee_is_user=is_user_file(filename))
    release = _release(module.split(".")[0], "callee")
    return {**facts, **release} if release else facts


# --- installed releases -------------------------------------------------------------------------------------


def _caller_release(filename: str) -> dict[str, Any]:
    """The installed package the calling frame's file belongs to (its top-level folder under site-packages)."""
    package = installed_package(filename)
    if package is None:
        return {"call_in_library": True}
    return {"call_in_library": True, "caller_package": package, **_release(package, "caller")}


def _release(package: str, role: str) -> dict[str, Any]:
    """{role_dist, role_version} of the distribution that installs the top-level import name package."""
    if not package.isidentifier() or package.startswith("__"):
        return {}
    for name, version in distributions_providing(package):
        if version:
            return {f"{role}_dist": name, f"{role}_version": version}
    return {}
