"""Probe for the process list of a CUDA out-of-memory message: which "Process N has X memory in use" is this
process itself.

torch >= 2.1 lists the processes the driver reports on the GPU. Inside a container the failing process is listed
under its host pid, so it looks like a stranger holding the memory; its amount, though, is what the message says
PyTorch holds for this process (allocated plus reserved but unallocated) and the CUDA context on top.
"""

from __future__ import annotations

from typing import Any

from explainer._lazyre import lazy_compile
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.runtime.memory import parse_size

# Beyond what PyTorch reserved, a process also holds its CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers.
CONTEXT_SLACK = 3 * 2**30
# One entry of the message's whole list, where the rule captured it (process_list)
LISTED_PROCESS_RE = lazy_compile(r"Process (?P<pid>\d+) has (?P<used>\d+(?:\.\d+)? (?:bytes|[KMGT]iB)) memory in use")


@probe("oom_processes", provides=("own_pid", "own_used", "busy_pid", "busy_used"), live=False)
def oom_processes(ctx: ProbeContext) -> Evidence | None:
    """Of the processes the message lists (every one where the rule captured the whole list, else the first and the
    last), the one whose memory matches what PyTorch holds for this process (own_pid), and the largest other one
    (busy_pid)."""
    held = (ctx.facts.get("allocated_bytes") or 0) + (ctx.facts.get("unallocated_bytes") or 0)
    listed: dict[Any, tuple[int, str]] = {}  # pid -> (bytes, as the message writes it)
    for pid_key, used_key in (("other_pid", "other_used"), ("last_pid", "last_used")):
        pid, text = ctx.facts.get(pid_key), ctx.facts.get(used_key)
        if pid is not None and (used := parse_size(text)) is not None:
            listed[pid] = (used, str(text))
    for found in LISTED_PROCESS_RE.finditer(str(ctx.facts.get("process_list") or "")):
        listed.setdefault(int(found["pid"]), (parse_size(found["used"]) or 0, found["used"]))
    if not held or not listed:
        return None
    own = [pid for pid, (used, _) in listed.items() if held <= used <= held + CONTEXT_SLACK]
    if len(own) != 1:
        return None
    facts: dict[str, Any] = {"own_pid": own[0], "own_used": listed[own[0]][1]}
    busy = sorted((pid for pid in listed if pid != own[0]), key=lambda pid: -listed[pid][0])
    if busy:
        facts.update(busy_pid=busy[0], busy_used=listed[busy[0]][1])
    return Evidence(facts)
