"""Round-10 'other' rules (native crashes reported by launchers, extensions built for another torch, builds in an
isolated environment without torch, modules pickled by an older torch, nn.Module methods of a newer torch, torch.hub
downloads), against real wordings and errors raised by real torch calls."""

from __future__ import annotations

import pytest
import torch

from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said


def _live(call) -> str:
    """The message a real torch (or Python) call on this build raises, as a traceback's last line prints it."""
    exc = raised(call)
    return f"{type(exc).__name__}: {exc}"


class MyHead(torch.nn.Module):
    """A user's module: it has no `approximate` attribute, and never had one."""


# --- errors raised by real torch calls ----------------------------------------------------------

def test_module_pickled_by_an_older_torch_names_the_module_and_the_attribute_live():
    diagnosis = explain_fixture("fixtures/other/pickled_module_older_torch.py")
    assert_names(diagnosis, "other.pickled_module_older_torch", ["`GELU`", "`approximate`", "torch 1.12"])


def test_hub_download_with_the_wrong_hash_names_both_hashes_live():
    diagnosis = explain_fixture("fixtures/other/hub_hash_mismatch.py")
    assert_names(diagnosis, "other.hub_hash_mismatch", ["`f37072fd`", "SHA-256"])


# --- wordings from real threads, as `explainer explain -` reads a paste ---------------------------

# https://github.com/Xiaojiu-z/EasyControl/issues/61
ACCELERATE_SIGFPE = corpus_message("r10_a.yaml#32")

PIP_BUILD_NO_TORCH = (
    '        File "C:\\Users\\Vincent\\AppData\\Local\\Temp\\pip-build-env-xi8lzs5x\\overlay\\Lib\\site-packages\\'
    'setuptools\\build_meta.py", line 311, in run_setup \n          exec(code, locals())\n'
    '        File "<string>", line 3, in <module>\n'
    "      ModuleNotFoundError: No module named 'torch'\n      [end of output]\n\n"
    "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
    "error: subprocess-exited-with-error\n\n"
    "× Getting requirements to build wheel did not run successfully.\n│ exit code: 1\n╰─> See above for output.")

TINYCUDANN = (
    '      _run_ninja_build(\n        File "C:\\Users\\Michael\\miniconda3\\envs\\nerfstudio\\lib\\site-packages\\torch\\'
    'utils\\cpp_extension.py", line 1909, in _run_ninja_build\n          raise RuntimeError(message) from e\n'
    "      RuntimeError: Error compiling objects for extension\n      [end of output]\n\n"
    "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
    "  ERROR: Failed building wheel for tinycudann\n  Running setup.py clean for tinycudann\n"
    "Failed to build tinycudann\n"
    "ERROR: Could not build wheels for tinycudann, which is required to install pyproject.toml-based projects")


