"""The public API for a team rule pack's own live probes.

    from explainer.probes import probe, Evidence, ProbeContext

    @probe("acme_loader_state", provides=("loader_shard", "loader_workers"))
    def loader_state(ctx: ProbeContext) -> Evidence | None:
        ...

A probe reads the failing process and returns Evidence (facts for the rule's templates, culprits,
a location), or None when it has nothing to say. It must never call user code: use the read-only
helpers below (safe_getattr reads an instance's own __dict__, never a property or __getattr__, and
returns MISSING when the attribute is not stored there),
never repr() or str() of user objects. Name a pack's probes after its prefix so they cannot clash.
"""

from ._diagnosis import Location
from ._inspect import (
    MISSING,
    FrameRecord,
    describe_module,
    describe_tensor,
    failing_expression,
    format_shape,
    innermost_user_frame,
    is_module,
    is_tensor,
    module_frames,
    module_repr,
    name_module,
    safe_getattr,
    tensor_facts,
    user_frames,
)
from ._probes import Evidence, ProbeContext, probe

__all__ = [
    "MISSING", "Evidence", "FrameRecord", "Location", "ProbeContext", "describe_module", "describe_tensor",
    "failing_expression", "format_shape", "innermost_user_frame", "is_module", "is_tensor", "module_frames",
    "module_repr", "name_module", "probe", "safe_getattr", "tensor_facts", "user_frames",
]
