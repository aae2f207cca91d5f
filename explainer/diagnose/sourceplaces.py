"""Where a message says it was raised or logged: torch's C++ source place ("Exception raised from X at
Y.cpp:N"), the place a glog prefix names, and the scripted source a TorchScript error quotes; and what a wrapper that
re-raised the error says around it (vLLM's dumped inputs, Hydra's target)."""

from __future__ import annotations

from typing import Any

from explainer._lazyre import lazy_compile

# Where in torch's C++ the error was raised: "Exception raised from mark_variable_ready at
# .../torch/csrc/distributed/c10d/reducer.cpp:453 (most recent call first)", or a warning's
# "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)".
TORCH_SOURCE_RE = lazy_compile(r"(?:Exception raised from (?P<function>[\w:~]+(?:\(\))?) at |\(Triggered internally at\s+|"
                             # torch 1.x's c10::Error: "CUDA error: ... (insert_events at .../THCCachingAllocator.cpp:470)"
                             # (a lambda's "operator()", a Windows path)
                             r"\((?P<old_function>[\w:~]+(?:\(\))?) at (?=[^\s()]*(?:aten|c10|THC|THCUNN|torch|caffe2)[/\\])|"
                             # torch <= 1.4's TH/THC errors end with the place alone: "... at /pytorch/aten/src/THC/
                             # generic/THCTensorMasked.cu:27", "not enough memory ... at /pytorch/torch/lib/TH/THGeneral.c:270"
                             # (or a relative path: "invalid device ordinal at torch/csrc/cuda/Module.cpp:32", on a line
                             # of its own where the paste broke the message before it)
                             r"(?:(?<=\S) |(?<![^\n])[ \t]*)at (?=[^\s()]*(?:(?<=at )|[/\\])(?:aten|c10|TH[A-Z]*|torch|caffe2)[/\\]))"
                             r"(?P<path>[^\s()]+?\.(?:cpp|cc|cu|cuh|h|hpp|c)):(?P<line>\d+)")
# torch <= 1.0's THC check of a CUDA call: "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCReduceAll.cuh line=317
# error=59 : device-side assert triggered" (the number is the CUDA runtime's error code).
THC_CHECK_RE = lazy_compile(r"THCudaCheck FAIL file=(?P<path>\S+) line=(?P<line>\d+) (?P<check>error=\d+) ?:")
TORCH_TREE_RE = lazy_compile(r"(?:^|/)((?:torch|aten|c10|caffe2|third_party)/.*)$")
TORCH_CPP_TREE_RE = lazy_compile(r"(?:^|/)(?:torch/csrc|torch/lib|aten|c10|caffe2)/")


# The place a glog prefix names ("[W ..\\torch\\csrc\\autograd\\python_anomaly_mode.cpp:104] "): torch's C++ logged the line;
# or torch's Python logger, in the same layout ("W0301 12:00:00.123000 123 torch/_inductor/utils.py:1137] ").
LOGGED_PLACE_RE = lazy_compile(r"^\s*(?P<path>\S+?\.(?:(?P<python>py)|cpp|cc|cu|cuh|h|hpp|c)):(?P<line>\d+)\s*$")
# The place loguru's prefix names: the module and the function, then the line where the layout prints it
# ("__main__:cli_evaluate:348", "app.core.registry:load_all_models"); shown as printed.
# (and Python logging's "%(name)s line:%(lineno)d" layout: "root line:14", shown as printed)
# pytest's test id, as its short summary names the failed test: "tests/test_gpu.py::test_root_gpu[1]"
PYTEST_ID_RE = lazy_compile(r"^(?P<file>[^\s:]+\.py)::(?P<test>\S.*)$")
LOGURU_PLACE_RE = lazy_compile(r"^(?P<place>[\w.<>-]+:[A-Za-z_<][\w<>.]*|[\w.]+ line)(?::(?P<line>\d+))?$")


def torch_source(text: str) -> dict[str, Any] | None:
    """The C++ source file and line (and function) of torch that raised, as the message names them."""
    found = TORCH_SOURCE_RE.search(text)
    if found is None:
        found = THC_CHECK_RE.search(text)
        if found is None or not _torch_tree(found.group("path")):
            return None
    groups = found.groupdict()
    return _source_fact(found.group("path"), found.group("line"),
                        groups.get("function") or groups.get("old_function") or "",
                        f"THCudaCheck FAIL {groups['check']}" if groups.get("check") else "")


