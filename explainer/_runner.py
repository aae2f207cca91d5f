"""`python -m explainer SCRIPT`: run SCRIPT exactly as `python SCRIPT` would, with the hook installed."""

from __future__ import annotations

import builtins
import importlib.machinery
import io
import os
import signal
import sys
import types

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
        _exec_as_main(filename)
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


def _exec_as_main(filename: str) -> None:
    """What the interpreter does for `python SCRIPT`: a fresh __main__ module, the script's code in it."""
    main = types.ModuleType("__main__")
    main.__file__ = filename
    main.__builtins__ = builtins
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    main.__spec__ = None
    sys.modules["__main__"] = main
    with io.open_code(filename) as handle:
        source = handle.read()
    code = compile(source, filename, "exec", dont_inherit=True)
    exec(code, main.__dict__)


def _from_script(tb, filename):
    """Drop the runner's own frames so the traceback starts where `python SCRIPT`'s does."""
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
