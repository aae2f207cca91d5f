"""torch-explainer: explains PyTorch failures from the live evidence.

    import explainer
    explainer.install()          # diagnoses appear after Python's own traceback

Public API: install, uninstall, explain, explain_text, Diagnosis, Location.
"""

from ._diagnosis import Diagnosis, Location
from ._explain import explain, explain_text
from ._hook import install, uninstall
from ._monitor import TrainingMonitor
from ._overfit import overfit_one_batch

__all__ = ["Diagnosis", "Location", "TrainingMonitor", "explain", "explain_text", "install", "overfit_one_batch",
           "uninstall"]
__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    from ._ipython import load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from ._ipython import unload

    unload(ipython)
