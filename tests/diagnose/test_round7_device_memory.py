"""Device and memory rules written from round 7 and from the wording families searched after it: pasted
messages whose diagnosis must repeat their values, the live errors torch raises on the CPU, and near
misses (other frameworks, other exit codes, other statuses) left unclaimed."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, said


@pytest.mark.parametrize("message, rule, values", [
    # round 7
    ("RuntimeError: merge_sort: failed to synchronize: cudaErrorIllegalAddress: an illegal memory access was "
     "encountered", "device.illegal_memory_access", ["merge_sort", "cudaErrorIllegalAddress"]),
    ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
     "first.", "device.numpy_cuda", ["cuda:0", "Tensor.cpu()"]),
    ("RuntimeError: CUDA error: peer mapping resources exhausted\nCUDA kernel errors might be asynchronously reported "
     "at some other API call, so the stacktrace below might be incorrect.", "device.cuda_runtime_error",
     ["peer mapping resources exhausted", "cudaErrorTooManyPeers", "8 peers"]),
    ("RuntimeError: cuda runtime error (98)  unrecognized error code at mmdet/ops/roi_align/src/roi_align_kernel.cu:145 "
     "Uncaught exception. Entering post mortem ", "device.cuda_runtime_error",
     ["unrecognized error code", "98", "roi_align_kernel.cu:145", "invalid device function"]),
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: driver shutting down\n",
     "device.cuda_runtime_error", ["driver shutting down", "cudaErrorCudartUnloading", "c10::Error"]),
    ("  File \"/usr/lib/python2.7/dist-packages/torch/backends/cudnn/__init__.py\", line 110, in __init__\n"
     "    check_error(lib.cudnnCreate(ctypes.byref(ptr)))\n\nCuDNNError: 1: CUDNN_STATUS_NOT_INITIALIZED",
     "device.cudnn_status", ["CUDNN_STATUS_NOT_INITIALIZED", "status 1", "CuDNNError"]),
    ("- **Exception Message:** CUDA error: no kernel image is available for execution on the device (at D:\\SoftWare\\"
     "nunchaku\\src\\kernels\\awq\\gemv_awq.cu:318)", "device.no_kernel_image", ["gemv_awq.cu:318"]),
    ("17:31:50-901543 ERROR    Exception: cuFFT doesn't support signals of half type with compute capability less "
     "than SM_53,\n                         but the device containing input half tensor only has SM_52",
     "device.cufft_half_capability", ["SM_53", "SM_52", "5.2", "half"]),
    ("ValueError: Expected a cuda device, but got: cpu", "device.expected_cuda_device", ["`cpu`", "CUDA"]),
    ("MultiGPUThreadPool: failed to set device xpu:0: Expected a cuda device, but got: xpu:0",
     "device.expected_cuda_device", ["xpu:0", "torch.xpu"]),
    ("RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable "
     "this check", "device.webui_torch_cuda_test", ["--skip-torch-cuda-test", "COMMANDLINE_ARGS",
                                                    "torch.cuda.is_available()"]),
    ("Error loading models: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as "
     "it is, since the model has already been set to the correct devices and casted to the correct `dtype`.",
     "other.quantized_model_move", ["`.to()`", "4-bit", "device_map"]),
    ("ValueError: Calling `cuda()` is not supported for `4-bit` or `8-bit` quantized models. Please use the model as "
     "it is", "other.quantized_model_move", ["`cuda()`"]),
    ("Process finished with exit code -1073741819 (0xC0000005)", "device.windows_access_violation",
     ["-1073741819", "0xC0000005", "STATUS_ACCESS_VIOLATION"]),
    ("RuntimeError: [enforce fail at event_gpu.cc:17] error == cudaSuccess. 2 vs 0. Error at: /home/sd/pytorch/caffe2/"
     "core/event_gpu.cc:17: out of memory ", "memory.cuda_error_oom", ["event_gpu.cc:17", "out of memory", "Caffe2"]),
    ("cog.server.exceptions.FatalWorkerException: Prediction failed for an unknown reason. It might have run out of "
     "memory? (exitcode -9)", "memory.process_killed", ["-9", "SIGKILL", "out-of-memory killer"]),
    ("Loading checkpoint shards:  38%|██████▊           | 3/8 [00:02<00:03,  1.28it/s]Killed", "memory.process_killed",
     ["3/8", "Loading checkpoint shards", "SIGKILL"]),
    ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", "memory.process_killed",
     ["137", "SIGKILL"]),
    # wording families found after round 7
    ("RuntimeError: cannot pin 'torch.cuda.LongTensor' only dense CPU tensors can be pinned",
     "device.pin_non_cpu_tensor", ["torch.cuda.LongTensor", "pin_memory=True"]),
    ("RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "device.cufft_error", ["CUFFT_INTERNAL_ERROR", "RTX 40xx"]),
    ("RuntimeError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnSgetrf( handle, m, n, "
     "dA, ldda, static_cast<float*>(dataPtr.get()), ipiv, info)`", "device.cusolver_error",
     ["CUSOLVER_STATUS_EXECUTION_FAILED", "cusolverDnSgetrf", "NaN"]),
    ("RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`", "device.cusolver_error",
     ["error 7", "CUSOLVER_STATUS_INTERNAL_ERROR", "cusolverDnCreate"]),
    ("RuntimeError: No HIP GPUs are available", "device.no_cuda_device", ["No HIP GPUs are available", "ROCm"]),
    ("ValueError: You can't train a model that has been loaded in 8-bit precision on a different device than the one "
     "you're training on.", "device.quantized_train_device", ["8-bit", "torch.cuda.current_device()"]),
    ("ValueError: weight is on the meta device, we need a `value` to put in on 0.", "device.meta_weight_no_value",
     ["`weight`", "device 0", "meta"]),
    ("ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the "
     "quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, "
     "you need to set `llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map` to `from_pretrained`.",
     "memory.quantized_model_cpu_offload", ["llm_int8_enable_fp32_cpu_offload", "GPU"]),
    ("RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
     "tensor at cpu", "device.mismatch", ["cuda:0", "cpu", "hidden state", "device=x.device"]),
    ("ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV "
     "cache (3664). Try increasing gpu_memory_utilization or decreasing max_model_len when initializing the engine.",
     "memory.vllm_gpu_memory_utilization", ["4096", "3664", "--max-model-len 3664"]),
])
def test_round7_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # PaddlePaddle's cuFFT and cuDNN wordings, JAX's cuSOLVER and CuPy's cuFFT are not PyTorch's
    ("OSError: (External) CUFFT error(5). \n  [Hint: 'CUFFT_INTERNAL_ERROR'. Driver or internal cuFFT library error] "
     "(at /paddle/paddle/phi/kernels/funcs/cufft_util.h:127)", "device.cufft_error"),
    ("RuntimeError: jaxlib/cusolver.cc:51: operation cusolverDnCreate(&handle) failed: cuSolver internal error",
     "device.cusolver_error"),
    ("ValueError: Expected a cuda device, but got: Place(cpu)", "device.expected_cuda_device"),
    # other Windows crash codes and other signals are other failures
    ("Process finished with exit code -1073740791 (0xC0000409)", "device.windows_access_violation"),
    ("Process finished with exit code -1073741819 (0xC0000005)", "memory.process_killed"),
    ("cog.server.exceptions.FatalWorkerException: Prediction failed for an unknown reason. It might have run out of "
     "memory? (exitcode -11)", "memory.process_killed"),
    # an allocation failure of cuSOLVER or cuFFT is not an execution failure
    ("RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
     "device.cusolver_error"),
    ("RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", "device.cufft_error"),
])
def test_near_misses_are_not_claimed_by_the_round7_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert not_rule not in rules, rules


def test_a_cuda_function_given_the_cpu_device_names_the_device():
    diagnosis = explain_fixture("fixtures/device/cuda_api_cpu_device.py")
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    assert_names(diagnosis, "device.expected_cuda_device", ["`cpu`", "torch.cuda"])
    assert any("device.type == \"cuda\"" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_pinning_a_tensor_that_is_not_in_cpu_memory_names_its_type():
    diagnosis = explain_fixture("fixtures/device/pin_memory_meta_tensor.py")
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    assert_names(diagnosis, "device.pin_non_cpu_tensor", ["MetaFloatType", "meta tensor"])
