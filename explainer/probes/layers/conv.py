"""Probes for convolutions and pooling: the layer, its input's layout and the sizes that would fit."""

from __future__ import annotations

import math
from typing import Any

from explainer._inspect import MISSING, describe_tensor, format_shape, innermost_user_frame, is_tensor, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import call_arguments, pick
from explainer.probes.readers.operands import (compact, failing_layer, frame_tensor, ints_in, module_and_input, name_of,
                                               shape_of, user_expression)
from explainer.probes.readers.producer import add_producer


def _conv_constructor(module: Any, in_channels: int) -> str:
    parts = [str(in_channels), str(safe_getattr(module, "out_channels")),
             f"kernel_size={compact(safe_getattr(module, 'kernel_size'))}"]
    for attr, default in (("stride", "1"), ("padding", "0"), ("dilation", "1"), ("groups", "1")):
        value = safe_getattr(module, attr)
        if value is not MISSING and compact(value) != default:
            parts.append(f"{attr}={compact(value)}")
    return f"nn.{type(module).__name__}({', '.join(parts)})"


@probe("conv_operands", provides=(
    "module", "module_repr", "in_channels", "out_channels", "input_name", "input_shape", "input_rank",
    "batched_rank", "channel_dim", "got_channels", "conv_fix", "channels_last_fix", "channels_last_shape",
    "unsqueeze_fix", "unsqueeze_shape", "gray_fix", "rank_fix", "rank_fix_shape", "producer", "producer_name",
    "producer_desc", "layer_desc", "call_name", "weight_name", "weight_size",
    "weight_fit_shape", "layer_builder", "layer_top_level"))
def conv_operands(ctx: ProbeContext) -> Evidence | None:
    """The nn.ConvNd that refused its input: its channels, the input's name, shape and layout."""
    record, module, expr, facts, culprits = failing_layer(ctx, "_ConvNd")
    if module is None:
        return functional_conv(ctx)
    name = facts["module"]
    in_channels = safe_getattr(module, "in_channels")
    kernel = safe_getattr(module, "kernel_size")
    spatial = len(kernel) if isinstance(kernel, tuple) else 2
    facts["batched_rank"] = spatial + 2
    if isinstance(in_channels, int):
        facts["in_channels"] = in_channels
        facts["layer_desc"] = f"{type(module).__name__}, in_channels={in_channels}"
    out_channels = safe_getattr(module, "out_channels")
    if isinstance(out_channels, int):
        facts["out_channels"] = out_channels
    value = frame_tensor(record, "input")
    if value is MISSING:
        return Evidence(facts, culprits)
    input_name = name_of(ctx, value, expr)
    shape = shape_of(value)
    rank = len(shape)
    facts.update(input_name=input_name or f"the input of {name}", input_shape=format_shape(shape), input_rank=rank)
    culprits.append(describe_tensor(input_name or "input", value))
    if input_name is None:
        facts["producer"] = f"the layer before {name}"
    if rank in (spatial + 1, spatial + 2):
        channel_dim = 1 if rank == spatial + 2 else 0
        got = shape[channel_dim]
        facts.update(channel_dim=channel_dim, got_channels=got, conv_fix=_conv_constructor(module, got))
        if channel_dim == 1 and got != in_channels:
            add_producer(ctx, record, module, "channels", got, facts, culprits)
        if input_name and rank == spatial + 2 and shape[-1] == in_channels and got != in_channels:
            order = (0, rank - 1, *range(1, rank - 1))
            facts["channels_last_fix"] = f"{input_name}.permute{order}"
            facts["channels_last_shape"] = format_shape([shape[i] for i in order])
        if input_name and rank == spatial + 1 and in_channels == 1:
            facts["unsqueeze_fix"] = f"{input_name}.unsqueeze(1)"
            facts["unsqueeze_shape"] = format_shape(shape[:1] + [1] + shape[1:])
        if input_name and rank == spatial + 2 and got == 1 and isinstance(in_channels, int) and in_channels > 1:
            facts["gray_fix"] = f"{input_name}.expand(-1, {in_channels}{', -1' * spatial})"
    elif input_name:
        _conv_rank_fix(facts, input_name, shape, spatial, in_channels)
    return Evidence(facts, culprits)


