"""Device and memory rules written from round 8 and from the wording families searched after it (libraries
built on PyTorch: ultralytics, accelerate, transformers, torchmetrics, tiny-cuda-nn, torch-directml, vLLM,
xformers): pasted messages whose diagnosis must repeat their values, and near misses left unclaimed."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_paste, said


@pytest.mark.parametrize("message, rule, values", [
    # round 8
    ("NotImplementedError: Could not run 'aten::empty.memory_format' with arguments from the 'SparseMPS' backend. "
     "This could be because the operator doesn't exist for this backend. 'aten::empty.memory_format' is only "
     "available for these backends: [CPU, MPS, Meta, QuantizedCPU].", "device.backend_not_available",
     ["aten::empty.memory_format", "SparseMPS", "sparse", "to_dense()"]),
    (" [ERROR] CUDA runtime error: CUBLAS_STATUS_NOT_SUPPORTED", "device.cublas_status",
     ["CUBLAS_STATUS_NOT_SUPPORTED"]),
    ("Traceback (most recent call last):\n  File \"benchmark.py\", line 38, in flops_benchmark\n    a = a.to(dtype)\n"
     "RuntimeError: UR error", "device.xpu_native_api", ["UR error", "Level Zero", "SYCL_UR_TRACE"]),
    ("RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
     "device.xpu_native_api", ["40", "UR_RESULT_ERROR_OUT_OF_RESOURCES"]),
    ("CUDA error: capturing stream has unjoined work", "device.cuda_runtime_error",
     ["capturing stream has unjoined work", "cudaErrorStreamCaptureUnjoined", "wait_stream"]),
    ("[CUDA ERROR] in /home/u/gaussian_slam/submodules/diff-gaussian-rasterization/cuda_rasterizer/rasterizer_impl.cu "
     "Line 436: an illegal memory access was encountered An error occured in backward.",
     "device.illegal_memory_access", ["rasterizer_impl.cu", "Line 436", "NaN"]),
    ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs: query : "
     "shape=(1, 4096, 1, 512) (torch.float32) key : shape=(1, 4096, 1, 512) (torch.float32) `cutlassF` is not "
     "supported because: device=cpu (supported: {'cuda'}) `flshattF` is not supported because: device=cpu "
     "(supported: {'cuda'})", "device.xformers_cpu_inputs",
     ["memory_efficient_attention_forward", "(1, 4096, 1, 512)", "device=cpu", "cutlassF", "torch.float32"]),
    ("ValueError: To serve at least one request with the models's max seq len (131072), (4.11 GiB KV cache is "
     "needed, which is larger than the available KV cache memory (4.0 GiB). Based on the available memory, the "
     "estimated maximum model length is 127776. Try increasing `gpu_memory_utilization`",
     "memory.vllm_gpu_memory_utilization", ["131072", "4.11 GiB", "4.0 GiB", "127776"]),
    ("RuntimeError: /tmp/pip-req-build-x/include/tiny-cuda-nn/gpu_memory.h:582 cuMemCreate(&m_handles.back(), "
     "n_bytes_to_allocate, &prop, 0) failed with error CUDA_ERROR_OUT_OF_MEMORY", "memory.cuda_extension_alloc",
     ["gpu_memory.h:582", "cuMemCreate", "CUDA_ERROR_OUT_OF_MEMORY", "tiny-cuda-nn"]),
    ("> cudaMallocAsync does not yet support checkPoolLiveAllocations", "memory.cuda_malloc_async_unsupported",
     ["checkPoolLiveAllocations", "cudaMallocAsync", "reduce-overhead"]),
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 9.47 GiB. GPU 0 has a total capacity of 14.75 GiB of "
     "which 3.78 GiB is free. Process 2116 has 10.95 GiB memory in use. Of th", "memory.cuda_oom",
     ["9.47 GiB", "14.75 GiB", "3.78 GiB", "2116", "10.95 GiB"]),
    # wording families found after round 8
    ("ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, "
     "i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\ntorch.cuda.is_available(): False\n"
     "torch.cuda.device_count(): 0\nos.environ['CUDA_VISIBLE_DEVICES']: None", "device.yolo_invalid_cuda_device",
     ["device=0", "CPU-only"]),
    ("ValueError: Invalid CUDA 'device=2' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, "
     "i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\ntorch.cuda.is_available(): True\n"
     "torch.cuda.device_count(): 2\nos.environ['CUDA_VISIBLE_DEVICES']: None", "device.yolo_invalid_cuda_device",
     ["device=2", "torch sees 2 CUDA device(s)"]),
    ("AssertionError: CUDA unavailable, invalid device 0 requested", "device.yolo_invalid_cuda_device",
     ["device 0", "CPU-only"]),
    ("RuntimeError: Encountered different devices in metric calculation (see stacktrace for details). This could be "
     "due to the metric class not being on the same device as input. Instead of `metric=MeanSquaredError(...)` try "
     "to do `metric=MeanSquaredError(...).to(device)` where device corresponds to the device of the input.",
     "device.torchmetrics_device", ["MeanSquaredError", "`MeanSquaredError(...)`"]),
    ("RuntimeError: You can't move a model that has some modules offloaded to cpu or disk.",
     "device.accelerate_offloaded_move", ["cpu or disk", "device_map"]),
    ("ValueError: fp16 mixed precision requires a GPU (not 'mps').", "device.fp16_requires_gpu",
     ["fp16", "'mps'", "--mixed_precision no"]),
    ("ValueError: fp16 mixed precision requires a GPU", "device.fp16_requires_gpu", ["fp16", "CPU-only"]),
    ("ValueError: FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
     "(`--fp16_full_eval`) can only be used on CUDA or NPU devices or certain XPU devices (with IPEX).",
     "device.fp16_requires_gpu", ["--fp16", "CUDA or NPU devices or certain XPU devices (with IPEX)"]),
    ("RuntimeError: All input tensors must be on the same device. Received cuda:0 and cpu", "device.mismatch",
     ["cuda:0", "cpu"]),
    ("RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":830, please "
     "report a bug to PyTorch. ", "memory.oom_nvml_assert", ["CUDACachingAllocator.cpp:830", "out of memory", "MIG"]),
    ("RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED at "
     "\"../c10/cuda/CUDACachingAllocator.cpp\":1123, please report a bug to PyTorch.", "memory.oom_nvml_assert",
     ["nvmlInit_v2_", "CUDACachingAllocator.cpp:1123", "reboot"]),
    ("RuntimeError: Could not allocate tensor with 530841600 bytes. There is not enough GPU video memory available!",
     "memory.directml_oom", ["530841600 bytes", "506.2 MiB", "DirectML"]),
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid.", "device.triton_cuda_error",
     ["device kernel image is invalid", "driver", "TRITON_PTXAS_PATH"]),
    ("RuntimeError: Triton Error [HIP]:  Code: 1, Messsage: invalid argument", "device.triton_cuda_error",
     ["HIP", "code 1", "invalid argument"]),
    ("    return self._apply(lambda t: t.cuda(device))\nRuntimeError: Invalid device, must be cuda device",
     "device.expected_cuda_device", ["Invalid device, must be cuda device", "`.to(device)`"]),
])
def test_round8_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # xformers with no CUDA build at all is an installation problem, not tensors on the CPU
    ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
     "     query       : shape=(1, 2, 1, 40) (torch.float32)\n"
     "`decoderF` is not supported because:\n    xFormers wasn't build with CUDA support\n"
     "    attn_bias type is <class 'NoneType'>", "device.xformers_cpu_inputs"),
    # user code raising its own device check, without torch's "Received a and b"
    ("ValueError: All input tensors must be on the same device", "device.mismatch"),
    # PyTorch's own out-of-memory message is cuda_oom's, not the extension rule's
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
     "7.79 GiB of which 16.75 MiB is free.", "memory.cuda_extension_alloc"),
    # Triton's illegal memory access is the illegal-access rule's
    ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", "device.triton_cuda_error"),
    # inside torch.compile's wrapper, Triton's failure is the compile rule's
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: device "
     "kernel image is invalid", "device.triton_cuda_error"),
    # other assertions in the caching allocator are not NVML's
    ("RuntimeError: handles_.at(i) INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":1000, please "
     "report a bug to PyTorch.", "memory.oom_nvml_assert"),
])
def test_near_misses_are_not_claimed_by_the_round8_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert not_rule not in rules, rules


def test_the_whole_ultralytics_message_names_what_torch_sees():
    # The hook gets the exception's whole text, with the lines after the blank line.
    diagnosis = explain_text("ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA "
                             "device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\n"
                             "torch.cuda.is_available(): False\ntorch.cuda.device_count(): 0\n"
                             "os.environ['CUDA_VISIBLE_DEVICES']: None")
    assert_names(diagnosis, "device.yolo_invalid_cuda_device",
                 ["device=0", "torch.cuda.is_available(): False", "torch.cuda.device_count(): 0", "CPU-only"])
