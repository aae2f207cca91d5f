"""Team rule packs: folders of rule files with a pack.yaml, found in three places.

In the order they are tried: folders named in $EXPLAINER_RULES (os.pathsep-separated), the `rules`
list of [tool.explainer] in the nearest pyproject.toml (relative to that file; under `python -m explainer
SCRIPT`, the nearest above the script first, then the nearest above the working directory), and installed
packages exposing an `explainer.rules` entry point. A pack declares the id prefix its rules use.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from explainer._diagnosis import CATEGORIES
from explainer._errors import RuleError
from explainer._lazyre import lazy_compile

from .rule import parse_yaml_with_lines

PACK_FILE = "pack.yaml"
ENV_VAR = "EXPLAINER_RULES"
ENTRY_POINT_GROUP = "explainer.rules"
PREFIX_RE = lazy_compile(r"^[a-z][a-z0-9_]*$")
PACK_FIELDS = {"prefix", "name", "probes"}
# Built-in rule ids are 'category.name', so every category is a built-in prefix.
RESERVED_PREFIXES = frozenset(CATEGORIES) | {"builtin", "explainer", "torch"}


@dataclass(eq=False)
class Pack:
    """A team's rule folder, with the prefix its rule ids take and how it was found."""

    prefix: str
    name: str
    folder: Path
    origin: str  # how it was found: "$EXPLAINER_RULES", "path/pyproject.toml", "entry point acme (acme-rules 1.0)"
    probes: Path | None = None

    @property
    def pack_file(self) -> Path:
        return self.folder / PACK_FILE


def display_path(path: Path) -> str:
    """path relative to the working directory when it is below it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def pack_folders(environ: dict[str, str] | None = None) -> tuple[list[tuple[Path, str]], list[RuleError]]:
    """Every (folder, origin) named by the three sources, in order, without repeats."""
    environ = os.environ if environ is None else environ
    found: list[tuple[Path, str]] = []
    problems: list[RuleError] = []
    for entry in environ.get(ENV_VAR, "").split(os.pathsep):
        if entry.strip():
            found.append((Path(entry.strip()).expanduser(), f"${ENV_VAR}"))

    from explainer._config import rule_projects

    for settings, pyproject in rule_projects():
        listed = settings.get("rules", [])
        if isinstance(listed, str):
            listed = [listed]
        if not listed:
            continue
        shown = display_path(pyproject)
        if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
            problems.append(RuleError(shown, "[tool.explainer] rules must be a list of folders",
                                      hint='rules = ["ci/rules"], relative to this pyproject.toml'))
        else:
            found.extend((pyproject.parent / p, shown) for p in listed)

    found.extend(_entry_point_folders(problems))
    unique, seen = [], set()
    for folder, origin in found:
        key = folder.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((folder, origin))
    return unique, problems


def _entry_point_folders(problems: list[RuleError]) -> list[tuple[Path, str]]:
    found = []
    for name, value, label in sorted(installed_entry_points(), key=lambda entry: entry[0]):
        origin = f"entry point {name}" + (f" ({label})" if label else "")
        try:
            folder = folder_of(load_entry_point(value))
        except Exception as exc:  # an installed package's bug must not stop the others
            problems.append(RuleError(origin, f"cannot load {value}: {type(exc).__name__}: {exc}"))
            continue
        if folder is None:
            problems.append(RuleError(origin, f"{value} gives no folder",
                                      hint="point the entry point at the pack's package, or at a path or a "
                                           "function returning one"))
            continue
        found.append((folder, origin))
    return found


def installed_entry_points() -> list[tuple[str, str, str]]:
    """(name, value, "distribution version") of every installed `explainer.rules` entry point.

    importlib.metadata reads every installed distribution's metadata, which costs about 10 ms at
    each crash; what it found is kept in the cache for this sys.path, and used while no entry with
    distributions in it has changed (installing or removing one changes its folder's modification
    time) and the entry-point files it was read from are unchanged.
    """
    from explainer._cache import cache_file, load_marshal, save_marshal

    path = cache_file("entry-points", "\n".join(sys.path))
    cached = load_marshal(path)
    if _still_valid(cached):
        return [tuple(entry) for entry in cached[0]]
    from importlib.metadata import entry_points

    folders = [(entry, _stamp(entry), _holds_distributions(entry)) for entry in sys.path]
    entries, sources = [], []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(entry, "dist", None)
        entries.append((entry.name, entry.value, f"{dist.name} {dist.version}" if dist is not None else ""))
        folder = getattr(dist, "_path", None)  # a PathDistribution's metadata folder
        if not isinstance(folder, (str, os.PathLike)):
            return entries  # not a file we can watch: not cached
        source = os.path.join(folder, "entry_points.txt")
        sources.append((source, _stamp(source)))
    save_marshal(path, (entries, sources, folders))
    return entries


def _still_valid(cached: Any) -> bool:
    if not (isinstance(cached, tuple) and len(cached) == 3):
        return False
    _, sources, folders = cached
    return (all(_stamp(source) == stamp for source, stamp in sources)
            and all(_stamp(entry) == stamp or not held and not _holds_distributions(entry)
                    for entry, stamp, held in folders))


def _stamp(path: str) -> tuple[int, int]:
    """Modification time and size: a file rewritten within the file system's clock tick changes size."""
    try:
        stat = os.stat(path or ".")
    except OSError:
        return (-1, -1)
    return (stat.st_mtime_ns, stat.st_size)