def extension_source(text: str) -> dict[str, Any] | None:
    """The file and line of a compiled extension's THC check (mmdet's roi_align_kernel.cu, horovod's cuda_util.cc):
    THC's macro, the extension's own C++."""
    found = THC_CHECK_RE.search(text)
    if found is None or _torch_tree(found.group("path")):
        return None
    return {"file": found.group("path").replace("\\", "/"), "line": int(found.group("line")), "function": "",
            "code": f"THCudaCheck FAIL {found.group('check')}"}


def logged_source(place: str) -> tuple[str, dict[str, Any]] | None:
    """The file and line that logged a record, from the place its glog prefix names: ("torch_source", torch's C++
    place) or ("logged_from", a Python module's: torch/_inductor/select_algorithm.py:1905, from torch/ on), ("failed_test", the test pytest's short summary names)
    or None."""
    found = LOGGED_PLACE_RE.match(place)
    if found is None and (test := PYTEST_ID_RE.match(place)) is not None:
        return "failed_test", {"file": test.group(), "line": None, "function": "", "code": ""}  # the id pytest reruns
    if found is None:
        loguru = LOGURU_PLACE_RE.match(place)
        return None if loguru is None else ("logged_from", {"file": loguru.group("place"), "line": loguru.group("line") and
                                                            int(loguru.group("line")), "function": "", "code": ""})
    path = found.group("path").replace("\\", "/")
    if found.group("python") or not _torch_cpp(path):
        tree = TORCH_TREE_RE.search(path)
        return "logged_from", {"file": tree.group(1) if tree else path, "line": int(found.group("line")), "function": "",
                               "code": ""}
    return "torch_source", _source_fact(found.group("path"), found.group("line"))


def _torch_cpp(path: str) -> bool:
    """A C++ place of torch's own: under its tree (c10/, aten/, torch/csrc/, caffe2/), or a bare file name as torch's
    glog prints it ("ProcessGroupNCCL.cpp") but not a ".cc" one: the extension of glog's other users (Triton Inference
    Server's "model_repository_manager.cc", TensorFlow, gRPC), which torch's sources do not use."""
    if "/" not in path:
        return not path.endswith(".cc")
    return TORCH_CPP_TREE_RE.search(path) is not None


def _torch_tree(path: str) -> bool:
    """A THC check's file in torch's tree; an extension built on THC's macro (horovod/torch/cuda_util.cc, mmdet's
    roi_align_kernel.cu) prints its own file, which is not torch's C++."""
    path = path.replace("\\", "/")
    return "/" not in path or TORCH_CPP_TREE_RE.search(path) is not None


def _source_fact(path: str, line: str, function: str = "", code: str = "") -> dict[str, Any]:
    path = path.replace("\\", "/")
    tree = TORCH_TREE_RE.search(path)
    return {"file": tree.group(1) if tree else path.rsplit("/", 1)[-1], "line": int(line), "function": function,
            "code": code}


# The source a TorchScript error quotes: where it is ('File "x.py", line 5', torch <= 1.4's "at x.py:138:32"), then
# its lines down to the one that the "~~~ <--- HERE" line under it marks; pytest may put its "E" column before each.
SCRIPT_WHERE_RE = lazy_compile(r'^(?:E\s+)?\s*(?:File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func><[^>\n]+>|\S+))?|'
                             r'at (?P<at_file>\S+?):(?P<at_line>\d+):\d+)\s*$')
