"""Round-9 'other' rules (torch.ops lookups, TorchScript/lite-interpreter files, torch.load's unpickler, Lightning's
Trainer checks, CUDA library symbol versions, extension builds, IPEX), against real wordings and errors raised by real
torch calls."""

from __future__ import annotations

import pytest

from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_fixture, explain_paste, raised, said


# --- errors raised by real torch calls ----------------------------------------------------------

def test_missing_aten_operator_names_namespace_and_op():
    import torch

    exc = raised(lambda: torch.ops.aten.no_such_op_xyz)
    diagnosis = explain_paste(f"{type(exc).__name__}: {exc}")
    assert_names(diagnosis, "other.torch_op_not_registered", ["`torch.ops.aten.no_such_op_xyz`", "newer PyTorch"])


def test_model_not_exported_for_the_lite_interpreter_names_bytecode_pkl():
    diagnosis = explain_fixture("fixtures/other/lite_interpreter_not_exported.py")
    assert_names(diagnosis, "other.jit_load_open_failed", ["`bytecode.pkl`", "_save_for_lite_interpreter"])


def test_unpickled_class_from_a_module_that_is_gone_names_the_module_live():
    diagnosis = explain_fixture("fixtures/other/unpickle_module_missing.py")
    assert_names(diagnosis, "other.unpickle_module_missing", ["`trainrepo_models`", "state_dict"])


def test_operator_defined_twice_names_the_operator_and_both_places():
    diagnosis = explain_fixture("fixtures/other/operator_registered_twice.py")
    assert_names(diagnosis, "other.operator_registered_twice",
                 ["`explainer_fixture_lib::scale`", "torch/library.py", "imported twice"])


# --- wordings from real threads, as `explainer explain -` reads a paste ---------------------------

UNPICKLE_OD = (
    '  File "/media/ntu/volume2/home/miniconda3/envs/Yolov5/lib/python3.8/site-packages/torch/serialization.py", '
    "line 882, in _load\n"
    "    result = unpickler.load()\n"
    '  File "/media/ntu/volume2/home/miniconda3/envs/Yolov5/lib/python3.8/site-packages/torch/serialization.py", '
    "line 875, in find_class\n"
    "    return super().find_class(mod_name, name)\n"
    "ModuleNotFoundError: No module named 'od'")


