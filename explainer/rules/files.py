"""Where rule files are: the built-in rule folder, and the rule files below a folder, in a stable order."""

from __future__ import annotations

import os
from pathlib import Path

GUIDES_DIR = "guides"
NOT_RULES = frozenset({"readme.md", "index.md"})
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # explainer/, where a wheel puts runbooks/


def builtin_rules_dir() -> Path:
    """explainer/runbooks in an installed wheel, runbooks/ in a source checkout (an editable install)."""
    installed = Path(PACKAGE_DIR) / "runbooks"
    if installed.is_dir():
        return installed
    from explainer._config import SOURCE_ROOT

    return SOURCE_ROOT / "runbooks"


def rule_files(folder: Path) -> list[Path]:
    """Every rule file below folder, in a stable order. README/index pages and guides/ are not rules."""
    return [Path(path) for path, _, _ in rule_file_stats(folder)]


def rule_file_stats(folder: Path) -> list[tuple[str, int, int]]:
    """rule_files as strings, in the same order (Path's: by components), each with its size and modification
    time (-1 where it cannot be read), which name the folder index. One scandir pass over plain strings, each
    folder's entries sorted by name, rather than rglob, Paths and a stat per path: this runs at every crash."""
    found: list[tuple[str, int, int]] = []

    def visit(top: str, outermost: bool) -> None:
        try:
            with os.scandir(top) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if entry.is_dir():
                if not entry.is_symlink() and not (outermost and entry.name == GUIDES_DIR):  # as os.walk does
                    visit(entry.path, False)
            elif entry.name.endswith(".md") and entry.name.lower() not in NOT_RULES:
                try:
                    stat = entry.stat()
                except OSError:
                    found.append((entry.path, -1, -1))
                else:
                    found.append((entry.path, stat.st_size, stat.st_mtime_ns))

    visit(str(Path(folder)), True)
    return found


def installed_folder_stats(folder: Path) -> list[tuple[str, int, int]] | None:
    """For the built-in rules of an installed wheel (explainer/runbooks inside the package, not a checkout's
    runbooks/): each folder's size and modification time, which change when pip removes or writes a file, in place
    of a stat per rule file (a few ms at every crash). None for a checkout, whose files are edited in place."""
    top = os.path.abspath(folder)
    if os.path.dirname(top) != PACKAGE_DIR:
        return None
    found: list[tuple[str, int, int]] = []
    for where, names, _ in os.walk(top):
        names.sort()
        if where == top and GUIDES_DIR in names:
            names.remove(GUIDES_DIR)
        try:
            stat = os.stat(where)
        except OSError:
            return None
        found.append((where, stat.st_size, stat.st_mtime_ns))
    return found

