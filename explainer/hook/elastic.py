"""torchrun (torch.distributed.elastic): which rank this process is, and its diagnosis in the error
file the elastic agent reads.

The agent sets TORCHELASTIC_ERROR_FILE for each worker; when the worker fails it reads the file
(`ProcessFailure`) and prints `extraInfo.py_callstack` in its ChildFailedError summary, root cause
first. `ErrorHandler.record_exception` (what `@record` calls) writes

    {"message": {"message": "Type: text", "extraInfo": {"py_callstack": "...", "timestamp": "<int>"}}}

We keep that layout: append the diagnosis to py_callstack (so the summary shows its title, rule and
runbook) and put the structured diagnosis beside it under extraInfo.explainer, which the agent
ignores. A file @record already wrote is extended, never replaced; one in another layout is left alone.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any, Mapping

ERROR_FILE_ENV = "TORCHELASTIC_ERROR_FILE"
RANK_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
EXPLAINER_KEY = "explainer"


def rank_facts(environ: Mapping[str, str] = os.environ) -> dict[str, Any] | None:
    """{"rank", "world_size", "local_rank", "host"} from the variables torchrun sets, or None outside it."""
    rank, world_size = _int(environ.get("RANK")), _int(environ.get("WORLD_SIZE"))
    if rank is None or world_size is None:
        return None
    # gethostname, not getfqdn as the agent's summary does: no DNS lookup while a process is dying.
    return {"rank": rank, "world_size": world_size, "local_rank": _int(environ.get("LOCAL_RANK")),
            "host": socket.gethostname()}


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def record_diagnosis(diagnosis, text: str, printed: str | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Write the diagnosis (its rendered text) into this worker's elastic error file; False when
    there is no such file to write (not under torchrun) or it is in a layout we do not know."""
    path = environ.get(ERROR_FILE_ENV)
    if not path:
        return False
    data = _read_recorded(path)
    if data is None:
        data = _new_record(diagnosis.error, printed)
    elif not _is_record(data):
        return False  # someone else's layout: elastic's file must not change under them
    info = data["message"]["extraInfo"]
    if EXPLAINER_KEY in info:
        return True  # already recorded (the hook ran twice for one failure)
    callstack = str(info.get("py_callstack") or "").rstrip("\n")
    info["py_callstack"] = (callstack + "\n" if callstack else "") + text
    info[EXPLAINER_KEY] = diagnosis.to_dict()
    _write_atomically(path, json.dumps(data))
    return True


def _read_recorded(path: str) -> Any:
    """What @record's ErrorHandler already wrote for this failure, or None when there is no file."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # unreadable: not ours to touch


def _is_record(data: Any) -> bool:
    message = data.get("message") if isinstance(data, dict) else None
    return isinstance(message, dict) and isinstance(message.get("extraInfo"), dict)


def _new_record(error: str, printed: str | None) -> dict[str, Any]:
    # The same fields ErrorHandler.record_exception writes; the traceback is the one Python printed
    # (formatting the exception again would run its __str__ a second time).
    return {"message": {"message": error, "extraInfo": {"py_callstack": printed or error,
                                                        "timestamp": str(int(time.time()))}}}


def _write_atomically(path: str, text: str) -> None:
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)
