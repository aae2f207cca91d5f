"""Round-6 'other' rules (installation, native libraries, imports, versions) and the foreign rules for
ONNX Runtime, llama.cpp/ggml and rocALUTION, against real wordings and errors raised by real torch calls."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

from explainer import explain
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text
from explainer.rules.base import default_rulebase

from conftest import assert_names, raise_fixture, raised

RULEBASE = default_rulebase()


# --- errors raised by real torch calls ----------------------------------------------------------

def test_float_input_to_quantized_conv_names_op_and_backend():
    diagnosis = explain(raise_fixture("fixtures/other/quantized_float_input.py"))
    assert_names(diagnosis, "other.quantized_backend_mismatch",
                 ["`quantized::conv2d.new`", "'CPU' backend", "QuantizedCPU", "QuantStub"])


def test_quantized_tensor_into_float_add_names_op_and_functional():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.quint8)
    diagnosis = explain(raised(lambda: q + q))
    assert_names(diagnosis, "other.quantized_backend_mismatch",
                 ["`aten::add.out`", "'QuantizedCPU' backend", "FloatFunctional", "DeQuantStub"])


# --- wordings from real threads, message only -----------------------------------------------------

@pytest.mark.parametrize("message, rule, values", [
    # torchvision's compiled ops, three torch generations of wording
    ("RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are "
     "incompatible, or if you had errors while compiling torchvision from source.",
     "other.torchvision_ops_missing", ["torchvision/_C.so", "not a matching pair"]),
    ("RuntimeError: No such operator torchvision::nms", "other.torchvision_ops_missing", ["`torchvision::nms`"]),
    ("RuntimeError: operator torchvision::roi_align does not exist", "other.torchvision_ops_missing",
     ["`torchvision::roi_align`"]),
    ("RuntimeError: Could not run 'torchvision::nms' with arguments from the 'C", "other.torchvision_ops_missing",
     ["`torchvision::nms`"]),
    # undefined symbols: C++ (mangled, lower-cased by a paste), Python-binding, TH and CUDA symbols, macOS
    ("ImportError: ./smtl_cuda.so: undefined symbol: THPVariableClass", "other.undefined_symbol",
     ["`smtl_cuda.so`", "`THPVariableClass`", "libtorch_python"]),
    ("ImportError: /usr/lib/python3.6/site-packages/my_conv.cpython-36m-x86_64-linux-gnu.so: undefined symbol: _THError",
     "other.undefined_symbol", ["`_THError`", "TH/THC"]),
    ("ImportError: /env/lib/python3.6/site-packages/torch/_C.cpython-36m-x86_64-linux-gnu.so: undefined symbol: "
     "nvrtcGetProgramLogSize", "other.undefined_symbol", ["`nvrtcGetProgramLogSize`", "NVRTC"]),
    ("ImportError: dlopen(/env/lib/python3.7/site-packages/_torch_sox.cpython-37m-darwin.so, 2): Symbol not found: "
     "__ZN3c1011CPUTensorIdEv", "other.undefined_symbol", ["`_torch_sox.cpython-37m-darwin.so`", "`__ZN3c1011CPUTensorIdEv`"]),
    # building extensions
    ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
     "other.cuda_home_not_set", ["`CUDA_HOME`", "CUDA toolkit"]),
    ("deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
     "other.cuda_home_not_set", ["`CUDA_HOME`", "DeepSpeed"]),
    ("error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1", "other.extension_build_failed",
     ["`nvcc`", "exit status 1"]),
    ("error: command 'C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA\\\\v10.1\\\\bin\\\\nvcc' failed: No such file or directory",
     "other.extension_build_failed", ["`nvcc`", "No such file or directory", "CUDA_HOME"]),
    ("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
     "other.extension_build_failed", ["`ninja -v`", "exit status 1"]),
    ("ModuleNotFoundError: No module named 'mmcv._ext'", "other.extension_module_missing",
     ["`mmcv._ext`", "mmcv-lite"]),
    ("ImportError: cannot import name '_C' from 'detectron2' (/home/u/detectron2/detectron2/__init__.py)",
     "other.extension_module_missing", ["`_C`", "`detectron2`"]),
    # versions of companion libraries
    ("RuntimeError: scatter_add() expected at most 5 argument(s) but received 6 argument(s). Declaration: "
     "scatter_add(Tensor src, Tensor index, int dim=-1, Tensor? out=None, int? dim_size=None) -> (Tensor)",
     "other.scatter_api_mismatch", ["`scatter_add()`", "at most 5", "with 6", "fill_value"]),
    ("TypeError: scatter_max() takes from 2 to 5 positional arguments but 6 were given",
     "other.scatter_api_mismatch", ["`scatter_max()`", "at most 5", "with 6"]),
    ("ImportError: cannot import name 'BucketIterator' from 'torchtext.data' (/env/torchtext/data/__init__.py)",
     "other.torchtext_legacy_removed", ["`BucketIterator`", "`torchtext.data`", "0.12"]),
    ("ModuleNotFoundError: No module named 'torchtext.legacy'", "other.torchtext_legacy_removed",
     ["`torchtext.legacy`", "0.12"]),
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different\nCUDA versions. PyTorch has "
     "CUDA Version=11.7 and torchvision has CUDA \nVersion=11.8. Please reinstall the torchvision that matches your "
     "PyTorch \ninstall.", "other.domain_library_cuda_mismatch", ["CUDA 11.7", "CUDA 11.8", "torchvision"]),
    ("ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
     "other.torchvision_module_version", ["`torchvision.transforms.functional_tensor`", "0.17"]),
    ("ModuleNotFoundError: No module named 'torchvision.transforms.v2'", "other.torchvision_module_version",
     ["`torchvision.transforms.v2`", "0.15"]),
    ("AttributeError: 'Tensor' object has no attribute 'ndim'", "other.tensor_attribute_newer_torch",
     ["`Tensor.ndim`", "x.dim()"]),
    # hub, quantization engines, Windows DLLs
    ("urllib.error.HTTPError: HTTP Error 403: rate limit exceeded", "other.hub_http_error",
     ["HTTP Error 403", "rate limit exceeded", "60 unauthenticated"]),
    ("RuntimeError: Didn't find engine for operation quantized::linear_prepack NoQEngine",
     "other.quantized_engine_unavailable", ["`quantized::linear_prepack`", "NoQEngine"]),
    ("RuntimeError: quantized engine FBGEMM is not supported", "other.quantized_engine_unavailable", ["`FBGEMM`"]),
    ("RuntimeError: Could not run 'quantized::linear' with arguments from the 'CPU' backend. 'quantized::linear' is "
     "only available for these backends: [QuantizedCPU, BackendSelect].", "other.quantized_backend_mismatch",
     ["`quantized::linear`", "'CPU' backend", "QuantizedCPU"]),
    ("FileNotFoundError: Could not find module 'C:\\Python38\\lib\\site-packages\\torch\\lib\\caffe2_nvrtc.dll' "
     "(or one of its dependencies). Try using the full path with constructor syntax.",
     "other.dll_load_failed", ["`caffe2_nvrtc.dll`"]),
    ("  File \"torch\\__init__.py\", line 137, in <module>\n    raise err\nOSError: [WinError 126] The specified module "
     "could not be found.", "other.dll_load_failed", ["WinError 126", "torch\\lib"]),
    # wider families of the same installs
    ("ImportError: /env/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent",
     "other.undefined_symbol", ["`iJIT_NotifyEvent`", "MKL 2024.1"]),
    ("ImportError: /env/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined "
     "symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12", "other.cuda_runtime_symbol",
     ["`libcusparse.so.12`", "`__nvJitLinkComplete_12_4`", "`libnvJitLink.so.12`"]),
    ("OSError: libcusparseLt.so.0: cannot open shared object file: No such file or directory",
     "other.shared_library_missing", ["`libcusparseLt.so.0`"]),
    ("UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
     "../torch/csrc/utils/tensor_numpy.cpp:84.)", "other.numpy_incompatible", ["_ARRAY_API not found", "NumPy 2"]),
    ("UserWarning: Failed to initialize NumPy: module compiled against API version 0x10 but this version of numpy is "
     "0xd . Check the section", "other.numpy_incompatible", ["0x10", "0xd", "older numpy"]),
    ("RuntimeError: Numpy is not available", "other.numpy_incompatible", ["Numpy is not available", "NumPy 2.x"]),
    ("ImportError: DLL load failed while importing _C: The specified module could not be found.",
     "other.dll_load_failed", ["`_C`", "The specified module could not be found"]),
    ("ModuleNotFoundError: No module named 'torch._dynamo'", "other.torch_attribute_missing", ["`torch._dynamo`"]),
])
def test_message_only_summaries_name_the_values(message, rule, values):
    assert_names(explain_text(message), rule, values)


# --- other runtimes: said to be foreign, whatever CUDA wording they share with PyTorch -------------

@pytest.mark.parametrize("message, rule, values", [
    ("D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:121 onnxruntime::CudaCall "
     "D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:114 onnxruntime::CudaCall CUDA failure 35: "
     "CUDA driver version is insufficient for CUDA runtime version ; GPU=0 ; hostname=PC ; expr=cudaSetDevice(info_.device_id);",
     "other.not_pytorch_onnxruntime", ["CUDA failure 35", "ONNX Runtime", "cudaSetDevice(info_.device_id)"]),
    ("[E:onnxruntime:, sequential_executor.cc:127 onnxruntime::SequentialExecutor::Execute] Non-zero status code",
     "other.not_pytorch_onnxruntime", ["ONNX Runtime"]),
    ("CUDA error: no kernel image is available for execution on the device\n  current device: 0, in function "
     "ggml_cuda_compute_forward at /opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2761\n  err\n"
     "/opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error",
     "other.not_pytorch_llamacpp", ["no kernel image", "`ggml_cuda_compute_forward`", "llama.cpp"]),
    ("CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices",
     "other.not_pytorch_llamacpp", ["peer access is not supported", "CUDA error 217", "ggml-cuda.cu:6292"]),
    ("2021-03-01 10:00:00.123456: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load "
     "dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or "
     "directory", "other.not_pytorch_tensorflow", ["Could not load dynamic library", "dso_loader.cc"]),
    ("HIP error: invalid device function\nFile: /build/src/extlibs/rocALUTION/src/base/hip/hip_vector.cpp; line: 845",
     "other.not_pytorch_rocalution", ["invalid device function", "hip_vector.cpp", "845"]),
])
def test_other_runtimes_are_foreign(message, rule, values):
    claimed = RULEBASE.claim(message)
    assert claimed is not None and claimed.rule.id == rule, claimed and claimed.rule.id
    diagnosis = explain_text(message)
    assert diagnosis.rule is None and diagnosis.title.startswith("Not a PyTorch error"), diagnosis.title
    assert_names(diagnosis, None, values)


def test_foreign_runtime_messages_are_not_explained_as_pytorch_failures():
    message = ("CUDA error: CUDA-capable device(s) is/are busy or unavailable\n  current device: 0, in function "
               "ggml_cuda_set_device at /appuser/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:86\n  cudaSetDevice(device)\n"
               "/appuser/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:73: CUDA error")
    assert all(d.rule is None for d in explain_stream(io.StringIO(message)))


@pytest.mark.parametrize("message", [
    # PyTorch's own CUDA wordings stay with the PyTorch rules
    "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "RuntimeError: HIP error: invalid device function",
    # an ONNX Runtime warning says nothing about what fails next
    # torch_xla's messages carry tensorflow/compiler/xla paths: they are PyTorch's
    "RuntimeError: tensorflow/compiler/xla/xla_client/xrt_computation_client.cc:1110 : Check failed: session->Run()",
    "2023-07-31 14:22:06.483132863 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:640 "
    "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider.",
])
def test_pytorch_cuda_wordings_are_not_foreign(message):
    assert RULEBASE.foreign_match(message) is None


@pytest.mark.parametrize("message", [
    "ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)",
    "AttributeError: 'Tensor' object has no attribute 'astype'",
    "ImportError: /usr/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
    "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
    "ModuleNotFoundError: No module named 'torch'",
    "error: command 'gcc' failed with exit status 1",
    "ImportError: DLL load failed: The specified module could not be found.",
    "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.2.0 as it may crash.",
])
def test_near_misses_stay_unclaimed_by_these_rules(message):
    rule = explain_text(message).rule
    assert rule not in {"other.undefined_symbol", "other.tensor_attribute_newer_torch", "other.cuda_home_not_set",
                        "other.extension_module_missing", "other.extension_build_failed", "other.dll_load_failed",
                        "other.numpy_incompatible", "other.cuda_runtime_symbol"}, rule


def test_torch_c_keeps_its_own_rule():
    assert explain_text("ModuleNotFoundError: No module named 'torch._C'").rule == "other.no_module_torch_c"
