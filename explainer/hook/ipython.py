"""`%load_ext explainer`: the diagnosis appears after IPython's own traceback."""

from __future__ import annotations

import sys
from typing import Any

from .install import report

_previous: dict[int, Any] = {}


def _handler(shell, etype, value, tb, tb_offset=None):
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    if not issubclass(etype, (KeyboardInterrupt, SystemExit)):
        report(value, tb, sys.stdout)
    return None


def load(ipython) -> None:
    if id(ipython) in _previous:
        return
    _previous[id(ipython)] = (ipython.custom_exceptions, getattr(ipython, "CustomTB", None))
    ipython.set_custom_exc((Exception,), _handler)


def unload(ipython) -> None:
    saved = _previous.pop(id(ipython), None)
    if saved is None:
        return
    exceptions, handler = saved
    ipython.custom_exceptions = exceptions
    if handler is not None:
        ipython.CustomTB = handler