def _holds_distributions(entry: str) -> bool:
    """Whether a sys.path entry can hold installed distributions' metadata (a zip file may)."""
    try:
        with os.scandir(entry or ".") as names:
            return any(name.name.endswith((".dist-info", ".egg-info")) for name in names)
    except NotADirectoryError:
        return True
    except OSError:
        return False


ENTRY_POINT = r"(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+)\s*)?(?:\[.*\]\s*)?$"


def load_entry_point(value: str) -> Any:
    """What an entry point's value names ("module" or "module:attr.attr"), as EntryPoint.load does."""
    found = re.match(ENTRY_POINT, value)
    if found is None:
        raise ValueError(f"not an entry point reference: {value!r}")
    target = importlib.import_module(found.group("module"))
    for attr in (found.group("attr") or "").split("."):
        if attr:
            target = getattr(target, attr)
    return target


def folder_of(target: Any) -> Path | None:
    """The pack folder an entry point gives: a path, a function returning one, or a module (its folder)."""
    if callable(target) and not isinstance(target, type):
        target = target()
    if isinstance(target, (str, os.PathLike)):
        return Path(target)
    file = getattr(target, "__file__", None)
    return Path(file).parent if isinstance(file, str) else None


def read_pack(folder: Path, origin: str) -> Pack:
    """Read and validate folder/pack.yaml; raises RuleError naming the file and line."""
    path = folder / PACK_FILE
    shown = display_path(path)
    if not folder.is_dir():
        raise RuleError(display_path(folder), f"rule pack folder does not exist (named by {origin})")
    if not path.is_file():
        raise RuleError(shown, f"a rule pack needs a {PACK_FILE} (named by {origin})",
                        hint="write 'prefix: yourteam': the prefix every rule id of the pack starts with")
    try:
        data, field_lines = _pack_file_data(path)
    except Exception as exc:
        if not isinstance(exc, (OSError, UnicodeDecodeError)) and not _is_yaml_error(exc):
            raise
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(shown, f"cannot read the pack file: {getattr(exc, 'problem', None) or exc}",
                        line=mark.line + 1 if mark else None) from None
    data = {} if data is None else data
    lines = {k: v + 1 for k, v in field_lines.items() if "." not in k and "[" not in k}
    if not isinstance(data, dict):
        raise RuleError(shown, "the pack file must be a mapping: prefix, name, probes", line=1)
    unknown = sorted(set(data) - PACK_FIELDS)
    if unknown:
        raise RuleError(shown, f"unknown field {unknown[0]!r}", line=lines.get(unknown[0]),
                        hint=f"known fields: {', '.join(sorted(PACK_FIELDS))}")
    prefix = data.get("prefix")
    if not isinstance(prefix, str) or not PREFIX_RE.match(prefix):
        raise RuleError(shown, f"missing or invalid prefix {prefix!r}", line=lines.get("prefix", 1),
                        hint="one lower-case word such as 'acme'; every rule id then starts with 'acme.'")
    if prefix in RESERVED_PREFIXES:
        raise RuleError(shown, f"prefix {prefix!r} is reserved for the built-in rules", line=lines["prefix"],
                        hint="use your team's or company's name")
    name = data.get("name", prefix)
    if not isinstance(name, str):
        raise RuleError(shown, "name must be a string", line=lines.get("name"))
    probes = data.get("probes")
    if probes is not None:
        if not isinstance(probes, str) or not (folder / probes).is_file():
            raise RuleError(shown, f"probes file {probes!r} not found in {display_path(folder)}",
                            line=lines.get("probes"), hint="a Python file of the pack, e.g. 'probes: probes.py'")
        probes = folder / probes
    return Pack(prefix=prefix, name=name, folder=folder, origin=origin, probes=probes)


