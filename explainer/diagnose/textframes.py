"""Traceback frames read from text: the 'File "x.py", line N, in f' lines and the ways people paste them
(IPython and Jupyter, VS Code, cut and wrapped lines), and which frame is the user's."""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass, field

from explainer._diagnosis import Location
from explainer._lazyre import lazy_compile

# ("文件": a translated "File"; "file": lowercased; ", in" alone, File "": markdown ate "<module>", "<frozen ...>"; "1、": numbered)
FRAME_RE = lazy_compile(r'^\s*`{0,3}\s*(?:\d{1,2}、\s*)?(?:[Ff]ile |文件)["“](?P<file>[^"“”]*)["”], line (?P<line>\d+)(?:, in(?: (?P<func>.+))?)?\s*$')
# A frame line whose beginning was cut off in the paste: 'tph-yolov5/utils/loss.py", line 243, in build_targets'.
CUT_FRAME_RE = lazy_compile(r'^\s*`*(?P<file>[^"\s`]+\.py)", line (?P<line>\d+)(?:, in(?: (?P<func>.+))?)?\s*$')
# pytest's report (--tb=short, and the middle entries of its default --tb=auto): "path/to/x.py:123: in forward", then
# the code line indented by 4. (--tb=long prints the place after the entry's source instead: logscan reads that.)
PYTEST_FRAME_RE = lazy_compile(r"^(?P<file>(?:[A-Za-z]:)?[^\s:][^:]*?\.py):(?P<line>\d+): in (?P<func>[\w<>.]+)\s*$")
# Lines wrapped by the terminal or the forum at a fixed width: a line at least this long may go on below.
WRAP_WIDTH = 64
# The statement pasted alone above the error ("loss.backward()", then "RuntimeError: ..."): a call, or "x = (a * b) + c".
CALL_LINE_RE = lazy_compile(r"""^\s*(?:(?:return\s+|(?:[\w.\[\]]+\s*,\s*)*[\w.\[\]]+\s*[-+*/]?=\s*)(?:[A-Za-z_][\w.\[\]'"]*)?|"""
                            r"""[A-Za-z_][\w.\[\]'"]*)\((?!.*: ).{0,200}$""")
# A traceback cut before its last line ends at the raise statement: raise RuntimeError("text").
RAISE_RE = lazy_compile(r"""^raise\s+(?P<type>[\w.]+)\(\s*(?P<q>["'])(?P<msg>[^"']*)(?P=q)\s*\)$""")
# IPython and Jupyter: "File ~/x/linear.py:114, in Linear.forward(self, input)" (IPython 8) or
# "~/x/linear.py in forward(self, input)" (IPython 7), then numbered context lines and an arrow at the line.
IPYTHON_FRAME_RES = [
    # (Spyder's IPython console leaves out the comma: "File ~\\x\\functional.py:3127 in binary_cross_entropy")
    lazy_compile(r'^\s*File (?P<file>[^"\s\[][^,"]*?\.py):(?P<line>\d+)(?:,? in (?P<func>.+))?\s*$'),
    # JupyterLab's copy keeps the file as a markdown link: "File [~/x.py:64](http://host/lab/tree/x.py#line=63), in f" (or its brackets only)
    lazy_compile(r'^\s*File \[(?P<file>[^\]\s]+?\.py):(?P<line>\d+)\](?:\([^)\s]*\))?(?:, in (?P<func>.+))?\s*$'),
    # (a module's own frame has no arguments: "~\\.conda\\envs\\py3\\lib\\site-packages\\torch\\__init__.py in <module>"; a rooted
    # path may hold spaces; Python 2's IPython names the compiled file: "/usr/local/lib/python2.7/.../rnn.pyc in f(...)")
    lazy_compile(r'^(?P<file>(?:~|[A-Za-z]:)?[\\/][^"\n]*?\.pyc?|[^\s"]+\.pyc?) in (?P<func>[\w<>.]+)(?:\(.*|(?<=<module>)\s*)$'),
    # (a Databricks notebook's cell: "<command-1357939202606131> in <module>")
    lazy_compile(r'^(?P<file><(?:ipython-input-[\w-]+|command-\d+)>) in (?P<func><cell line: \d+>|[\w<>.]+)(?:\(.*)?$'),
    # A notebook cell: "Cell In[3], line 1" (IPython 8.4 and later, ", in f(x)" for a function defined there),
    # "Input In [99], in f(self, x)" (IPython 8.0-8.3; the line comes from the arrow).
    lazy_compile(r'^\s*(?P<file>Cell In\s*\[\d+\]), line (?P<line>\d+)(?:, in(?: (?P<func>.+))?)?\s*$'),
    lazy_compile(r'^\s*(?P<file>Input In \[\d+\]), in (?P<func>.+?)\s*$'),
    # VS Code's notebooks (2022-2023), in the editor's language: "c:\x\nb.ipynb Cell 5 in DQN.take_action(self, state)"
    lazy_compile(r'^\s*(?P<file>[^\s"][^"\n]*?\.ipynb (?:Cell|单元格|セル|셀) \d+)\x27? in (?P<func><cell line: \d+>|[\w<>.]+)(?:\(.*)?$'),
]
# (web pages turn IPython's "---->" into "—>", "→" or markdown's "---**> **_9 f(_****"; VS Code links it: "[2](...)")
ARROW_RE = lazy_compile(r"^\s*(?:[—–]?-*(?:\*\*)?>|→)\s*(?:\*\*_?)?\[?(?P<line>\d+)(?:\]\([^)\s]*\))?\s(?P<code>.*?)(?:_\*{2,})?$")
# pdb's place where the debugger stopped, "> /x/_impl/adjoint.py(31)backward()" (its "> " taken off as a quote's mark),
# then its line "-> t, flat_params, *ans = ctx.saved_tensors" (the code, read as an unindented frame's)
PDB_FRAME_RE = lazy_compile(r"^\s*(?:`{3}\s*)?(?:> ?)?(?P<file>[^\s`>()][^()]*?\.py)\((?P<line>\d+)\)(?P<func><\w+>|[A-Za-z_][\w.]*)\(\)\s*$")
PDB_CODE_MARK = "-> "
CONTEXT_LINE_RE = lazy_compile(r"^\s*\[?\d+(?:\]\([^)\s]*\))?(?:\s|$)")


