"""What loading rules learned once, kept across processes: each unchanged rule file's parsed front
matter, that its patterns compile (with their group names and required literals), and which fields
each template uses.

Rule loading happens at the moment of a crash, where every 100 ms shows. An unchanged file (same
path, size and modification time) is not parsed, compiled or read for templates again: its patterns
compile on first use; the checks on its fields still run. The cache is a plain JSON file; any
failure to read or write it is ignored.
"""

from __future__ import annotations

import json
import marshal
import mmap
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any

try:  # the built-in module: importing hashlib (OpenSSL's _hashlib) costs ~2 ms of each crash and log scan
    from _sha1 import sha1
except ImportError:  # a Python built without it
    from hashlib import sha1

VERSION = 11  # raised whenever what is cached is worked out differently (e.g. required_runs)
MAX_FILES = 20_000
MAX_TEMPLATES = 50_000
MAX_CACHE_FILES = 64
# A folder index holds every rule's text (megabytes): a few are enough (the built-in rules, a team's).
KEEP = {"index": 8, "details": 8}


def cache_dir() -> Path | None:
    """$EXPLAINER_CACHE_DIR, else the user cache folder's (user_cache_root); None when turned off or when no
    folder can be written."""
    if os.environ.get("EXPLAINER_CACHE", "1") == "0":
        return None
    explicit = os.environ.get("EXPLAINER_CACHE_DIR")
    return Path(explicit) if explicit else user_cache_root()


def nominal_cache_root() -> str:
    """The user cache folder's torch-explainer folder: under $XDG_CACHE_HOME, else ~/.cache."""
    return os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "torch-explainer")


_ROOTS: dict[str, Path | None] = {}


def user_cache_root() -> Path | None:
    """nominal_cache_root() where this process can write in it, else a private folder of this user's in the
    temporary folder (private_temp_root), else None. Without a writable cache every crash would build the rule
    index again (seconds of CPU), so an unwritable $XDG_CACHE_HOME falls back instead of going without."""
    nominal = nominal_cache_root()
    if nominal not in _ROOTS:
        _ROOTS[nominal] = Path(nominal) if _writable_folder(nominal) else private_temp_root()
    return _ROOTS[nominal]


