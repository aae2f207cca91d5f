"""`python -m explainer SCRIPT`: run SCRIPT exactly as `python SCRIPT` would, with the hook installed."""

from __future__ import annotations

import builtins
import importlib.machinery
import os
import re
import signal
import sys
import threading
import types

from explainer._config import set_script_folder

from .install import explain_if_bypassed, install
from .source import compile_script


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
    set_script_folder(os.path.dirname(filename))  # its project's team packs, wherever it is run from
    try:
        code = compile_script(filename)
    except SyntaxError as error:
        # Python reports it with no traceback, through the hook the script found (not ours: nothing to explain).
        sys.excepthook(type(error), error.with_traceback(None), None)
        return 1
    install(fmt)
    try:
        _exec_as_main(filename, code)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - every uncaught exception is reported like Python does
        return _uncaught(exc, filename)
    return 0


def run_module(name: str, args: list[str], fmt: str | None = None) -> int:
    """Run module name as __main__, as `python -m name` does (runpy's own _run_module_as_main, so sys.argv, sys.path[0],
    the traceback and "No module named ..." are Python's); returns the exit status `python -m name` would have had."""
    import runpy

    sys.argv = ["-m", *args]  # runpy puts the module's file in sys.argv[0], as for `python -m`
    sys.path[0] = os.getcwd()
    set_script_folder(os.getcwd())  # the module is found from here: so is its project's team packs
    previous = install(fmt)
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main  # runpy runs the module in the __main__ it finds: a fresh one, not ours
    # What a call from the module's top level reads here and under `python -m`, each measured through runpy's
    # own _run_code at the depth the module's code will run at.
    here: list[int | None] = [None]
    _probe_as_runpy(runpy, here)
    _give_back_runner_depth(here[0], _depth_under_python(runpy))
    try:
        _run_module_as_main(runpy, name)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - every uncaught exception is reported like Python does
        first_file = runpy._run_module_as_main.__code__.co_filename
        if isinstance(exc, SyntaxError) and not _module_code_ran(exc.__traceback__):
            # Python could not compile the module: its report, through the hook the module found (nothing to explain)
            exc.__traceback__ = _from_script(exc.__traceback__, first_file)
            previous(type(exc), exc, exc.__traceback__)
            return 1
        return _uncaught(exc, first_file)
    return 0


def _module_code_ran(tb: types.TracebackType | None) -> bool:
    """Whether any module's code (a `<module>` frame) is on the traceback: not so when runpy could not compile it."""
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "<module>":
            return True
        tb = tb.tb_next
    return False


def _uncaught(exc: BaseException, first_file: str) -> int:
    """Report exc as Python does for an uncaught exception, its traceback starting at first_file's frame."""
    tb = _from_script(exc.__traceback__, first_file)
    exc.__traceback__ = tb
    sys.excepthook(type(exc), exc, tb)
    explain_if_bypassed(exc, tb)  # the script's own hook replaced ours (rich.traceback.install()): explained here
    if isinstance(exc, KeyboardInterrupt):
        _die_of_sigint()
    return 1


def _exec_as_main(filename: str, code: types.CodeType) -> None:
    """What the interpreter does for `python SCRIPT`: a fresh __main__ module, the script's code in it."""
    main = types.ModuleType("__main__")
    main.__file__ = filename
    main.__builtins__ = builtins
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    main.__spec__ = None
    sys.modules["__main__"] = main
    # What a call from the script's top level reads here, measured through the same exec at the same depth.
    here: list[int | None] = [None]
    _exec(_PROBE, {"_explainer_depth": here, "_explainer_read": _recursion_depth})
    _give_back_runner_depth(here[0], _depth_under_python())
    _exec(code, main.__dict__)


def _exec(code: types.CodeType, namespace: dict) -> None:
    # The script and the depth probe run through this same call, so they sit at the same depth.
    exec(code, namespace)


def _run_module_as_main(runpy: types.ModuleType, name: str) -> None:
    runpy._run_module_as_main(name)  # which runs the module's code through runpy._run_code