@dataclass
class Frame:
    """One frame of a printed traceback, as read from the text."""

    file: str
    line: int
    func: str = ""
    code: str = ""
    ipython: bool = False  # numbered context lines follow, and an arrow marks the failing one
    code_at: int = 0  # the column the code line began at, as pasted (its annotations point at columns of it)
    values: list[tuple[str, str]] = field(default_factory=list)  # (name, value) loguru printed under the code
    pytest: bool = False  # an entry of pytest's report of a failed test (its own layout, not Python's traceback)


# loguru's and better_exceptions' annotation of a frame's code: a line per name, "└ value" under the name's
# first character, "│" under those of the names to its right
#     return self._conv_forward(input, self.weight)
#            │    │             │      └ Conv2d(12, 24, kernel_size=(3, 3), ...)
#            │    │             └ tensor([[[[ 86.,  84., ...
ANNOTATION_RE = lazy_compile(r"^(?P<lead>[ │]*)└ (?P<value>\S.*?)\s*$")
DOTTED_NAME_RE = lazy_compile(r"(?:[A-Za-z_]\w*\s*\.\s*)*[A-Za-z_]\w*$")
IDENTIFIER_RE = lazy_compile(r"[A-Za-z_]\w*")
MAX_VALUE_CHARS = 300


def annotated_name(frame: Frame | None, column: int) -> str:
    """The name an annotation at column points at in the frame's code: the dotted name ending with the identifier
    that starts there (`self._conv_forward`), or "" where the code line is not known."""
    if frame is None or not frame.code:
        return ""
    at = column - frame.code_at
    word = IDENTIFIER_RE.match(frame.code, at) if 0 <= at < len(frame.code) else None
    if word is None:
        return ""
    name = DOTTED_NAME_RE.search(frame.code[:word.end()])
    return re.sub(r"\s+", "", name.group()) if name is not None else word.group()


def printed_frames(frames: list[tuple[str, int, str]]) -> str:
    """(file, line, function) frames as Python prints them in a traceback, for rules that read them. Their code
    lines are left out: library source holds the very error strings rules look for (`raise RuntimeError(f"...")`)."""
    return "".join(f'  File "{file}", line {line}, in {function}\n' for file, line, function in frames)


