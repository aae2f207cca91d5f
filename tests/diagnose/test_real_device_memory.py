"""Device and memory rules for messages seen in the wild: a live meta-device failure raised by real
torch calls, and pasted CUDA-only messages (no GPU here) whose diagnosis must repeat their values."""

from __future__ import annotations

import io

import pytest
import torch
from torch import nn

import explainer
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message, explain_paste, raised, said


def _from_error_line(message: str, start: str) -> str:
    """A contiguous excerpt of a real message: from its error line to its end."""
    return message[message.index(start):]


def test_meta_module_moved_with_to_names_the_module_and_its_meta_parameters():
    with torch.device("meta"):
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    try:
        model.to("cpu")
    except NotImplementedError as exc:
        diagnosis = explainer.explain(exc)
    else:
        pytest.fail("moving a meta module did not raise")
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    assert diagnosis.rule == "device.meta_tensor_copy"
    assert diagnosis.facts["meta_module"] == "model"
    assert diagnosis.facts["meta_count"] == 4 and diagnosis.facts["meta_total"] == 4
    assert diagnosis.summary.startswith("4 of 4 parameters and buffers of model are still on the meta device")
    assert {c["name"] for c in diagnosis.culprits} >= {"model[0].weight", "model[2].bias"}
    assert all(c["device"] == "meta" for c in diagnosis.culprits)


@pytest.mark.parametrize("message, rule, values", [
    ("../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [654,0,0], thread: [46,0,0] "
     "Assertion `srcIndex < srcSelectDimSize` failed.",
     "device.device_assert", ["indexSelectLargeIndex", "Indexing.cu:1292", "srcIndex < srcSelectDimSize", "num_embeddings"]),
    (corpus_message("devmem.yaml#51"), "device.device_assert", ["cunn_SpatialClassNLLCriterion_updateOutput_kernel", "SpatialClassNLLCriterion.cu", "n_classes"]),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, "
     "(int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea)`",
     "device.cublas_status", ["CUBLAS_STATUS_NOT_SUPPORTED", "cublasGemmStridedBatchedEx", "CUDA_R_16BF", "bfloat16"]),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR", "device.cudnn_status", ["CUDNN_STATUS_MAPPING_ERROR"]),
    ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58",
     "memory.cuda_error_oom", ["error 2", "THCStorage.cu:58"]),
    # an excerpt of devmem.yaml#199 (Wan2GP on Windows), from its error line to the end
    (_from_error_line(corpus_message("devmem.yaml#199"), "torch.AcceleratorError"), "memory.cuda_error_oom", ["torch.AcceleratorError", "cudaErrorMemoryAllocation"]),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
     "device.driver_too_old", ["11040", "CUDA up to 11.4"]),
    ("NVIDIA GeForce RTX 3060 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n"
     "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
     "device.capability_incompatible", ["NVIDIA GeForce RTX 3060", "sm_86", "sm_37 sm_50 sm_60 sm_70"]),
    ("NotImplementedError: The operator 'aten::_fft_r2c' is not currently implemented for the MPS device",
     "device.mps_not_implemented", ["aten::_fft_r2c", "PYTORCH_ENABLE_MPS_FALLBACK=1"]),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
     "Reducing block sizes or `num_stages` may help.",
     "memory.triton_shared_memory", ["Required: 98304", "Hardware limit: 65536", "num_stages"]),
    ("RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.", "device.flash_attn_arch", ["is_sm8x || is_sm75"]),
    ("ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory "
     "utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     "memory.vllm_gpu_memory_utilization", ["19.77/22.05 GiB", "0.9", "19.84 GiB", "cuda:1"]),
    (corpus_message("r5_b.yaml#89"), "device.fsdp_device_id", ["rank 0", "hpu:0"]),
    ("ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
     "device.bf16_gpu_capability", ["bf16=True", "torch>=1.10", "Ampere", "cuda>=11.0"]),
    ("ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.",
     "device.bf16_gpu_capability", ["mixed_precision", "1.10"]),
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: You have asked for native AMP on CPU, "
     "but AMP is only available on GPU", "device.lightning_accelerator_unavailable", ["native AMP on CPU", "precision=32"]),
    (corpus_message("r14_a.yaml#41"), "device.cublas_status",
     ["the GPU program failed to execute", "CUBLAS_STATUS_EXECUTION_FAILED", "THCBlas.cu:511"]),
    (corpus_message("r5_b.yaml#75"), "device.cublas_status", ["CUBLAS_STATUS_EXECUTION_FAILED", "functions.h:674", "FasterTransformer"]),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
     "device.cublas_status", ["CUBLAS_STATUS_NOT_INITIALIZED", "cublasCreate"]),
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you\n"
     "tried to allocate 268435456 bytes. Error code 12 (Cannot allocate memory)",
     "memory.cpu_alloc", ["268435456 bytes", "Error code 12", "alloc_cpu.cpp:75"]),
    (corpus_message("devmem.yaml#169"), "memory.cpu_alloc", ["5077901088 bytes"]),
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB (GPU 1; 79.10 GiB total capacity; 76.13 GiB \n"
     "already allocated; 290.12 MiB free; 77.47 GiB reserved in total by PyTorch)",
     "memory.cuda_oom", ["1.25 GiB", "79.10 GiB", "76.13 GiB", "290.12 MiB", "77.47 GiB"]),
])
def test_pasted_cuda_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("message", [
    "F1119 15:00:44.842713 16912 cudnn.hpp:96] Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)  CUDNN_STATUS_BAD_PARAM.",
    "CUBLAS failure 13: CUBLAS_STATUS_EXECUTION_FAILED ; GPU=1 ; expr=cublas_gemm(cuHandle, CUBLAS_OP_N)",
    "2019-02-11 16:42:08.131786: E tensorflow/stream_executor/cuda/cuda_blas.cc:366] failed to create cublas handle: "
    "CUBLAS_STATUS_NOT_INITIALIZED",
])
def test_other_frameworks_cuda_library_failures_are_not_claimed(message):
    assert all(d.rule is None for d in explain_stream(io.StringIO(message)))


