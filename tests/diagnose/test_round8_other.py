"""Round-8 'other' rules (xFormers, Torch-TensorRT, bitsandbytes, file format versions, torch_shm_manager, native
crashes, nn.Module attributes, extension builds), against real wordings and errors raised by real torch calls."""

from __future__ import annotations

import pytest

from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_fixture, explain_paste, said


# --- errors raised by real torch calls ----------------------------------------------------------

def test_checkpoint_from_a_newer_torch_names_both_format_versions():
    diagnosis = explain_fixture("fixtures/other/file_format_version_too_new.py")
    assert_names(diagnosis, "other.file_format_version_mismatch", ["version 99", "at most version"])
    assert "Upgrade the PyTorch" in said(diagnosis)


def test_missing_module_attribute_names_class_and_attribute_live():
    diagnosis = explain_fixture("fixtures/other/nn_module_no_attribute.py")
    assert_names(diagnosis, "other.nn_module_no_attribute", ["`Backbone`", "`act1`"])


def test_custom_op_library_that_does_not_load_names_the_file():
    diagnosis = explain_fixture("fixtures/other/ops_load_library_failed.py")
    assert_names(diagnosis, "other.ops_load_library_failed", ["`my_ops.so`"])
    assert "ctypes.CDLL" in said(diagnosis)


# --- wordings from real threads, as `explainer explain -` reads a paste ---------------------------

XFORMERS_CAPABILITY = (
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
    "     query       : shape=(1, 2, 1, 40) (torch.float32)\n"
    "     key         : shape=(1, 2, 1, 40) (torch.float32)\n"
    "     value       : shape=(1, 2, 1, 40) (torch.float32)\n"
    "     attn_bias   : <class 'NoneType'>\n"
    "     p           : 0.0\n"
    "`decoderF` is not supported because:\n"
    "    xFormers wasn't build with CUDA support\n"
    "`flshattF@0.0.0` is not supported because:\n"
    "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
    "    dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})\n"
    "    operator wasn't built - see `python -m xformers.info` for more info")


