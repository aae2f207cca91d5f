"""The libraries the explainer imports at the moment of a crash (PyYAML, jinja2 with MarkupSafe, regex) come from
where they are installed, never from the user's folders: the script's folder is first on sys.path, and importing a
user's `yaml.py` or `regex.py` there would run user code (and break the diagnosis)."""

from __future__ import annotations

import importlib.machinery
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

OUR_LIBRARIES = frozenset({"yaml", "_yaml", "jinja2", "markupsafe", "regex"})


def user_folders() -> set[str]:
    """The current directory (Python's '' entry, `python -m`'s cwd) and the folder of the script that runs."""
    folders = {os.path.abspath(os.curdir)}
    script = sys.argv[0] if sys.argv else ""
    if script and script not in ("-c", "-m"):
        folders.add(os.path.dirname(os.path.abspath(script)))
    return folders


class InstalledOnlyFinder:
    """A meta path finder for our libraries' top-level names: sys.path without the user's folders."""

    def __init__(self, folders: set[str]):
        self.folders = folders

    def find_spec(self, fullname: str, path=None, target=None):
        if path is not None or fullname not in OUR_LIBRARIES:
            return None  # a submodule is found in its package's own folder
        search = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) not in self.folders]
        spec = importlib.machinery.PathFinder.find_spec(fullname, search)
        if spec is None:  # not installed: never fall through to a user's file of that name
            raise ModuleNotFoundError(f"No module named {fullname!r} outside the script's folders", name=fullname)
        return spec


@contextmanager
def installed_libraries_only() -> Iterator[None]:
    finder = InstalledOnlyFinder(user_folders())
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        try:
            sys.meta_path.remove(finder)
        except ValueError:
            pass
