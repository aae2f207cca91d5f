"""Pausing the garbage collector while the explainer works at the moment of a crash."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused_gc():
    """Explaining makes many small objects (rules, jinja2's and regex's imports); with torch's
    millions already alive, the collector's full passes over them cost more than the work itself."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