def _pack_file_data(path: Path) -> tuple[Any, dict[str, int]]:
    """pack.yaml's data and the line of each field. What was read from this very file before (same size
    and modification time) is reused from the cache: PyYAML costs about 15 ms to import at a crash."""
    from explainer._cache import cache_file, load_marshal, save_marshal

    stat = path.stat()
    kept = cache_file("pack", f"{os.path.abspath(path)}|{stat.st_size}|{stat.st_mtime_ns}")
    found = load_marshal(kept)
    if isinstance(found, tuple) and len(found) == 2 and isinstance(found[1], dict):
        return found
    parsed = parse_yaml_with_lines(path.read_text(encoding="utf-8"))
    save_marshal(kept, parsed)  # not kept when marshal cannot write a value (a YAML date)
    return parsed


def _is_yaml_error(error: Exception) -> bool:
    import yaml  # only here, where the file was parsed

    return isinstance(error, yaml.YAMLError)


def discover_packs(extra: list[tuple[Path, str]] | None = None, environ: dict[str, str] | None = None,
                   before_probes: Callable[[], Any] | None = None,
                   fallback: list[tuple[Path, str]] | None = None) -> tuple[list[Pack], list[RuleError]]:
    """Every discovered pack (extra folders first), read and validated, with their probes imported
    (before_probes is called once before the first pack's probes are); then the fallback folders (the
    repository site's example pack), each left out, without a problem, where it is discovered already or a
    discovered pack has its prefix.

    Two packs claiming one prefix is an error naming both pack files; the second is skipped.
    """
    folders, problems = pack_folders(environ)
    if extra:
        wanted = {f.resolve() for f, _ in extra}
        folders = list(extra) + [(f, o) for f, o in folders if f.resolve() not in wanted]
    discovered = {f.resolve() for f, _ in folders}
    optional = [(f, o) for f, o in fallback or [] if f.resolve() not in discovered]
    packs: list[Pack] = []
    by_prefix: dict[str, Pack] = {}
    for index, (folder, origin) in enumerate(folders + optional):
        try:
            pack = read_pack(folder, origin)
        except RuleError as exc:
            problems.append(exc)
            continue
        if pack.prefix in by_prefix and index >= len(folders):
            continue  # a fallback whose prefix a discovered pack took: that pack is the one in force
        if pack.prefix in by_prefix:
            first = by_prefix[pack.prefix]
            problems.append(RuleError(
                display_path(pack.pack_file),
                f"prefix {pack.prefix!r} is already claimed by {display_path(first.pack_file)} (named by "
                f"{first.origin}): this pack in {display_path(folder)} (named by {origin}) is skipped",
                hint="each pack needs its own prefix: rename one, or stop naming one of the two folders"))
            continue
        if pack.probes is not None:
            if before_probes is not None:
                before_probes()
                before_probes = None
            try:
                import_probes(pack.probes)
            except Exception as exc:  # a team's probe module must not stop the explainer
                problems.append(RuleError(display_path(pack.probes),
                                          f"cannot import the pack's probes: {type(exc).__name__}: {exc}"))
        by_prefix[pack.prefix] = pack
        packs.append(pack)
    return packs, problems


def import_probes(path: Path) -> None:
    """Import a pack's probe file once per process; its @probe decorators register the probes."""
    resolved = path.resolve()
    # An installed pack's package may already have imported it under its own name.
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(path.name) and Path(file).resolve() == resolved:
            return
    name = "explainer_pack_probes_" + re.sub(r"\W", "_", str(resolved))
    spec = importlib.util.spec_from_file_location(name, resolved)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def team_problems_line(problems: list[RuleError]) -> str:
    """One line for the team rules' problems: broken rule files are skipped; a pack's own problem (its prefix
    claimed already, an unreadable pack.yaml, probes that cannot be imported) is said as a pack's, not a rule's."""
    in_packs = sum(1 for p in problems if p.rule is None and not str(p.file).endswith(".md"))
    in_rules = len(problems) - in_packs
    said = [f"skipped {in_rules} broken team rule{'s' if in_rules != 1 else ''}"] if in_rules else []
    if in_packs:
        said.append(f"{in_packs} problem{'s' if in_packs != 1 else ''} with "
                    f"{'a team rule pack' if in_packs == 1 else 'team rule packs'}")
    first = problems[0]
    where = f"{first.file}:{first.line}" if first.line else first.file
    who = f" rule {first.rule}:" if first.rule else ""
    return f"torch-explainer: {' and '.join(said)} ({where}:{who} {first.message}); run 'explainer rules check'\n"