def _probe_as_runpy(runpy: types.ModuleType, here: list[int | None]) -> None:
    # Called where _run_module_as_main is, so _run_code and the probe run at the depth of the module's code.
    _in_run_module_as_main(runpy, here)


def _in_run_module_as_main(runpy: types.ModuleType, here: list[int | None]) -> None:
    runpy._run_code(_PROBE, {"_explainer_depth": here, "_explainer_read": _recursion_depth})


# --- recursion depth: the script gets exactly the depth `python SCRIPT` would give it ---------------

_HIDDEN_CODE: set[types.CodeType] = set()
_DEPTH_RE = re.compile(r"depth (\d+)")  # plain re: the depth probe reads it at every start, before the script runs
_PROBE = compile("_explainer_depth[0] = _explainer_read()", "<explainer depth probe>", "exec")


def _recursion_depth() -> int | None:
    """The interpreter's own count of the current recursion depth, as setrecursionlimit reports it."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(1)
    except RecursionError as error:
        found = _DEPTH_RE.search(str(error))
        return int(found.group(1)) if found else None
    sys.setrecursionlimit(limit)
    return None


class _FreshStack(threading.Thread):
    runpy: types.ModuleType | None = None

    def run(self) -> None:
        if self.runpy is None:
            self.depth = _recursion_depth()
            return
        here: list[int | None] = [None]
        self.runpy._run_code(_PROBE, {"_explainer_depth": here, "_explainer_read": _recursion_depth})
        self.depth = here[0]


def _depth_under_python(runpy: types.ModuleType | None = None) -> int | None:
    """What a call from a script's top level reads under plain `python SCRIPT` (with runpy: from a module's top
    level under `python -m`, whose code runpy's _run_code runs from _run_module_as_main).

    A new thread's stack starts, like the main module's, in a frame entered from C; its run() sits
    two inlined calls (_bootstrap_inner, run) above that frame, where a script's own call (or, under `python -m`,
    _run_module_as_main's own call of _run_code) sits none.
    """
    thread = _FreshStack(name="explainer-depth")
    thread.runpy = runpy
    thread.start()
    thread.join()
    depth = getattr(thread, "depth", None)
    return depth - 2 if depth is not None else None


def _give_back_runner_depth(here: int | None, plain: int | None) -> None:
    """Raise the recursion limit by the runner's own frames, and let the script see the limits it set.

    sys.getrecursionlimit/setrecursionlimit are wrapped so that the script reads and sets the numbers
    it would under plain Python, and a deep recursion fails at the same depth, with the same traceback.
    """
    if here is None or plain is None or here <= plain:
        return
    offset = here - plain
    real_get, real_set = sys.getrecursionlimit, sys.setrecursionlimit

    def getrecursionlimit() -> int:
        return real_get() - offset

    def setrecursionlimit(limit: int) -> None:
        real_set(limit + offset if isinstance(limit, int) and limit >= 1 else limit)

    getrecursionlimit.__doc__, setrecursionlimit.__doc__ = real_get.__doc__, real_set.__doc__
    _HIDDEN_CODE.update((getrecursionlimit.__code__, setrecursionlimit.__code__))
    real_set(real_get() + offset)
    sys.getrecursionlimit, sys.setrecursionlimit = getrecursionlimit, setrecursionlimit


def _from_script(tb, filename):
    """Drop the runner's own frames so the traceback is the one `python SCRIPT` prints."""
    current = tb
    while current is not None and current.tb_frame.f_code.co_filename != filename:
        current = current.tb_next
    start = current if current is not None else tb
    # The recursion-limit wrappers are ours too: unlink their entries (a ValueError from
    # sys.setrecursionlimit(0) must point at the script's line, as it does under Python).
    entry = start
    while entry is not None:
        following = entry.tb_next
        while following is not None and following.tb_frame.f_code in _HIDDEN_CODE:
            following = following.tb_next
        entry.tb_next = following
        entry = following
    return start


def _die_of_sigint() -> None:
    # Python exits an uncaught KeyboardInterrupt by re-raising SIGINT, so the shell sees 130.
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
