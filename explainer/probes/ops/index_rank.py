"""Probes for index ops given an index of the wrong rank: gather/scatter (index rank = input rank) and
index_select/index_add_/index_copy_ (a 1-D index)."""

from __future__ import annotations

from typing import Any

from explainer._inspect import describe_tensor, format_shape, is_tensor
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import call_operands, literal_int, parse_expression, shape_of, user_expression

GATHER_LIKE = {"gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_",
               "take_along_dim"}
INDEX_VECTOR = {"index_select", "index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_",
                "index_reduce", "index_reduce_"}


def _operands(ctx: ProbeContext, methods: set[str]):
    """(record, call text, method, input operand, dim, index operand) of the failing index call, or None."""
    record, expr = user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None:
        return None
    method, operands = call_operands(record, expr)
    if method not in methods or len(operands) < 3 or not is_tensor(operands[0].value):
        return None
    # take_along_dim(input, indices, dim); the others (input, dim, index, ...)
    index, dim_text = (operands[1], operands[2].text) if method == "take_along_dim" else (operands[2], operands[1].text)
    if not is_tensor(index.value):
        return None
    return expr.text, method, operands[0], literal_int(parse_expression(dim_text), record.namespace()), index


def _base_facts(call: str, method: str, source, dim: int | None, index) -> dict[str, Any]:
    facts: dict[str, Any] = {"call": call, "method": method, "input_name": source.text,
                             "input_shape": format_shape(shape_of(source.value)), "input_rank": len(shape_of(source.value)),
                             "index_name": index.text, "index_shape": format_shape(shape_of(index.value)),
                             "index_rank": len(shape_of(index.value))}
    if dim is not None:
        facts["dim"] = dim
    return facts


def _index_evidence(ctx: ProbeContext, methods: set[str], fix) -> Evidence | None:
    """The failing index call's operands as facts and culprits, with the call that fits (fix) when known."""
    found = _operands(ctx, methods)
    if found is None:
        return None
    call, method, source, dim, index = found
    facts = _base_facts(call, method, source, dim, index)
    fixed = fix(facts, source, index) if dim is not None else None
    if fixed:
        facts["index_fix"] = fixed
    return Evidence(facts, [describe_tensor(source.text, source.value), describe_tensor(index.text, index.value)])


def _unsqueezed(facts: dict[str, Any], source, index) -> str | None:
    """gather/scatter with the index's missing dimension added (and removed again from gather's result)."""
    if facts["index_rank"] + 1 != facts["input_rank"]:
        return None
    axis = facts["dim"] % facts["input_rank"]
    fixed = facts["call"].replace(index.text, f"{index.text}.unsqueeze({axis})", 1)
    return f"{fixed}.squeeze({axis})" if facts["method"] == "gather" else fixed


def _direct_index(facts: dict[str, Any], source, index) -> str | None:
    """index_select along dim 0 as plain indexing, which takes an index of any shape."""
    if facts["method"] != "index_select":
        return None
    if facts["dim"] % max(facts["input_rank"], 1) == 0:
        return f"{source.text}[{index.text}]"
    shape = ", ".join(str(n) for n in shape_of(index.value))
    return (f"torch.index_select({source.text}, {facts['dim']}, {index.text}.flatten()) and then a reshape that "
            f"splits dimension {facts['dim']} back into ({shape})")


@probe("gather_index_rank", provides=("call", "method", "input_name", "input_shape", "input_rank", "index_name",
                                       "index_shape", "index_rank", "dim", "index_fix"))
def gather_index_rank(ctx: ProbeContext) -> Evidence | None:
    """gather/scatter on the user's line whose index has another rank than the input, and the unsqueeze that fits."""
    return _index_evidence(ctx, GATHER_LIKE, _unsqueezed)


@probe("index_vector_operands", provides=("call", "method", "input_name", "input_shape", "input_rank", "index_name",
                                           "index_shape", "index_rank", "dim", "index_fix"))
def index_vector_operands(ctx: ProbeContext) -> Evidence | None:
    """index_select and friends on the user's line given an index that is not 1-D, and the call that fits."""
    return _index_evidence(ctx, INDEX_VECTOR, _direct_index)
