"""Probes for nn.MultiheadAttention: its embed_dim and heads, the query it got and the layer around it."""

from __future__ import annotations

from typing import Any

from explainer._inspect import (MISSING, FrameRecord, describe_module, describe_tensor, format_shape,
                                innermost_user_frame, is_tensor, module_frames, safe_getattr)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import call_arguments
from explainer.probes.readers.operands import (failing_layer, frame_tensor, ints_in, layout_text, module_label, name_of,
                                               shape_of)

_TRANSFORMER_LAYERS = ("TransformerEncoderLayer", "TransformerDecoderLayer")


@probe("attention_operands", provides=(
    "module", "module_repr", "embed_dim", "num_heads", "batch_first", "query_name", "query_shape", "key_shape",
    "got_embed", "layout", "seq_first_layout", "mha_fix", "layer", "layer_fix", "projection_fix", "mask_name"))
def attention_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.MultiheadAttention (and the Transformer layer around it), its embed_dim and the query it got."""
    record, module, expr, facts, culprits = failing_layer(ctx, "MultiheadAttention")
    if module is None:
        return None
    embed_dim, heads = safe_getattr(module, "embed_dim"), safe_getattr(module, "num_heads")
    batch_first = safe_getattr(module, "batch_first") is True
    facts.update(embed_dim=embed_dim, num_heads=heads, batch_first=batch_first)
    layer, layer_record = _transformer_layer(ctx, module)
    if layer is not None:
        facts["layer"] = module_label(ctx, layer, expr)
        culprits.append(describe_module(facts["layer"], layer))
    _add_mask(ctx, record, facts, culprits)
    query, key, swapped = _query_and_key(record, module, expr, layer_record, batch_first)
    if query is MISSING:
        return Evidence(facts, culprits)
    query_name = name_of(ctx, query, expr) or "query"
    shape = _caller_order(shape_of(query), swapped)
    facts.update(query_name=query_name, query_shape=format_shape(shape), got_embed=shape[-1] if shape else 0)
    culprits.append(describe_tensor(query_name, query))
    if key is not MISSING:
        facts["key_shape"] = format_shape(_caller_order(shape_of(key), swapped))
    if len(shape) == 3:
        facts["layout"] = layout_text(("N", "L", "E") if batch_first else ("L", "N", "E"), shape)
        if not batch_first:
            facts["seq_first_layout"] = facts["layout"]
    facts.update(_attention_fixes(facts["got_embed"], embed_dim, heads, batch_first, layer))
    return Evidence(facts, culprits)


def _add_mask(ctx: ProbeContext, record: FrameRecord | None, facts: dict[str, Any], culprits: list) -> None:
    """The mask the message is about, when the user's code holds that very tensor under a name."""
    local = _mask_local(ctx.facts)
    mask = frame_tensor(record, local) if local else MISSING
    name = name_of(ctx, mask) if mask is not MISSING else None
    if name is None and local is not None:
        # torch converts a bool mask to a float copy: find the caller's keyword argument of the reported shape.
        name, mask = _mask_argument(ctx, local)
    if name is not None:
        facts["mask_name"] = name
        culprits.append(describe_tensor(name, mask, role=local))


def _mask_local(facts: dict[str, Any]) -> str | None:
    """Which of attention's masks the message is about: its name inside multi_head_attention_forward."""
    if "mask_dims" in facts or facts.get("mask_arg") == "attn_mask":
        return "attn_mask"
    if "expected_len" in facts or "expected_batch" in facts or facts.get("mask_arg") == "key_padding_mask":
        return "key_padding_mask"
    return None


def _mask_fits(shape: list[int] | None, local: str, facts: dict[str, Any]) -> bool:
    """Whether a mask of this shape is the one the message reports (its rank, sizes, length or batch)."""
    if shape is None:
        return False
    if "found_rank" in facts:
        return len(shape) == facts["found_rank"]
    if "got_mask_shape" in facts:
        return shape == ints_in(facts["got_mask_shape"])
    if local == "attn_mask":
        return shape == ints_in(facts.get("mask_dims", ""))
    if len(shape) != 2:
        return False
    return shape[1] == facts.get("got_len") if "got_len" in facts else shape[0] == facts.get("got_batch")


