"""What loading rules learned once, kept across processes: which rule files' patterns compile
(with their group names) and which fields each template uses.

Rule loading happens at the moment of a crash, where every 100 ms shows. An unchanged file (same
path, size and modification time) is not compiled or parsed for templates again: its patterns
compile on first use. The cache is a plain JSON file; any failure to read or write it is ignored.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

VERSION = 1


def cache_path() -> Path | None:
    if os.environ.get("EXPLAINER_CACHE", "1") == "0":
        return None
    base = os.environ.get("EXPLAINER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "torch-explainer")
    return Path(base) / f"rules-v{VERSION}.json"


class RuleCache:
    def __init__(self, path: Path | None):
        self.path = path
        self.files: dict[str, list[str]] = {}
        self.templates: dict[str, list[str]] = {}
        self.changed = False
        self._lock = threading.Lock()
        if path is not None:
            try:
                data = json.loads(path.read_text())
                if isinstance(data, dict) and data.get("version") == VERSION:
                    self.files = dict(data.get("files", {}))
                    self.templates = dict(data.get("templates", {}))
            except (OSError, ValueError):
                pass

    @staticmethod
    def file_key(path: Path) -> str | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        return f"{os.path.realpath(path)}|{stat.st_size}|{stat.st_mtime_ns}"

    def groups(self, key: str | None) -> set[str] | None:
        """The group names of a file whose patterns are known to compile, or None."""
        found = self.files.get(key) if key else None
        return set(found) if isinstance(found, list) else None

    def remember_file(self, key: str | None, groups: set[str]) -> None:
        if key and self.files.get(key) != sorted(groups):
            with self._lock:
                self.files[key] = sorted(groups)
                self.changed = True

    def template_fields(self, source: str) -> frozenset[str] | None:
        found = self.templates.get(source)
        return frozenset(found) if isinstance(found, list) else None

    def remember_template(self, source: str, fields: frozenset[str]) -> None:
        if source not in self.templates:
            with self._lock:
                self.templates[source] = sorted(fields)
                self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".rules-", suffix=".json")
            with os.fdopen(handle, "w") as out:
                json.dump({"version": VERSION, "files": self.files, "templates": self.templates}, out)
            os.replace(temp, self.path)
            self.changed = False
        except OSError:
            pass


NO_CACHE = RuleCache(None)


def open_cache() -> RuleCache:
    return RuleCache(cache_path())