@pytest.mark.parametrize("message, rule, named", [
    (corpus_message("dist2.yaml#18"), "device.no_cuda_device", ("(38)", "no CUDA-capable device is detected",
                                                                 "Module.cpp:81")),
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
     "device.cuda_busy_unavailable", ("all CUDA-capable devices are busy or unavailable", "Exclusive-Process")),
    ("RuntimeError: CUDA error: misaligned address", "device.misaligned_address", ("misaligned address",)),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=84 error=74 : misaligned address",
     "device.misaligned_address", ("error=74", "THCTensorCopy.cu:84")),
    ("torch.AcceleratorError: HIP error: invalid device function\nSearch for `hipErrorInvalidDeviceFunction' in "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for more information.",
     "device.hip_error", ("HIP error: invalid device function", "hipErrorInvalidDeviceFunction", "AMD_SERIALIZE_KERNEL=3")),
    ("RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)",
     "device.xpu_native_api", ("-5", "PI_ERROR_OUT_OF_RESOURCES")),
    ("RuntimeError: Placeholder storage has not been allocated on MPS device!", "device.mps_placeholder_storage", ("MPS",)),
    ("AssertionError: Torch not compiled with XPU enabled", "device.no_cuda_build", ("XPU",)),
])
def test_new_device_wordings_name_their_values(message, rule, named):
    d = explain_text(message)
    assert_names(d, rule, named, d.summary + " ".join(d.fixes))