def library_tail(frames: list[Frame], limit: int) -> list[Frame]:
    """The innermost frames below the user's last one (torch's and the libraries'), at most limit."""
    tail: list[Frame] = []
    for frame in reversed(frames):
        if looks_like_user_path(frame.file) or len(tail) == limit:
            break
        tail.append(frame)
    return tail[::-1]


def user_frame(frames: list[Frame]) -> Frame | None:
    """The innermost frame of the user's code a paste shows, or None (a path the paste shortened, ".../pkg/x.py",
    only where no frame has a path of the user's written out)."""
    at = _innermost(frames, (_plain_user_path, looks_like_user_path))
    return None if at is None else frames[at]


# A path shortened by the paster (".../tensorboardX/writer.py"): whose code is unknown, so a written-out user path wins.
ELIDED_PATH_RE = lazy_compile(r"^(?:\.{3}|…)[/\\]")


def _plain_user_path(path: str) -> bool:
    return looks_like_user_path(path) and ELIDED_PATH_RE.match(path) is None


def _innermost(frames: list[Frame], kinds) -> int | None:
    """The index of the innermost frame whose path is of the first kind (a test of a path) any frame's is, or None."""
    for wanted in kinds:
        for at in range(len(frames) - 1, -1, -1):
            if frames[at].file and wanted(frames[at].file):
                return at
    return None


def raising_frames(frames: list[Frame]) -> list[Frame]:
    """The frames down to the innermost one there is source for: the frames of code generated at run time under it
    (triton's "<string>" launcher, "<frozen importlib._bootstrap>"), with no line to show, are left out."""
    end = len(frames)
    while end > 1 and is_generated_file(frames[end - 1].file) and not frames[end - 1].code:
        end -= 1
    return frames[:end]


def frames_location(frames: list[Frame]) -> Location | None:
    """The innermost frame of the user's code; where the paste shows none, the innermost frame of a
    library that called into torch (the user's way in), else of the module torch.compile generated from the user's
    code."""
    at = _innermost(frames, (_plain_user_path, looks_like_user_path, looks_like_library_path, is_compiled_graph))
    if at is None:
        return None
    frame = frames[at]
    func = frame.func
    if func in INLINED_FUNCS and at and frames[at - 1].file == frame.file and frames[at - 1].func:
        func = frames[at - 1].func  # (Python 3.12 and later print the function the comprehension is in)
    return Location(frame.file, frame.line, frame.code, func)


# Before Python 3.12 a comprehension ran in a frame of its own, printed under its function's frame (PEP 709 inlined it).
INLINED_FUNCS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>"})


# torch's own frames that only pass a call on: nn.Module's __call__, decorators' wrappers, a module run as a script.
PASS_ON_FUNCS = frozenset({"_wrapped_call_impl", "_call_impl", "__call__", "wrapper", "inner", "_fn", "decorate_context",
                           "<module>"})


def package_entry(frames: list[Frame]) -> Frame | None:
    """In a traceback that shows none of the user's frames (cut from the paste): the function the caller entered
    in the package that raised, where it is not the raising frame itself. In torch, the outermost of torch's
    frames past those that only pass the call on (`load_state_dict_from_url`, when `_legacy_load` raised), where
    the paste shows torch's frames alone; in another library that raised by itself, the outermost frame of its run
    of frames down to the raise (torch_scatter's `scatter_max`, when its helper `maybe_dim_size` raised)."""
    if not frames or any(looks_like_user_path(f.file) or is_compiled_graph(f.file) for f in frames if f.file):
        return None  # (a compiled graph stands for the user's code it was compiled from)
    package = _package(frames[-1].file)
    if package in ("torch", ""):  # torch raised (or the standard library, under torch's frames)
        if any(looks_like_library_path(f.file) for f in frames if f.file):
            return None
        own = [f for f in frames if f.file and _is_torch_path(f.file.replace("\\", "/"))]
        if len(own) == 1 and own[0] is not frames[-1] and own[0].func not in PASS_ON_FUNCS:
            return own[0]  # torch's one frame over the standard library's (cpp_extension's call into subprocess)
    else:
        own = []
        for frame in reversed(frames):
            if _package(frame.file) != package:
                break
            own.insert(0, frame)
    return next((f for f in own[:-1] if f.func not in PASS_ON_FUNCS and f is not frames[-1]), None)


PACKAGE_RE = lazy_compile(r"/(?:site|dist)-packages/(?:[^/]+\.egg/)?(?P<package>[^/]+)/")


