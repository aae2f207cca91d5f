"""Probes for F.grid_sample: the input and the sampling grid as the user's call names them, and the grid
layout that would fit (N, H_out, W_out, 2) for a 4-D input, (N, D_out, H_out, W_out, 3) for a 5-D one."""

from __future__ import annotations

from typing import Any

from explainer._inspect import describe_tensor, format_shape, innermost_user_frame
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.derived import call_arguments, pick
from explainer.probes.readers.operands import ints_in, join_dims

_GRID_CALLS = frozenset({"grid_sample", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"})


@probe("grid_sample_operands", provides=("grid_name", "grid_shape", "input_name", "input_shape", "call_name"))
def grid_sample_operands(ctx: ProbeContext) -> Evidence | None:
    """F.grid_sample(input, grid) on the user's line: the grid (the usual culprit) and the input it samples."""
    arguments = call_arguments(innermost_user_frame(ctx.records))
    if arguments is None or arguments[0].rsplit(".", 1)[-1] not in _GRID_CALLS:
        return None
    grid, given = pick(arguments, 1, "grid"), pick(arguments, 0, "input")
    facts: dict[str, Any] = {"call_name": arguments[0]}
    culprits = []
    if grid is not None and grid.shape is not None:
        facts.update(grid_name=grid.text, grid_shape=format_shape(grid.shape))
        culprits.append(describe_tensor(grid.text, grid.tensor, role="grid"))
    if given is not None and given.shape is not None:
        facts.update(input_name=given.text, input_shape=format_shape(given.shape))
        culprits.append(describe_tensor(given.text, given.tensor, role="input"))
    return Evidence(facts, culprits) if culprits else None


def _channels_first_order(grid: list[int], coords: int) -> tuple[int, ...] | None:
    """(0, 2, 3, 1) when a grid holds its coordinates in dimension 1 (N, 2, H, W) instead of last."""
    if len(grid) >= 4 and grid[1] == coords and grid[-1] != coords:
        return (0, *range(2, len(grid)), 1)
    return None


@probe("grid_sample_fit", provides=("grid_permute", "grid_permuted_shape", "grid_layout", "grid_batch",
                                    "input_batch"), live=False)
def grid_sample_fit(ctx: ProbeContext) -> Evidence | None:
    """The grid layout the input needs, and the permute that gives it when the coordinates sit in dimension 1."""
    grid = ints_in(ctx.facts.get("grid_sizes", ""))
    if not grid:
        return None
    facts: dict[str, Any] = {}
    coords = ctx.facts.get("coord_count")
    if isinstance(coords, int):
        facts["grid_layout"] = "(N, H_out, W_out, 2)" if coords == 2 else "(N, D_out, H_out, W_out, 3)"
        order = _channels_first_order(grid, coords)
        if order is not None:
            facts["grid_permute"] = f"permute{order}"
            facts["grid_permuted_shape"] = join_dims([grid[i] for i in order])
    size = ints_in(ctx.facts.get("input_sizes", ""))
    if size:
        facts.update(grid_batch=grid[0], input_batch=size[0])
    return Evidence(facts) if facts else None
