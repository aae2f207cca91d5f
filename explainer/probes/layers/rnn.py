"""Probes for recurrent layers: how they read their input and the initial state they refused."""

from __future__ import annotations

from typing import Any

from explainer._inspect import (MISSING, describe_module, describe_tensor, format_shape, is_tensor, module_frames,
                                module_repr, safe_getattr, tensor_facts)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import (failing_layer, frame_tensor, ints_in, layout_text, module_label, name_of,
                                               shape_of, torch_frame, user_expression)


@probe("rnn_input", provides=(
    "module", "module_repr", "input_size", "hidden_size", "batch_first", "input_name", "input_shape",
    "got_features", "layout", "rnn_fix", "transpose_fix", "transpose_shape", "layer_builder", "layer_top_level"))
def rnn_input(ctx: ProbeContext) -> Evidence | None:
    """The RNN/LSTM/GRU, how it reads its input's dimensions (batch_first) and what would fit."""
    record, module, expr, facts, culprits = failing_layer(ctx, "RNNBase")
    if module is None:
        return None
    name = facts["module"]
    input_size, hidden = safe_getattr(module, "input_size"), safe_getattr(module, "hidden_size")
    batch_first = safe_getattr(module, "batch_first") is True
    facts.update(input_size=input_size, hidden_size=hidden, batch_first=batch_first)
    value = frame_tensor(record, "input")
    if value is MISSING:
        return Evidence(facts, culprits)
    input_name = name_of(ctx, value, expr) or f"the input of {name}"
    shape = shape_of(value)
    facts.update(input_name=input_name, input_shape=format_shape(shape), got_features=shape[-1] if shape else 0)
    culprits.append(describe_tensor(input_name, value))
    if len(shape) == 3:
        labels = ("batch", "seq", "features") if batch_first else ("seq", "batch", "features")
        facts["layout"] = layout_text(labels, shape)
    options = []
    for attr, default in (("num_layers", 1), ("bidirectional", False), ("batch_first", False)):
        option = safe_getattr(module, attr)
        if option is not MISSING and option != default:
            options.append(f"{attr}={option}")
    facts["rnn_fix"] = f"nn.{type(module).__name__}({', '.join([str(facts['got_features']), str(hidden)] + options)})"
    if shape and input_size in shape[:-1]:
        j = shape.index(input_size)
        swapped = list(shape)
        swapped[j], swapped[-1] = swapped[-1], swapped[j]
        facts["transpose_fix"] = f"{input_name}.transpose({j}, {len(shape) - 1})"
        facts["transpose_shape"] = format_shape(swapped)
    return Evidence(facts, culprits)


@probe("rnn_hidden", provides=(
    "module", "module_repr", "hidden_name", "hidden_shape", "input_name", "input_shape", "batch_dim",
    "hidden_fix"))
def rnn_hidden(ctx: ProbeContext) -> Evidence | None:
    """The RNN/GRU/LSTM, the initial state it refused (h0 or c0) and a state built from the input's batch."""
    # The size check runs in a helper method of the same module: read the arguments from its forward.
    found = [(r, m) for r, m in module_frames(ctx.records) if r.name == "forward" and
             any(base.__name__ == "RNNBase" for base in type(m).__mro__)]
    if not found:
        return None
    record, module = found[-1]
    _, expr = user_expression(ctx)
    name = module_label(ctx, module, expr)
    facts: dict[str, Any] = {"module": name, "module_repr": module_repr(module)}
    culprits = [describe_module(name, module)]
    table = record.locals if isinstance(record.locals, dict) else {}
    hx = dict.get(table, "hx", MISSING)
    which = ints_in(ctx.facts.get("which", "")) if ctx.facts.get("which") else [0]
    if isinstance(hx, tuple) and which and which[0] < len(hx):
        hx = hx[which[0]]
    value = frame_tensor(record, "input")
    batch_first = safe_getattr(module, "batch_first") is True
    if value is not MISSING:
        input_name = name_of(ctx, value, expr) or f"the input of {name}"
        facts.update(input_name=input_name, input_shape=format_shape(shape_of(value)),
                     batch_dim=0 if batch_first else 1)
        culprits.append(describe_tensor(input_name, value))
        expected = ints_in(ctx.facts.get("expected", ""))
        if len(expected) == 3:
            size = f"{input_name}.size({facts['batch_dim']})" if input_name.isidentifier() else str(expected[1])
            facts["hidden_fix"] = f"torch.zeros({expected[0]}, {size}, {expected[2]})"
    if is_tensor(hx):
        hidden_name = name_of(ctx, hx, expr) or "the initial hidden state"
        facts.update(hidden_name=hidden_name, hidden_shape=format_shape(shape_of(hx)))
        culprits.append(describe_tensor(hidden_name, hx))
    return Evidence(facts, culprits)


@probe("packed_lengths", provides=("lengths_name", "lengths_shape", "lengths_device", "lengths_dtype"))
def packed_lengths(ctx: ProbeContext) -> Evidence | None:
    """The lengths pack_padded_sequence refused, as the user's code names them: the argument of the user's call
    when its line shows it, else the tensor torch's frame holds."""
    record = torch_frame(ctx.records, "torch/nn/utils/rnn.py", "pack_padded_sequence")
    value = frame_tensor(record, "lengths")
    if value is MISSING:
        return None
    _, expr = user_expression(ctx)
    name = name_of(ctx, value, expr)
    if name is None and expr is not None and expr.kind == "call" and len(expr.operands) >= 2:
        # pack_padded_sequence(x, lengths, ...): the second argument, when it is the same tensor under a name.
        second = expr.operands[1]
        name = second.text if is_tensor(second.value) and second.text.replace(".", "").isidentifier() else None
    name = name or "lengths"
    facts = tensor_facts(value)
    evidence = {"lengths_name": name, "lengths_shape": format_shape(facts["shape"]), "lengths_device": facts["device"],
                "lengths_dtype": facts["dtype"]}
    return Evidence(evidence, [describe_tensor(name, value, role="lengths")])