@pytest.mark.parametrize("message, rule, named", [
    ("RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'",
     "device.mismatch", ("CPU", "CUDA", "`mat2`")),
    ("Exception: Expected all tensors to be on the same device, but found at least two devices, cpu\n"
     "                         and cuda:0! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
     "device.mismatch", ("cpu", "cuda:0", "`mat1`", "wrapper_CUDA_addmm")),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "device.cudnn_status",
     ("CUDNN_STATUS_NOT_INITIALIZED", "could not create its handle", "LD_LIBRARY_PATH")),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
     "driver from http://www.nvidia.com/Download/index.aspx", "device.no_cuda_device", ("Found no NVIDIA driver",)),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument",
     "device.thc_general_invalid_argument", ("THCGeneral.cpp:383", "error=11", "cudnn.benchmark")),
    (corpus_message("r6_b.yaml#96"), "device.thc_general_invalid_argument", ("(11)", "THCGeneral.cpp:405")),
    # https://github.com/facebookresearch/sam2/issues/100
    (corpus_message("modern.yaml#25"), "device.sdpa_kernel_not_used", ("Memory efficient kernel",)),
    ("RuntimeError: No viable backend for scaled_dot_product_attention was found. This is likely due to turning off "
     "both the math kernel and the fused kernels.", "device.sdpa_no_kernel", ("No viable backend", "math kernel")),
    # https://github.com/pytorch/pytorch/issues/92329 (an MPS-only kernel check: not raised on this CPU build)
    (corpus_message("modern.yaml#72"), "device.mps_negative_dim", ("between 0 and 2 but got -1", "dim 1")),
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator: can't allocate memory: you tried to "
     "allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)",
     "memory.cpu_alloc", ("116813856768 bytes", "alloc_cpu.cpp:73")),
    ("enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0",
     "memory.cpu_alloc", ("posix_memalign", "12 vs 0", "CPUAllocator.cpp:56")),
    ("RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\ncuda failed with error 2 out of memory. "
     "use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.",
     "memory.cuda_error_oom", ("tensor.h 168", "error 2", "empty_cache")),
])
def test_more_device_and_memory_wordings_name_their_values(message, rule, named):
    d = explain_text(message)
    assert_names(d, rule, named, d.summary + " ".join(d.fixes))


@pytest.mark.parametrize("message", [
    "RuntimeError: Expected dim to be between 0 and 2 but got 2",
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMathPairwise.cu line=225 error=11 : invalid argument",
    "enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 22 vs 0",
    "RuntimeError: CUDA failed with error out of memory",
])
def test_near_misses_of_the_new_wordings_are_left_alone(message):
    claimed = explain_text(message).rule
    assert claimed not in {"device.mps_negative_dim", "device.thc_general_invalid_argument", "memory.cpu_alloc",
                           "memory.cuda_error_oom"}, claimed


def test_cudnn_repro_snippet_gives_the_input_shape_and_dtype():
    text = corpus_message("devmem.yaml#113")  # a real repro snippet printed by cuDNN, from the corpus
    d = explain_text(text)
    assert d.rule == "device.cudnn_status"
    for value in ("[1, 39, 1024, 1024]", "CUDNN_DATA_FLOAT", "Conv2d(39, 10, kernel_size=[3, 3]"):
        assert value in d.summary, (value, d.summary)


