"""sys.excepthook and threading.excepthook: Python's own traceback first, then the diagnosis."""

from __future__ import annotations

import atexit
import os
import sys
import threading
import traceback
import types
from types import TracebackType
from typing import Any, Callable, TextIO

from explainer._gc import paused_gc
from explainer.diagnose.render import choose_format, format_notice, internal_failure_line, render

from .shadowing import installed_libraries_only

_lock = threading.RLock()
_state: dict[str, Any] = {"installed": False, "format": None, "previous": None, "previous_thread": None,
                          "shell": None, "seen": None, "at_exit": False}


def install(format: str | None = None) -> Callable:
    """Hook uncaught exceptions in the main thread and in threads; returns the previous sys.excepthook.

    Installing twice is harmless (the second call only changes the format). The previous hooks
    still run first, so the traceback is exactly what it would have been. Called in an IPython cell,
    where IPython shows a cell's errors itself, it loads the extension (`%load_ext explainer`) instead
    of a sys.excepthook that IPython would never call.
    """
    from explainer._config import set_main_script_folder

    fmt = choose_format(format) if format is not None else None
    set_main_script_folder()  # the team packs of the script's project, wherever it is run from
    with _lock:
        _state["format"] = fmt
        if _state["installed"]:
            return _state["previous"]
        _state["previous"] = sys.excepthook
        _state["previous_thread"] = threading.excepthook
        _state["shell"] = _ipython_running_a_cell()
        if _state["shell"] is not None:
            _state["shell"].extension_manager.load_extension("explainer")
        else:
            sys.excepthook = _excepthook
            _explain_bypassed_at_exit()
        threading.excepthook = _thread_excepthook
        _state["installed"] = True
        return _state["previous"]


def uninstall() -> None:
    """Put back the hooks that were there before install() (in IPython: unload the extension it loaded)."""
    with _lock:
        if not _state["installed"]:
            return
        if _state["shell"] is not None:
            _state["shell"].extension_manager.unload_extension("explainer")
        if sys.excepthook is _excepthook:
            sys.excepthook = _state["previous"]
        if threading.excepthook is _thread_excepthook:
            threading.excepthook = _state["previous_thread"]
        _state.update(installed=False, previous=None, previous_thread=None, shell=None)


def is_installed() -> bool:
    return bool(_state["installed"])


