"""`explainer rules new`: scaffold a team rule and a script that reproduces its example."""

from __future__ import annotations

import re
import re._constants as _sre
import re._parser as _sre_parser
from pathlib import Path

import regex
import yaml

from explainer._diagnosis import CATEGORIES
from explainer._errors import RuleError

from .packs import PACK_FILE, RESERVED_PREFIXES, Pack, display_path, read_pack
from .rule import ID_RE

# 'ErrorType: message': a dotted class name, capitalised or named like an exception.
TYPE_PREFIX_RE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:_*[A-Z]\w*|\w*(?:Error|Exception|Warning|Interrupt|Exit))): \S")


class ScaffoldError(Exception):
    """`rules new` cannot write the rule (bad arguments, existing files)."""


def scaffold(rule_id: str, pattern: str, *, example: str | None = None, category: str = "other",
             title: str | None = None, folder: Path | None = None, packs: list[Pack] = ()) -> list[Path]:
    """Write a rule file and a script reproducing its example into a pack; returns the files written."""
    if not ID_RE.match(rule_id):
        raise ScaffoldError(f"invalid id {rule_id!r}: lower-case words joined by dots, e.g. 'acme.loader.timeout'")
    prefix, rest = rule_id.split(".", 1)
    if prefix in RESERVED_PREFIXES:
        raise ScaffoldError(f"prefix {prefix!r} belongs to the built-in rules: use your pack's prefix")
    if category not in CATEGORIES:
        raise ScaffoldError(f"category {category!r} is not one of {', '.join(CATEGORIES)}")
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ScaffoldError(f"--match does not compile: {exc}") from None
    if example is None:
        example = derive_example(pattern)
        if example is None:
            raise ScaffoldError("cannot make up a message that --match finds as the last traceback line "
                                "('ErrorType: message'): pass --example with a message exactly as it prints")
    if compiled.search(example) is None:
        raise ScaffoldError(f"--match does not match the example {example!r}")
    if not TYPE_PREFIX_RE.match(example):
        raise ScaffoldError(f"the example must be the whole last traceback line, 'ErrorType: message', "
                            f"not {example[:80]!r}")
    folder = _target_folder(prefix, folder, packs)
    rule_path = folder.joinpath(*rest.split(".")[:-1], rest.split(".")[-1] + ".md")
    script = f"repro/{rest.replace('.', '_')}.py"
    for path in (rule_path, folder / script):
        if path.exists():
            raise ScaffoldError(f"{display_path(path)} already exists")
    title = title or rest.replace(".", " ").replace("_", " ").capitalize()
    groups = list(compiled.groupindex)
    summary = title.rstrip(".") + (" (" + ", ".join(f"{g} {{{{ {g} }}}}" for g in groups) + ")." if groups else ".")
    front = {"id": rule_id, "category": category, "title": title, "patterns": [pattern], "summary": [summary],
             "examples": [{"message": example, "source": script}], "fixture": script}
    written = []
    if not (folder / PACK_FILE).exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PACK_FILE).write_text(f"prefix: {prefix}\n", encoding="utf-8")
        written.append(folder / PACK_FILE)
    rule_path.parent.mkdir(parents=True, exist_ok=True)
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10**6) + _REQUIRES_NOTE
    rule_path.write_text(f"---\n{header}---\n{_BODY}", encoding="utf-8")
    (folder / script).parent.mkdir(parents=True, exist_ok=True)
    (folder / script).write_text(_repro_script(rule_id, example), encoding="utf-8")
    return written + [rule_path, folder / script]


def _target_folder(prefix: str, folder: Path | None, packs: list[Pack]) -> Path:
    if folder is None:
        matching = [p for p in packs if p.prefix == prefix]
        if not matching:
            raise ScaffoldError(f"no discovered pack has the prefix {prefix!r}: pass --dir with its folder")
        return matching[0].folder
    pack_file = folder / PACK_FILE
    if pack_file.is_file():
        try:
            declared = read_pack(folder, "--dir").prefix
        except RuleError as exc:
            raise ScaffoldError(str(exc)) from None
        if declared != prefix:
            raise ScaffoldError(f"{display_path(pack_file)} declares prefix {declared!r}, not {prefix!r}")
    return folder


def derive_example(pattern: str) -> str | None:
    """A message `pattern` finds, as the last traceback line: 'ErrorType: message', or None.

    A message without an exception type is raised as a RuntimeError, when the pattern still finds it.
    """
    try:
        text = _Shortest().walk(_sre_parser.parse(pattern))
        compiled = regex.compile(pattern)
    except (re.error, regex.error, _Unsupported, RecursionError):
        return None  # regex-only syntax (\p{..}, fuzzy matching): the user gives the example
    for candidate in (text, f"RuntimeError: {text}"):
        if TYPE_PREFIX_RE.match(candidate) and compiled.search(candidate) is not None:
            return candidate
    return None


class _Unsupported(Exception):
    pass


_CATEGORY_CHARS = {"DIGIT": "0", "NOT_DIGIT": "x", "SPACE": " ", "NOT_SPACE": "x", "WORD": "a", "NOT_WORD": " ",
                   "LINEBREAK": "\n", "NOT_LINEBREAK": "x"}