def package_of(path: str) -> str:
    """The installed package a frame's file belongs to ("torch", "torch_scatter"), or ""."""
    return _package(path)


def _package(path: str) -> str:
    """The installed package a frame's file belongs to ("torch", "torch_scatter"), or ""."""
    lowered = path.replace("\\", "/")
    if _is_torch_path(lowered):
        return "torch"
    found = PACKAGE_RE.search(lowered)
    return found.group("package") if found is not None else ""


# Pseudo-files of code typed in by the user: the REPL (Python 3.13's "<python-input-3>"), IPython's cells, IDLE's shell.
# Any other "<...>" is code Python was handed as a string by a library or by torch, with no file to open: a process
# started by multiprocessing's spawn ('python -c ...'), triton's kernel launcher, an FX graph, a decorator's wrapper.
TYPED_PSEUDO_FILES = ("<stdin>", "<ipython-input-", "<input>", "<python-input-", "<console>", "<pyshell#", "<command-")
# The standard library under a Python that is not laid out as lib/pythonX.Y (Windows, conda's envs\NAME\Lib).
STDLIB_UNDER_LIB_RE = lazy_compile(r"/lib/(?P<module>\w+)(?:/|\.py$)")
CONSOLE_SCRIPT_RE = lazy_compile(r"/s?bin/[^/]+$")
LIB_PYTHON_RE = lazy_compile(r"/lib/python\d\.\d+/|/lib/(\w+)/src/\1/")  # (or a src-layout checkout vendored in lib/)
STDLIB_MODULES = frozenset(sys.stdlib_module_names)


# The Python module Inductor generates for a compiled graph, in its cache folder (/tmp/torchinductor_USER/ by default):
# "/tmp/torchinductor_root/iq/ciqrfu3ucgsq...na.py" (a two-character folder, then "c" and the graph's hash)
COMPILED_GRAPH_RE = lazy_compile(r"(?:^|/)torchinductor_[^/]*/|/[a-z0-9]{2}/c[a-z0-9]{40,}\.py$")


def is_compiled_graph(path: str) -> bool:
    """The module torch.compile generated for a graph of the user's code: not the user's own source, but its `call`
    frame names the kernel that was launched (`triton_poi_fused__to_copy_0.run(...)`)."""
    return COMPILED_GRAPH_RE.search(path.replace("\\", "/")) is not None


def is_generated_file(path: str) -> bool:
    """A pseudo-file ("<string>", "<frozen runpy>", "<eval_with_key>.3") that is not code the user typed in."""
    return path.startswith("<") and not path.startswith(TYPED_PSEUDO_FILES)


def looks_like_user_path(path: str) -> bool:
    """From text alone: not an installed package, not the standard library, not torch, not code generated at run
    time."""
    if not path or is_generated_file(path) or is_compiled_graph(path):
        return False
    lowered = path.replace("\\", "/")
    if "/site-packages/" in lowered or "/dist-packages/" in lowered:
        return False
    if CONSOLE_SCRIPT_RE.search(lowered) and not lowered.endswith(".py"):
        return False  # a console script (torchrun, accelerate)
    if LIB_PYTHON_RE.search(lowered) or _is_torch_path(lowered):
        return False
    stdlib = STDLIB_UNDER_LIB_RE.search(lowered.lower())
    if stdlib is not None and stdlib.group("module") in STDLIB_MODULES:
        return False
    return not _relative_stdlib_file(lowered)


def _relative_stdlib_file(path: str) -> bool:
    """A path relative to the standard library's folder, as a frozen application (PyInstaller) prints its frames:
    "urllib/request.py" (not a folder of the user's named like a standard module, "code/train.py": the file must be
    one of this Python's own)."""
    head, _, rest = path.partition("/")
    return bool(rest) and head in STDLIB_MODULES and path.endswith(".py") and _stdlib_has(path)


@functools.lru_cache(maxsize=256)
def _stdlib_has(relative: str) -> bool:
    import sysconfig

    return os.path.isfile(os.path.join(sysconfig.get_paths()["stdlib"], relative))


