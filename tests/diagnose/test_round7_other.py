"""Round-7 'other' rules (building C++/CUDA extensions, installers and launchers, native runtimes, setuptools,
torch.hub, torchaudio backends, torchao configs), against real wordings and errors raised by real torch calls."""

from __future__ import annotations

import os

import pytest

from explainer.diagnose.explain import explain_text
from explainer.rules.base import default_rulebase

from conftest import assert_names, explain_fixture, explain_paste, said

RULEBASE = default_rulebase()


# --- errors raised by real torch calls ----------------------------------------------------------

def test_unknown_arch_in_torch_cuda_arch_list_is_named():
    diagnosis = explain_fixture("fixtures/other/extension_unknown_cuda_arch.py")
    assert_names(diagnosis, "other.extension_unknown_cuda_arch", ["compute capability 9.9", "TORCH_CUDA_ARCH_LIST"])
    assert "TORCH_CUDA_ARCH_LIST" not in os.environ or os.environ["TORCH_CUDA_ARCH_LIST"] != "9.9"


def test_load_inline_without_ninja_names_the_tool_and_leaves_path_alone():
    path = os.environ.get("PATH")
    diagnosis = explain_fixture("fixtures/other/extension_ninja_missing.py")
    assert_names(diagnosis, "other.extension_toolchain_missing", ["`ninja`", "Ninja is required"])
    assert "pip install ninja" in said(diagnosis)
    assert os.environ.get("PATH") == path


def test_unregistered_custom_class_names_namespace_and_class():
    diagnosis = explain_fixture("fixtures/other/custom_class_missing.py")
    assert_names(diagnosis, "other.custom_class_missing", ["`torch.classes.my_extension.Tokenizer`", "`my_extension`"])


def test_missing_hub_entry_names_it_and_the_stale_cache():
    diagnosis = explain_fixture("fixtures/other/hub_entry_not_found.py")
    assert_names(diagnosis, "other.hub_entry_not_found", ["`tiny_model_v2`", "~/.cache/torch/hub/"])
    assert "force_reload=True" in said(diagnosis)


# --- wordings from real threads, as `explainer explain -` reads a paste ---------------------------

