"""`%load_ext explainer`: the diagnosis appears after IPython's own traceback, on stderr.

A cell's error is read after the cell has run (IPython's post_execute event, which the Jupyter kernel fires too, and
which `ipython script.ipy` and `%run script.ipy` fire for the cells they run silently), so IPython shows it exactly
as it would without us, through its own path (a SyntaxError raised at run time keeps its frames) or a handler the user
set with set_custom_exc, which stays theirs. An error IPython met compiling the cell (a typo in it) is not explained,
as `python -m explainer` does not explain a script Python cannot compile.
"""

from __future__ import annotations

import bdb
import sys
import weakref
from typing import Any, Callable

from .install import report

NOT_EXPLAINED = (KeyboardInterrupt, SystemExit, bdb.BdbQuit)

_registered: dict[int, Callable[[], None]] = {}


def _explainer_for(ipython: Any) -> Callable[[], None]:
    explained: list[weakref.ref | None] = [None]  # the last result explained (weakly: its frames are IPython's)

    def after_execute() -> None:
        result = ipython.last_execution_result  # an IPython ExecutionResult, never a user's object
        if result is None or (explained[0] is not None and explained[0]() is result):
            return  # none yet, or the event fired again for a cell already explained
        value = getattr(result, "error_in_exec", None)
        if isinstance(value, BaseException) and not isinstance(value, NOT_EXPLAINED):
            explained[0] = weakref.ref(result)
            report(value, value.__traceback__, sys.stderr)

    return after_execute


def load(ipython) -> None:
    if id(ipython) in _registered:
        return
    _registered[id(ipython)] = callback = _explainer_for(ipython)
    ipython.events.register("post_execute", callback)


def unload(ipython) -> None:
    callback = _registered.pop(id(ipython), None)
    if callback is not None:
        try:
            ipython.events.unregister("post_execute", callback)
        except ValueError:  # someone else took it off already
            pass
