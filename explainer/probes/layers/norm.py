"""Probes for LayerNorm, GroupNorm and BatchNorm: the layer, its input, its weight and bias, and the size that
would fit."""

from __future__ import annotations

from typing import Any

from explainer._inspect import MISSING, describe_tensor, format_shape, innermost_user_frame, is_tensor, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import call_arguments, pick
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


@probe("layer_norm_operands", provides=("module", "module_repr", "input_name", "input_shape", "layer_builder",
                                          "layer_top_level"))
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


# Where the functional norms take their affine parameters: (position, keyword) of weight and of bias.
_AFFINE_ARGUMENTS = {
    "layer_norm": {"weight": 2, "bias": 3}, "rms_norm": {"weight": 2}, "group_norm": {"weight": 2, "bias": 3},
    "batch_norm": {"weight": 3, "bias": 4}, "instance_norm": {"weight": 3, "bias": 4},
}
_NORM_LAYERS = ("LayerNorm", "RMSNorm", "GroupNorm", "_NormBase")


def _functional_affine(ctx: ProbeContext, param: str) -> Evidence | None:
    """F.layer_norm(x, shape, self.weight, ...) on the user's line: the refused parameter and the input."""
    arguments = call_arguments(innermost_user_frame(ctx.records))
    if arguments is None:
        return None
    positions = _AFFINE_ARGUMENTS.get(arguments[0].rsplit(".", 1)[-1], {})
    if param not in positions:
        return None
    refused, given = pick(arguments, positions[param], param), pick(arguments, 0, "input")
    if refused is None:
        return None
    facts: dict[str, Any] = {"call_name": arguments[0], "param_name": refused.text}
    culprits = [describe_tensor(refused.text, refused.tensor, role=param)]
    if given is not None and given.shape is not None:
        facts.update(input_name=given.text, input_shape=format_shape(given.shape))
        if len(given.shape) >= 2:
            facts.update(input_batch=given.shape[0], input_channels=given.shape[1])
        culprits.append(describe_tensor(given.text, given.tensor, role="input"))
    return Evidence(facts, culprits)


def _module_affine(ctx: ProbeContext, param: str) -> Evidence | None:
    """A norm layer whose own weight or bias no longer fits it (replaced, or loaded from another model)."""
    facts, culprits, module, _ = module_and_input(ctx, *_NORM_LAYERS)
    value = safe_getattr(module, param) if module is not None else MISSING
    if not is_tensor(value):
        return None
    facts["param_name"] = f"{facts['module']}.{param}"
    culprits.insert(1, describe_tensor(facts["param_name"], value, role=param))
    return Evidence(facts, culprits)


@probe("norm_affine_operands", provides=("param_name", "call_name", "input_name", "input_shape", "input_batch",
                                         "input_channels", "module", "module_repr"))
def norm_affine_operands(ctx: ProbeContext) -> Evidence | None:
    """The weight or bias a normalization refused, as the user's code reaches it (`self.weight`,
    `model.norm.weight`), and the input it was normalizing."""
    param = ctx.facts.get("param")
    if param not in ("weight", "bias"):
        return None
    return _functional_affine(ctx, param) or _module_affine(ctx, param)


@probe("norm_affine_fit", provides=("want_shape", "want_count", "param_fix"), live=False)
def norm_affine_fit(ctx: ProbeContext) -> Evidence | None:
    """The shape the refused weight or bias would need: normalized_shape, or the input's channels (dimension 1)."""
    facts: dict[str, Any] = {}
    if ctx.facts.get("normalized_shape") is not None:
        want = ints_in(ctx.facts["normalized_shape"])
    elif ctx.facts.get("input_size") is not None:
        size = ints_in(ctx.facts["input_size"])
        want = size[1:2] if len(size) >= 2 else []
    else:
        want = ints_in(ctx.facts.get("elements", ""))
    if not want:
        return None
    facts["want_shape"] = join_dims(want)
    facts["param_fix"] = f"torch.ones({join_dims(want)})" if ctx.facts.get("param") == "weight" else \
        f"torch.zeros({join_dims(want)})"
    if len(want) == 1:
        facts["want_count"] = want[0]
    return Evidence(facts)
