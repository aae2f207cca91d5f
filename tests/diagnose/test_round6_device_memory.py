"""Device and memory rules written from round 6: pasted messages (CUDA, HIP, XPU, ComfyUI) whose diagnosis
must repeat their values, a live mmap failure raised by real torch calls, and near misses left unclaimed."""

from __future__ import annotations

import io

import pytest

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_paste, raise_fixture, said


@pytest.mark.parametrize("message, rule, values", [
    # the error text itself is repeated, whatever the summary explains
    ("RuntimeError: CUDA error: an illegal memory access was encountered\nCompile with `TORCH_USE_CUDA_DSA` to enable "
     "device-side assertions.", "device.illegal_memory_access", ["an illegal memory access was encountered"]),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device",
     "device.no_kernel_image", ["no kernel image is available for execution on the device"]),
    ("RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel err", "device.device_assert",
     ["device-side assert triggered"]),
    ("RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
     "/pytorch/aten/src/THC/THCGeneral.cpp:74", "device.driver_too_old",
     ["CUDA driver version is insufficient for CUDA runtime version", "35", "THCGeneral.cpp:74"]),
    # Thrust's wording and an IndexKernel assertion whose kernel name is a lambda
    ("RuntimeError: copy_if failed to synchronize: device-side assert triggered", "device.device_assert",
     ["copy_if", "device-side assert triggered"]),
    ("/opt/conda/conda-bld/pytorch_1556653114079/work/aten/src/ATen/native/cuda/IndexKernel.cu:53: lambda [](int)->auto::"
     "operator()(int)->auto: block: [502,0,0], thread: [2,0,0] Assertion `index >= -sizes[i] && index < sizes[i] && "
     "\"index out of bounds\"` failed.", "device.device_assert", ["IndexKernel.cu:53", "index out of bounds"]),
    ("torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 && device < "
     "num_gpus INTERNAL ASSERT FAILED at \"/pytorch/aten/src/ATen/cuda/CUDAContext.cpp\":52, please report a bug to "
     "PyTorch. device=1, num_gpus=1", "device.invalid_ordinal", ["device=1", "num_gpus=1", "only index 0"]),
    ("torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: invalid literal for int() "
     "with base 10: '90a'", "device.deferred_cuda_call", ["90a", "sm_90a", "TORCH_CUDA_ARCH_LIST"]),
    ("**RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
     "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
     "storages to the CPU.**", "device.map_location", ["map_location=torch.device('cpu')"]),
    ("RuntimeError: cuda runtime error (11) : invalid argument at pytorch/aten/src/THC/THCGeneral.cpp:663",
     "device.thc_general_invalid_argument", ["error=11", "THCGeneral.cpp:663"]),
    # cuda_runtime_error: new reasons and the C++ abort wording
    ("RuntimeError: CUDA error: invalid device function (ROIAlign_forward_cuda at /home/u/detectron2/detectron2/layers/"
     "csrc/ROIAlign/ROIAlign_cuda.cu:361)", "device.cuda_runtime_error",
     ["invalid device function", "cudaErrorInvalidDeviceFunction", "ROIAlign_forward_cuda", "ROIAlign_cuda.cu:361"]),
    ("terminate called after throwing an instance of 'c10::CUDAError'\n  what():  CUDA error: the launch timed out and "
     "was terminated", "device.cuda_runtime_error", ["c10::CUDAError", "cudaErrorLaunchTimeout"]),
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: unknown error\nCompile with "
     "`TORCH_USE_CUDA_DSA` to enable device-side assertions.", "device.cuda_runtime_error",
     ["unknown error", "cudaErrorUnknown", "c10::Error"]),
    # HIP: capitalised reason, and the missing code object
    ("HIP error: Invalid device function\nHIP kernel errors might be asynchronously reported at some other API call, so "
     "the stacktrace below might be incorrect.", "device.hip_error", ["Invalid device function", "gfx"]),
    ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "device.hip_error",
     ["hipErrorNoBinaryForGpu", "Unable to find code object for all current devices", "HSA_OVERRIDE_GFX_VERSION"]),
    (":3:hip_platform.cpp         :715 : 8802962852 us: [pid:19349 tid:0x14dec9d33080] init: Returned "
     "hipErrorNoBinaryForGpu : continue parsing remaining modules", "device.hip_error", ["hipErrorNoBinaryForGpu"]),
    # Intel GPUs
    ("RuntimeError: No XPU devices are available.", "device.no_xpu_device", ["No XPU devices are available", "XPU"]),
    ("--> 125 return F.linear(input, self.weight, self.bias)\n\nRuntimeError: could not create an engine",
     "device.onednn_engine", ["could not create an engine", "oneDNN"]),
    # wording families beyond round 6: cuDNN with no algorithm, no visible GPU, DataParallel's device check
    ("RuntimeError: GET was unable to find an engine to execute this computation", "device.cudnn_no_algorithm",
     ["GET was unable to find an engine", "batch of 1", "torch.backends.cudnn.enabled = False"]),
    ("RuntimeError: Unable to find a valid cuDNN algorithm to run convolution (try_all at /opt/conda/conda-bld/"
     "pytorch_1591914868920/work/aten/src/ATen/native/cudnn/Conv.cpp:693)", "device.cudnn_no_algorithm",
     ["Unable to find a valid cuDNN algorithm to run convolution", "try_all", "Conv.cpp:693"]),
    ("RuntimeError: No CUDA GPUs are available", "device.no_cuda_device", ["No CUDA GPUs are available",
                                                                           "CUDA_VISIBLE_DEVICES"]),
    ("RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of "
     "them on device: cuda:1", "device.mismatch", ["cuda:0", "cuda:1", "device_ids=[1, ...]"]),
    # memory
    ("RuntimeError: Invalid buffer size: 19.45 GB", "memory.mps_oom", ["19.45 GB", "maxBufferLength"]),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory.", "memory.cuda_oom",
     ["torch.cuda.OutOfMemoryError: CUDA out of memory", "stops after its first line"]),
    ("RuntimeError: CUDA error:out of memory", "memory.cuda_error_oom", ["cudaErrorMemoryAllocation"]),
    ("RuntimeError: unable to mmap 4096 bytes from file </torch_362873_3123855485_63350>: Cannot allocate memory (12)",
     "memory.cpu_mmap_oom", ["4096 bytes", "</torch_362873_3123855485_63350>", "vm.max_map_count"]),
    ("RuntimeError: unable to mmap 136 bytes from file <filename not specified>: Cannot allocate memory (12)",
     "memory.cpu_mmap_oom", ["136 bytes", "filename not specified", "file_descriptor"]),
    ("RuntimeError: unable to mmap 23802932552 bytes from file <./flux1-dev.safetensors>: Cannot allocate memory (12)",
     "memory.cpu_mmap_oom", ["23802932552 bytes", "22.2 GiB", "flux1-dev.safetensors"]),
    ("# ComfyUI Error Report\n## Error Details\n- **Node ID:** 54\n- **Node Type:** KSampler\n- **Exception Type:** "
     "torch.OutOfMemoryError\n- **Exception Message:** Allocation on device", "memory.allocation_on_device",
     ["torch.OutOfMemoryError", "Allocation on device", "cudaMallocAsync", "--disable-cuda-malloc"]),
    ("# ComfyUI Error Report\n## Error Details\n- **Node Type:** SamplerCustomAdvanced\n- **Exception Type:** "
     "torch.OutOfMemoryError", "memory.allocation_on_device", ["torch.OutOfMemoryError"]),
    ("!!! Exception during processing !!! Allocation on device", "memory.allocation_on_device", ["Allocation on device"]),
    ("2022-08-21 00:29:47 | WARNING | metaseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. "
     "Tried to allocate 93.75 GiB (GPU 4; 79.17 GiB total capacity; 1.52 GiB already allocated; 74.14 GiB free; "
     "1.54 GiB reserved in total", "memory.cuda_oom", ["93.75 GiB", "GPU 4", "79.17 GiB", "1.52 GiB", "74.14 GiB"]),
    ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
     "| WARNING: ran out of memory on GPU #2, skipping batch", "memory.cuda_error_oom",
     ["error=2", "THCStorage.cu:58", "GPU #2", "skipping batch"]),
    ("raise OutOfResources(self.metadata.shared, max_shared, \"shared memory\")\n"
     "triton.runtime.errors.OutOfResources: out of resource: shared memory,", "memory.triton_shared_memory",
     ["out of resource: shared memory", "num_stages"]),
])
def test_round6_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # TensorFlow's ROCm runtime (hip-on-vdi) prints this form; it is a negative control in the corpus
    ("/src/external/hip-on-vdi/rocclr/hip_code_object.cpp:120: guarantee(false && \"hipErrorNoBinaryForGpu: Coudn't "
     "find binary for current devices!\")", None),
    # the sized cudaMallocAsync message belongs to memory.cuda_oom, not the sizeless rule
    ("torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
     "Currently allocated     : 6.89 GiB\nRequested               : 320.00 MiB\nDevice limit            : 23.69 GiB\n"
     "Free (according to CUDA): 2.94 MiB", "memory.allocation_on_device"),
    # shared-memory failures for other reasons (too many open files) are not ENOMEM mmap failures
    ("RuntimeError: unable to open shared memory object </torch_16550_876314950> in read-write mode",
     "memory.cpu_mmap_oom"),
])
def test_near_misses_are_not_claimed_by_the_round6_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    if not_rule is None:
        assert rules == [], rules
    else:
        assert not_rule not in rules, rules


def test_mmap_of_a_checkpoint_larger_than_memory_names_the_size_and_the_file():
    diagnosis = explainer.explain(raise_fixture("fixtures/memory/mmap_checkpoint_too_large.py"))
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    assert_names(diagnosis, "memory.cpu_mmap_oom", ["4398046511104 bytes", "4.0 TiB", "weights.bin", "ENOMEM"])