@pytest.mark.parametrize("message, rule, values", [
    # native crashes: SIGFPE reported by a launcher, by bash and after a python command
    (ACCELERATE_SIGFPE, "other.native_fpe", ["SIGFPE", "`train.py`", "integer division"]),
    # excerpt of https://github.com/xy-guo/MVSNet_pytorch/issues/53 (runbooks/other/native_fpe.md's example)
    ("./train.sh: line 3:  1098 Floating point exception(core dumped) python train.py --dataset=dtu_yao --batch_size=1",
     "other.native_fpe", ["SIGFPE", "`train.py`"]),
    # https://github.com/Yugnaynehc/ssta-captioning/issues/9 (runbooks/other/native_fpe.md's example)
    ("run :python train.py and get an error like this:\nLearning rate: 0.0003\nBatch size: 100\nloading annotations "
     "into memory...\n0:00:00.152458\ncreating index...\nindex created!\nepoch:0 epsilon:0.96000000\nFloating point "
     "exception (core dumped)", "other.native_fpe", ["SIGFPE", "`train.py`"]),
    # compiled code built against another torch's headers
    # https://github.com/OceanYing/OmniSeg3D-GS/issues/9
    (corpus_message("r10_a.yaml#50"), "other.tensorimpl_abi_mismatch",
     ["`TensorImpl`", "sizes", "built for a different torch version"]),
    ("RuntimeError: layout_impl is only implemented for TensorImpl subclasses.", "other.tensorimpl_abi_mismatch",
     ["layout_impl is only implemented for TensorImpl subclasses", "mamba_ssm"]),
    # https://github.com/getkeops/keops/issues/114
    (corpus_message("r10_a.yaml#60"), "other.undefined_symbol",
     ["`_ZN3c104impl23ExcludeDispatchKeyGuardC1ENS_11DispatchKeyE`", "libKeOpstorch6ffe5f0b89"]),
    # builds: isolation without torch, a missing host compiler, objects that did not compile, no `c++` at all
    (PIP_BUILD_NO_TORCH, "other.build_isolation_no_torch",
     ["`torch`", "Getting requirements to build wheel", "--no-build-isolation"]),
    ("gcc-6.3.0: No such file or directory\nnvcc fatal   : Failed to preprocess host compiler properties.\n"
     "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1", "other.extension_build_failed",
     ["`gcc-6.3.0`", "`/usr/local/cuda/bin/nvcc`", "Failed to preprocess host compiler properties"]),
    (TINYCUDANN, "other.extension_build_failed", ["`tinycudann`", "Error compiling objects for extension"]),
    (" fatal error: THC/THC.h: No such file or directory\n    7 | #include <THC/THC.h>\n      |          ^~~~~~~~~~~\n"
     "compilation terminated.\nerror: command '/usr/local/cuda/bin/nvcc' failed with exit code 1",
     "other.extension_build_failed", ["`THC/THC.h: No such file or directory`", "1.11", "`/usr/local/cuda/bin/nvcc`"]),
    ("  error: command '/usr/bin/nvcc' failed with exit status 1\n  ----------------------------------------\n"
     "  ERROR: Failed building wheel for pytorch3d\n  Running setup.py clean for pytorch3d\nFailed to build pytorch3d",
     "other.extension_build_failed", ["`pytorch3d`", "/usr/bin/nvcc"]),
    # https://github.com/facebookresearch/maskrcnn-benchmark/issues/388 (runbooks/other/extension_toolchain_missing.md)
    ("result:subprocess.CalledProcessError: Command '['which', 'g++']' returned non-zero exit status 1.",
     "other.extension_toolchain_missing", ["`which g++`", "build-essential"]),
    ("subprocess.CalledProcessError: Command '['which', 'g++ -std=gnu++0x']' returned non-zero exit status 1.",
     "other.extension_toolchain_missing", ["`g++ -std=gnu++0x`", "`CXX`", "export CXX=g++"]),
    # Windows DLLs in a Jupyter error record whose path lost its opening quote
    ('{\n\t"name": "OSError",\n\t"message": "[WinError 126] The specified module could not be found. Error loading '
     '\\\\.venv\\\\Lib\\\\site-packages\\\\torch\\\\lib\\\\fbgemm.dll\\" or one of its dependencies.",',
     "other.dll_load_failed", ["`fbgemm.dll`", "WinError 126", "Visual C++ Redistributable"]),
    # versions: nn.Module methods of a newer torch, modules pickled by an older one, a torch shadowed mid-import
    ("AttributeError: 'Conv2d' object has no attribute 'register_full_backward_hook'",
     "other.module_method_newer_torch", ["`Conv2d`", "`register_full_backward_hook()`", "torch 1.8"]),
    ("AttributeError: 'Upsample' object has no attribute 'recompute_scale_factor'", "other.pickled_module_older_torch",
     ["`Upsample`", "`recompute_scale_factor`", "torch 1.11", "torch.save(model)"]),
    # excerpt of https://github.com/WongKinYiu/PyTorch_YOLOv4/issues/147 (runbooks/other/pickled_module_older_torch.md's example)
    ("torch.nn.modules.module.ModuleAttributeError: 'BatchNorm2d' object has no attribute '_non_persistent_buffers_set'",
     "other.pickled_module_older_torch", ["`BatchNorm2d`", "`_non_persistent_buffers_set`", "torch 1.6"]),
    ("ImportError: cannot import name '_VF' from partially initialized module 'torch' (most likely due to a circular "
     "import) (\\.freezedproject\\lib\\torch\\__init__.pyc)", "other.torch_attribute_missing",
     ["`torch._VF`", "partially initialized", "cx_Freeze"]),
    # pickle: Python 3.13's wording for a local object
    ("AttributeError: Can't get local object 'AutoModelForCausalLMWithValueHead.post_init.<locals>.set_device_hook'",
     "other.pickle_local_object",
     ["`AutoModelForCausalLMWithValueHead.post_init.<locals>.set_device_hook`", "`AutoModelForCausalLMWithValueHead.post_init()`"]),
    # torch.hub's check of the downloaded file
    # excerpt of https://github.com/pytorch/vision/issues/607 (runbooks/other/hub_hash_mismatch.md's example)
    ('RuntimeError: invalid hash value (expected "19c8e357", got '
     '"0c160fe3aca6a7808c727f78cbb125a2162611023bbde7d9c8df33e2ec23c8ed")', "other.hub_hash_mismatch",
     ["`19c8e357`", "`0c160fe3aca6a7808c727f78cbb125a2162611023bbde7d9c8df33e2ec23c8ed`"]),
])
def test_diagnoses_name_the_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message, rule", [
    # torch.distributed.launch's own worker with --local_rank is distributed.child_failed's, not a bare native crash
    # (https://github.com/pytorch/pytorch/issues/61839)
    (corpus_message("r8_b.yaml#103"), "other.native_segfault"),
    # darknet's floating point exception under its own log (round 26 claims the shell's line only when it is the whole
    # paste; https://github.com/GuiltyNeuron/ANPR/issues/27)
    ("Loading weights from darknet53.conv.74...Done!\nLearning Rate: 0.001, Momentum: 0.9, Decay: 0.0005\nResizing\n"
     "480\nFloating point exception (core dumped)", "other.native_fpe"),
    # a nested tensor asked for its strides is a real unsupported call, not a build mismatch (raised live)
    (_live(lambda: torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)]).stride()),
     "other.tensorimpl_abi_mismatch"),
    # attributes that any object may lack are not nn.Module methods of a newer torch (raised live)
    (_live(lambda: {}.get_submodule), "other.module_method_newer_torch"),
    (_live(lambda: MyHead().approximate), "other.pickled_module_older_torch"),
    # a bare missing torch outside any build environment
    ("ModuleNotFoundError: No module named 'torch'", "other.build_isolation_no_torch"),
])
def test_near_misses_are_not_claimed_by_these_rules(message, rule):
    assert explain_text(message).rule != rule


@pytest.mark.parametrize("message", [
    # pip finding no torch wheel is a packaging message, not a PyTorch failure
    "ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)\n"
    "ERROR: No matching distribution found for torch==2.1.0",
])
def test_library_version_messages_stay_unclaimed(message):
    assert explain_text(message).rule is None