def _mask_argument(ctx: ProbeContext, local: str) -> tuple[str | None, Any]:
    arguments = call_arguments(innermost_user_frame(ctx.records))
    if arguments is None:
        return None, MISSING
    for keyword, found in arguments[2].items():
        if not keyword.endswith("mask") or ("padding" in keyword) != (local == "key_padding_mask"):
            continue
        if _mask_fits(found.shape, local, ctx.facts) and found.text == found.name:
            return found.name, found.tensor
    return None, MISSING


def _transformer_layer(ctx: ProbeContext, attention: Any) -> tuple[Any, FrameRecord | None]:
    """The Transformer encoder/decoder layer whose forward called the failing attention, and its frame."""
    for outer, owner in reversed(module_frames(ctx.records)):
        if owner is not attention and type(owner).__name__ in _TRANSFORMER_LAYERS:
            return owner, outer
    return None, None


def _query_and_key(record: FrameRecord | None, attention: Any, expr, layer_record: FrameRecord | None,
                   batch_first: bool) -> tuple[Any, Any, bool]:
    """(query, key, swapped): as the caller passed them when its line is visible, else the layer's input,
    else attention's own locals, which batch_first=True has swapped to (L, N, E)."""
    # With batch_first=True, forward() rebinds query/key to transposed copies: read them from the caller.
    query = key = MISSING
    if expr is not None and expr.kind == "call" and expr.callee is not None and expr.callee.value is attention:
        tensors = [op.value for op in expr.operands if is_tensor(op.value)]
        query, key = (tensors + [MISSING, MISSING])[:2]
    elif layer_record is not None:
        query = frame_tensor(layer_record, "x")
    if query is MISSING:
        return frame_tensor(record, "query"), frame_tensor(record, "key"), batch_first
    return query, key, False


def _caller_order(shape: list[int], swapped: bool) -> list[int]:
    return [shape[1], shape[0], shape[2]] if swapped and len(shape) == 3 else shape


def _attention_fixes(got: int, embed_dim: Any, heads: Any, batch_first: bool, layer: Any) -> dict[str, str]:
    """Constructors that accept a query of width got (the most heads that divide it), or a projection to embed_dim."""
    fixes = {}
    if isinstance(heads, int) and got:
        fitting = max(h for h in range(1, heads + 1) if got % h == 0)
        suffix = ", batch_first=True" if batch_first else ""
        fixes["mha_fix"] = f"nn.MultiheadAttention({got}, {fitting}{suffix})"
        if layer is not None:
            fixes["layer_fix"] = f"nn.{type(layer).__name__}(d_model={got}, nhead={fitting}{suffix})"
    if isinstance(embed_dim, int) and got and got != embed_dim:
        fixes["projection_fix"] = f"nn.Linear({got}, {embed_dim})"
    return fixes


@probe("attention_heads", provides=("embed_dim", "num_heads", "valid_heads", "embed_dim_up"))
def attention_heads(ctx: ProbeContext) -> Evidence | None:
    """embed_dim and num_heads from the failing MultiheadAttention constructor's own frame."""
    for record in reversed(ctx.records):
        table = record.locals
        if not isinstance(table, dict):
            continue
        embed_dim, num_heads = dict.get(table, "embed_dim"), dict.get(table, "num_heads")
        if type(embed_dim) is int and type(num_heads) is int and embed_dim > 0 and num_heads > 0:
            valid = [h for h in range(1, min(embed_dim, 64) + 1) if embed_dim % h == 0]
            up = -(-embed_dim // num_heads) * num_heads
            return Evidence({"embed_dim": embed_dim, "num_heads": num_heads,
                             "valid_heads": ", ".join(str(h) for h in valid[-6:]), "embed_dim_up": up})
    return None
