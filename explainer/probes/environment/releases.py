"""Probes for a name that the imported release of a library lacks (`cannot import name 'X' from 'Y'`, `module 'Y' has
no attribute 'X'`): which file `Y` really is (an installed release, or a file of the user's that hides it), the
distribution and release installed, the names `Y` does have that are close to `X`, the release the repository's
requirements ask for, and the files of a circular import.

Nothing of the user's runs: modules are read from `sys.modules` and their own `__dict__` (keys, and `__file__` /
`__path__`), releases from `importlib.metadata`, requirements by reading text files. No module is imported.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import types
from typing import Any

from explainer._inspect import MISSING, FrameRecord, instance_dict, is_user_file, safe_getattr, user_frames
from explainer.probes import Evidence, ProbeContext, probe, shown_file
from explainer.probes.readers.installed import INSTALLED_DIRS, distributions_providing, installed_package

MAX_NAMES = 5_000  # a module's __dict__ keys read for close matches
MAX_CLOSE = 4
REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt", "requirements/base.txt", "environment.yml",
                     "environment.yaml", "setup.py", "setup.cfg", "pyproject.toml")
MAX_REQUIREMENT_BYTES = 200_000
MAX_PARENTS = 3  # folders above the user's script searched for requirement files
# an egg or wheel folder in a path names its release: site-packages/pydantic-2.0b2-py3.10.egg/pydantic/typing.py
EGG_RE = r"[/\\](?P<dist>[A-Za-z][\w.]*?)-(?P<version>\d[\w.+!]*)-py\d[\w.-]*?\.egg[/\\]"


def _module_dict(module: Any) -> dict[str, Any] | None:
    return instance_dict(module)


def _installed_path(path: str) -> bool:
    parts = re.split(r"[/\\]", path)
    return any(part in INSTALLED_DIRS or part.endswith(".egg") for part in parts)


def _editable(dist_name: str) -> bool:
    from importlib import metadata

    try:
        direct = metadata.distribution(dist_name).read_text("direct_url.json") or ""
    except metadata.PackageNotFoundError:
        return False
    return '"editable": true' in direct.replace("'", '"')


def close_names(wanted: str, names: list, *, cutoff: float = 0.6, limit: int | None = None) -> list[str]:
    """The names close to wanted (difflib's ratio at least cutoff, at most MAX_CLOSE of them), those that differ from
    it only in case first; dunder names left out."""
    public = [n for n in names if isinstance(n, str) and not n.startswith("__")]
    close = difflib.get_close_matches(wanted, public, n=MAX_CLOSE, cutoff=cutoff)
    found = [n for n in public if n.lower() == wanted.lower() and n not in close] + close
    return found if limit is None else found[:limit]


def _module_file(module: Any, table: dict[str, Any] | None) -> tuple[str | None, list[str]]:
    """The module's file, or the folders of a namespace package (a folder without __init__.py)."""
    file = table.get("__file__") if table is not None else None
    if isinstance(file, str):
        return file, []
    path = table.get("__path__") if table is not None else None
    # a namespace package's __path__ is importlib's _NamespacePath, whose folders are its own list (iterating it
    # would search sys.path again)
    if path is not None and type(path).__module__ in ("importlib._bootstrap_external", "_frozen_importlib_external"):
        path = safe_getattr(path, "_path")
    if isinstance(path, list):
        return None, [p for p in path[:4] if isinstance(p, str)]
    return None, []


def _exception_path(exc: BaseException | None) -> str | None:
    """The file of the module the name was looked up in, from the exception's own slots: ImportError's `path`, or
    the `__file__` of AttributeError's `obj` (Python 3.10+; a module still initialising is gone from sys.modules by
    then). Read through the base class's descriptors: a subclass cannot turn them into properties."""
    if isinstance(exc, ImportError):
        path = ImportError.__dict__["path"].__get__(exc, ImportError)
        return path if isinstance(path, str) else None
    if isinstance(exc, AttributeError) and "obj" in AttributeError.__dict__:
        obj = AttributeError.__dict__["obj"].__get__(exc, AttributeError)
        table = _module_dict(obj) if issubclass(type(obj), types.ModuleType) else None
        file = table.get("__file__") if table is not None else None
        return file if isinstance(file, str) else None
    return None


def _script_dirs(records: list[FrameRecord]) -> list[str]:
    """The folders of the user's failing code and script, and the current folder, each with its parents."""
    dirs: list[str] = []
    users = [r for r in user_frames(records) if not r.filename.startswith("<")]
    # the code that failed first (its repository), then the script that ran it, then the current folder
    starts = [os.path.dirname(os.path.abspath(r.filename)) for r in (users[-1:] + users[:1])]
    starts.append(os.getcwd())
    for start in starts:
        folder = start
        for _ in range(MAX_PARENTS + 1):
            if folder not in dirs:
                dirs.append(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return dirs


def _requirement(records: list[FrameRecord], dist_names: list[str]) -> tuple[str, str] | None:
    """(the requirement line naming one of dist_names, its file) in the requirement files near the user's code."""
    wanted = {re.sub(r"[-_.]+", "-", n).lower() for n in dist_names}
    spec_re = re.compile(r"^\s*[\"']?(?P<name>[A-Za-z0-9][\w.-]*)\s*(?P<spec>(?:\[[^\]]*\])?\s*[=<>!~]=?\s*[\w.*+!]+"
                         r"(?:\s*,\s*[=<>!~]=?\s*[\w.*+!]+)*)")
    for folder in _script_dirs(records):
        for name in REQUIREMENT_FILES:
            path = os.path.join(folder, name)
            if not os.path.isfile(path) or os.path.getsize(path) > MAX_REQUIREMENT_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    text = line.strip().lstrip("-").strip()
                    found = spec_re.match(text)
                    if found and re.sub(r"[-_.]+", "-", found["name"]).lower() in wanted:
                        return f"{found['name']}{found['spec'].replace(' ', '')}", path
    return None


def _importer(records: list[FrameRecord], top: str) -> dict[str, Any]:
    """The installed library (another than top's) whose frame imports or uses the name, with its release: the
    innermost frame outside top's own package (numpy's module __getattr__ raises for the caller)."""
    outside = [r for r in records if top not in re.split(r"[/\\]", r.filename)]
    if not outside or outside[-1].is_user or outside[-1].filename.startswith("<"):
        return {}
    file = outside[-1].filename
    package = installed_package(file)
    if package is None:
        return {}
    facts: dict[str, Any] = {"importer_file": file, "importer_line": outside[-1].lineno}
    found = distributions_providing(package)
    if found:
        facts["importer_release"] = f"{found[0][0]} {found[0][1]}"
    return facts


@probe("release_path", provides=("path_installed", "path_local", "egg_release"), live=False)
def release_path(ctx: ProbeContext) -> Evidence | None:
    """What the path the message prints for the module says: an installed package (site-packages, an egg, whose
    folder names the release) or a file of a folder of the user's."""
    path = ctx.facts.get("path")
    if not isinstance(path, str) or not path.strip():
        return None
    facts: dict[str, Any] = {}
    if _installed_path(path):
        facts["path_installed"] = True
        egg = re.search(EGG_RE, path)
        if egg:
            facts["egg_release"] = f"{egg['dist']} {egg['version']}"
    else:
        facts["path_local"] = True
    return Evidence(facts)


def _local_module(file: str | None, namespace: list[str], dists: list[tuple[str, str]]) -> dict[str, Any]:
    """A user's file or folder that Python imports under the name: hiding the installed package of that name
    (shadow_file, shadowed_release), or, where none is installed, a module of the user's own (local_file)."""
    local = file if file and is_user_file(file) and not _installed_path(file) else None
    if local is None and namespace and not any(_installed_path(p) for p in namespace):
        local = namespace[0]
    if local is None:
        return {}
    if not dists:
        return {"local_file": local}
    if _editable(dists[0][0]):
        return {}  # `pip install -e`: the source folder is the installed package
    return {"shadow_file": local, "shadowed_release": f"{dists[0][0]} {dists[0][1]}"}


@probe("release_module", provides=("module_file", "namespace_dirs", "installed_dist", "installed_version",
                                   "other_dists", "shadow_file", "shadowed_release", "local_file", "close_names", "lazy_module",
                                   "required_spec", "requirements_file", "importer_file", "importer_line",
                                   "importer_release"))
def release_module(ctx: ProbeContext) -> Evidence | None:
    """The module the name was looked up in, as this process has it: its file (or a user's file that hides the
    package), the installed distribution and release, and the names it has that are close to the missing one."""
    # NumPy 2's "`np.NaN` was removed" names the module by its usual alias only
    module_name = ctx.facts.get("module") or ctx.facts.get("ext_module") or ("numpy" if "numpy_advice" in ctx.facts else None)
    wanted = ctx.facts.get("name") or ctx.facts.get("attribute")
    if not isinstance(module_name, str) or not module_name:
        return None
    facts: dict[str, Any] = {}
    module = sys.modules.get(module_name, MISSING)
    table = _module_dict(module) if module is not MISSING else None
    file, namespace = _module_file(module, table) if table is not None else (None, [])
    file = file or _exception_path(ctx.exception)
    if file:
        facts["module_file"] = file
    if namespace:
        facts["namespace_dirs"] = ", ".join(namespace)
    top = module_name.split(".")[0]
    dists = distributions_providing(top)
    if dists:
        facts["installed_dist"], facts["installed_version"] = dists[0]
        if len(dists) > 1:
            facts["other_dists"] = ", ".join(f"{n} {v}" for n, v in dists[1:])
    if "partial" not in ctx.facts:  # a module still initialising is no sign of shadowing
        facts.update(_local_module(file, namespace, dists))
    if table is not None and isinstance(wanted, str):
        close = close_names(wanted, list(table)[:MAX_NAMES])
        if close:
            facts["close_names"] = ", ".join(f"`{n}`" for n in close)
        if callable(table.get("__getattr__")):
            facts["lazy_module"] = True
    if dists and "shadow_file" not in facts:
        found = _requirement(ctx.records, [n for n, _ in dists])
        if found:
            facts["required_spec"], facts["requirements_file"] = found
    facts.update(_importer(ctx.records, top))
    return Evidence(facts) if facts else None


@probe("release_circular", provides=("circular_files",))
def release_circular(ctx: ProbeContext) -> Evidence | None:
    """The user's module files of the import chain that ran into a module still initialising, outermost first."""
    if "partial" not in ctx.facts:
        return None
    chain = [f"{shown_file(r.filename)}:{r.lineno}" for r in ctx.records if r.name == "<module>" and is_user_file(r.filename)]
    if len(chain) < 2:
        return None
    return Evidence({"circular_files": " -> ".join(dict.fromkeys(chain))})
