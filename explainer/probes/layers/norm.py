"""Probes for LayerNorm and BatchNorm: the layer, its input and the size that would fit."""

from __future__ import annotations

from explainer._inspect import MISSING, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.operands import failing_module, ints_in, join_dims, module_and_input, shape_of
from explainer.probes.readers.producer import add_producer


@probe("layer_norm_fix", provides=("norm_fix", "norm_tail"), live=False)
def layer_norm_fix(ctx: ProbeContext) -> Evidence | None:
    """The normalized_shape the message's input would need: its last len(normalized_shape) sizes."""
    normalized, size = ints_in(ctx.facts.get("normalized_shape", "")), ints_in(ctx.facts.get("input_size", ""))
    if not normalized or len(size) < len(normalized):
        return None
    tail = size[-len(normalized):]
    arg = str(tail[0]) if len(tail) == 1 else repr(tail)
    return Evidence({"norm_fix": f"nn.LayerNorm({arg})", "norm_tail": join_dims(tail)})


@probe("layer_norm_operands", provides=("module", "module_repr", "input_name", "input_shape"))
def layer_norm_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.LayerNorm that refused its input, and that input."""
    facts, culprits, module, _ = module_and_input(ctx, "LayerNorm")
    return Evidence(facts, culprits) if module is not None else None


@probe("batchnorm_operands", provides=("module", "module_repr", "input_name", "input_shape", "bn_fix", "producer",
                                        "producer_name", "producer_desc", "layer_desc"))
def batchnorm_operands(ctx: ProbeContext) -> Evidence | None:
    """The BatchNorm whose num_features differs from its input's channels (dimension 1)."""
    facts, culprits, module, value = module_and_input(ctx, "_NormBase")
    if module is None:
        return None
    shape = shape_of(value) if value is not MISSING else []
    if len(shape) >= 2:
        facts["bn_fix"] = f"nn.{type(module).__name__}({shape[1]})"
        num_features = safe_getattr(module, "num_features")
        if isinstance(num_features, int) and num_features != shape[1]:
            facts["layer_desc"] = f"{type(module).__name__}, num_features={num_features}"
            record, _ = failing_module(ctx, "_NormBase")
            add_producer(ctx, record, module, "channels", shape[1], facts, culprits)
    return Evidence(facts, culprits)