@pytest.mark.parametrize("message, rule, named", [
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.31 GiB. GPU 0 has a total capacity of 128.00 GiB "
     "of which 780.24 MiB is free. Of the allocated memory 57.70 GiB is allocated by PyTorch, and 75.82 MiB is reserved "
     "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
     "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
     "memory.cuda_oom", ("3.31 GiB", "780.24 MiB", "128.00 GiB", "PYTORCH_HIP_ALLOC_CONF", "rocm-smi")),
    ("torch.OutOfMemoryError: XPU out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 15.11 GiB. "
     "Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. "
     "Please use `empty_cache` to release all unoccupied cached memory.",
     "memory.cuda_oom", ("8.00 GiB", "15.11 GiB", "4 GiB", "single allocation")),
    ("RuntimeError: XPU out of memory. Tried to allocate 1.00 GiB (GPU 0; 15.56 GiB total capacity; 990.00 MiB already "
     "allocated; 990.00 MiB reserved in total by PyTorch)",
     "memory.cuda_oom", ("1.00 GiB", "15.56 GiB", "990.00 MiB", "no free amount")),
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 23.41 GiB "
     "of which 21.22 GiB is free. 1.05 GiB allowed; Of the allocated memory 1017.01 MiB is allocated by PyTorch, with "
     "17.00 MiB allocated in private pools (e.g., HIP Graphs), and 54.99 MiB is reserved by PyTorch but unallocated.",
     "memory.cuda_oom", ("1.05 GiB allowed", "set_per_process_memory_fraction", "21.22 GiB")),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 238.00 MiB. GPU 0 has a total capacity of 22.05 GiB "
     "of which 10.81 MiB is free. Process 43872 has 4.97 GiB memory in use. Including non-PyTorch memory, this process "
     "has 17.05 GiB memory in use. Of the allocated memory 15.43 GiB is allocated by PyTorch, and 1.07 GiB is reserved "
     "by PyTorch but unallocated.",
     "memory.cuda_oom", ("Process 43872 has 4.97 GiB", "238.00 MiB")),
    ("RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/conda-bld/pytorch_1513363039688/work/torch/lib/"
     "THC/generic/THCStorage.cu:58", "memory.cuda_error_oom", ("cuda runtime error (2)", "THCStorage.cu:58")),
    ("[1708014.228254] Out of memory: Killed process 1227971 (python3) total-vm:184429220kB, anon-rss:120535680kB, "
     "file-rss:69120kB, shmem-rss:3072kB, UID:1013 pgtables:253596kB oom_score_adj:0",
     "memory.linux_oom_killer", ("1227971", "python3", "anon-rss:120535680kB", "115.0 GiB", "exit status 137")),
    # https://github.com/reportportal/kubernetes/issues/203 (its first dmesg line)
    ("[ 7063.247407] Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB, anon-rss:164992kB, "
     "file-rss:52176kB, shmem-rss:92kB, UID:0 pgtables:1372kB oom_score_adj:986",
     "memory.linux_oom_killer", ("memory cgroup", "docker run --memory")),
    ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.61 GiB for an array with shape (753, 536, 536) "
     "and data type float64", "memory.cpu_alloc", ("1.61 GiB", "(753, 536, 536)", "float64", "NumPy")),
    ("(Worker_PP0 pid=23220) ERROR 07-15 21:01:01 [multiproc_executor.py:1007] torch.AcceleratorError: CUDA error: an "
     "illegal memory access was encountered\n(Worker_PP0 pid=23220) ERROR 07-15 21:01:01 [multiproc_executor.py:1007] "
     "Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
     "device.illegal_memory_access", ("cudaErrorIllegalAddress", "torch.AcceleratorError")),
    ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
     "--dtype=half.", "device.bf16_gpu_capability", ("Tesla T4", "7.5", "8.0", "--dtype=half")),
    ("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
     "device.bf16_gpu_capability", ("is_bf16_supported", "float16")),
    ("MisconfigurationException(\"GPUAccelerator can not run on your system since the accelerator is not available. "
     "The following accelerator(s) is available and can be passed into `accelerator` argument of `Trainer`: ['cpu'].\")",
     "device.lightning_accelerator_unavailable", ("GPUAccelerator", "['cpu']", "accelerator=\"auto\"")),
    ("RuntimeError: The device (Intel(R) Arc(TM) Graphics) doesn't support querying the available free memory. You can "
     "file an issue at https://github.com/pytorch/pytorch/issues to help us prioritize its implementation.",
     "device.xpu_free_memory_query", ("Intel(R) Arc(TM) Graphics", "mem_get_info")),
    ("RuntimeError: CUDA error: the launch timed out and was terminated", "device.cuda_runtime_error",
     ("cudaErrorLaunchTimeout", "watchdog", "TdrDelay")),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
     "device.cuda_runtime_error", ("cudaErrorSystemNotReady", "802", "nvidia-fabricmanager")),
    (corpus_message("r16_b.yaml#94"), "device.cuda_runtime_error", ("cudaErrorStreamCaptureUnsupported", "reduce-overhead")),
    ("RuntimeError: cuda runtime error (6) : the launch timed out and was terminated at /opt/conda/conda-bld/"
     "pytorch_1532582123400/work/aten/src/THC/generic/THCStorage.cpp:36",
     "device.cuda_runtime_error", ("cuda runtime error (6)", "THCStorage.cpp:36")),
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
     "'spawn' start method", "device.cuda_forked_subprocess", ("fork", "multiprocessing_context=\"spawn\"")),
    ("Found GPU0 NVIDIA GTX TITAN Black which is of cuda capability 3.5. PyTorch no longer supports this GPU because it "
     "is too old. The minimum cuda capability supported by this library is 3.7.",
     "device.capability_incompatible", ("NVIDIA GTX TITAN Black", "3.5", "3.7")),
])
def test_round_four_device_and_memory_families_name_their_values(message, rule, named):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, named, said(diagnosis))


