"""Probes for lookups: nn.Embedding / F.embedding, index_select and integer indexing past the end."""

from __future__ import annotations

import ast
from typing import Any

from explainer._inspect import (MISSING, class_mro, class_table, describe_module, describe_tensor, format_shape,
                                innermost_user_frame, is_tensor, resolve, safe_getattr, tensor_facts)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.library_names import library_local
from explainer.probes.readers.operands import (FUNCTIONAL_FILE, call_operands, failing_module, frame_tensor, literal_int,
                                               module_label, name_of, parse_expression, shape_of, torch_frame,
                                               user_expression, user_node)

MAX_INDEX_ELEMENTS = 10_000_000


def _index_range(index: Any, size: int) -> dict[str, int] | None:
    """The largest id and how many ids fall outside [0, size) (negative ones counted too): reductions, never values."""
    import torch

    if type(index) is not torch.Tensor or index.is_floating_point() or index.is_complex():
        return None
    if index.device.type != "cpu" or not 0 < index.numel() <= MAX_INDEX_ELEMENTS:
        return None
    with torch._C.DisableTorchFunction(), torch.no_grad():
        negative = int((index < 0).sum())
        return {"max_index": int(index.max()), "negative_count": negative,
                "out_of_range": int((index >= size).sum()) + negative}


@probe("embedding_index", provides=(
    "module", "num_embeddings", "embedding_dim", "index_name", "index_shape", "max_index", "negative_count",
    "out_of_range", "needed_embeddings", "embedding_fix", "index_where", "index_code", "resize_fix"))
def embedding_index(ctx: ProbeContext) -> Evidence | None:
    """The nn.Embedding (or F.embedding weight) and the largest index it was given."""
    record, module = failing_module(ctx, "Embedding")
    _, expr = user_expression(ctx)
    if module is not None:
        weight = safe_getattr(module, "weight")
        label = module_label(ctx, module, expr)
        culprits = [describe_module(label, module)]
    else:
        record = torch_frame(ctx.records, FUNCTIONAL_FILE, "embedding")
        weight = frame_tensor(record, "weight")
        if record is None or weight is MISSING:
            return None
        label = name_of(ctx, weight, expr) or "the embedding weight"
        culprits = [describe_tensor(label, weight)]
    if not is_tensor(weight):
        return None
    rows, dim = (shape_of(weight) + [0, 0])[:2]
    facts: dict[str, Any] = {"module": label, "num_embeddings": rows, "embedding_dim": dim}
    index = frame_tensor(record, "input")
    if index is MISSING:
        return Evidence(facts, culprits)
    index_name, where = name_of(ctx, index, expr), None
    if index_name is None and (found := library_local(ctx.records, index)) is not None:
        index_name, where = found
        facts["index_where"] = where
    index_name = index_name or "the index tensor"
    facts.update(index_name=index_name, index_shape=format_shape(shape_of(index)))
    if parse_expression(index_name) is not None:
        facts["index_code"] = index_name
    culprits.append(describe_tensor(index_name, index, **({"note": f"in {where}"} if where else {})))
    facts.update(_resize_fix(ctx, label))
    found = _index_range(index, rows)
    if found:
        facts.update(found)
        if found["max_index"] >= rows:
            facts["needed_embeddings"] = found["max_index"] + 1
            facts["embedding_fix"] = f"nn.Embedding({found['max_index'] + 1}, {dim})"
    return Evidence(facts, culprits)


def _resize_fix(ctx: ProbeContext, label: str) -> dict[str, str]:
    """`model.resize_token_embeddings(len(tokenizer))` when the user's model (the first name of label) is a Hugging
    Face model: its own idiom, which resizes the input embeddings and the tied output layer together."""
    record = innermost_user_frame(ctx.records)
    root = label.split(".", 1)[0]
    if record is None or not root.isidentifier() or root == label:
        return {}
    model = resolve(ast.Name(root), record.namespace())
    if model is MISSING or not any("resize_token_embeddings" in class_table(cls) for cls in class_mro(type(model))):
        return {}
    return {"resize_fix": f"{root}.resize_token_embeddings(len(tokenizer))"}


@probe("index_select_operands", provides=(
    "call", "select_name", "select_shape", "select_dim", "select_size", "index_name", "index_shape", "max_index",
    "negative_count", "out_of_range"))
def index_select_operands(ctx: ProbeContext) -> Evidence | None:
    """A failing torch.index_select(x, dim, index) / x.index_select(dim, index) on the user's line: the size of
    the selected dimension and how many indices fall outside it (the same message as an embedding lookup)."""
    record, expr = user_expression(ctx)
    if expr is None or expr.kind != "call" or expr.callee is None:
        return None
    method, operands = call_operands(record, expr)
    if method != "index_select":
        return None
    if len(operands) != 3 or not is_tensor(operands[0].value) or not is_tensor(operands[2].value):
        return None
    source, index = operands[0], operands[2]
    dim = literal_int(parse_expression(operands[1].text), record.namespace())
    shape = shape_of(source.value)
    if dim is None or not -len(shape) <= dim < max(len(shape), 1) or not shape:
        return None
    dim %= len(shape)
    found = _index_range(index.value, shape[dim])
    if not found or not found["out_of_range"]:
        return None
    facts: dict[str, Any] = {"call": expr.text, "select_name": source.text, "select_shape": format_shape(shape),
                             "select_dim": dim, "select_size": shape[dim], "index_name": index.text,
                             "index_shape": format_shape(shape_of(index.value)), **found}
    return Evidence(facts, [describe_tensor(source.text, source.value), describe_tensor(index.text, index.value)])


