"""Patterns built at a crash without importing regex's parser.

`import regex` costs a crash about 8 ms, nearly all of it the pattern parser (regex._regex_core, a large module);
matching needs only the engine, the C extension regex._regex. When a folder index is built, the code regex's parser
makes for each pattern (the arguments regex gives its engine's `compile`) is kept with the rule; at a crash a pattern
with its code is built by the engine alone, any other by `regex.compile`. Either way it is the same kind of pattern
object, matched by the same engine with the same timeout. The code is only valid for the engine build that made it,
so the folder index's name carries that build's stamp (`engine_stamp`)."""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import threading
from typing import Any

from explainer._lazyre import engine_calls

ENGINE_NAME = "regex._regex"
_engine: Any = None  # the engine module; False once it could not be loaded on its own
_built: dict[str, Any] = {}  # source -> compiled pattern, for this process


def compile_pattern(source: str, code: tuple | None = None) -> Any:
    """source compiled: by the engine from code (see codes_of) where given, else by regex.compile (which raises
    regex.error for a pattern that does not compile)."""
    found = _built.get(source)
    if found is None:
        found = _from_code(code) if code is not None else None
        if found is None:
            import regex

            found = regex.compile(source)
        _built[source] = found
    return found


def codes_of(sources: list[str]) -> dict[str, tuple]:
    """Each source's code as regex's parser makes it (plain data for marshal), where it compiles."""
    import regex
    from regex import _main

    with engine_calls(_main, "_regex") as calls:
        for source in sources:
            try:
                regex.compile(source, cache_pattern=False)
            except (regex.error, RecursionError, ValueError):
                continue
    return codes_from_calls(calls, sources)


def codes_from_calls(calls: list[tuple], sources) -> dict[str, tuple]:
    """The codes of sources among the engine calls engine_calls recorded (regex's parser gave them)."""
    seen = {args[0]: args for args in calls if args}
    codes = {}
    for source in sources:
        args = seen.get(source)
        if args is None or len(args) != 11:
            continue  # not the layout this module knows: such a pattern goes through regex.compile
        code = (args[0], int(args[1]), *args[2:9], int(args[9]), args[10])  # its flags are IntFlags
        try:
            marshal.dumps(code)
        except ValueError:
            continue
        codes[source] = code
    return codes


_recording = threading.local()  # the engine calls an index build keeps, per thread (see parsed_codes)


@contextlib.contextmanager
def parsed_codes(active: bool = True):
    """The engine calls of the patterns compile_recorded compiles inside the block: an index build keeps the codes of
    the patterns it compiled to validate them, instead of parsing each again (see known_codes). Not active: a load
    that writes no index records nothing."""
    calls: list[tuple] = []
    if not active:
        yield calls
        return
    _recording.calls = calls
    try:
        yield calls
    finally:
        _recording.calls = None


def compile_recorded(source: str) -> Any:
    """regex.compile(source), its engine call kept where parsed_codes is recording (one short swap per pattern: no
    lock is held while anything else runs)."""
    import regex

    calls = getattr(_recording, "calls", None)
    if calls is None:
        return regex.compile(source)
    from regex import _main

    with engine_calls(_main, "_regex") as made:
        found = regex.compile(source)
    calls.extend(made)
    return found


def known_codes(folder, sources: list[str], recorded: list[tuple] = ()) -> dict[str, tuple]:
    """codes_of(sources), parsing only the sources neither an earlier index build of folder (with this engine) nor
    this one (recorded: see parsed_codes) did: after an edit of one rule, its patterns alone."""
    from explainer._cache import cache_file, load_marshal, save_marshal

    path = cache_file("codes", f"{engine_stamp()}|{os.path.abspath(folder)}")
    kept = load_marshal(path)
    kept = kept if isinstance(kept, dict) else {}
    wanted = set(sources)
    codes = {source: code for source, code in kept.items() if source in wanted}
    codes.update(codes_from_calls(recorded, [source for source in wanted if source not in codes]))
    codes.update(codes_of([source for source in wanted if source not in codes]))
    if codes != kept:
        save_marshal(path, codes)  # the folder's patterns as they are now: none it dropped is kept
    return codes


def engine_stamp() -> str:
    """Which build of regex's engine is installed (its file, size and time), without importing it."""
    path = _engine_path()
    if path is None:
        return "none"
    try:
        stat = os.stat(path)
    except OSError:
        return "none"
    return f"{os.path.basename(path)}|{stat.st_size}|{stat.st_mtime_ns}"


def _from_code(code: tuple) -> Any:
    engine = _load_engine()
    if engine is None:
        return None
    try:
        return engine.compile(*code)
    except Exception:  # code another build made: regex.compile does it
        return None


def _load_engine() -> Any:
    global _engine
    if _engine is None:
        _engine = sys.modules.get(ENGINE_NAME) or _load_standalone() or False
    return _engine or None


@functools.cache  # read by every crash's index lookup (engine_stamp): found once per process
def _engine_path() -> str | None:
    try:
        spec = importlib.util.find_spec("regex")  # a top-level package: found, not imported
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    # the user's folders (the current one, the script's) hold no library of ours: never load a binary from them
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else os.curdir
    user = {os.path.abspath(os.curdir), os.path.dirname(os.path.abspath(script))}
    for folder in spec.submodule_search_locations:
        if os.path.dirname(os.path.abspath(folder)) in user:
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_regex" + suffix)
            if os.path.isfile(path):
                return path
    return None


def _load_standalone() -> Any:
    """The engine loaded without its package (whose __init__ imports the parser), registered under its own name so
    that a later `import regex` uses this same module."""
    path = _engine_path()
    if path is None:
        return None
    try:
        loader = importlib.machinery.ExtensionFileLoader(ENGINE_NAME, path)
        spec = importlib.util.spec_from_file_location(ENGINE_NAME, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except Exception:
        return None
    sys.modules.setdefault(ENGINE_NAME, module)
    return sys.modules[ENGINE_NAME]
