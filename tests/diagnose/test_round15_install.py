"""Round 15 `other` rules of installation, import and extension builds: Windows' DLL loader under torch/__init__.py
(ctypes.CDLL, Python <= 3.7's bare "DLL load failed", the %1 wordings), bitsandbytes' CUDA SETUP log, xFormers' build
info (Python and "CUDA None"), vLLM's logged import of its compiled ops, torch imported twice in one process, a
prebuilt wheel that setup.py could not download, CUDA_VERSION printed before CUDA_HOME's error, NumPy 2's notice under
transformers, and an undefined symbol pasted without its space. All as pasted in their threads; torch imported twice
also live, in a process of its own (it leaves torch unusable in the process that runs it)."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message as corpus, explain_paste, rules_of, run_explainer


CORPUS = [
    # torch 1.3-1.4 loads torch\lib's DLLs with ctypes.CDLL(dll): the frame under torch/__init__.py is ctypes'
    ("r15_b.yaml#10", "other.dll_load_failed", ["[WinError 126]", "`ctypes.CDLL(dll)`", "torch/__init__.py:81"]),
    # Python <= 3.7's "DLL load failed" under `from torch._C import *`; %1 is Windows' placeholder
    ("r15_b.yaml#15", "other.dll_load_failed", ["`torch._C`", "Операционная система не может запустить %1",
                                                "wrong architecture"]),
    ("r15_b.yaml#17", "other.dll_load_failed", ["`torch._C`", "找不到指定的模块。"]),
    ("r15_b.yaml#12", "other.torch_imported_twice",
     ["`THPDtypeType.tp_dict == nullptr`", "Dtype.cpp:135", "`pip install` replaced torch"]),
    # bitsandbytes' CUDA SETUP log with no error under it: the binary, the CUDA version and the GPU's capability
    ("r15_b.yaml#29", "other.bnb_cuda_setup_failed",
     ["`libbitsandbytes_cuda121_nocublaslt.so`", "CUDA version 121", "compute capability 7.0",
      "`libbitsandbytes_cpu.so`"]),
    # rich's ASCII panel keeps the raising place, read by a context pattern
    ("r15_b.yaml#28", "other.bnb_cuda_setup_failed", ["`cextension.py:20`"]),
    ("r15_b.yaml#30", "other.prebuilt_wheel_download_failed",
     ["`flash-attn` 2.5.4", "(2.1.1+cu118)", "`flash_attn-2.5.4+cu118torch2.1cxx11abiFALSE-cp310-cp310-linux_x86_64.whl`",
      "[Errno 104] Connection reset by peer"]),
    ("r15_b.yaml#40", "other.xformers_build_mismatch",
     ["2.1.0+cpu", "Python 3.8.10 and this is Python 3.8.0", "the same minor release"]),
    ("r15_b.yaml#41", "other.xformers_build_mismatch", ["1.13.1+cu117", "2.4.0+cu121", "Python 3.10.9", "3.10.12"]),
    ("r15_b.yaml#42", "other.vllm_extension_import_failed",
     ["`vllm._C`", "`_custom_ops.py:15`", "`libcudart.so.12`", "CUDA runtime"]),
    ("r15_b.yaml#66", "other.cuda_home_not_set", ["`CUDA_VERSION: 11.6`", "`CUDA_HOME`"]),
    ("r15_b.yaml#72", "other.numpy_incompatible", ["NumPy 2.0.0", "NumPy 1.x", "`transformers`"]),
    # "undefined symbol:" with no space before the mangled name
    ("r15_a.yaml#89", "other.undefined_symbol",
     ["`torch_scatter/_version.so`", "`_ZN3c105ErrorC1ENS_14SourceLocationERKSs`"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


PASTED = [
    # vLLM's warning, each reason it quotes (https://github.com/vllm-project/vllm/issues/5501,
    # https://github.com/hiyouga/LlamaFactory/issues/5767, https://github.com/vllm-project/vllm/issues/9114)
    ("WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with ImportError('/usr/local/lib/python3.8/"
     "dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEE"
     "PKcj')", "other.vllm_extension_import_failed",
     ["`_C.abi3.so`", "`_ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj`", "one exact torch release"]),
    ("WARNING 10-21 18:27:11 _custom_ops.py:18] Failed to import from vllm._C with ModuleNotFoundError(\"No module "
     "named 'vllm._C'\")", "other.vllm_extension_import_failed", ["no module `vllm._C`", "`_custom_ops.py:18`"]),
    ("WARNING 10-07 03:01:24 _core_ext.py:180] Failed to import from vllm._core_C with ImportError('libtorch_cuda.so: "
     "cannot open shared object file: No such file or directory')", "other.vllm_extension_import_failed",
     ["`vllm._core_C`", "`libtorch_cuda.so`", "a CPU build"]),
    # xFormers built with "CUDA None" (https://github.com/vllm-project/vllm/issues/13116)
    ("`WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for: PyTorch 2.6.0+cu124 with "
     "CUDA None (you have 2.5.1+cu121) Python 3.11.0 (you have 3.11.5) Please reinstall xformers (see https://github.com"
     "/facebookresearch/xformers#installing-xformers) Memory-efficient attention, SwiGLU, sparse and more won't be "
     "available. Set XFORMERS_MORE_DETAILS=1 for more details`", "other.xformers_build_mismatch",
     ["PyTorch 2.6.0+cu124", "2.5.1+cu121", "Python 3.11.0"]),
    # the other wording of torch imported twice (https://github.com/TorchDSP/torchsig/issues/205)
    ("  File \"/miniconda3/envs/torchsig_pip/lib/python3.11/site-packages/torch/overrides.py\", line 1565, in <module>\n"
     "    has_torch_function = _add_docstr(\n                         ^^^^^^^^^^^^\n"
     "RuntimeError: function '_has_torch_function' already has a docstring", "other.torch_imported_twice",
     ["function `_has_torch_function`", "`importlib.reload(torch)`"]),
    # causal-conv1d's setup.py, timed out (https://github.com/state-spaces/mamba/issues/55, a comment's paste verbatim)
    ("Building wheels for collected packages: causal-conv1d\n  Building wheel for causal-conv1d (setup.py) ... error\n"
     "  error: subprocess-exited-with-error\n  \n  × python setup.py bdist_wheel did not run successfully.\n"
     "  │ exit code: 1\n  ╰─> [8 lines of output]\n      \n      torch.__version__  = 2.1.1+cu121\n      \n"
     "      running bdist_wheel\n      Guessing wheel URL:  https://github.com/Dao-AILab/causal-conv1d/releases/download/"
     "v1.1.1/causal_conv1d-1.1.1+cu122torch2.1cxx11abiFALSE-cp38-cp38-linux_x86_64.whl\n"
     "      error: <urlopen error [Errno 110] Connection timed out>\n      [end of output]\n  \n"
     "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
     "  ERROR: Failed building wheel for causal-conv1d\n  Running setup.py clean for causal-conv1d\n"
     "Failed to build causal-conv1d\n"
     "ERROR: Could not build wheels for causal-conv1d, which is required to install pyproject.toml-based projects",
     "other.prebuilt_wheel_download_failed",
     ["`causal-conv1d` 1.1.1", "[Errno 110] Connection timed out", "CAUSAL_CONV1D_FORCE_BUILD=TRUE"]),
]


@pytest.mark.parametrize(("message", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_pasted_messages_name_their_values(message, rule, values):
    d = explain_paste(message)
    assert_names(d, rule, values, " ".join([d.summary, *d.fixes]))


# Near misses that must not get these rules.
NOT_THESE = [
    # the same library missing outside vLLM's warning is the plain loader error
    ("ImportError: libcudart.so.10.1: cannot open shared object file: No such file or directory",
     "other.vllm_extension_import_failed"),
    # another internal assertion of torch's bindings (eval with restricted builtins), not a second import
    ('RuntimeError: storage_module && PyModule_Check(storage_module) INTERNAL ASSERT FAILED at "/Users/runner/work/'
     'pytorch/pytorch/pytorch/torch/csrc/DynamicTypes.cpp":71, please report a bug to PyTorch.', "other.torch_imported_twice"),
    # a download that failed outside a setup.py's guessed wheel
    ("urllib.error.URLError: <urlopen error [Errno 110] Connection timed out>", "other.prebuilt_wheel_download_failed"),
    # flash-attn's 404 is caught: its setup.py compiles instead, and the build's own error is the failure (an excerpt
    # of https://github.com/Dao-AILab/flash-attention/issues/1418, verbatim)
    ("      running bdist_wheel\n      Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/"
     "download/v2.7.2.post1/flash_attn-2.7.2.post1+cu12torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl\n"
     "      Precompiled wheel not found. Building from source...\n      running build",
     "other.prebuilt_wheel_download_failed"),
    # the NumPy notice about another module, no torch or torch library in sight
    ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.2.0 as it may crash. To support both 1.x and "
     "2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.", "other.numpy_incompatible"),
]


@pytest.mark.parametrize(("message", "rule"), NOT_THESE, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NOT_THESE)])
def test_near_misses_get_other_rules(message, rule):
    assert rule not in rules_of(message), rules_of(message)


def test_pips_resolver_message_stays_unexplained():
    # fixtures/real/README.md: a negative control whatever the package; no rule may claim it
    for where in ("r3_compile_dtype.yaml#34", "r3_compile_dtype.yaml#35"):
        assert not any(rules_of(corpus(where))), where


def test_torch_imported_twice_live_in_a_process_of_its_own():
    result = run_explainer("--format", "json", "fixtures/other/torch_imported_twice.py")
    assert result.returncode != 0
    import json

    diagnosis = json.loads(result.stderr.strip().splitlines()[-1])
    assert diagnosis["rule"] == "other.torch_imported_twice", diagnosis
    assert "`_has_torch_function`" in diagnosis["summary"], diagnosis["summary"]
    assert diagnosis["location"]["file"].endswith("torch_imported_twice.py"), diagnosis["location"]
