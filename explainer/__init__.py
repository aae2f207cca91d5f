"""torch-explainer: explains PyTorch failures from the live evidence.

    import explainer
    explainer.install()          # diagnoses appear after Python's own traceback

Public API: install, uninstall, explain, explain_text, Diagnosis, Location, TrainingMonitor,
overfit_one_batch.
"""

from importlib import import_module
from typing import Any

from ._diagnosis import Diagnosis, Location
from ._version import __version__ as __version__

# Loaded on first use, so that `import explainer; explainer.install()` costs next to nothing until
# something actually fails (the rule base, jinja2 and the probes load at that moment), and a command that runs no
# script (`explainer explain`) does not load the hook.
_LAZY = {
    "install": ".hook.install",
    "uninstall": ".hook.install",
    "explain_text": ".diagnose.explain",
    "TrainingMonitor": ".signals.monitor",
    "overfit_one_batch": ".signals.overfit",
}


def explain(exc: BaseException, *, tb: Any = None, printed: str | None = None, rulebase: Any = None) -> Diagnosis:
    """The Diagnosis of an exception you caught (the torch error inside a chain or an exception group); tb overrides
    exc.__traceback__, printed is the traceback already written for it. The text of an error or a log: explain_text."""
    if not issubclass(type(exc), BaseException):
        raise TypeError(f"explainer.explain() takes an exception, not {type(exc).__name__}; for the text of an error "
                        "or a log, use explainer.explain_text(text)")
    from .diagnose.explain import explain as explain_exception

    return explain_exception(exc, tb=tb, printed=printed, rulebase=rulebase)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'explainer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = ["Diagnosis", "Location", "TrainingMonitor", "explain", "explain_text", "install", "overfit_one_batch",
           "uninstall"]


def load_ipython_extension(ipython) -> None:
    from .hook.ipython import load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .hook.ipython import unload

    unload(ipython)
