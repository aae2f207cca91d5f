"""Probes for PixelShuffle and PixelUnshuffle: the layer, its input, the layer before it that made the channels,
and the channel count or side that would fit."""

from __future__ import annotations

import math
from typing import Any

from explainer._inspect import MISSING, describe_tensor, format_shape, innermost_user_frame, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import call_arguments, pick
from explainer.probes.readers.operands import failing_layer, frame_tensor, name_of, shape_of
from explainer.probes.readers.producer import add_producer

_SHUFFLE_CALLS = frozenset({"pixel_shuffle", "pixel_unshuffle"})


def _layer_shuffle(ctx: ProbeContext) -> Evidence | None:
    """nn.PixelShuffle(r) refused its input: the layer, the input and the layer that made its channels."""
    record, module, expr, facts, culprits = failing_layer(ctx, "PixelShuffle", "PixelUnshuffle")
    if module is None:
        return None
    factor = safe_getattr(module, "upscale_factor")
    factor = safe_getattr(module, "downscale_factor") if factor is MISSING else factor
    if isinstance(factor, int):
        facts["factor"] = factor
    value = frame_tensor(record, "input")
    if value is MISSING:
        return Evidence(facts, culprits)
    input_name = name_of(ctx, value, expr) or f"the input of {facts['module']}"
    shape = shape_of(value)
    facts.update(input_name=input_name, input_shape=format_shape(shape))
    culprits.append(describe_tensor(input_name, value))
    if len(shape) >= 3 and type(module).__name__ == "PixelShuffle":
        add_producer(ctx, record, module, "channels", shape[-3], facts, culprits)
    return Evidence(facts, culprits)


def _functional_shuffle(ctx: ProbeContext) -> Evidence | None:
    """F.pixel_shuffle(x, r) on the user's line: its input, as the call names it."""
    arguments = call_arguments(innermost_user_frame(ctx.records))
    if arguments is None or arguments[0].rsplit(".", 1)[-1] not in _SHUFFLE_CALLS:
        return None
    given = pick(arguments, 0, "input")
    if given is None or given.shape is None:
        return None
    facts = {"call_name": arguments[0], "input_name": given.text, "input_shape": format_shape(given.shape)}
    return Evidence(facts, [describe_tensor(given.text, given.tensor, role="input")])


@probe("pixel_shuffle_operands", provides=("module", "module_repr", "factor", "input_name", "input_shape",
                                           "call_name", "producer", "producer_name", "producer_desc"))
def pixel_shuffle_operands(ctx: ProbeContext) -> Evidence | None:
    """The PixelShuffle or PixelUnshuffle that refused its input, that input and the layer that made it."""
    return _layer_shuffle(ctx) or _functional_shuffle(ctx)


@probe("pixel_shuffle_fit", provides=("fit_channels", "fit_out", "shuffle_factor", "fit_side"), live=False)
def pixel_shuffle_fit(ctx: ProbeContext) -> Evidence | None:
    """The channel count PixelShuffle(r) needs (out_channels x r x r; r x out_channels made means r was not
    squared), or for PixelUnshuffle the side rounded up to a multiple of the factor."""
    facts: dict[str, Any] = {}
    channels, square = ctx.facts.get("channels"), ctx.facts.get("factor_squared")
    if isinstance(channels, int) and isinstance(square, int) and square > 0:
        factor = math.isqrt(square)
        out = channels // factor if factor and channels % factor == 0 else -(-channels // square)
        facts.update(fit_channels=max(out, 1) * square, fit_out=max(out, 1), shuffle_factor=factor)
    side, factor = ctx.facts.get("side_size"), ctx.facts.get("downscale")
    if isinstance(side, int) and isinstance(factor, int) and factor > 0:
        facts["fit_side"] = -(-side // factor) * factor
    return Evidence(facts) if facts else None
