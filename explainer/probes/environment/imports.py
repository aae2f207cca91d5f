"""Probes for an import that failed: where the named module's top-level package comes from (its distribution and
release, or a folder), which part of a dotted name is missing and what its parent holds instead, a folder of the
repository that would provide it but is not on sys.path, and the interpreter (and the environment it belongs to)
that ran the script.

Nothing here imports a module: sys.modules and module dictionaries are read with safe_getattr, folders are listed,
and importlib.util.find_spec is called for a top-level name only (a dotted one would import its parents)."""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path
from typing import Any

from explainer._inspect import MISSING, FrameRecord, is_user_file, safe_getattr
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.installed import distributions_providing

MAX_LISTED = 400  # entries read from one package folder
PARENT_LEVELS = 4  # how far above the script's folder (and the working directory) a repository root is looked for
SOURCE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


@probe("missing_module", provides=(
    "import_file", "import_line", "import_code", "interpreter", "active_env", "env_mismatch",
    "top_found", "top_origin", "top_dist", "top_version", "top_local", "missing_part", "missing_parent",
    "similar_submodule", "parent_submodules", "parent_origin", "not_package_file",
    "local_path", "local_root", "local_script", "local_editable_root"))
def missing_module(ctx: ProbeContext) -> Evidence | None:
    """The module a ModuleNotFoundError names, as this process sees it: installed or not, from where, and the
    repository folder that would provide it."""
    module = ctx.facts.get("module")
    if not isinstance(module, str) or not re.fullmatch(r"\w+(?:\.\w+)*", module):
        return None
    top = module.split(".")[0]
    facts: dict[str, Any] = {"interpreter": sys.executable}
    facts.update(_environment())
    facts.update(_import_statement(ctx.records, top))
    found = _top_level(top)
    if found is None:
        facts.update(_local_copy(ctx.records, top))
        return Evidence(facts)
    facts["top_found"] = True
    origin, locations = found
    if origin:
        facts["top_origin"] = origin
        if is_user_file(origin):
            facts["top_local"] = True  # a folder of the user's code, not an installed package
    facts.update(_distribution(top))
    not_package = ctx.facts.get("not_package")
    if isinstance(not_package, str):
        facts.update(_not_package_file(not_package))
    else:
        facts.update(_missing_part(module, locations))
    return Evidence(facts)


# --- the interpreter and its environment ----------------------------------------------------------

def _environment() -> dict[str, Any]:
    """The virtualenv or conda environment the shell activated, and whether this interpreter belongs to it."""
    active = os.environ.get("VIRTUAL_ENV") or os.environ.get("CONDA_PREFIX")
    if not active:
        return {}
    facts: dict[str, Any] = {"active_env": active}
    if not _same_path(active, sys.prefix):
        facts["env_mismatch"] = True
    return facts


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return a == b


# --- the line that imports it ---------------------------------------------------------------------

def _import_statement(records: list[FrameRecord], top: str) -> dict[str, Any]:
    """The innermost frame whose line imports the package (`from basicsr.archs import X`, `import cv2`,
    `importlib.import_module(...)`): its file, line and code."""
    statement = re.compile(rf"^\s*(?:from\s+{re.escape(top)}\b|import\s+(?:[\w.]+\s*(?:as\s+\w+\s*)?,\s*)*"
                           rf"{re.escape(top)}\b|.*\b(?:import_module|__import__)\s*\()")
    for record in reversed(records):
        code = record.code
        if code and statement.match(code):
            code = re.sub(r"\s+#.*$", "", code)  # (a trailing comment is not part of the statement)
            return {"import_file": record.filename, "import_line": record.lineno, "import_code": code}
    return {}


# --- the top-level package ------------------------------------------------------------------------

def _top_level(top: str) -> tuple[str, list[str]] | None:
    """(origin, search folders) of the top-level package or module as Python finds it; None when it is not found.

    A module already imported is read from sys.modules; otherwise importlib's finders locate it without
    importing it (find_spec of a top-level name imports nothing)."""
    loaded = sys.modules.get(top)
    if loaded is not None:
        path = safe_getattr(loaded, "__path__")
        origin = safe_getattr(loaded, "__file__")
        folders = [p for p in path if isinstance(p, str)] if path is not MISSING and _is_sequence(path) else []
        first = folders[0] if folders else ""
        return (origin if isinstance(origin, str) else first), folders
    import importlib.util

    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None:
        return None
    folders = [p for p in (spec.submodule_search_locations or []) if isinstance(p, str)]
    origin = spec.origin if isinstance(spec.origin, str) and spec.origin not in ("built-in", "frozen") else ""
    return (origin or (folders[0] if folders else "")), folders


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or type(value).__name__ == "_NamespacePath"


def _distribution(top: str) -> dict[str, Any]:
    """The installed distribution that provides the top-level name, and its release."""
    for name, version in distributions_providing(top):
        return {"top_dist": name, "top_version": version}
    return {}


# --- a dotted name: which part is missing ---------------------------------------------------------

