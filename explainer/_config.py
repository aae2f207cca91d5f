"""Settings from the environment and the nearest pyproject.toml's [tool.explainer] table."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

# A source checkout's root: runbooks/, site/ and fixtures/ sit next to the package there.
SOURCE_ROOT = Path(__file__).resolve().parent.parent

# What `explainer site serve` serves: the site_url of a site built into site/build/ without a configured URL.
SERVE_URL = "http://127.0.0.1:8000/"


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
            raw = handle.read()
            stat = os.fstat(handle.fileno())
    except OSError:
        return {}
    if b"explainer" not in raw:  # no [tool.explainer] table
        return {}
    # What was read from this very file before: no TOML parser to import at the crash.
    from ._cache import cache_file, load_marshal, save_marshal

    kept = cache_file("settings", f"{os.path.abspath(path)}|{stat.st_size}|{stat.st_mtime_ns}")
    table = load_marshal(kept)
    if not isinstance(table, dict):
        table = _parse_table(raw)
        save_marshal(kept, table)  # not kept when marshal cannot write a value (a TOML date)
    return table


def _parse_table(raw: bytes) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("tool", {}).get("explainer", {})
    return table if isinstance(table, dict) else {}


def project_settings(start: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """The [tool.explainer] table of the nearest pyproject.toml above start (default: the working directory)."""
    path = find_pyproject(start)
    return _table(path), path


# The folder of the script `python -m explainer SCRIPT` runs: its project's team packs are found from there too.
_script_folder: Path | None = None


def set_script_folder(folder: str | Path | None) -> None:
    global _script_folder
    _script_folder = Path(folder) if folder else None


def set_main_script_folder() -> None:
    """For explainer.install(): the folder of the script running as __main__ (its __file__ read from the module's
    namespace, so no attribute hook runs), as `python -m explainer SCRIPT` sets it, unless a folder is set already;
    nothing for a session with no script file (python -c, a REPL, a notebook)."""
    if _script_folder is not None:
        return
    main = sys.modules.get("__main__")
    file = getattr(main, "__dict__", {}).get("__file__") if main is not None else None
    if isinstance(file, str) and file.endswith(".py"):
        set_script_folder(os.path.dirname(os.path.abspath(file)))


def rule_projects() -> list[tuple[dict[str, Any], Path]]:
    """The [tool.explainer] tables (team packs, runbook_url) with their pyproject.toml: the nearest above the
    script `python -m explainer` runs first, then the nearest above the working directory."""
    found: dict[Path, dict[str, Any]] = {}
    for start in ((_script_folder,) if _script_folder is not None else ()) + (None,):
        settings, path = project_settings(start)
        if path is not None:
            found.setdefault(path, settings)
    return [(settings, path) for path, settings in found.items()]


def open_command(rule_id: str) -> str:
    """The `explainer open` command for a rule's page; for a team rule found from the script's project (not the
    working directory's), with that folder, so that the command finds the rule wherever it is run."""
    from explainer._diagnosis import CATEGORIES

    command = f"explainer open {rule_id}"
    if (_script_folder is not None and rule_id.split(".")[0] not in CATEGORIES
            and find_pyproject(_script_folder) != find_pyproject()):
        import shlex

        command += f" --project {shlex.quote(str(_script_folder))}"
    return command


def configured_runbook_base() -> str | None:
    """A team's hosted copy of the site: $EXPLAINER_RUNBOOK_URL, else runbook_url in [tool.explainer] of the
    script's project (`python -m explainer SCRIPT`), then of the working directory's."""
    base = os.environ.get("EXPLAINER_RUNBOOK_URL") or next(
        (settings["runbook_url"] for settings, _ in rule_projects() if settings.get("runbook_url")), None)
    return str(base).rstrip("/") + "/" if base else None


def local_site_dir() -> Path:
    """Where the HTML site is built for this machine: the user cache folder (XDG_CACHE_HOME; where it cannot be
    written, the private folder the rule cache falls back to), one per explainer version, so an upgrade builds
    the pages of its own rules."""
    from ._cache import nominal_cache_root, user_cache_root
    from ._version import __version__

    return Path(user_cache_root() or nominal_cache_root()).resolve() / f"site-{__version__}" / "html"


def runbook_base() -> str:
    """The configured hosted site, else the local site's file:// URL (no server needed)."""
    return configured_runbook_base() or local_site_dir().as_uri() + "/"


def local_page(path: str) -> str:
    """A page of the local site: built without directory URLs, so every link opens from the file system."""
    return path.rstrip("/") + ".html"


def _page_url(path: str) -> str:
    hosted = configured_runbook_base()
    return hosted + path if hosted else local_site_dir().as_uri() + "/" + local_page(path)


def runbook_path(rule_id: str) -> str:
    """A rule's page inside the built site."""
    return f"rules/{rule_id}/"


def runbook_url(rule_id: str) -> str:
    return _page_url(runbook_path(rule_id))


def guide_path(slug: str) -> str:
    """A method page (runbooks/guides/<slug>.md) inside the built site."""
    return f"guide/{slug}/"


def guide_url(slug: str) -> str:
    return _page_url(guide_path(slug))


def local_file(url: str) -> Path | None:
    """The file a runbook URL of the local site names, or None for any other URL."""
    base = local_site_dir().as_uri() + "/"
    if not url.startswith(base):
        return None
    from urllib.parse import unquote

    return local_site_dir().joinpath(*unquote(url[len(base):]).split("/"))


# --- the local site: built once, in the background, the first time a diagnosis links to it ---

def local_site_state(url: str) -> str | None:
    """None when url is not the local site's or its page is there; else "stale" (built before the rule
    existed), "building" (a build holds the lock), "failed" (the last build left its log) or "missing"."""
    page = local_file(url)
    if page is None or page.is_file():
        return None
    html = local_site_dir()
    if (html / "index.html").is_file():
        return "stale"
    if _build_running(html.parent):
        return "building"
    log = html.parent / "build.log"
    return "failed" if log.is_file() and log.stat().st_size and not log.read_text(errors="replace").startswith(
        "built") else "missing"


def local_build_blocker() -> str | None:
    """Why the local site cannot be built from this install, or None."""
    import importlib.util

    from ._cache import nominal_cache_root, user_cache_root

    if user_cache_root() is None:
        return (f"no folder to build it in: neither {nominal_cache_root()} nor the temporary folder can be written, "
                "so each crash also reads every rule file again")
    if not (SOURCE_ROOT / "site" / "mkdocs.yml").is_file():
        return "the site sources are in a source checkout, not in this install"
    missing = [name for name in ("mkdocs", "material", "matplotlib") if importlib.util.find_spec(name) is None]
    return f"{', '.join(missing)} missing: pip install 'torch-explainer[site]'" if missing else None


def unbuildable_note(rule_id: str) -> str | None:
    """Why the local site cannot be built from this install and where the rule's page is instead, or None."""
    blocker = local_build_blocker()
    if blocker is None:
        return None
    return (f"the local runbook site cannot be built here ({blocker}); `explainer rules show {rule_id}` prints the "
            "page in the terminal")


def _build_running(folder: Path) -> bool:
    lock = folder / "build.lock"
    if not lock.is_file():
        return False
    try:
        import fcntl
    except ImportError:
        return False
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def start_local_build() -> bool:
    """Start building the local site in a detached process (never waited for); False when it cannot start.
    EXPLAINER_BUILD_SITE=0 turns this off."""
    if os.environ.get("EXPLAINER_BUILD_SITE", "1") == "0":
        return False
    import subprocess
    import sys

    folder = local_site_dir().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "build.log", "w") as log:
            # the build finds the team packs the crash did: from the script's folder too
            script = [str(_script_folder)] if _script_folder is not None else []
            subprocess.Popen([sys.executable, "-m", "explainer.site.build", *script], stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    except OSError:
        return False
    return True