SCRIPT_DEF_RE = lazy_compile(r"^\s*(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
PYTEST_COLUMN_RE = lazy_compile(r"^E(?=\s)")
MAX_SCRIPT_QUOTE = 60  # lines


def script_source(text: str) -> dict[str, Any] | None:
    """Where in the scripted source a TorchScript error points: file, line, the function, the marked line."""
    if "<--- HERE" not in text:
        return None
    lines = text.splitlines()
    marked = [i for i, line in enumerate(lines) if "<--- HERE" in line]
    # the interpreter's frames are printed most recent call last: the innermost is the last marked (a compilation
    # error's first mark is its own, the marks under it the callers')
    here = marked[-1] if "Traceback of TorchScript" in text else marked[0]
    for top in range(here - 1, max(here - MAX_SCRIPT_QUOTE, 0) - 1, -1):
        if (where := SCRIPT_WHERE_RE.match(lines[top])) is not None:
            break
    else:
        return None
    quote = [PYTEST_COLUMN_RE.sub("", line) for line in lines[top + 1:here]]
    quote = [line for line in quote if line.strip()]
    if not quote:
        return None
    defs = [found.group("name") for line in quote if (found := SCRIPT_DEF_RE.match(line))]
    return {"file": where.group("file") or where.group("at_file"),
            "line": int(where.group("line") or where.group("at_line")),
            "function": where.group("func") or (defs[-1] if defs else ""), "code": quote[-1].strip()}


# Wrappers that re-raise any error with words of their own before its message: the rule explains the error
# inside; what the wrapper adds (a fact, by its group's name) is said after the rule's summary.
WRAPPER_NOTES = [
    # vLLM's model runner: "Error in model execution (input dumped to /tmp/err_execute_model_input_X.pkl): ..."
    (lazy_compile(r"Error in model execution \(input dumped to (?P<input_dump>[^()\s]+)\): "),
     "vLLM saved the inputs of the failing step to {input_dump}, to run that step again on its own."),
    # transformers' and diffusers' lazy modules: "Failed to import transformers.X because of the following error (look
    # up to see its traceback):", once per module of the import chain, the innermost last
    (lazy_compile(r"Failed to import (?P<lazy_import>[\w.]+) because of the following error \(look up to see its traceback\)"),
     "It was re-raised while {lazy_import} was being imported (the library's lazy import wraps any error raised at "
     "import time; the traceback printed above this one shows where it happened)."),
    (lazy_compile(r"look up to see its traceback\):\s*(?:Failed to import [\w.]+ because of the following error "
                r"\(look up to see its traceback\):\s*)*Failed to import (?P<lazy_import_inner>[\w.]+) because"),
     "The chain of imports ended in {lazy_import_inner}, whose import raised it."),
    # Hydra's instantiate: "Error in call to target 'models.Net':" (or "Error in creating partial(models.Net, ...)
    # object:"), then repr() of the error the call raised, then the config key that named the target ("full_key: model")
    (lazy_compile(r"Error in (?:call to target '|creating partial\()(?P<hydra_target>[^'\s(),]+)"),
     "Hydra's instantiate raised it from the call to the config's target {hydra_target}."),
    (lazy_compile(r"Error in (?:call to target|creating partial)[^\n]*\n(?:[^\n]*\n)*?full_key: (?P<hydra_key>\S+)"),
     "The config key that names that target: {hydra_key}."),
    # a target instantiated inside it (a model's encoder): repr() of its InstantiationException, the innermost last, with
    # its own full_key after an escaped line break
    (lazy_compile(r"\A[\s\S]*InstantiationException\([\"']Error in (?:call to target '|creating partial\()(?P<hydra_inner>[^'\s(),]+)"
                  r"[^\n]*?\\nfull_key: (?P<hydra_inner_key>[\w.]+)"),
     "Inside it, instantiating the nested target {hydra_inner} (config key {hydra_inner_key}) raised the error."),
    # Android's report of an app that crashed starting a component: "java.lang.RuntimeException: Unable to start activity
    # ComponentInfo{org.pytorch.demo/org.pytorch.demo.MainActivity}: com.facebook.jni.CppException: ..."
    (lazy_compile(r"Unable to (?:start|resume|create|instantiate) (?:activity|service|receiver|application) ComponentInfo\{"
                  r"(?P<android_app>[\w.]+)/(?P<android_component>[\w.$]+)\}"),
     "Android stopped the app {android_app} while it started {android_component}: the Java exception wraps the error "
     "PyTorch's native library threw."),
    # milabench's error report: each failed benchmark's name, underlined with carets, over its error
    # ("Error Report\n------------\n\nefficientnet_b4.D0\n^^^^^^^^^^^^^^^^^^\n    torch.cuda.OutOfMemoryError: ...")
    (lazy_compile(r"Error Report\n-{4,}\n\s*\n(?P<milabench_bench>[\w.\-]+)\n\^{4,}\n"),
     "milabench's error report lists it under the benchmark {milabench_bench}, the first of the report's failures."),
    # Triton Inference Server's model repository: "failed to load 'hrnet_libtorch' version 1: Internal: load failed for
    # libtorch model -> 'hrnet_libtorch': ..."
    (lazy_compile(r"failed to load '(?P<triton_model>[^'\s]+)' version (?P<triton_model_version>\d+): \w+: load failed "
                  r"for (?P<triton_backend>\w+) model"),
     "Triton Inference Server's {triton_backend} backend raised it loading the model {triton_model} (version "
     "{triton_model_version})."),
]


def wrapper_facts(text: str) -> dict[str, Any]:
    """The values a wrapper's words around the error hold (vLLM's dumped input)."""
    facts: dict[str, Any] = {}
    for pattern, _ in WRAPPER_NOTES:
        if (found := pattern.search(text)) is not None:
            facts.update(found.groupdict())
    return facts