@pytest.mark.parametrize("message, rule, values", [
    # nvcc's host_config.h check (gcc, clang, MSVC; CUDA 7 to 12) and torch.utils.cpp_extension's own check
    ("/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later "
     "than 12 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check",
     "other.nvcc_unsupported_host_compiler", ["gcc versions later than 12 are not supported", "crt/host_config.h"]),
    ("  138 | #error -- unsupported GNU version! gcc versions later than 8 are not supported!\n      |  ^~~~~\n"
     "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1",
     "other.nvcc_unsupported_host_compiler", ["gcc versions later than 8"]),
    ("#error -- unsupported GNU version! gcc 4.10 and up are not supported!", "other.nvcc_unsupported_host_compiler",
     ["gcc 4.10 and up are not supported"]),
    ("host_config.h:151:2: error: -- unsupported clang version! clang version must be less than 16 and greater than 3.2 .",
     "other.nvcc_unsupported_host_compiler", ["clang version must be less than 16"]),
    ("C:\\CUDA\\v12.6\\include\\crt/host_config.h(170): fatal error C1189:\n-- unsupported Microsoft Visual Studio version!\n"
     "Only the versions between 2017 and 2022 (inclusive) are supported!", "other.nvcc_unsupported_host_compiler",
     ["Only the versions between 2017 and 2022 (inclusive) are supported", "cl.exe"]),
    ("RuntimeError: The current installed version of g++ (12.2.1) is greater than the maximum required version by CUDA "
     "11.7 (11.5.0). Please make sure to use an adequate version of g++ (>=6.0.0, <=11.5.0).",
     "other.nvcc_unsupported_host_compiler", ["`g++` 12.2.1", "CUDA 11.7", ">=6.0.0, <=11.5.0"]),
    # the rest of torch.utils.cpp_extension's checks
    ("RuntimeError:\n      The detected CUDA version (11.8) mismatches the version that was used to compile\n"
     "      PyTorch (12.4). Please make sure to use the same CUDA versions.",
     "other.extension_cuda_version_mismatch", ["CUDA 11.8", "CUDA 12.4"]),
    ("ValueError: Unknown CUDA arch (8.6) or GPU not supported", "other.extension_unknown_cuda_arch",
     ["compute capability 8.6"]),
    ("ValueError: Unknown CUDA arch (compute) or GPU not supported", "other.extension_unknown_cuda_arch", ["`compute`"]),
    ("RuntimeError: MSVC is required to load C++ extensions", "other.extension_toolchain_missing", ["MSVC", "cl"]),
    ("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
     "other.extension_build_failed", ["`['ninja', '-v']`", "exit status 1"]),
    # extensions built without CUDA
    ("Not compiled with GPU support (ROIAlign_forward at /home/o/detectron2/layers/csrc/ROIAlign/ROIAlign.h:73)",
     "other.extension_not_compiled_gpu", ["`ROIAlign_forward`", "ROIAlign.h:73", "FORCE_CUDA"]),
    ("RuntimeError: nms is not compiled with GPU support (nms at mmdet/ops/nms/src/nms_ext.cpp:23)",
     "other.extension_not_compiled_gpu", ["`nms`", "nms_ext.cpp:23"]),
    # a logger wrapping the Windows loader's message before the DLL's path
    ("02:54:18-197331 ERROR    Could not load torch: [WinError 126] Das angegebene Modul wurde nicht gefunden. Error loading\n"
     "                         \"P:\\AI\\kohya_ss\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies.",
     "other.dll_load_failed", ["`fbgemm.dll`", "WinError 126"]),
    # launchers
    ("RuntimeError: Couldn't install torch.\nCommand: \"D:\\sd\\venv\\Scripts\\python.exe\" -m pip install torch==2.1.2 "
     "torchvision==0.16.2 --extra-index-url https://download.pytorch.org/whl/cu121\nError code: 1",
     "other.webui_install_failed", ["torch==2.1.2", "https://download.pytorch.org/whl/cu121", "error code 1"]),
    # companion libraries
    ("RuntimeError: Backend \"sox_io\" is not one of available backends: ['soundfile'].",
     "other.torchaudio_backend_unavailable", ["`sox_io`", "['soundfile']"]),
    ("RuntimeError: Couldn't find appropriate backend to handle uri assets/exampleaudio.mp3 and format None.",
     "other.torchaudio_backend_unavailable", ["`assets/exampleaudio.mp3`", "format None", "FFmpeg"]),
    ("RuntimeError: No audio I/O backend is available", "other.torchaudio_backend_unavailable", ["soundfile"]),
    ("RuntimeError: TypeError: quant_type must be an AOBaseConfig instance, got str", "other.torchao_config_type",
     ["`quant_type`", "`str`", "`AOBaseConfig`"]),
    ("RuntimeError: Cannot find callable dinov2_vitl14_reg in hubconf", "other.hub_entry_not_found",
     ["`dinov2_vitl14_reg`"]),
    ("ValueError: Cannot find master in https://github.com/facebookresearch/pytorchvideo. If it's a commit from a "
     "forked repo, please call hub.load() with forked repo directly.", "other.hub_entry_not_found",
     ["`master`", "facebookresearch/pytorchvideo", "`main`"]),
    # native runtimes and the Python packaging stack around torch
    ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
     "other.openmp_duplicate_runtime", ["`libiomp5md.dll`"]),
    ("ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
     "/env/lib/python3.10/site-packages/torch/lib/libtorch_python.so)", "other.glibc_version_not_found",
     ["`libstdc++.so.6`", "`GLIBCXX_3.4.30`", "libtorch_python.so"]),
    ("ImportError: /lib64/libm.so.6: version `GLIBC_2.29' not found (required by /env/site-packages/libpyg.so)",
     "other.glibc_version_not_found", ["`GLIBC_2.29`", "libpyg.so", "glibc"]),
    ("AttributeError: module 'distutils' has no attribute 'version'", "other.setuptools_incompatible",
     ["`distutils.version`", "setuptools 59.6"]),
    ("ImportError: cannot import name 'packaging' from 'pkg_resources' (/env/site-packages/pkg_resources/__init__.py)",
     "other.setuptools_incompatible", ["`from pkg_resources import packaging`", "setuptools 70"]),
    ("2025-04-16 15:53:08.942 Examining the path of torch.classes raised: Tried to instantiate class '__path__._path', "
     "but it does not exist! Ensure that it is registered via torch::class_", "other.custom_class_missing",
     ["Streamlit", "`__path__._path`"]),
    ("ImportError: TensorBoard logging requires TensorBoard version 1.15 or above", "other.tensorboard_unavailable",
     ["`tensorboard` package 1.15", "pip install -U tensorboard"]),
    ("E   RuntimeError: Failed to load the backend extension: torch_musa. ", "other.device_backend_autoload_failed",
     ["`torch_musa`", "TORCH_DEVICE_BACKEND_AUTOLOAD=0"]),
    ("ImportError: cannot import name 'PILLOW_VERSION' from 'PIL' (/env/lib/python3.7/site-packages/PIL/__init__.py)",
     "other.pillow_version_removed", ["`PILLOW_VERSION`", "Pillow 7.0", "torchvision 0.4.2"]),
    ("AttributeError: module 'torchvision.transforms' has no attribute 'InterpolationMode'",
     "other.torchvision_api_too_new", ["`InterpolationMode`", "torchvision 0.9"]),
    ("ModuleNotFoundError: No module named 'torchvision.models.feature_extraction'", "other.torchvision_api_too_new",
     ["`torchvision.models.feature_extraction`", "torchvision 0.11"]),
    ("ImportError: Failed to load PyTorch C extensions:\n    It appears that PyTorch has loaded the `torch/_C` folder\n"
     "    of the PyTorch repository rather than the C extensions which", "other.no_module_torch_c", ["`torch/_C`"]),
])
def test_diagnoses_name_the_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


def test_nvcc_fixes_name_the_escape_hatch_and_a_matching_gcc():
    diagnosis = explain_text("#error -- unsupported GNU version! gcc versions later than 12 are not supported!")
    assert "-allow-unsupported-compiler" in said(diagnosis) and "g++-12" in said(diagnosis)


@pytest.mark.parametrize("message", [
    "XGBoost version is not compiled with GPU support",
    "AssertionError: Torch not compiled with CUDA enabled",
    "ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)",
    "OMP: Info #276: omp_set_nested routine deprecated, please use omp_set_max_active_levels instead.",
    "ModuleNotFoundError: No module named 'pkg_resources'",
    "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. Falling back to "
    "using the slow distutils backend.",
    "RuntimeError: Missing dependencies: timm, einops",
])
def test_near_misses_stay_unclaimed_by_these_rules(message):
    rule = explain_text(message).rule
    assert rule not in {"other.extension_not_compiled_gpu", "other.webui_install_failed",
                        "other.openmp_duplicate_runtime", "other.setuptools_incompatible",
                        "other.extension_toolchain_missing", "other.hub_entry_not_found"}, rule