_FUNCTIONAL_CONV = frozenset({"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                              "conv_transpose3d"})


def functional_conv(ctx: ProbeContext) -> Evidence | None:
    """F.conv2d(x, weight, ...) on the user's line: the input and the weight, as the call names them."""
    arguments = call_arguments(innermost_user_frame(ctx.records))
    if arguments is None or arguments[0].rsplit(".", 1)[-1] not in _FUNCTIONAL_CONV:
        return None
    given, weight = pick(arguments, 0, "input"), pick(arguments, 1, "weight")
    found = [a for a in (given, weight) if a is not None]
    if not found:
        return None
    facts: dict[str, Any] = {"call_name": arguments[0]}
    culprits = [describe_tensor(a.name, a.tensor, role=role) for a, role in ((given, "input"), (weight, "weight"))
                if a is not None]
    if weight is not None and weight.shape is not None:
        facts.update(weight_name=weight.text, weight_size=format_shape(weight.shape))
    if given is not None and given.shape is not None:
        shape = given.shape
        facts.update(input_name=given.text, input_shape=format_shape(shape), input_rank=len(shape))
        expected = ints_in(ctx.facts.get("expected_channels", ""))
        if len(shape) >= 3 and expected and shape[-1] == expected[0] and shape[1] != expected[0]:
            order = (0, len(shape) - 1, *range(1, len(shape) - 1))
            facts["channels_last_fix"] = f"{_wrapped(given.text)}.permute{order}"
            facts["channels_last_shape"] = format_shape([shape[i] for i in order])
        if len(shape) >= 2:
            facts.update(channel_dim=1, got_channels=shape[1])
            if weight is not None and weight.shape and ctx.facts.get("groups") in (1, "1"):
                facts["weight_fit_shape"] = format_shape([weight.shape[0], shape[1], *weight.shape[2:]])
    return Evidence(facts, culprits)


def _wrapped(text: str) -> str:
    return text if text.replace(".", "").replace("_", "").isalnum() else f"({text})"


def _square_images(shape: list[int], spatial: int, in_channels: Any) -> list[int] | None:
    """(N, C*side*side) flattened square images for a 2-D convolution: [N, C, side, side], else None."""
    if len(shape) != 2 or spatial != 2 or not isinstance(in_channels, int) or in_channels < 1:
        return None
    if shape[1] % in_channels:
        return None
    side = math.isqrt(shape[1] // in_channels)
    return [shape[0], in_channels, side, side] if side > 1 and side * side * in_channels == shape[1] else None


def _conv_rank_fix(facts: dict[str, Any], name: str, shape: list[int], spatial: int, in_channels: Any) -> None:
    rank, batched = len(shape), spatial + 2
    if rank < batched - 1:
        square = _square_images(shape, spatial, in_channels)
        if square is not None:
            # (8, 784) into a Conv2d(1, ...): a batch of flattened 28x28 images, not one 8x784 image
            facts["rank_fix"] = f"{name}.view({', '.join(map(str, square))})"
            facts["rank_fix_shape"] = format_shape(square)
        elif in_channels == 1:
            missing = batched - rank
            facts["rank_fix"] = name + ".unsqueeze(0)" * missing
            facts["rank_fix_shape"] = format_shape([1] * missing + shape)
    elif rank > batched:
        ones = [i for i, d in enumerate(shape) if d == 1]
        if ones and rank - 1 == batched:
            facts["rank_fix"] = f"{name}.squeeze({ones[0]})"
            facts["rank_fix_shape"] = format_shape(shape[:ones[0]] + shape[ones[0] + 1:])
        else:
            extra = rank - batched
            facts["rank_fix"] = f"{name}.flatten(0, {extra})"
            facts["rank_fix_shape"] = format_shape([math.prod(shape[:extra + 1])] + shape[extra + 1:])


@probe("pool_window", provides=("max_kernel",), live=False)
def pool_window(ctx: ProbeContext) -> Evidence | None:
    """The largest window that fits the message's input size (its smallest spatial dimension)."""
    spatial = ints_in(ctx.facts.get("input_spatial", ""))
    return Evidence({"max_kernel": min(spatial)}) if spatial else None


def _pool_output(size: int, kernel: int, stride: int, padding: int, ceil: bool) -> int:
    span = size + 2 * padding - kernel
    return (-(-span // stride) if ceil else span // stride) + 1


@probe("pool_operands", provides=(
    "module", "module_repr", "input_name", "input_shape", "kernel", "ceil_fix", "model_input", "min_input"))
def pool_operands(ctx: ProbeContext) -> Evidence | None:
    """The pooling layer whose window does not fit its input, and the smallest model input that would fit."""
    facts, culprits, module, value = module_and_input(ctx, "_MaxPoolNd", "_AvgPoolNd")
    if module is None:
        return None
    cls = type(module).__name__
    rank = 3 if cls.endswith("3d") else 2 if cls.endswith("2d") else 1

    def per_dim(attr: str, default: int) -> list[int]:
        option = safe_getattr(module, attr)
        option = default if option is MISSING or option is None or option == [] else option
        return list(option) if isinstance(option, (tuple, list)) else [option] * rank

    kernel, padding = per_dim("kernel_size", 1), per_dim("padding", 0)
    stride = per_dim("stride", 0)
    stride = [s or k for s, k in zip(stride, kernel)]
    facts["kernel"] = "x".join(str(k) for k in kernel)
    shape = shape_of(value) if value is not MISSING else []
    if len(shape) < rank or not all(isinstance(v, int) for v in kernel + stride + padding):
        return Evidence(facts, culprits)
    spatial = shape[-rank:]
    if all(_pool_output(n, k, s, p, True) >= 1 for n, k, s, p in zip(spatial, kernel, stride, padding)):
        facts["ceil_fix"] = f"nn.{cls}({compact(tuple(kernel))}, ceil_mode=True)"
    # The model's own input (the user's failing call) and how much the network shrank it before this layer.
    _, expr = user_expression(ctx)
    if expr is not None and expr.kind == "call":
        first = next((op for op in expr.operands if is_tensor(op.value)), None)
        outer = shape_of(first.value) if first is not None else []
        if first is not None and first.value is not value and len(outer) == len(shape):
            scales = [o // n for o, n in zip(outer[-rank:], spatial) if n and o % n == 0]
            if len(scales) == rank:
                needed = [sc * (k - 2 * p) for sc, k, p in zip(scales, kernel, padding)]
                facts["model_input"] = first.text
                facts["min_input"] = "x".join(str(n) for n in needed)
    return Evidence(facts, culprits)