@probe("index_operand", provides=("tensor_name", "tensor_shape", "call"))
def index_operand(ctx: ProbeContext) -> Evidence | None:
    """The tensor subscripted on the failing line whose dimension has the size the message names."""
    record = innermost_user_frame(ctx.records)
    node = user_node(record)
    if node is None:
        return None
    dim, size = ctx.facts.get("dim"), ctx.facts.get("size")
    namespace = record.namespace()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Subscript):
            continue
        value = resolve(sub.value, namespace)
        if not is_tensor(value):
            continue
        shape = shape_of(value)
        if isinstance(dim, int) and dim < len(shape) and shape[dim] == size:
            name = ast.unparse(sub.value)
            return Evidence({"tensor_name": name, "tensor_shape": format_shape(shape), "call": ast.unparse(sub)},
                            [describe_tensor(name, value)])
    return None


def _local_int(record, name: str) -> int | None:
    table = record.locals if record is not None else None
    value = dict.get(table, name) if isinstance(table, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _argument_text(record, position: int, keyword: str) -> str | None:
    """The source text of the user's failing call's argument at position or keyword, where it is a name
    or an attribute chain (`vocab_size`, `cfg.pad_id`); literals and expressions give None."""
    node = user_node(record)
    if not isinstance(node, ast.Call):
        return None
    found = next((k.value for k in node.keywords if k.arg == keyword), None)
    if found is None and position < len(node.args):
        found = node.args[position]
    return ast.unparse(found) if isinstance(found, (ast.Name, ast.Attribute)) else None


@probe("embedding_padding_idx", provides=("num_embeddings", "padding_idx", "rows_name", "pad_name", "layer",
                                          "needed_embeddings"))
def embedding_padding_idx(ctx: ProbeContext) -> Evidence | None:
    """An nn.Embedding / nn.EmbeddingBag (or F.embedding) built with a padding_idx outside its rows: both numbers,
    and the user's variables that gave them (`nn.Embedding(vocab_size, 256, padding_idx=pad_id)`)."""
    built = torch_frame(ctx.records, "torch/nn/modules/sparse.py", "__init__")
    functional = None if built is not None else torch_frame(ctx.records, FUNCTIONAL_FILE, "embedding")
    if built is not None:
        owner = dict.get(built.locals, "self") if isinstance(built.locals, dict) else None
        rows, layer = _local_int(built, "num_embeddings"), f"nn.{type(owner).__name__}" if owner is not None else "nn.Embedding"
    elif functional is not None:
        weight = frame_tensor(functional, "weight")
        rows, layer = (shape_of(weight)[0] if is_tensor(weight) and shape_of(weight) else None), "F.embedding"
    else:
        return None
    padding_idx = _local_int(built or functional, "padding_idx")
    if rows is None or padding_idx is None:
        return None
    facts: dict[str, Any] = {"num_embeddings": rows, "padding_idx": padding_idx, "layer": layer}
    if padding_idx >= rows:
        facts["needed_embeddings"] = padding_idx + 1
    culprits = []
    record = innermost_user_frame(ctx.records)
    # nn.Embedding(num_embeddings, embedding_dim, padding_idx); F.embedding(input, weight, padding_idx)
    arguments = (("rows_name", 0, "num_embeddings", rows),) if built is not None else ()
    for fact, position, keyword, value in arguments + (("pad_name", 2, "padding_idx", padding_idx),):
        text = _argument_text(record, position, keyword)
        if text is not None:
            facts[fact] = text
            culprits.append({"name": text, "kind": "value", "type": "int", "repr": str(value)})
    return Evidence(facts, culprits)


_BAG_ARGUMENTS = (("input", "input"), ("offsets", "offsets"), ("per_sample_weights", "weights"))


@probe("embedding_bag_operands", provides=("module", "mode", "input_name", "input_shape", "offsets_name",
                                           "offsets_shape", "weights_name", "weights_shape", "weights_dtype"))
def embedding_bag_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.EmbeddingBag that refused its call, and the ids, offsets and per_sample_weights it got, by the names
    the user's code gives them."""
    record, module = failing_module(ctx, "EmbeddingBag")
    _, expr = user_expression(ctx)
    if module is not None:
        label = module_label(ctx, module, expr)
        facts: dict[str, Any] = {"module": label}
        mode = safe_getattr(module, "mode")
        culprits = [describe_module(label, module)]
    else:
        # F.embedding_bag reshapes its arguments before some checks: its own frame only where no module ran.
        record = torch_frame(ctx.records, FUNCTIONAL_FILE, "embedding_bag")
        if record is None:
            return None
        facts, culprits, mode = {}, [], dict.get(record.locals, "mode") if isinstance(record.locals, dict) else None
    if isinstance(mode, str):
        facts["mode"] = mode
    for local, fact in _BAG_ARGUMENTS:
        value = frame_tensor(record, local)
        if value is MISSING:
            continue
        name = name_of(ctx, value, expr) or f"the {local} of {facts.get('module', 'embedding_bag')}"
        facts.update({f"{fact}_name": name, f"{fact}_shape": format_shape(shape_of(value))})
        if fact == "weights":
            facts["weights_dtype"] = tensor_facts(value)["dtype"]
        culprits.append(describe_tensor(name, value, role=local))
    return Evidence(facts, culprits) if culprits else None
