"""Round-47 wordings for GPU stacks other than CUDA (AMD ROCm/HIP: MIOpen, hipBLASLt, libdrm's amdgpu.ids, bitsandbytes'
ROCm library, composable_kernel in flash-attention; Intel XPU and IPEX; DirectML; out-of-tree dispatch keys; vLLM's V1
workers; a ComfyUI report of a CPU-only torch): each corpus message (verbatim from the opened rounds) is claimed, from
its text alone, by the right rule with the values it holds named the way the coverage judge reads them; other wordings
of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r47_a.yaml#5", "device.directml_unknown_hresult", ["-2147024809"]),
    ("r47_a.yaml#28", "device.miopen_error", ["convolutionocl.cpp:275", "GemmFwdRest", "1228800"]),
    ("r47_a.yaml#46", "other.operator_kernel_override_warning",
     ["OperatorEntry.cpp:153", "aten::cat", "XLA", "DIOPIAdapter.cpp:3364"]),
    ("r47_a.yaml#48", "device.no_xpu_device", ["XPUFunctions.cpp:109", "2.7.0.dev20250214+xpu"]),
    ("r47_a.yaml#55", "other.rocm_amdgpu_ids_missing", ["/opt/amdgpu/share/libdrm/amdgpu.ids"]),
    ("r47_a.yaml#56", "device.hipblaslt_unsupported_arch", ["hipBLASLt", "hipblas"]),
    ("r47_a.yaml#63", "other.bnb_native_library_missing", ["libbitsandbytes_rocm80.so", 'cextension.py", line 282']),
    ("r47_a.yaml#73", "device.backend_not_available", ["torch_ipex::woq_linear.xpu", "CPU"]),
    ("r47_a.yaml#78", "device.ck_hip_function_failed",
     ["kernel_launch_hip.hpp,51", 'flash_attn_interface.py", line 165', "varlen_fwd"]),
    ("r47_a.yaml#85", "distributed.vllm_worker_method_error", ['core.py", line 787', 'multiproc_executor.py", line 243']),
    ("r47_a.yaml#88", "device.no_cuda_build", ["Ruyi_I2VSampler", "AssertionError"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def _names_in_words(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_the_reasons_the_corpus_messages_hold_are_read():
    # WSL2's torch-directml prints the HRESULT as a number: 0x80070057 is E_INVALIDARG
    assert_names(explain_paste(corpus_message("r47_a.yaml#5")), "device.directml_unknown_hresult",
                 ["0x80070057", "E_INVALIDARG", "WSL2"])
    # MIOpen's solver was given no workspace (0 bytes) before it found no algorithm
    assert_names(explain_paste(corpus_message("r47_a.yaml#28")), "device.miopen_error", ["0 bytes", "Windows"])
    # an Ascend plugin borrowing the XLA key: a warning at import, not a failure
    assert_names(explain_paste(corpus_message("r47_a.yaml#46")), "other.operator_kernel_override_warning",
                 ["LegacyBatchingRegistrations.cpp:1079", "It is a warning"])
    # the ROCm version torch reports names the library bitsandbytes looks for
    _names_in_words("r47_a.yaml#63", "other.bnb_native_library_missing",
                 ["torch.version.hip", "-DCOMPUTE_BACKEND=hip"])
    # IPEX's XPU kernel chosen for CPU tensors by the library that calls it
    _names_in_words("r47_a.yaml#73", "device.backend_not_available",
                 ["`.xpu`", "#1453"])
    # hipErrorSharedObjectInitFailed: the extension's ROCm and torch's differ
    _names_in_words("r47_a.yaml#78", "device.ck_hip_function_failed",
                 ["hipErrorSharedObjectInitFailed", "torch.version.hip"])
    # the worker's error text was empty; its own traceback is above
    assert_names(explain_paste(corpus_message("r47_a.yaml#85")), "distributed.vllm_worker_method_error",
                 ["empty error text", "_handle_client_request"])


@pytest.mark.parametrize("text, rule, values", [
    # the same HRESULT with Windows' own text for it (lshqqytiger/stable-diffusion-webui-amdgpu#79)
    ("RuntimeError: The parameter is incorrect.", "device.directml_unknown_hresult", ["0x80070057", "venv"]),
    # TheRock's Windows build on gfx1151 (ROCm/TheRock#724)
    ("MIOpen Error: D:/jam/TheRock/ml-libs/MIOpen/src/ocl/convolutionocl.cpp:275: No suitable algorithm was found to "
     "execute the required convolution\n!!! Exception during processing !!! miopenStatusUnknownError",
     "device.miopen_error", ["convolutionocl.cpp:275", "No suitable algorithm"]),
    # torch_npu registering under the XLA key (pytorch/pytorch#111887)
    ("[W OperatorEntry.cpp:150] Warning: Overriding a previously registered kernel for the same operator and the same "
     "dispatch key\n  operator: aten::_foreach_floor(Tensor[] tensors) -> (Tensor[])\n    registered at build/aten/src/"
     "ATen/RegisterSchema.cpp:6\n  dispatch key: XLA\n  previous kernel: registered at ./build/aten/src/ATen/RegisterCPU"
     ".cpp:21063\n       new kernel: registered at ./torch_npu/csrc/aten/RegisterNPU.cpp:20012 (function "
     "registerKernel)", "other.operator_kernel_override_warning",
     ["OperatorEntry.cpp:150", "aten::_foreach_floor", "XLA", "RegisterNPU.cpp:20012", "RegisterCPU.cpp:21063"]),
    # functorch registering two batching rules for one op (pytorch/functorch#61)
    ("[W OperatorEntry.cpp:116] Warning: Overriding a previously registered kernel for the same operator and the same "
     "dispatch key\n  operator: aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
     "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> (Tensor)\n    registered at "
     "aten/src/ATen/RegisterSchema.cpp:19\n  dispatch key: FuncTorchBatched\n  previous kernel: registered at ../aten/"
     "src/ATen/autocast_mode.cpp:450\n       new kernel: registered at /home/chilli/fb/functorch/functorch/csrc/"
     "BatchRulesConv.cpp:198 (function registerKernel)", "other.operator_kernel_override_warning",
     ["aten::batch_norm", "FuncTorchBatched", "BatchRulesConv.cpp:198"]),
    # Windows, AI Playground's backend (intel/AI-Playground#342)
    ("C:\\Users\\PC\\AppData\\Local\\Programs\\AI Playground\\resources\\ai-backend-env\\Lib\\site-packages\\torch\\xpu\\"
     "__init__.py:60: UserWarning: Failed to initialize XPU devices. The driver may not be installed, installed "
     "incorrectly, or incompatible with the current setup. Please refer to the guideline (https://github.com/pytorch/"
     "pytorch?tab=readme-ov-file#intel-gpu-support) for proper installation and configuration. (Triggered internally at "
     "C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\c10\\xpu\\XPUFunctions.cpp:111.)\n  return "
     "torch._C._xpu_getDeviceCount()", "device.no_xpu_device", ["XPUFunctions.cpp:111", "Level Zero"]),
    # a docker compose service without the GPU's render node (open-edge-platform/physical-ai-studio#261)
    ("geti-action-1  | /app/application/backend/.venv/lib/python3.12/site-packages/torch/xpu/__init__.py:60: UserWarning: "
     "Failed to initialize XPU devices. The driver may not be installed, installed incorrectly, or incompatible with the "
     "current setup. Please refer to the guideline (https://github.com/pytorch/pytorch?tab=readme-ov-file#intel-gpu-"
     "support) for proper installation and configuration. (Triggered internally at /pytorch/c10/xpu/XPUFunctions.cpp:"
     "109.)\ngeti-action-1  |   return torch._C._xpu_getDeviceCount()", "device.no_xpu_device",
     ["XPUFunctions.cpp:109", "/dev/dri", "render"]),
    # TheRock's libdrm, built with no prefix (ROCm/TheRock#147)
    ("/share/libdrm/amdgpu.ids: No such file or directory\n/share/libdrm/amdgpu.ids: No such file or directory",
     "other.rocm_amdgpu_ids_missing", ["/share/libdrm/amdgpu.ids", "rocm_sysdeps"]),
    # torch's own log line, quoted (pytorch/pytorch#138067)
    ("> [W1016 17:27:46.690175963 Context.cpp:301] Warning: Attempting to use hipBLASLt on an unsupported architecture! "
     "Overriding blas backend to hipblas (function operator())\n> torch.backends.cuda.preferred_blas_library() =  "
     "_BlasBackend.Cublas", "device.hipblaslt_unsupported_arch", ["Context.cpp:301", "hipblas", "TORCH_BLAS_PREFER_HIPBLASLT"]),
    # the check raised as an error, in ComfyUI (ROCm/hipBLASLt#1243)
    ("!!! Exception during processing !!! Attempting to use hipBLASLt on a unsupported architecture!",
     "device.hipblaslt_unsupported_arch", ["hipBLASLt", "stops"]),
    # an installed wheel, logged through bitsandbytes' logger (amd/playbooks#250)
    ("[bitsandbytes.cextension|ERROR]bitsandbytes library load error: Configured ROCm binary not found at /home/ubuntu/"
     "unsloth-env/lib/python3.12/site-packages/bitsandbytes/libbitsandbytes_rocm82.so\nTraceback (most recent call "
     "last):\n  File \"/home/ubuntu/unsloth-env/lib/python3.12/site-packages/bitsandbytes/cextension.py\", line 320, in "
     "<module>\n    lib = get_native_library()\n          ^^^^^^^^^^^^^^^^^^^^\n  File \"/home/ubuntu/unsloth-env/lib/"
     "python3.12/site-packages/bitsandbytes/cextension.py\", line 288, in get_native_library\n    raise RuntimeError(f"
     "\"Configured {BNB_BACKEND} binary not found at {cuda_binary_path}\")\nRuntimeError: Configured ROCm binary not "
     "found at /home/ubuntu/unsloth-env/lib/python3.12/site-packages/bitsandbytes/libbitsandbytes_rocm82.so",
     "other.bnb_native_library_missing", ["libbitsandbytes_rocm82.so", "cextension.py:288"]),
    # the same in a hermetic build on an MI350P (bitsandbytes-foundation/bitsandbytes#2014)
    ("bitsandbytes library load error: Configured ROCm binary not found at /opt/app-root/lib64/python3.12/site-packages/"
     "bitsandbytes/libbitsandbytes_rocm84.so\nTraceback (most recent call last):\n  File \"/opt/app-root/lib64/"
     "python3.12/site-packages/bitsandbytes/cextension.py\", line 320, in <module>\n    lib = get_native_library()\n"
     "          ^^^^^^^^^^^^^^^^^^^^\n  File \"/opt/app-root/lib64/python3.12/site-packages/bitsandbytes/cextension.py\", "
     "line 288, in get_native_library\n    raise RuntimeError(f\"Configured {BNB_BACKEND} binary not found at "
     "{cuda_binary_path}\")\nRuntimeError: Configured ROCm binary not found at /opt/app-root/lib64/python3.12/"
     "site-packages/bitsandbytes/libbitsandbytes_rocm84.so", "other.bnb_native_library_missing",
     ["libbitsandbytes_rocm84.so", "cextension.py:288"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # the system libdrm's path, printed by a snap (canonical/steam-snap#176): not PyTorch's bundled libdrm
    ("/usr/share/libdrm/amdgpu.ids: No such file or directory", "other.rocm_amdgpu_ids_missing"),
    # CUDA's own unknown error (pytorch/pytorch#11989): no HRESULT
    ("RuntimeError: CUDA error: unknown error", "device.directml_unknown_hresult"),
    # torch's HIP error, not composable_kernel's check (etched-ai/open-oasis#27)
    ("RuntimeError: HIP error: invalid device function", "device.ck_hip_function_failed"),
    # another warning torch raises while it initialises (pytorch/pytorch#145433)
    ("/usr/local/lib/python3.10/site-packages/torch/_subclasses/functional_tensor.py:275: UserWarning: Failed to "
     "initialize NumPy: No module named 'numpy' (Triggered internally at /pytorch/torch/csrc/utils/tensor_numpy.cpp:81.)",
     "device.no_xpu_device"),
    # the experimental-feature warning of the same setter (pytorch/pytorch#128753)
    ("[W617 19:58:58.286088851 Context.cpp:280] Warning: torch.backends.cuda.preferred_blas_library is an experimental "
     "feature. If you see any error or unexpected behavior when this flag is set please file an issue on GitHub. "
     "(function operator())", "device.hipblaslt_unsupported_arch"),
    # the engine core's own failure line (igeniusai/domyn-swarm#97): not a worker's
    ("(EngineCore_0 pid=1284) ERROR 10-14 17:48:53 [core.py:700] EngineCore failed to start.",
     "distributed.vllm_worker_method_error"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_an_ascend_worker_failure_stays_with_the_ascend_rule():
    # vllm-ascend's worker reporting ACL's failure (the Ascend rule's example): the NPU error answers, not the report
    text = ("RuntimeError: Worker failed with error 'ACL stream synchronize failed, error code:507034', please check the "
            "stack trace above for the root cause\n[W723 10:35:58.297759598 compiler_depend.ts:526] Warning: NPU warning, "
            "error code is 507034[Error]:")
    assert_explained(explain_paste(text), "device.ascend_npu_runtime_error", ["507034"])