@pytest.mark.parametrize("message", [
    "RuntimeError: HIP error: an illegal memory access was encountered",
    "RuntimeError: DataLoader worker (pid(s) 1995171, 1996371) exited unexpectedly",
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument",
])
def test_round_four_rules_leave_neighbouring_families_alone(message):
    claimed = explain_paste(message).rule
    assert claimed not in {"device.cuda_runtime_error", "memory.linux_oom_killer", "device.illegal_memory_access"}, claimed


@pytest.mark.parametrize("message, rule, named", [
    ("RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47 GiB already "
     "allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total by PyTorch)",
     "memory.cuda_oom", ("5.03 GiB", "NPU 3", "60.96 GiB", "1.32 GiB", "57.55 GiB")),
    ("torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
     "Currently allocated     : 6.89 GiB\nRequested               : 320.00 MiB\nDevice limit            : 23.69 GiB\n"
     "Free (according to CUDA): 2.94 MiB\nPyTorch limit (set by user-supplied memory fraction)\n"
     "                        : 17179869184.00 GiB",
     "memory.cuda_oom", ("cudaMallocAsync", "320.00 MiB", "6.89 GiB", "2.94 MiB", "23.69 GiB")),
    ("Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but device 1 "
     "does not equal 0 (while checking arguments for cudnn_convolution)",
     "device.mismatch", ("`input` is on cuda:1", "`weight` is on cuda:0", "cudnn_convolution")),
    ("RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)",
     "device.mismatch", ("indexed tensor's own device (cpu)", "idx.to(t.device)")),
    ("RuntimeError: Attempting to deserialize object on CUDA device 2 but torch.cuda.device_count() is 1. Please use "
     "torch.load with map_location to map your storages to an existing device.",
     "device.map_location", ("CUDA device 2", "device_count() is 1", "cuda:0 exists", '"cuda:2": "cuda:0"')),
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
     "device.no_cuda_device", ("CUDA driver initialization failed", "cuInit")),
    ("RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'",
     "device.generator_device", ("cuda", "cpu", "set_default_device", "generator=torch.Generator(device=\"cuda\")")),
])
def test_more_accelerator_and_placement_wordings_name_their_values(message, rule, named):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, named, said(diagnosis))


@pytest.mark.parametrize("message, rule, named", [
    ("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 7, 0) but found runtime version "
     "(8, 6, 0). PyTorch already comes bundled with cuDNN.", "device.cudnn_version_mismatch",
     ("(8, 7, 0)", "(8, 6, 0)", "LD_LIBRARY_PATH")),
    ("RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600",
     "device.cudnn_version_mismatch", ("7102", "7600")),
    ("DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 && device < num_gpus "
     "INTERNAL ASSERT FAILED at \"../aten/src/ATen/cuda/CUDAContext.cpp\":50, please report a bug",
     "device.invalid_ordinal", ("device >= 0 && device < num_gpus", "CUDAContext.cpp:50", "CUDA_VISIBLE_DEVICES")),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
     "supported HW", "device.cuda_runtime_error", ("cudaErrorCompatNotSupportedOnDevice", "804", "cuda-compat")),
    # https://github.com/fboulnois/stable-diffusion-docker/issues/22 (its warning line)
    ("/usr/local/lib/python3.8/dist-packages/torch/cuda/__init__.py:83: UserWarning: CUDA initialization: Unexpected "
     "error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have "
     "already set an error? Error 34: CUDA driver is a stub library (Triggered internally at  "
     "../c10/cuda/CUDAFunctions.cpp:109.)",
     "device.cuda_runtime_error", ("cudaErrorStubLibrary", "stubs")),
    # raised live: torch.device("cuda:0,1")
    (f"RuntimeError: {raised(lambda: torch.device('cuda:0,1'))}", "device.device_string", ("cuda:0,1", "CUDA_VISIBLE_DEVICES=0,1")),
])
def test_install_and_device_selection_wordings_name_their_values(message, rule, named):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, named, said(diagnosis))
