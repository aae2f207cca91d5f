"""Probes for unbounded recursion: which function calls itself, and which module it belongs to."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from explainer._diagnosis import Location
from explainer._inspect import child_modules, is_module, name_module, user_frames
from explainer.probes import Evidence, ProbeContext, probe

MIN_REPEATS = 3


@probe("recursion_loop", provides=("loop_function", "loop_where", "loop_code", "loop_call", "loop_repeats",
                                    "module", "module_type", "attribute", "children", "child_call",
                                    "forward_function"))
def recursion_loop(ctx: ProbeContext) -> Evidence | None:
    """The user's line that repeats most in the traceback, and the module whose method it is."""
    frames = user_frames(ctx.records)
    counts = Counter((r.filename, r.lineno, r.name) for r in frames)
    if not counts:
        return None
    (filename, lineno, function), repeats = counts.most_common(1)[0]
    if repeats < MIN_REPEATS:
        return None
    record = next(r for r in reversed(frames) if (r.filename, r.lineno, r.name) == (filename, lineno, function))
    facts: dict[str, Any] = {"loop_function": function, "loop_where": f"{os.path.basename(filename)}:{lineno}",
                             "loop_code": record.code, "loop_repeats": repeats}
    segment = record.segment()
    if segment:
        facts["loop_call"] = segment
    local_vars = record.locals
    owner = dict.get(local_vars, "self") if isinstance(local_vars, dict) else None
    culprits = []
    if owner is not None and is_module(owner):
        facts["module_type"] = type(owner).__name__
        facts["module"] = name_module(owner, ctx.records) or f"a {type(owner).__name__}"
        children = [name for name, child in child_modules(owner).items() if child is not None]
        if children and function != "__getattr__":
            facts["forward_function"] = function
            facts["children"] = ", ".join(f"self.{name}" for name in children[:5])
            if len(children) == 1 and segment and segment.startswith("self("):
                facts["child_call"] = f"self.{children[0]}" + segment[len("self"):]
        culprits.append({"name": facts["module"], "kind": "module", "type": facts["module_type"],
                         "repr": f"{facts['module_type']}(...)", "note": f"{function} calls itself"})
    attribute = dict.get(local_vars, "name") if isinstance(local_vars, dict) and function == "__getattr__" else None
    if isinstance(attribute, str):
        facts["attribute"] = attribute
    return Evidence(facts, culprits, Location(filename, lineno, record.code))
