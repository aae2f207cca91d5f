"""Where in the user's code: the line that ran an operation inside the model's forward, and the line that called
the model. The NaN locator names the first; the monitor keeps the second (a few dict look-ups per forward) for a
NaN made inside layers with no forward of the user's (nn.Sequential, nn.Linear)."""

from __future__ import annotations

import linecache
import os
import sys
from typing import Any

from explainer._inspect import is_user_file


def user_place(boundary: Any = None) -> str | None:
    """`file.py:12` (`code`) of the innermost user frame running now inside the model's forward (below the
    `boundary` frame, the re-run's own caller): the line that ran the operation. None where no forward of the
    user's runs it (nn.Sequential, nn.Linear): the frames above the boundary are the monitor's caller
    (`mon.step(loss)`), which ran no operation of the model."""
    frame = sys._getframe(1)
    while frame is not None and frame is not boundary and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None or frame is boundary:
        return None
    return place_text(frame.f_code.co_filename, frame.f_lineno)


def place_text(filename: str, lineno: int) -> str:
    """`file.py:12` (`code`): a line of the user's, with its code when the file can be read."""
    code = linecache.getline(filename, lineno).strip()
    code = code.split("  #", 1)[0].rstrip()  # an inline comment is not the code
    return f"{os.path.basename(filename)}:{lineno}" + (f" (`{code}`)" if code else "")


def user_caller(frame: Any) -> tuple[str, int] | None:
    """(file, line) of the innermost user frame above torch's module-call machinery: the line that called the
    model (`loss = loss_fn(model(x), y)`), kept for a NaN made inside layers with no forward of the user's
    (is_user_file caches its answer per file: a few look-ups per forward)."""
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None
