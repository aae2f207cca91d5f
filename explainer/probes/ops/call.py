"""The user's failing call: the tensors it works on, for rules whose message names no operand
(`torch.linalg.cholesky(K)`, `torch.autograd.grad(loss, [w1, w2])`, `if confidence > 0.9`), and its arguments
for errors about them (a module called with the wrong arguments, a tuple where a Tensor belongs)."""

from __future__ import annotations

import ast
import inspect
from typing import Any

from explainer._inspect import (MISSING, describe_module, describe_tensor, format_shape, innermost_user_frame,
                                is_module, is_tensor, resolve_text)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import tensor_arguments
from explainer.probes.readers.operands import MAX_LISTED, user_expression, user_node


def _listed_tensors(record) -> list[tuple[str, Any]]:
    """The tensors in a list or tuple display argument of the failing call (`[w1, w2]`), by their names."""
    node = user_node(record)
    if not isinstance(node, ast.Call):
        return []
    namespace = record.namespace()
    found = []
    for arg in node.args:
        if isinstance(arg, (ast.List, ast.Tuple)):
            for element in arg.elts:
                if isinstance(element, ast.Name) and is_tensor(value := namespace.get(element.id)):
                    found.append((element.id, value))
    return found


@probe("call_operands", provides=("operand_names",))
def call_operands(ctx: ProbeContext) -> Evidence | None:
    """Each tensor operand of the user's failing line (name, shape, dtype, device), a method's receiver first."""
    record = innermost_user_frame(ctx.records)
    if record is None:
        return None
    named: dict[str, Any] = {}
    for found in tensor_arguments(record):
        named.setdefault(found.name, found.tensor)
    for name, value in _listed_tensors(record):
        named.setdefault(name, value)
    if not named:
        return None
    names = list(named)[:MAX_LISTED]
    return Evidence({"operand_names": ", ".join(names)}, [describe_tensor(n, named[n], role="operand") for n in names])


@probe("call_arguments", provides=("callee", "callee_type", "forward_params", "given_args", "given_count",
                                   "odd_argument", "odd_desc", "method_argument"))
def call_arguments(ctx: ProbeContext) -> Evidence | None:
    """The failing call itself, for errors about its arguments: the module called and what its forward takes,
    the argument of the type the message refused (a tuple where a Tensor belongs), a method passed uncalled."""
    record, expr = user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None:
        return None
    facts: dict[str, Any] = {"callee": expr.callee.text, "given_args": ", ".join(op.text for op in expr.operands),
                             "given_count": len(expr.operands)}
    culprits = []
    if is_module(expr.callee.value):
        module = expr.callee.value
        facts["callee_type"] = type(module).__name__
        params = forward_parameters(module)
        if params is not None:
            facts["forward_params"] = params
        culprits.append(describe_module(expr.callee.text, module))
    refused = ctx.facts.get("got_type")
    for operand in expr.operands:
        method = _uncalled_method(operand.text, record.namespace())
        if method:
            facts["method_argument"] = operand.text
            culprits.append({"name": f"{operand.text}()", "kind": "method", "type": method})
        elif refused and type(operand.value).__name__ == refused and "odd_argument" not in facts:
            facts.update(odd_argument=operand.text, odd_desc=_container_desc(operand.value))
            culprits.append({"name": operand.text, "kind": refused, "type": facts["odd_desc"]})
    return Evidence(facts, culprits)


def forward_parameters(module: Any) -> str | None:
    """`(input)` for nn.Sequential: forward's parameters after self, read from its signature (no call)."""
    function = inspect.getattr_static(type(module), "forward", None)
    if not inspect.isfunction(function):
        return None
    try:
        parameters = list(inspect.signature(function, follow_wrapped=False).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    return "(" + ", ".join(_parameter_text(p) for p in parameters) + ")"


def _parameter_text(parameter: inspect.Parameter) -> str:
    """`x`, `mask=...`, `*args`: a default's value is never shown (its repr is user code)."""
    star = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(parameter.kind, "")
    default = "=..." if parameter.default is not inspect.Parameter.empty else ""
    return f"{star}{parameter.name}{default}"


def _uncalled_method(text: str, namespace: dict[str, Any]) -> str | None:
    """'Module.parameters' when text is `model.parameters`: a method of the object's class, passed without ()."""
    if "." not in text:
        return None
    base, attribute = text.rsplit(".", 1)
    owner = resolve_text(base, namespace)
    if owner is MISSING or not attribute.isidentifier():
        return None
    function = inspect.getattr_static(type(owner), attribute, None)
    if not inspect.isfunction(function):
        return None
    return function.__qualname__


def _container_desc(value: Any) -> str:
    """'tuple of 2: Tensor (8, 4), Tensor (8, 4)': what a container holds, by type and shape only."""
    if type(value) not in (tuple, list):
        return type(value).__name__
    items = [f"Tensor {format_shape(v.shape)}" if is_tensor(v) else type(v).__name__ for v in value[:MAX_LISTED]]
    return f"{type(value).__name__} of {len(value)}: " + ", ".join(items)


@probe("registered_names", provides=("container_target", "key_expr", "key_source"))
def registered_names(ctx: ProbeContext) -> Evidence | None:
    """Where a non-string name for a submodule came from: the keys of the dict given to nn.ModuleDict on the
    failing line (`{h: ... for h in horizons}`), or the name passed to add_module / register_buffer."""
    record = innermost_user_frame(ctx.records)
    try:
        statement = ast.parse(record.code).body[0] if record is not None else None
    except (SyntaxError, IndexError):
        return None
    if statement is None:
        return None
    facts: dict[str, Any] = {}
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        facts["container_target"] = ast.unparse(statement.targets[0])
    for node in ast.walk(statement):
        if isinstance(node, ast.DictComp):
            facts.update(key_expr=ast.unparse(node.key), key_source=ast.unparse(node.generators[0].iter))
            break
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and node.func.attr in (
                "add_module", "register_module", "register_buffer", "register_parameter"):
            facts["key_expr"] = ast.unparse(node.args[0])
            break
    if "key_expr" not in facts:
        return None
    source = resolve_text(facts.get("key_source", ""), record.namespace())
    culprits = [] if source is MISSING else [{"name": facts["key_source"], "kind": type(source).__name__}]
    return Evidence(facts, culprits)