_CATEGORY_TESTS = {"DIGIT": str.isdecimal, "SPACE": str.isspace, "WORD": lambda c: c.isalnum() or c == "_",
                   "LINEBREAK": lambda c: c == "\n"}
# Tried in order for a negated class such as [^:\s].
_CANDIDATE_CHARS = "xa0 _-.:/X9Z,;#@!"


def _category(code) -> tuple[bool, str]:
    """CATEGORY_UNI_NOT_DIGIT -> (True, 'DIGIT')."""
    name = str(code).removeprefix("CATEGORY_").removeprefix("UNI_").removeprefix("LOC_")
    return name.startswith("NOT_"), name.removeprefix("NOT_")


class _Shortest:
    """A short string a parsed pattern matches: literals as they are, \\d 0, \\w a, \\s space, \\S and . x,
    a class's first member, repeats at least once, the first alternative; anchors and lookarounds add
    nothing (derive_example checks the result with the real pattern)."""

    def __init__(self) -> None:
        self.groups: dict[int, str] = {}

    def walk(self, items) -> str:
        return "".join(self.item(op, av) for op, av in items)

    def item(self, op, av) -> str:
        if op is _sre.LITERAL:
            return chr(av)
        if op is _sre.NOT_LITERAL:
            return "y" if chr(av) == "x" else "x"
        if op is _sre.ANY:
            return "x"
        if op is _sre.IN:
            return self.member(av)
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            low, high, sub = av
            return self.walk(sub) * max(low, min(1, high))
        if op is _sre.SUBPATTERN:
            group, _add_flags, _del_flags, sub = av
            text = self.walk(sub)
            if group is not None:
                self.groups[group] = text
            return text
        if op is _sre.ATOMIC_GROUP:
            return self.walk(av)
        if op is _sre.BRANCH:
            return self.walk(av[1][0])
        if op is _sre.GROUPREF:
            return self.groups.get(av, "")
        if op is _sre.GROUPREF_EXISTS:
            group, yes, no = av
            return self.walk(yes) if group in self.groups else self.walk(no or [])
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            return ""
        raise _Unsupported(str(op))

    def member(self, items) -> str:
        if items and items[0][0] is _sre.NEGATE:
            for char in _CANDIDATE_CHARS:
                if not self.contains(items[1:], char):
                    return char
            raise _Unsupported("negated class")
        op, av = items[0]
        if op is _sre.LITERAL:
            return chr(av)
        if op in (_sre.RANGE, _sre.RANGE_UNI_IGNORE):
            return chr(av[0])
        if op is _sre.CATEGORY:
            negated, name = _category(av)
            return _CATEGORY_CHARS["NOT_" + name if negated else name]
        raise _Unsupported(str(op))

    def contains(self, items, char: str) -> bool:
        for op, av in items:
            if op is _sre.LITERAL and chr(av) == char:
                return True
            if op in (_sre.RANGE, _sre.RANGE_UNI_IGNORE) and av[0] <= ord(char) <= av[1]:
                return True
            if op is _sre.CATEGORY:
                negated, name = _category(av)
                if _CATEGORY_TESTS[name](char) != negated:
                    return True
        return False


def _repro_script(rule_id: str, example: str) -> str:
    type_name, message = example.split(": ", 1)
    module, _, name = type_name.rpartition(".")
    import builtins

    if not module and _prints_verbatim(getattr(builtins, name, None), message):
        return (f"# Raises the message of {rule_id} exactly as it prints. Replace the raise with the call\n"
                f"# into your code that fails this way: `explainer rules test` runs this script and checks\n"
                f"# that the rule claims what it raises and that the example is that message, verbatim.\n"
                f"raise {name}({message!r})\n")
    # Python prints a class's module before its name, except for __main__: keep the example's spelling.
    module_line = f"    __module__ = {module!r}\n" if module else "    pass\n"
    return (f"# Raises the message of {rule_id} exactly as it prints. Replace this class and the raise with\n"
            f"# the call into your code that fails this way: `explainer rules test` runs this script and checks\n"
            f"# that the rule claims what it raises and that the example is that message, verbatim.\n"
            f"class {name}(Exception):\n{module_line}\n\nraise {name}({message!r})\n")


def _prints_verbatim(cls, message: str) -> bool:
    """Whether `raise cls(message)` prints 'Name: message' (KeyError quotes it, SyntaxError reformats it)."""
    if not (isinstance(cls, type) and issubclass(cls, Exception)) or issubclass(cls, SyntaxError):
        return False
    try:
        return str(cls(message)) == message
    except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError needs five arguments
        return False


# Said in the file, for a rule that refines a built-in answer (`rules test` reports one without it).
_REQUIRES_NOTE = ("# probes: [your_probe]   # facts your pack's probes.py reads from your live objects\n"
                  "# requires: [your_fact]  # answer only where a probe found your object (elsewhere the next rule,\n"
                  "#                        # a built-in one, answers)\n")

_BODY = """## What it means

What this error means in your system, in two or three sentences.

## Likely causes

1. The most common cause, with the value to look for.
2. The next one.

## How to confirm

The command or check that tells the causes apart.

## Fix

Before and after code for the most common cause.
"""
