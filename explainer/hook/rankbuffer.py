"""Python's traceback out before the diagnosis starts, under torch.distributed.

init_process_group wraps sys.excepthook (distributed_c10d's `_distributed_excepthook`): while the hook it wrapped
(ours) runs, sys.stderr is a StringIO, and only when that hook returns does it prefix each line with "[rankN]: " and
write it all. A slow diagnosis (the first crash on a machine builds the rule index) so holds Python's traceback
back, and under torchrun, when another rank failed first, the agent's SIGTERM can end this rank before anything of
it is printed (the new user's review of 2026-12-07: a rank whose traceback vanished). What is buffered when our
diagnosis starts, the traceback, is passed on at once, prefixed as torch's hook prefixes it; the diagnosis follows
through torch's hook as before, so the output is the same, only sooner. Anywhere else (plain Python, a torch whose
hook keeps other names) nothing changes.
"""

from __future__ import annotations

import io
import sys

TORCH_HOOK = ("_distributed_excepthook", "torch.distributed.distributed_c10d")
MAX_FRAMES = 8  # torch's hook, then ours: a few frames up


def pass_on_buffered_traceback() -> None:
    """Write what torch's rank hook has buffered so far (Python's traceback) to the stream it will write to."""
    if not isinstance(sys.stderr, io.StringIO) or TORCH_HOOK[1] not in sys.modules:
        return
    scope = _torch_hook_scope()
    if scope is None:
        return
    buffer, stream, prefix = scope.get("buf"), scope.get("old_stderr"), scope.get("excepthook_prefix")
    if buffer is not sys.stderr or stream is None or not isinstance(prefix, str):
        return
    text = buffer.getvalue()
    if not text.endswith("\n"):
        return  # torch joins the lines it prefixes with "\n": split only after a whole line
    try:
        stream.write("\n".join(f"{prefix}: {line}" if line != "" else "" for line in text.split("\n")))
        stream.flush()
    except Exception:
        return  # left in the buffer: torch's hook writes it, as it would have
    buffer.seek(0)
    buffer.truncate(0)


def _torch_hook_scope() -> dict | None:
    """The local names of torch's `_distributed_excepthook`, where it called ours (a frame up the stack)."""
    frame = sys._getframe(1)
    for _ in range(MAX_FRAMES):
        frame = frame.f_back
        if frame is None:
            return None
        if (frame.f_code.co_name, frame.f_globals.get("__name__")) == TORCH_HOOK:
            return frame.f_locals
    return None