def looks_like_library_path(path: str) -> bool:
    """An installed package other than torch itself and its device backends, whose Python only passes a call on to their
    C++ (torch_xla's `_XLAC._xla_get_devices()` under Lightning's `xm.get_xla_supported_devices("TPU")`): the library
    that called them is the way in."""
    lowered = path.replace("\\", "/")
    return ("/site-packages/" in lowered or "/dist-packages/" in lowered) and not _is_torch_path(lowered) \
        and TORCH_BACKEND_RE.search(lowered) is None


TORCH_BACKEND_RE = lazy_compile(r"-packages/(?:torch_xla|torch_npu|torch_mlu|torch_musa)/")
TORCH_FILE_RE = lazy_compile(r"(^|/)torch/(?!hub/)\S*\.pyc?$")  # (.pyc: Python 2's IPython; torch/hub/: a hub repo's code)


def _is_torch_path(lowered: str) -> bool:
    return TORCH_FILE_RE.search(lowered) is not None


# A frame line cut before its line number, its file gone with the cut: "line 260, in train" (a paste that begins there)
FILELESS_FRAME_RE = lazy_compile(r"^\s*line (?P<line>\d+), in (?P<func><\w+>|[A-Za-z_][\w.]*)\s*$")


def frame_match(line: str) -> Frame | None:
    found = FRAME_RE.match(line) or CUT_FRAME_RE.match(line)
    if found:
        return Frame(found.group("file"), int(found.group("line")), (found.group("func") or "").strip())
    if line[:1] in " l" and ", in " in line and (found := FILELESS_FRAME_RE.match(line)) is not None:
        return Frame("", int(found.group("line")), found.group("func"))
    if ": in " in line and (found := PYTEST_FRAME_RE.match(line)) is not None:
        return Frame(found.group("file"), int(found.group("line")), found.group("func"), pytest=True)
    if ".py(" in line and (found := PDB_FRAME_RE.match(line)) is not None:
        return Frame(found.group("file"), int(found.group("line")), found.group("func"))
    for pattern in IPYTHON_FRAME_RES:
        found = pattern.match(line)
        if found:
            number = found.groupdict().get("line")
            # IPython prints the signature after the name: "Linear.forward(self, input)".
            func = (found.group("func") or "").split("(", 1)[0].strip()
            return Frame(found.group("file"), int(number) if number else 0, func, ipython=True)
    return None


# A paste that lost its line breaks runs a frame, its code and even the error line together:
# 'File "f.py", line 2516, in group_norm return torch.group_norm(...)RuntimeError: expected ...'.
GLUED_NAME_RE = lazy_compile(r"<[^<>]*>|[^\s(]+")
GLUED_FRAME_RE = lazy_compile(r'(?:^|\s+)`?File ["“]')
GLUED_ERROR_RE = lazy_compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning):(?:\s|$)")


def unglued(line: str) -> list[str] | None:
    """The lines a frame line with more after its function name was made of (the frame, its code, the next
    frames, the error line), or None for a frame line as Python prints it."""
    found = FRAME_RE.match(line) or CUT_FRAME_RE.match(line)
    if found is None and (more := GLUED_FRAME_RE.search(line, 1)) is not None and FRAME_RE.match(rest := line[more.start():]):
        # a line of another process's output the frame was printed after ("... Exiting run.  File "x.py", line 175,
        # in f"): that text, then the frame
        return [line[:more.start()], *(unglued(rest) or [rest.strip()])]
    func = (found.group("func") or "").strip() if found else ""
    name = GLUED_NAME_RE.match(func)
    rest = func[name.end():].strip() if name else ""
    if not rest:
        return None
    lines = [line[:found.start("func")] + name.group()]
    more = GLUED_FRAME_RE.search(rest)
    code, after = (rest[:more.start()], rest[more.start():].strip()) if more else (rest, "")
    error = GLUED_ERROR_RE.search(code)
    if error is not None:
        code, after = code[:error.start()], code[error.start():]
    if code.strip():
        lines.append("    " + code.strip())
    if after:
        lines += (unglued(after) or [after]) if error is None else [after]
    return lines


TRACEBACK_TITLE = "Traceback (most recent call last):"


def glued_traceback(line: str) -> list[str] | None:
    """The lines of a whole traceback a report ran together on one line after a label of its own ("Full: Traceback
    (most recent call last): File "flask\\app.py", line 1950, in f File ... RuntimeError: ..."), or None."""
    rest = line.partition(TRACEBACK_TITLE)[2].strip()
    if not rest or GLUED_FRAME_RE.match(rest) is None:
        return None
    return [TRACEBACK_TITLE, *(unglued(rest) or [rest])]