def _excepthook(etype: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    _state["seen"] = id(value)  # not value: kept to the end, it would keep its frames alive past module teardown
    previous = _state["previous"] or sys.__excepthook__
    if issubclass(etype, (KeyboardInterrupt, SystemExit)):
        previous(etype, value, tb)
        return
    printed, refused = _print_recorded(previous, etype, value, tb)
    if not refused:  # a stream that refused Python's traceback gets nothing more from us
        _pass_on_traceback()
        report(value, tb, sys.stderr, printed=printed, process_failure=True)


def _pass_on_traceback() -> None:
    """Under torch.distributed's rank hook, the traceback it holds back is printed before the diagnosis starts."""
    try:
        from .rankbuffer import pass_on_buffered_traceback

        pass_on_buffered_traceback()
    except Exception:  # the explainer must never make a crash worse: torch's hook prints it, later
        pass


def explain_if_bypassed(exc: BaseException, tb: TracebackType | None) -> None:
    """The diagnosis of an uncaught exc that sys.excepthook printed without reaching ours: a hook set after install()
    that does not chain to the one it found (rich.traceback.install(), a framework's own) took our place. Once: never
    when ours ran (or chained) for exc, nor after uninstall()."""
    if not _state["installed"] or _state["seen"] == id(exc) or isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return
    _state["seen"] = id(exc)
    report(exc, tb, sys.stderr, process_failure=True)


def _explain_bypassed_at_exit() -> None:
    """Under plain `python script.py`, Python keeps the exception that ends the script in sys.last_value before it
    calls sys.excepthook, and runs atexit's functions after: the one place left to explain it when a hook that
    replaced ours printed it (under `python -m explainer` the runner does, at once)."""
    if not _state["at_exit"]:
        _state["at_exit"] = True
        atexit.register(_explain_uncaught_at_exit)


def _explain_uncaught_at_exit() -> None:
    value, tb = getattr(sys, "last_value", None), getattr(sys, "last_traceback", None)
    if isinstance(value, BaseException) and _left_the_outermost_frame(tb) and not hasattr(sys, "ps1"):
        explain_if_bypassed(value, tb)


def _left_the_outermost_frame(tb: TracebackType | None) -> bool:
    """Whether tb is of an exception nothing caught: its first frame is the script's (or runpy's) own, with none
    above it. Not one an interactive prompt (which leaves sys.ps1), code.interact, pytest or IPython showed and went on
    from (their frame that caught it has callers; IPython's is a coroutine's, which keeps none)."""
    from inspect import CO_ASYNC_GENERATOR, CO_COROUTINE, CO_GENERATOR, CO_ITERABLE_COROUTINE

    suspendable = CO_ASYNC_GENERATOR | CO_COROUTINE | CO_GENERATOR | CO_ITERABLE_COROUTINE
    return tb is not None and tb.tb_frame.f_back is None and not tb.tb_frame.f_code.co_flags & suspendable


def _ipython_running_a_cell() -> Any:
    """The IPython shell whose cell is running now (it sets sys.excepthook to its own for the cell), else None.

    IPython is never imported here, and nothing of an object not IPython's own is read."""
    shells = sys.modules.get("IPython.core.interactiveshell")
    hook = sys.excepthook
    if shells is None or not isinstance(hook, types.MethodType):
        return None
    shell = hook.__self__
    if isinstance(shell, shells.InteractiveShell) and hook.__func__ is getattr(type(shell), "excepthook", None):
        return shell
    return None


def _thread_excepthook(args: Any) -> None:
    previous = _state["previous_thread"] or threading.__excepthook__
    if args.exc_value is None or issubclass(args.exc_type, (KeyboardInterrupt, SystemExit)):
        previous(args)
        return
    printed, refused = _print_recorded(previous, args)
    if not refused:
        report(args.exc_value, args.exc_traceback, sys.stderr, printed=printed)


def _print_recorded(previous: Callable, *args: Any) -> tuple[str | None, bool]:
    """Run the previous hook (Python's traceback), keeping a copy of what it wrote to sys.stderr."""
    try:
        from explainer.diagnose.exctext import call_recording_stderr
    except Exception:  # cannot even import: print as if we were not here
        previous(*args)
        return None, False
    return call_recording_stderr(previous, *args)


def explain(exc: BaseException, tb: TracebackType | None = None, printed: str | None = None):
    # Imported at the moment of a crash, so that install() costs almost nothing at start-up.
    with paused_gc(), installed_libraries_only():
        from explainer.diagnose.explain import explain as explain_exception

        return explain_exception(exc, tb=tb, printed=printed)


def _rule_problems_notice() -> str:
    from explainer.rules.base import problems_notice

    return problems_notice()


def _partial_line(problem: str) -> str:
    """The line under a diagnosis that a probe could not finish: a team pack's probe that raised is the team's bug,
    said as such (which probe, where); anything else is the explainer's own."""
    from explainer.probes import TeamProbeFailure

    if isinstance(problem, TeamProbeFailure):
        return f"torch-explainer: {problem}; the diagnosis above is partial (fix the probe in its pack)\n"
    return internal_failure_line(problem, outcome="partial diagnosis")


def _rank_facts() -> dict[str, Any] | None:
    from .elastic import rank_facts

    return rank_facts()


def _record_for_elastic(diagnosis, printed: str | None) -> str:
    """Put the diagnosis into the elastic error file; what to add to our output if that failed."""
    from explainer.diagnose.render import render_text

    from .elastic import record_diagnosis

    try:
        record_diagnosis(diagnosis, render_text(diagnosis, colour=False), printed)
    except Exception as error:
        return internal_failure_line(f"cannot write the elastic error file: {type(error).__name__}: {error}")
    return ""


def report(exc: BaseException, tb: TracebackType | None, stream: TextIO | None, fmt: str | None = None,
           printed: str | None = None, process_failure: bool = False) -> None:
    """Write the diagnosis of exc to stream; on any failure of our own, one line and nothing else.

    printed is the traceback already written for exc, when known: its exception texts are reused.
    process_failure: exc ends the process (the main thread's), so under torchrun it is what the
    elastic agent reports, and the diagnosis goes into the worker's error file too.
    """
    if stream is None:
        return
    try:
        requested = fmt or _state["format"]
        fmt = choose_format(requested)
        diagnosis = explain(exc, tb=tb, printed=printed)
        rank = _rank_facts() if "RANK" in os.environ else None
        if rank is not None:
            diagnosis.facts["process"] = rank
        text = render(diagnosis, fmt, stream) + format_notice(requested)
        if diagnosis.internal_errors:
            text += _partial_line(diagnosis.internal_errors[0])
        text += _rule_problems_notice()
        if process_failure and os.environ.get("TORCHELASTIC_ERROR_FILE"):
            text += _record_for_elastic(diagnosis, printed)
    except Exception as error:  # the explainer must never make a crash worse
        text = internal_failure_line(error)
        if os.environ.get("EXPLAINER_DEBUG"):
            text += "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        # The reader left after Python's traceback: what we could not write must not fail Python's
        # own flush at exit (status 120 instead of Python's), so the rest goes nowhere.
        _discard_rest(stream)
    except Exception as error:
        try:
            stream.write("\n" + internal_failure_line(f"cannot write the diagnosis: {type(error).__name__}"))
            stream.flush()
        except Exception:
            pass


def _discard_rest(stream: TextIO) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