def _missing_part(module: str, folders: list[str]) -> dict[str, Any]:
    """The first part of a dotted name that its parent package does not hold, with what the parent holds."""
    parts = module.split(".")
    for depth in range(1, len(parts)):
        name, parent = ".".join(parts[:depth + 1]), ".".join(parts[:depth])
        loaded = sys.modules.get(name)
        if loaded is not None:
            path = safe_getattr(loaded, "__path__")
            folders = [p for p in path if isinstance(p, str)] if path is not MISSING and _is_sequence(path) else []
            continue
        entries = _entries(folders)
        if parts[depth] in entries:
            folders = [os.path.join(f, parts[depth]) for f in folders if os.path.isdir(os.path.join(f, parts[depth]))]
            continue
        facts: dict[str, Any] = {"missing_part": name, "missing_parent": parent}
        if folders:
            facts["parent_origin"] = folders[0]
        public = sorted(e for e in entries if not e.startswith("__"))
        close = difflib.get_close_matches(parts[depth], public, n=1, cutoff=0.6)
        if close:
            facts["similar_submodule"] = f"{parent}.{close[0]}"
        if public:
            facts["parent_submodules"] = ", ".join(public[:12]) + (", ..." if len(public) > 12 else "")
        return facts
    return {}


def _entries(folders: list[str]) -> set[str]:
    """The module and package names the folders hold (a subfolder, name.py, a compiled name.*.so / .pyd)."""
    names: set[str] = set()
    for folder in folders:
        try:
            with os.scandir(folder) as listing:
                for count, entry in enumerate(listing):
                    if count >= MAX_LISTED:
                        break
                    names.update(_entry_name(entry))
        except OSError:
            continue
    return names


def _entry_name(entry: os.DirEntry) -> list[str]:
    if entry.name.startswith(".") or entry.name == "__pycache__":
        return []
    try:
        if entry.is_dir():
            return [entry.name] if entry.name.isidentifier() else []
    except OSError:
        return []
    stem, _, suffix = entry.name.partition(".")
    return [stem] if stem.isidentifier() and any(entry.name.endswith(s) for s in SOURCE_SUFFIXES) else []


def _not_package_file(name: str) -> dict[str, Any]:
    """`'x' is not a package`: the file the module x was loaded from (a module, where a package was wanted)."""
    loaded = sys.modules.get(name)
    origin = safe_getattr(loaded, "__file__") if loaded is not None else MISSING
    return {"not_package_file": origin} if isinstance(origin, str) else {}


# --- a folder of the repository that is not on sys.path -----------------------------------------

def _local_copy(records: list[FrameRecord], top: str) -> dict[str, Any]:
    """A package folder (or module file) named top in the script's folder or above it, or in the working
    directory, where Python does not look: the repository's own code, run from the wrong place."""
    searched = {os.path.realpath(p) for p in sys.path if isinstance(p, str) and p}
    for start in _start_folders(records):
        for folder in [start, *list(start.parents)[:PARENT_LEVELS]]:
            for root in (folder, folder / "src"):
                found = _provides(root, top)
                if found is None or os.path.realpath(root) in searched:
                    continue
                facts: dict[str, Any] = {"local_path": str(found), "local_root": str(root)}
                script = _script_below(records, root)
                if script:
                    facts["local_script"] = script
                project = _project_root(root)
                if project is not None:
                    facts["local_editable_root"] = str(project)
                return facts
    return {}


def _script_below(records: list[FrameRecord], root: Path) -> str:
    """The script (sys.argv[0], else the outermost user frame below root) as a path relative to root."""
    script = sys.argv[0] if sys.argv and isinstance(sys.argv[0], str) else ""
    files = [script, *(r.filename for r in records if r.is_user and not r.filename.startswith("<"))]
    for file in files:
        if not file:
            continue
        try:
            return Path(os.path.abspath(file)).relative_to(root).as_posix()
        except ValueError:
            continue
    return ""


def _start_folders(records: list[FrameRecord]) -> list[Path]:
    """The folders of the user's frames (innermost first), of the script, and the working directory."""
    files = [r.filename for r in reversed(records) if r.is_user and not r.filename.startswith("<")]
    script = sys.argv[0] if sys.argv and isinstance(sys.argv[0], str) else ""
    folders: list[Path] = []
    for file in [*files, script]:
        if file:
            folders.append(Path(os.path.abspath(file)).parent)
    try:
        folders.append(Path(os.getcwd()))
    except OSError:
        pass
    return list(dict.fromkeys(folders))


def _provides(folder: Path, top: str) -> Path | None:
    """folder/top (a package, or a folder of modules) or folder/top.py, where it exists."""
    package = folder / top
    try:
        if (package / "__init__.py").is_file():
            return package
        if package.is_dir() and any(e.name.endswith(".py") for e in os.scandir(package)):
            return package
        if (folder / f"{top}.py").is_file():
            return folder / f"{top}.py"
    except OSError:
        return None
    return None


def _project_root(root: Path) -> Path | None:
    """The folder with the project's pyproject.toml / setup.py: root, or its parent for a `src/` layout."""
    for candidate in (root, root.parent) if root.name == "src" else (root,):
        if any((candidate / name).is_file() for name in PROJECT_FILES):
            return candidate
    return None