def in_call_order(frames: list[Frame]) -> list[Frame]:
    """The frames outermost first, as Python prints them: a paste that lists them innermost first (the frame lines
    put in the other order) is turned around. The evidence: a frame's code calls the function of the frame
    printed after it (Python's order) or of the frame printed before it (the other)."""
    if len(frames) < 2:
        return frames
    forward = sum(_calls(outer.code, inner.func) for outer, inner in zip(frames, frames[1:]))
    backward = sum(_calls(inner.code, outer.func) for outer, inner in zip(frames, frames[1:]))
    return frames[::-1] if backward > forward else frames


def _calls(code: str, func: str) -> bool:
    name = func.rsplit(".", 1)[-1]
    return name.isidentifier() and name in code and re.search(rf"(?<!\w){name}\s*\(", code) is not None


def frames_below(lines: list[str]) -> tuple[list[str], list[Frame]]:
    """The message lines, and the frames listed under them innermost first (returned innermost last)."""
    start = next((i for i, line in enumerate(lines) if frame_match(line)), None)
    if start is None:
        return lines, []
    frames: list[Frame] = []
    for line in lines[start:]:
        frame = frame_match(line)
        if frame is not None:
            frames.append(frame)
        elif frames and not frames[-1].code and line.strip():
            frames[-1].code = line.strip()
    return lines[:start], frames[::-1]


# A console's hard wrap in a word: "Variable[torch.Flo" / "atTensor]", "torc" / "h.Size([1])", an index kernel's assert
# "srcSelectDim" / "Size". Joined only where the pieces make one of torch's names and the piece before is not one.
WRAPPED_TAIL_RE = lazy_compile(r"[A-Za-z_][\w.]*$")
WRAPPED_HEAD_RE = lazy_compile(r"^[A-Za-z_]\w*")
KNOWN_TOKEN_RE = lazy_compile(r"(?:torch\.(?:cuda\.)?)?(?:Float|Double|Half|BFloat16|Long|Int|Short|Char|Byte|Bool|"
                              r"ComplexFloat|ComplexDouble)Tensor|torch\.(?:u?int(?:8|16|32|64)|float(?:16|32|64)|"
                              r"b?float16|double|half|long|short|bool|complex(?:64|128)|Size)|torch|srcSelectDimSize")


def word_rejoined(text: str) -> str:
    """The message with a word a console broke at its width put back together (the line before the break at least
    WRAP_WIDTH long), where the joined word is a known token of torch's and the piece before the break is not."""
    if "\n" not in text:
        return text
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        last = out[-1]
        if len(last) >= WRAP_WIDTH and (tail := WRAPPED_TAIL_RE.search(last)) is not None \
                and (head := WRAPPED_HEAD_RE.match(line)) is not None \
                and KNOWN_TOKEN_RE.fullmatch(tail.group() + head.group()) is not None \
                and KNOWN_TOKEN_RE.fullmatch(tail.group()) is None:
            out[-1] = last + line
            continue
        out.append(line)
    return "\n".join(out)


# An error line that is its type alone: `raise SomeError`, an `assert` with no message, a C extension's bare error.
BARE_ERROR_RE = lazy_compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*:?$")


def with_failing_line(text: str, code: str) -> str:
    """An error with no message says nothing but its type: the line of the innermost frame that raised it does (the
    assert statement that failed, the call into a C extension that raised a bare RuntimeError), put under it for the
    rules to read. Not a `raise` statement, which only says the type again."""
    stripped, code = text.strip(), code.strip()
    if not code or code.startswith("raise ") or not BARE_ERROR_RE.match(stripped):
        return text
    if stripped in ("AssertionError", "AssertionError:"):
        return f"AssertionError\n{code}" if code.startswith("assert ") else text
    return f"{stripped}\n{code}"