@pytest.mark.parametrize("message, rule, values", [
    # torch.ops lookups: torch's own namespaces, vLLM's, and the old wording without a namespace
    ("RuntimeError:\nFailed to import diffusers.pipelines.deepfloyd_if.pipeline_if because of the following error (look "
     "up to see its traceback):\n'_OpNamespace' object has no attribute 'lift_fresh'", "other.torch_op_not_registered",
     ["`lift_fresh`", "`diffusers.pipelines.deepfloyd_if.pipeline_if`", "torch 1.13"]),
    ("AttributeError: '_OpNamespace' 'aten' object has no attribute '_grouped_mm'", "other.torch_op_not_registered",
     ["`torch.ops.aten._grouped_mm`", "torch 2.8"]),
    ("AttributeError: '_OpNamespace' '_C' object has no attribute 'init_cpu_memory_env'",
     "other.torch_op_not_registered", ["`torch.ops._C.init_cpu_memory_env`", "vLLM", "libnuma"]),
    ("RuntimeError: No such operator fbgemm::jagged_to_padded_dense", "other.torch_op_not_registered",
     ["`torch.ops.fbgemm.jagged_to_padded_dense`", "`fbgemm`"]),
    # TorchScript loaders that cannot open the file
    (">>> torch.jit.load('NOT_A_REAL_FILE')\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in "
     "<module>\n  File \"/home/liam/.virtualenvs/py35/lib/python3.5/site-packages/torch/jit/__init__.py\", line 131, in "
     "load\n    torch._C.import_ir_module(module_lookup, f, map_location)\nRuntimeError: [enforce fail at "
     "inline_container.cc:130] . PytorchStreamReader failed opening archive.",
     "other.jit_load_open_failed", ["inline_container.cc:130", "opening archive", "absolute path"]),
    ("RuntimeError: open file failed because of errno 2 on fopen: No such file or directory, file path: "
     "models/yolo.torchscript", "other.jit_load_open_failed",
     ["`models/yolo.torchscript`", "errno 2", "No such file or directory"]),
    # torch.load's unpickler needs a module of the code that saved the object
    (UNPICKLE_OD, "other.unpickle_module_missing", ["`od`", "sys.path"]),
    # Lightning's Trainer checks
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: The provided lr scheduler `ExponentialLR` "
     "doesn't follow PyTorch's LRScheduler API. You should override the `LightningModule.lr_scheduler_step` hook with "
     "your own logic if you are using a custom LR scheduler.", "other.lightning_lr_scheduler_config",
     ["`ExponentialLR`", "`LightningModule.lr_scheduler_step`", "torch 2.0", "pytorch_lightning>=1.9.5"]),
    ("MisconfigurationException: `configure_optimizers` must include a monitor when a `ReduceLROnPlateau` scheduler is "
     "used. For example: {\"optimizer\": optimizer, \"lr_scheduler\": scheduler, \"monitor\": \"metric_to_track\"}",
     "other.lightning_lr_scheduler_config", ["`ReduceLROnPlateau`", "\"monitor\": \"val_loss\""]),
    ("NotImplementedError: Support for `validation_epoch_end` has been removed in v2.0.0. `RAVE` implements this "
     "method. You can use the `on_validation_epoch_end` hook instead.", "other.lightning_hook_missing",
     ["`RAVE`", "`validation_epoch_end`", "2.0.0", "on_validation_epoch_end"]),
    ("MisconfigurationException: No `test_step()` method defined to run `Trainer.test`.", "other.lightning_hook_missing",
     ["`Trainer.test`", "`test_step`"]),
    ("TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'", "other.trainer_argument_removed",
     ["`gpus`", "devices=1", "Lightning 2.0"]),
    # CUDA libraries of two releases, and extension builds and imports
    ("OSError: /home/u/.conda/envs/y/lib/python3.7/site-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.11: "
     "symbol cublasLtHSHMatmulAlgoInit version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time "
     "reference", "other.cuda_runtime_symbol", ["`libcublas.so.11`", "`cublasLtHSHMatmulAlgoInit`", "`libcublasLt.so.11`"]),
    ("ImportError: cannot import name 'csrc' from 'gsplat' (C:\\envs\\ns\\lib\\site-packages\\gsplat\\__init__.py)",
     "other.extension_module_missing", ["`csrc`", "`gsplat`"]),
    ("ModuleNotFoundError: No module named 'mmcv.ops'", "other.extension_module_missing", ["`mmcv.ops`", "mim install"]),
    ("C:\\envs\\ns\\lib\\site-packages\\torch\\utils\\cpp_extension.py:359: UserWarning: Error checking compiler version "
     "for cl:\n[WinError 2] The system cannot find the file specified", "other.extension_toolchain_missing",
     ["`cl`", "[WinError 2]", "vcvars64.bat"]),
    ("    ./mmcv/ops/csrc/pytorch/psamask_cuda.cu(46): error: type name is not allowed",
     "other.extension_build_failed", ["`./mmcv/ops/csrc/pytorch/psamask_cuda.cu`", "line 46", "type name is not allowed"]),
    # custom operators registered twice (torch.library / TORCH_LIBRARY), and the old schema-mismatch wording
    ("RuntimeError: Tried to register an operator (mylib::foo(Tensor(a!) x, Tensor(b!) y) -> ()) with the same name and "
     "overload name multiple times. Each overload's schema should only be registered with a single call to def(). "
     "Duplicate registration: registered at /dev/null:135. Original registration: registered at /dev/null:203",
     "other.operator_registered_twice", ["`mylib::foo`", "/dev/null:135", "/dev/null:203"]),
    ("Tried to register multiple operators with the same name and the same overload name but different schemas: "
     "aten::mv(Tensor _0, Tensor _1) -> (Tensor _0) vs aten::mv(Tensor self, Tensor vec) -> (Tensor)",
     "other.operator_registered_twice", ["`aten::mv`", "different schemas"]),
    # Intel Extension for PyTorch built for another torch
    ("ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.2.*, but PyTorch 2.1.0+cu121 is found. Please "
     "switch to the matching version and run again.", "other.ipex_torch_version_mismatch",
     ["PyTorch 2.2.*", "2.1.0+cu121"]),
])
def test_diagnoses_name_the_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message", [
    # the user's own import, not torch.load's unpickler
    "  from models import build_model, build_loss\nModuleNotFoundError: No module named 'models'",
    # torchvision's namespaces are other.torchvision_ops_missing's, never this rule's
    "AttributeError: '_OpNamespace' 'image' object has no attribute 'read_file'",
    # an "operator" that is not a failed lookup
    "RuntimeError: the operator aten::foo is bad",
    # a bare __init__() of Python < 3.10 does not say it was Lightning's Trainer
    "TypeError: __init__() got an unexpected keyword argument 'gpus'",
    # a CUDA source file outside any extension folder
    "kernel.cu(12): error: identifier \"foo\" is undefined",
])
def test_near_misses_are_not_claimed_by_these_rules(message):
    rule = explain_text(message).rule
    assert rule not in {"other.unpickle_module_missing", "other.torch_op_not_registered",
                        "other.trainer_argument_removed", "other.extension_build_failed"}, rule


@pytest.mark.parametrize("message", [
    # an import between libraries built on PyTorch: no library's own version rule claims it, only the generic
    # fallback for a name a release lacks (round 24's reading: `other`)
    "ImportError: cannot import name 'get_accelerator' from 'deepspeed'",
])
def test_library_version_checks_get_only_the_generic_release_rule(message):
    rule = explain_text(message).rule
    assert rule == "other.import_name_missing", rule
