"""`python -m explainer SCRIPT`: run SCRIPT exactly as `python SCRIPT` would, with the hook installed."""

from __future__ import annotations

import os
import runpy
import signal
import sys

from ._hook import install


def script_path(path: str) -> str:
    # What `python path` puts in __file__ and co_filename: joined to the cwd, not normalised.
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def run_script(path: str, args: list[str], fmt: str | None = None) -> int:
    """Run path as __main__; returns the exit status `python path` would have had."""
    filename = script_path(path)
    if not os.path.exists(filename):
        sys.stderr.write(f"{sys.executable}: can't open file {filename!r}: [Errno 2] No such file or directory\n")
        return 2
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.realpath(filename))
    install(fmt)
    try:
        runpy.run_path(filename, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - every uncaught exception is reported like Python does
        tb = _from_script(exc.__traceback__, filename)
        exc.__traceback__ = tb
        sys.excepthook(type(exc), exc, tb)
        if isinstance(exc, KeyboardInterrupt):
            _die_of_sigint()
        return 1
    return 0


def _from_script(tb, filename):
    """Drop the runner's and runpy's frames so the traceback starts where `python SCRIPT`'s does."""
    current = tb
    while current is not None and current.tb_frame.f_code.co_filename != filename:
        current = current.tb_next
    return current if current is not None else tb


def _die_of_sigint() -> None:
    # Python exits an uncaught KeyboardInterrupt by re-raising SIGINT, so the shell sees 130.
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
