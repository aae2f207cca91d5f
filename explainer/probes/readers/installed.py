"""Which installed distribution provides a top-level import name, and its release: read from importlib.metadata
without importing anything, and without metadata.packages_distributions(), which parses every distribution's
RECORD (about a second at a crash) for what top_level.txt mostly says."""

from __future__ import annotations

import re
from typing import Any

# folders that hold installed packages (an egg folder, `name-1.0-py3.8.egg`, is installed too)
INSTALLED_DIRS = ("site-packages", "dist-packages")


def installed_package(path: str) -> str | None:
    """The top-level import name of an installed file: what follows the last site-packages (or dist-packages)
    folder of path (`.../site-packages/peft/config.py`: peft, `.../site-packages/six.py`: six)."""
    parts = re.split(r"[/\\]", path)
    marks = [i for i, part in enumerate(parts) if part in INSTALLED_DIRS]
    if not marks or marks[-1] + 1 >= len(parts):
        return None
    return parts[marks[-1] + 1].split(".")[0] or None


def _providers(top: str) -> list[Any]:
    """The installed distributions whose files include the top-level import name top: their top_level.txt, else
    their RECORD's paths read as text."""
    from importlib import metadata

    found, unlisted = [], []
    for dist in metadata.distributions():
        names = dist.read_text("top_level.txt")
        if names is None:
            unlisted.append(dist)
        elif top in names.split():
            found.append(dist)
    if not found:
        prefixes = (f"\n{top}/", f"\n{top}.")  # a package's folder, or a module (`clip.py`, `_C.cpython-311.so`)
        found = [d for d in unlisted if any(p in "\n" + (d.read_text("RECORD") or "") for p in prefixes)]
    return found


def distributions_providing(top: str) -> list[tuple[str, str]]:
    """(name, version) of each installed distribution that provides the top-level import name top: the distribution
    of the same spelling (or with `-` for `_`) first, else those whose files claim it (yaml: PyYAML, clip:
    openai-clip). Broken metadata gives no answer rather than an error."""
    from importlib import metadata

    try:
        for candidate in dict.fromkeys((top, top.replace("_", "-"))):
            try:
                found = metadata.distribution(candidate)
            except (metadata.PackageNotFoundError, ValueError):
                continue
            provided = (found.read_text("top_level.txt") or "").split()
            if not provided or top in provided:
                return [(found.metadata["Name"] or candidate, found.version)]
        return list(dict.fromkeys((d.metadata["Name"], d.version) for d in _providers(top) if d.metadata["Name"]))
    except Exception:  # noqa: BLE001 - a broken distribution's metadata must not stop the diagnosis
        return []