# rich.traceback's box (kohya_ss, typer, Lightning): a title, a panel line per frame ("path.py:397 in f", wrapped at the
# box's width), numbered source lines (the failing one marked ❱), nested locals panels, maybe the message in a panel.
RICH_TITLE_RE = lazy_compile(r"^\s*╭─+ Traceback \(most recent call last\) ─+╮\s*$")
RICH_PANEL_RE = lazy_compile(r"^\s*│(?P<inner>.*?)│?\s*$")
RICH_FRAME_RE = lazy_compile(r"^(?P<file>\S.*?\.pyx?|<[\w\s.-]+>):(?P<line>\d+) in\s*(?P<func>[\w<>.]*)$")
RICH_NO_FILE_RE = lazy_compile(r"^in (?P<func>[\w<>.]+):(?P<line>\d+)$")  # a frame whose source rich could not read
RICH_PATH_CUT_RE = lazy_compile(r"^(?:/|[A-Za-z]:\\|~|\.\.?/)\S*$")  # a path that goes on in the next line
RICH_CODE_RE = lazy_compile(r"^\s*(?P<arrow>❱)?\s*\d+(?:\s*│|\s|$)(?P<code>.*)$")
RICH_FUNC_RE = lazy_compile(r"^\s*(?:<\w+>|[A-Za-z_][\w.]*)\s*$")
RICH_BOX_CHARS = "│╭╰"


class RichBox:
    """Reads the lines of rich boxes back as Python's own traceback prints them."""

    def __init__(self) -> None:
        self.cut = ""  # the beginning of a frame's line, cut at the box's edge
        self.width = 0  # the width of the box closed last (the console's): rich wraps the error under it there

    def rewrapped(self, previous: str, line: str) -> str | None:
        """How line joins the box's error line above it where rich wrapped the message at the box's width: "" for a
        word longer than the width ("torch.Flo", "atTensor"), " " for a word moved down; None for a line of its own."""
        width = self.width
        if not width or not line or line[:1].isspace() or not previous or len(previous) > width:
            return None
        if len(previous) == width and " " not in previous.strip():
            return ""  # (a folded word fills whole lines of its own)
        return " " if len(previous) + 1 + len(line.split(None, 1)[0]) > width else None

    def unbox(self, line: str) -> str | None:
        """The line as Python would print it ("" for borders, source lines around the failing one, locals), or None."""
        stripped = line.lstrip()
        if not stripped or stripped[0] not in RICH_BOX_CHARS:
            self.cut = ""
            # a frame's panel line whose left edge the paste cut off; without its right edge too, a path with no space
            bare = stripped.rstrip().removesuffix("│").rstrip() if ".py:" in stripped else ""
            if bare and (bare != stripped.rstrip() or " " not in bare.split(".py", 1)[0]) \
                    and (frame := RICH_FRAME_RE.match(bare)) is not None:
                return self._panel_text(frame.group(), hold=False)  # (no next panel line to complete it)
            return None
        if RICH_TITLE_RE.match(line):
            self.width = 0
            return "Traceback (most recent call last):"
        if stripped[0] == "╰" and stripped.rstrip()[-1:] == "╯":
            self.width = len(stripped.rstrip())  # the box's bottom border: the error line follows
        panel = RICH_PANEL_RE.match(line)
        if stripped[0] != "│" or panel is None or panel.group("inner").lstrip()[:1] in ("│", "╭", "╰"):
            return ""  # a border, or a nested locals panel
        return self._panel_text(panel.group("inner").strip())

    def _panel_text(self, inner: str, hold: bool = True) -> str:
        cut, self.cut = self.cut, ""
        held = cut.endswith(" in")  # a frame line wrapped after " in": its function, if this is one, completes it
        frame = RICH_FRAME_RE.match((f"{cut} {inner}" if RICH_FUNC_RE.match(inner) else cut) if held else cut + inner)
        if frame is not None and not frame.group("func") and hold and not held:
            self.cut = frame.group()  # (the function comes on the next line)
            return ""
        if frame is not None:
            func = f", in {frame.group('func')}" if frame.group("func") else ""
            return f'  File "{frame.group("file")}", line {frame.group("line")}{func}'
        no_file = RICH_NO_FILE_RE.match(inner)
        if no_file is not None:
            return f'  File "<{no_file.group("func")}>", line {no_file.group("line")}, in {no_file.group("func")}'
        if RICH_PATH_CUT_RE.match(inner):
            self.cut = inner
            return ""
        code = RICH_CODE_RE.match(inner)
        if code is not None:
            return "    " + code.group("code").replace("│", " ").strip() if code.group("arrow") else ""
        if RICH_FUNC_RE.match(inner):
            return ""  # the function name of a frame line that rich wrapped
        return inner  # text in a panel: a message rich wrapped in its box
