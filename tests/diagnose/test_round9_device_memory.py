"""Device and memory rules written from round 9 and from the wording families searched after it (libraries
built on PyTorch: apex, torch_scatter, transformers' quantizers, Lightning, ultralytics, CTranslate2, cuDNN's
frontend): pasted messages whose diagnosis must repeat their values, and near misses left unclaimed."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_paste, said


@pytest.mark.parametrize("message, rule, values", [
    # round 9
    ("> RuntimeError: index.device().is_cuda() INTERNAL ASSERT FAILED at \"/home/travis/build/rusty1s/pytorch_scatter/"
     "csrc/cuda/scatter_cuda.cu\":63, please report a bug to PyTorch. index must be CUDA tensor",
     "device.extension_expects_cuda_tensor", ["index must be CUDA tensor", "scatter_cuda.cu:63", "AT_ASSERTM"]),
    ("/scratch/soumith/pytorch/torch/cuda/__init__.py:87: UserWarning: Found GPU0 Quadro GP100 which requires "
     "CUDA_VERSION >= 8000 for\n     optimal performance and fast startup time, but your PyTorch was compiled\n"
     "     with CUDA_VERSION 7500. Please install the correct PyTorch binary", "device.capability_incompatible",
     ["Quadro GP100", "8000", "7500", "PTX"]),
    ("``hipErrorNoBinaryForGpu: Coudn't find binary for current devices!``", "device.hip_error",
     ["hipErrorNoBinaryForGpu", "Coudn't find binary for current devices"]),
    ("NotImplementedError: The operator \\'aten::roll\\' is not currently implemented for the MPS device.",
     "device.mps_not_implemented", ["aten::roll"]),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
     "device.cublas_status", ["cublasCreate(handle)", "NOT_INITIALIZED"]),
    ("  what():  [enforce fail at context_gpu.h:170] . Encountered CUDA error: an illegal memory access was "
     "encountered Error from operator: \ninput: \"gpu_0/a\" output: \"gpu_0/a\" name: \"\" type: \"Add\" "
     "device_option { device_type: 1 cuda_gpu_id: 0 }", "device.illegal_memory_access",
     ["context_gpu.h:170", "an illegal memory access was encountered", "`Add`"]),
    ("`MPS backend out of memory (MPS allocated: 1024.00 MB). Tried to allocate 256 bytes on shared pool.`",
     "memory.mps_oom", ["1024.00 MB", "256 bytes", "shared pool"]),
    ("> triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 110592Hardware limit: 101376",
     "memory.triton_shared_memory", ["110592", "101376"]),
    ("\"cuda out of memory. tried to allocate 30.00 mib (gpu 0; 8.00 gib total capacity; 7.04 gib already allocated; "
     "0 bytes free; 7.28 gib reserved in total by pytorch)\"", "memory.cuda_oom", ["30.00 mib", "8.00 gib", "7.04 gib"]),
    ("RuntimeError: Error transcribing mic: CUDA failed with error out of memory", "memory.ctranslate2_oom",
     ["CTranslate2", "faster-whisper", "compute_type"]),
    ("RuntimeError: [enforce fail at CPUAllocator.cpp:47] ((ptrdiff_t)nbytes) >= 0. alloc_cpu() seems to have been "
     "called with negative number: 18446744072009756672", "memory.cpu_alloc_negative_size",
     ["18446744072009756672", "-1699794944", "CPUAllocator.cpp:47"]),
    ("File \"C:\\ProgramData\\Anaconda3\\envs\\AL\\lib\\site-packages\\numpy\\lib\\format.py\", line 664, in "
     "write_array\npickle.dump(array, fp, protocol=3, **pickle_kwargs)\nMemoryError", "memory.host_memory_error",
     ["MemoryError", "host (CPU) memory"]),
    (".\\venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py:1329: UserWarning: expandable_segments not supported "
     "on this platform (Triggered internally at C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\c10/cuda/"
     "CUDAAllocatorConfig.h:28.)", "memory.expandable_segments_unsupported",
     ["expandable_segments", "CUDAAllocatorConfig.h:28"]),
    ("AutoBatch: WARNING: ⚠️ CUDA anomaly detected, recommend restart environment and retry command.",
     "memory.ultralytics_autobatch", ["AutoBatch", "default batch size"]),
    # wording families found after round 9
    ("AutoBatch: WARNING ⚠️ batch=-3 outside safe range, using default batch-size 16.",
     "memory.ultralytics_autobatch", ["batch=-3", "16"]),
    ("    output, invvar = fused_layer_norm_cuda.rms_forward_affine(\nRuntimeError: **input must be a CUDA tensor**",
     "device.extension_expects_cuda_tensor", ["input must be a CUDA tensor", "apex"]),
    ("RuntimeError: weights must be a CUDA tensor", "device.extension_expects_cuda_tensor",
     ["weights must be a CUDA tensor"]),
    ("RuntimeError: No GPU found. A GPU is needed for quantization.", "device.quantization_requires_gpu",
     ["No GPU found. A GPU is needed for quantization", "load_in_4bit", "CPU-only"]),
    ("RuntimeError: GPU is required to quantize or run quantize model.", "device.quantization_requires_gpu",
     ["GPTQ", "GPU is required to quantize or run quantize model"]),
    ("RuntimeError: GPU is required to run AWQ quantized model. You can use IPEX version AWQ if you have an Intel CPU",
     "device.quantization_requires_gpu", ["AWQ"]),
    ("RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph.",
     "device.cudnn_frontend_error", ["No execution plans support the graph", "scaled_dot_product_attention", "2.5.1"]),
    ("cudnn._compiled_module.cudnnGraphNotSupportedError: [cudnn_frontend] Error: No execution plans built "
     "successfully.", "device.cudnn_frontend_error", ["cudnnGraphNotSupportedError", "No execution plans built"]),
    ("lightning.fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend found!",
     "device.lightning_accelerator_unavailable", ["No supported gpu backend found", "MPS"]),
    ("MisconfigurationException: You requested gpu: [0, 1]\n But your machine only has: [0]",
     "device.lightning_accelerator_unavailable", ["[0, 1]", "[0]"]),
    ("RuntimeError: Failed to infer device type", "device.vllm_device_infer", ["vLLM", "NVML", "VLLM_LOGGING_LEVEL"]),
    ("ValueError: The current `device_map` had weights offloaded to the disk. Please provide an `offload_folder` for "
     "them.", "memory.accelerate_disk_offload", ["device_map", "offload_folder", "torch_dtype"]),
    ("ValueError: You are trying to offload the whole model to the disk. Please use the `disk_offload` function "
     "instead.", "memory.accelerate_disk_offload", ["whole model", "disk_offload"]),
    ("ValueError: It seems like you have activated sequential model offloading by calling "
     "`enable_sequential_cpu_offload`, but are now attempting to move the pipeline to GPU. This is not compatible with "
     "offloading.", "device.accelerate_offloaded_move", ["sequential model offloading", "enable_sequential_cpu_offload"]),
    ("ValueError: Cannot generate a cpu tensor from a generator of type cuda.", "device.generator_device",
     ["randn_tensor", "cpu", "cuda", "torch.Generator(\"cpu\")"]),
    ("Error invalid device function at line 508 in file /home/u/bitsandbytes-main/csrc/ops.cu",
     "device.cuda_runtime_error", ["invalid device function", "ops.cu:508"]),
    ("[2024-04-08 13:02:16,577] [WARNING] [stage3.py:2069:step] 27 pytorch allocator cache flushes since last step. "
     "this happens when there is high memory pressure and is detrimental to performance.",
     "memory.allocator_cache_flushes", ["27", "num_alloc_retries", "expandable_segments"]),
    ("Attempting to copy inputs of <function pairwise_iou at > to CPU due to CUDA OOM", "memory.oom_cpu_fallback",
     ["pairwise_iou", "retry_if_cuda_oom"]),
    ("06/15 16:52:23 - mmengine - WARNING - Attempting to copy inputs of <function RTMDetInsHead.loss_mask_by_feat at "
     "0x7f4ebd75cc10> to CPU due to CUDA OOM", "memory.oom_cpu_fallback", ["RTMDetInsHead.loss_mask_by_feat"]),
])
def test_round9_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # ROCclr's own abort is printed by every HIP program (this one was TensorFlow's)
    ("/src/external/hip-on-vdi/rocclr/hip_code_object.cpp:120: guarantee(false && \"hipErrorNoBinaryForGpu: Coudn't "
     "find binary for current devices!\")", "device.hip_error"),
    # CTranslate2's other CUDA failures are not out-of-memory
    ("RuntimeError: CUDA failed with error unknown error", "memory.ctranslate2_oom"),
    # NumPy's out-of-memory with its size is cpu_alloc's, not the bare MemoryError rule's
    ("numpy.core._exceptions.MemoryError: Unable to allocate 2.95 GiB for an array with shape (252, 1024, 1024, 3) "
     "and data type float32", "memory.host_memory_error"),
    # a MemoryError with a message of its own is not the bare one
    ("MemoryError: cannot allocate memory for thread-local data: ABORT", "memory.host_memory_error"),
    # the CPU allocator out of memory is cpu_alloc's
    ("RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to "
     "allocate 1178729664 bytes. Error code 12 (Cannot allocate memory)", "memory.cpu_alloc_negative_size"),
    # PyTorch's own device mismatch is the mismatch rule's, not the extension one
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "device.extension_expects_cuda_tensor"),
    # training a quantized model on another device is not a missing GPU
    ("ValueError: You can't train a model that has been loaded in 8-bit precision on a different device than the one "
     "you're training on.", "device.quantization_requires_gpu"),
    # cuDNN's status errors are cudnn_status's
    ("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED", "device.cudnn_frontend_error"),
    # TensorRT's own allocator failures are not PyTorch's (the corpus keeps trtexec output as a negative control)
    ("[05/25/2023-20:44:13] [E] Error[1]: [executionContext.cpp::handleTrainStationRunnerPhase1::146] Error Code 1: "
     "Cuda Runtime (operation not permitted when stream is capturing)", "device.cuda_runtime_error"),
    # accelerate moving a model that is only partly offloaded is the move rule's, not the disk one's
    ("RuntimeError: You can't move a model that has some modules offloaded to cpu or disk.",
     "memory.accelerate_disk_offload"),
])
def test_near_misses_are_not_claimed_by_the_round9_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert not_rule not in rules, rules