@pytest.mark.parametrize("message, rule, values", [
    # xFormers: the dispatcher's refusal (new and 0.0.1x wordings) and the import-time build check
    (XFORMERS_CAPABILITY, "other.xformers_no_operator",
     ["`memory_efficient_attention_forward`", "(1, 2, 1, 40)", "torch.float32", "(7, 5)", "> (8, 0)",
      "not built with CUDA support"]),
    # (tensors on the CPU, the first reason, are device.xformers_cpu_inputs's)
    ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs: query : "
     "shape=(1, 4096, 1, 512) (torch.float16) key : shape=(1, 4096, 1, 512) (torch.float16) `flshattF` is not "
     "supported because: max(query.shape[-1] != value.shape[-1]) > 128 `smallkF` is not supported because: "
     "unsupported embed per head: 512", "other.xformers_no_operator",
     ["(1, 4096, 1, 512)", "torch.float16", "max(query.shape[-1] != value.shape[-1]) > 128"]),
    ("NotImplementedError: No operator found for this attention: AttentionOpDispatch(dtype=torch.float32, "
     "device=device(type='cuda', index=0), k=160, has_dropout=False)", "other.xformers_no_operator",
     ["torch.float32", "`cuda`", "head dimension 160"]),
    ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.0.1+cpu)\n    Python  3.10.11 (you have 3.10.11)",
     "other.xformers_build_mismatch", ["PyTorch 2.0.1+cu118", "CUDA 11.8", "2.0.1+cpu", "without CUDA"]),
    ("WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.1.0+cu121)", "other.xformers_build_mismatch",
     ["PyTorch 2.0.1+cu118", "2.1.0+cu121", "one exact torch release"]),
    # Torch-TensorRT's TorchScript frontend
    ("ERROR: [Torch-TensorRT - Debug Build] - Unsupported operator: aten::max.dim(Tensor self, int dim, bool "
     "keepdim=False) -> (Tensor values, Tensor indices)", "other.tensorrt_unsupported_operator",
     ["`aten::max.dim`", "Torch-TensorRT"]),
    ("ERROR: [TRTorch] - Method requested cannot be compiled by TRTorch.\nUnsupported operators listed below:\n"
     "  -  aten::__contains__.str_list(str[] l, str item) -> (bool)", "other.tensorrt_unsupported_operator",
     ["`aten::__contains__.str_list`", "TRTorch"]),
    ("RuntimeError: [Error thrown at core/compiler.cpp:446] Expected conversion::VerifyConverterSupportForBlock("
     "g->block()) to be true but got false\nNot all operations in graph are supported by the compiler",
     "other.tensorrt_unsupported_operator", ["VerifyConverterSupportForBlock"]),
    # bitsandbytes without its CUDA library
    ("UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit "
     "multiplication, and GPU quantization are unavailable.\n'NoneType' object has no attribute 'cadam32bit_grad_fp32'",
     "other.bnb_cpu_library_loaded", ["`cadam32bit_grad_fp32`", "libbitsandbytes_cpu", "0.43"]),
    ("/usr/local/lib/python3.10/dist-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: "
     "cadam32bit_grad_fp32", "other.bnb_cpu_library_loaded", ["`libbitsandbytes_cpu.so`", "`cadam32bit_grad_fp32`"]),
    # file formats: torch.load / torch.jit.load / the lite interpreter
    ("RuntimeError: version_ <= kMaxSupportedFileFormatVersion INTERNAL ASSERT FAILED at "
     "..\\caffe2\\serialize\\inline_container.cc:132, please report a bug to PyTorch. Attempted to read a PyTorch "
     "file with version 3, but the maximum supported version for reading is 2. Your PyTorch installation may be too "
     "old.", "other.file_format_version_mismatch", ["version 3", "at most version 2"]),
    ("com.facebook.jni.CppException: Lite Interpreter verson number does not match. The model version must be "
     "between 3 and 5But the model version is 7 ()", "other.file_format_version_mismatch",
     ["model version is 7", "between 3 and 5", "to_version=5"]),
    # torch_shm_manager, at import and when sharing tensors
    ("com.chaquo.python.PyException: RuntimeError: Unable to find torch_shm_manager at "
     "/android_asset/chaquopy/requirements-common.zip/torch/bin/torch_shm_manager", "other.torch_shm_manager_failed",
     ["`torch_shm_manager`", "/android_asset/chaquopy/requirements-common.zip/torch/bin/torch_shm_manager", "Chaquopy"]),
    ('RuntimeError: torch_shm_manager at "/venv/lib/python3.11/site-packages/torch/bin/torch_shm_manager": execl '
     "failed: Permission denied", "other.torch_shm_manager_failed", ["execl failed: Permission denied", "noexec"]),
    # native crashes
    ("[ip-172-31-77-112:61444] Signal: Segmentation fault (11)\n"
     "[ip-172-31-77-112:61444] [ 3] /home/ubuntu/.local/lib/python3.5/site-packages/torch/lib/libcaffe2.so("
     "THStorage_free+0x38)[0x7f109f2320c8]", "other.native_segfault", ["Segmentation fault (11)", "`THStorage_free`"]),
    ("Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)", "other.native_segfault",
     ["exit code 139", "faulthandler"]),
    ('Thread 1 "python" received signal SIGILL, Illegal instruction.\n0x00007fffa8ec2486 in '
     "THFloatVector_normal_fill_AVX2 () from /U01/anaconda3/envs/pyt1/lib/python3.7/site-packages/torch/lib/libcaffe2.so",
     "other.native_illegal_instruction", ["`THFloatVector_normal_fill_AVX2`", "(AVX2)", "ATEN_CPU_CAPABILITY=default"]),
    (">>> import torch\n>>> torch.nn.init.kaiming_normal_(c.weight)\nIllegal instruction (core dumped)",
     "other.native_illegal_instruction", ["Illegal instruction (core dumped)", "lscpu"]),
    ("OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
     '"C:\\Python310\\lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its dependencies.',
     "memory.windows_paging_file", ["WinError 1455", "`cudnn_adv_infer64_8.dll`", "paging file", "num_workers"]),
    # extension builds and imports
    ("nvcc fatal   : Unsupported gpu architecture 'compute_61\nerror: command '/usr/bin/nvcc' failed with exit status 1",
     "other.extension_build_failed", ["`compute_61`", "CUDA 8", "TORCH_CUDA_ARCH_LIST"]),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_120'\nerror: command '/usr/local/cuda/bin/nvcc' failed "
     "with exit code 1", "other.extension_build_failed", ["`compute_120`", "CUDA 12.8"]),
    ("ModuleNotFoundError: No module named 'torch_scatter.scatter_cuda'", "other.extension_module_missing",
     ["`torch_scatter.scatter_cuda`", "data.pyg.org"]),
    ("ModuleNotFoundError: No module named 'fused_layer_norm_cuda'", "other.extension_module_missing",
     ["`fused_layer_norm_cuda`", "apex", "--cuda_ext"]),
    ("ImportError: cannot import name '_C' from partially initialized module 'oneccl_bindings_for_pytorch' (most likely "
     "due to a circular import) (/torch-ccl/oneccl_bindings_for_pytorch/__init__.py)", "other.extension_module_missing",
     ["`_C`", "`oneccl_bindings_for_pytorch`", "source folder"]),
    ("OSError: Could not load this library: /usr/lib/python3/site-packages/torchvision/image.so",
     "other.ops_load_library_failed", ["`image.so`", "torchvision", "pip install --force-reinstall torch torchvision"]),
    ("RuntimeError: No such operator image::read_file", "other.torchvision_ops_missing",
     ["`image::read_file`", "torchvision/image.so"]),
    ("RuntimeError: Not compiled with CUDA support", "other.extension_not_compiled_gpu", ["data.pyg.org", "FORCE_CUDA"]),
    ("deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.2 "
     "does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a "
     "matching cuda version.", "other.extension_cuda_version_mismatch", ["CUDA 12.2", "CUDA 11.7", "DS_SKIP_CUDA_CHECK"]),
    ("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
     "compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.2.", "other.extension_cuda_version_mismatch",
     ["apex", "CUDA 10.2"]),
    ("RuntimeError: Failed to import transformers.models.bloom.modeling_bloom because of the following error (look up "
     "to see its traceback):\n/home/u/anaconda3/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-"
     "linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE", "other.undefined_symbol",
     ["`transformers.models.bloom.modeling_bloom`", "flash_attn_2_cuda"]),
    ("ImportError: /home/k/anaconda3/envs/b/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: "
     "undefined symbol: _ZN2at5sliceERKNS_6TensorElN3c108optionalIlEES5_l", "other.undefined_symbol",
     ["`mmcv/_ext.cpython-38-x86_64-linux-gnu.so`"]),
])
def test_diagnoses_name_the_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message", [
    # (Torch-TensorRT's INFO report of a partial compilation is compile.torch_tensorrt_conversion's since round 36,
    # whose summary says it is not the failure: test_round36_comp.py)
    # a C++ build's nvcc failure with nothing of torch around it (a bare "Illegal instruction (core dumped)" is
    # other.native_illegal_instruction's since round 28: the corpus's entries with that wording alone are `other`)
    "nvcc fatal   : Unsupported gpu architecture 'compute_35'\nCMake Error at gadgetron_toolbox_gpucore_generated.cmake:206",
    "[WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the version torch was compiled with "
    "11.8.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may result in unexpected behavior.",
    "ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)",
])
def test_near_misses_stay_unclaimed(message):
    rule = explain_text(message).rule
    assert rule is None, rule


def test_a_plain_attribute_error_is_only_pythons_generic_reading():
    # nothing says the object is an nn.Module: not other.nn_module_no_attribute, only the generic fallback (`other`,
    # fixtures/real/README.md); a bare crash line pasted alone is a native crash (other.native_segfault)
    assert explain_text("AttributeError: 'Separation' object has no attribute 'use_amp'").rule == \
        "other.object_has_no_attribute"
    assert explain_text("Segmentation fault (core dumped)").rule == "other.native_segfault"
