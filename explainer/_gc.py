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


@contextmanager
def collecting_gc(active: bool = True):
    """The collector on again, where it was paused, for a build that makes many short-lived objects with cycles among
    them (the rule index after an install: parsed YAML, regex parse trees), which a paused collector would keep alive
    to the end (about 70 MB at the peak of building 1,900 rules). What was alive before is frozen first, so its passes
    skip torch's millions of objects."""
    resumed = active and not gc.isenabled()
    if resumed:
        gc.freeze()
        gc.enable()
    try:
        yield
    finally:
        if resumed:
            gc.disable()
            gc.unfreeze()