def _writable_folder(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def _user_tag() -> str:
    if hasattr(os, "getuid"):
        return str(os.getuid())
    import getpass  # Windows: no uid (imported here: it costs a crash a few modules elsewhere)

    return "".join(char for char in getpass.getuser() if char.isalnum()) or "user"


def private_temp_root() -> Path | None:
    """tempfile.gettempdir()/torch-explainer-<uid>, made by this user with mode 0700; None where it cannot be
    made, or where what is there is not a folder of this user's that only they can write in (another user may
    have made it first, in a shared /tmp)."""
    path = os.path.join(tempfile.gettempdir(), f"torch-explainer-{_user_tag()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    if os.name == "posix" and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        return None
    return Path(path) if os.access(path, os.W_OK | os.X_OK) else None


def cache_path(folder: Path) -> Path | None:
    """One small cache file per rule folder, so each load reads only what it needs."""
    base = cache_dir()
    if base is None:
        return None
    digest = sha1(os.path.abspath(folder).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return base / f"rules-v{VERSION}-{digest}.json"


class RuleCache:
    def __init__(self, path: Path | None):
        self.path = path
        self.files: dict[str, dict[str, Any]] = {}
        self.templates: dict[str, list[str]] = {}
        self.gates: dict[str, list[str]] = {}  # a pattern's required runs (as JSON) -> the gate keys chosen for them
        self.changed = False
        self._lock = threading.Lock()
        if path is not None:
            try:
                data = json.loads(path.read_text())
                if isinstance(data, dict) and data.get("version") == VERSION:
                    self.files = dict(data.get("files", {}))
                    self.templates = dict(data.get("templates", {}))
                    self.gates = dict(data.get("gates", {}))
            except (OSError, ValueError):
                pass

    @staticmethod
    def file_key(path: Path) -> str | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        return f"{os.path.abspath(path)}|{stat.st_size}|{stat.st_mtime_ns}"

    def entry(self, key: str | None) -> dict[str, Any] | None:
        """What was learned from this exact file before: data, lines, body, groups, literals."""
        found = self.files.get(key) if key else None
        return found if isinstance(found, dict) and {"data", "lines", "body", "groups"} <= found.keys() else None

    def remember_file(self, key: str | None, entry: dict[str, Any]) -> None:
        if not key or self.path is None or key in self.files:
            return
        try:
            json.dumps(entry)  # YAML can hold dates and sets, which JSON cannot
        except (TypeError, ValueError):
            return
        self._keep(self.files, key, entry, MAX_FILES)

    def template_fields(self, source: str) -> frozenset[str] | None:
        found = self.templates.get(source)
        return frozenset(found) if isinstance(found, list) else None

    def remember_template(self, source: str, fields: frozenset[str]) -> None:
        if source not in self.templates and self.path is not None:
            self._keep(self.templates, source, sorted(fields), MAX_TEMPLATES)

    def gate_keys(self, required: list[list[str]], choose) -> list[str]:
        """The gate keys chosen for these required runs before (the examples they were chosen by have changed
        since, at most a little: any required run is a correct gate), else choose(required), kept."""
        key = json.dumps(required)
        found = self.gates.get(key)
        if not isinstance(found, list):
            found = choose(required)
            if self.path is not None:
                self._keep(self.gates, key, found, MAX_TEMPLATES)
        return found

    def _keep(self, table: dict[str, Any], key: str, value: Any, cap: int) -> None:
        """value kept under key, the oldest entry of table dropped at its cap."""
        with self._lock:
            if len(table) >= cap:
                table.pop(next(iter(table)))
            table[key] = value
            self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        data = json.dumps({"version": VERSION, "files": self.files, "templates": self.templates, "gates": self.gates})
        if _write_cache_file(self.path, data.encode("utf-8")):
            self.changed = False


def _write_cache_file(path: Path, data: bytes) -> bool:
    """Write a cache file atomically, then prune its kind. False if it could not be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except OSError:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    _prune(path)
    return True


def _prune(path: Path) -> None:
    """Of path's kind (the name before '-v'), files an older version wrote go, and of this version's the
    newest KEEP (by kind, else MAX_CACHE_FILES) stay: rule folders come and go (temporary ones in tests),
    and every edit of a rule names a new folder index. A file that cannot go (another process maps it,
    on Windows) stays until a later write."""
    kind = path.name.split("-v", 1)[0]
    current = f"{kind}-v{VERSION}-"
    kept: list[tuple[float, Path]] = []
    for other in path.parent.glob(f"{kind}-v*{path.suffix}"):
        try:
            if other.name.startswith(current):
                kept.append((other.stat().st_mtime, other))
            else:
                other.unlink()
        except OSError:
            continue
    kept.sort(reverse=True)
    for _, stale in kept[KEEP.get(kind, MAX_CACHE_FILES):]:
        try:
            stale.unlink()
        except OSError:
            continue


NO_CACHE = RuleCache(None)


def open_cache(folder: Path) -> RuleCache:
    return RuleCache(cache_path(folder))


def folder_index_path(folder: Path, files: list[tuple[str, int, int]], context: str) -> Path | None:
    """Where the built rules of a whole folder are kept: named by a digest of every rule file's path,
    size and modification time (files: rule_file_stats') and of what validation depended on (context), so
    any edit, new or deleted file misses it."""
    if cache_dir() is None or any(size < 0 for _, size, _ in files):
        return None
    parts = [context, os.path.abspath(folder)]
    parts += [f"{path}|{size}|{mtime}" for path, size, mtime in files]
    return cache_file("index", "\n".join(parts))


def cache_file(kind: str, key: str) -> Path | None:
    """A cache file named by a digest of what its content depends on (key): a changed key misses it."""
    base = cache_dir()
    if base is None:
        return None
    digest = sha1(f"{VERSION}|{key}".encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return base / f"{kind}-v{VERSION}-{digest}.marshal"


def load_marshal(path: Path | None) -> Any:
    """What save_marshal wrote there, or None."""
    if path is None:
        return None
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def save_marshal(path: Path | None, value: Any) -> None:
    try:
        data = marshal.dumps(value)
    except ValueError:  # a value marshal cannot write: nothing kept, it is worked out again next time
        return
    if path is not None:
        _write_cache_file(path, data)


def load_index(path: Path | None, width: int) -> tuple[list[tuple], memoryview] | None:
    """The rules (as plain data: see rule_to_data, the details replaced by their offset and length) a previous
    process built from exactly these files, and the details file beside the index, or None. A rule's details
    are unmarshalled when the rule is used (rules_from_index)."""
    data = load_marshal(path)
    if not (isinstance(data, tuple) and len(data) == 2 and isinstance(data[1], int)):
        return None
    rules, size = data
    if not all(isinstance(item, tuple) and len(item) == width + 2 for item in rules):
        return None  # not the layout this version writes (width match fields, then offset and length)
    try:
        with open(_details_path(path), "rb") as handle:
            # mapped, not read: a crash reads the pages of the few rules it uses; the mapping stays valid
            # if another process replaces or prunes the file
            blob = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)) if size else memoryview(b"")
    except (OSError, ValueError):
        return None
    if len(blob) != size:
        return None
    return rules, blob


def save_index(path: Path | None, rules: list[tuple]) -> None:
    """rules as rule_to_data gives them (their last item the marshalled details): the details are written
    to a file of their own, the index keeps where each one is."""
    if path is None:
        return
    blob, index = bytearray(), []
    for item in rules:
        index.append((*item[:-1], len(blob), len(item[-1])))
        blob += item[-1]
    if _write_cache_file(_details_path(path), bytes(blob)):
        save_marshal(path, (index, len(blob)))


def _details_path(index: Path) -> Path:
    return index.with_name(index.name.replace("index-", "details-", 1)).with_suffix(".bin")
