"""Settings from the environment and the nearest pyproject.toml's [tool.explainer] table."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT_RUNBOOK_URL = "http://127.0.0.1:8000/"


def find_pyproject(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=8)
def _table(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("tool", {}).get("explainer", {})
    return table if isinstance(table, dict) else {}


def project_settings() -> tuple[dict[str, Any], Path | None]:
    """The [tool.explainer] table of the nearest pyproject.toml above the working directory."""
    path = find_pyproject()
    return _table(path), path


def runbook_base() -> str:
    base = os.environ.get("EXPLAINER_RUNBOOK_URL") or project_settings()[0].get("runbook_url") or DEFAULT_RUNBOOK_URL
    return str(base).rstrip("/") + "/"


def runbook_path(rule_id: str) -> str:
    """A rule's page inside the built site."""
    return f"rules/{rule_id}/"


def runbook_url(rule_id: str) -> str:
    return runbook_base() + runbook_path(rule_id)


def guide_path(slug: str) -> str:
    """A method page (runbooks/guides/<slug>.md) inside the built site."""
    return f"guide/{slug}/"


def guide_url(slug: str) -> str:
    return runbook_base() + guide_path(slug)
