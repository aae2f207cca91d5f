"""Device and memory rules written from round 10 and from the wording families searched after it (libraries
built on PyTorch: bitsandbytes, safetensors, vLLM, transformers, diffusers, Torch-TensorRT, tiny-cuda-nn; Apple
MPS, ROCm and Intel XPU runtimes; torch's own newer and older wordings): pasted messages whose diagnosis must
repeat their values, and near misses left unclaimed."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, said


@pytest.mark.parametrize("message, rule, values", [
    # round 10
    ("RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'index' in call to "
     "_th_index_select", "device.mismatch", ["#3 `index`", "_th_index_select", "cpu", "cuda"]),
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  /home/w/nerf/ngp_pl/tiny-cuda-nn/"
     "include/tiny-cuda-nn/multi_stream.h:83 cudaEventRecord(m_event, m_stream) failed with error an illegal memory "
     "access was encountered", "device.illegal_memory_access", ["multi_stream.h:83", "cudaEventRecord", "tiny-cuda-nn"]),
    ("RuntimeError： Attempting todeserialize object on a CUDA device but torch。cuda.is_available() is False。",
     "device.map_location", ["map_location"]),
    ("[Fri Mar  2 11:34:55 2018] java invoked oom-killer: gfp_mask=0x24201ca, order=0, oom_score_adj=0",
     "memory.linux_oom_killer", ["`java`", "gfp_mask=0x24201ca", "Killed process"]),
    ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err`\n value: TorchError { c_error: \"[enforce fail "
     "at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment,\nnbytes) == 0. 12 vs 0", "memory.cpu_alloc",
     ["12 vs 0", "ENOMEM", "CPUAllocator.cpp:56"]),
    ("RuntimeError: All input tensors need to be on the same GPU, but found some tensors to not be on a GPU",
     "device.bnb_tensors_not_on_gpu", ["bitsandbytes", "not on a GPU", "device_map"]),
    ("  File \"/x/safetensors/torch.py\", line 98, in load_file\n    with safe_open(filename, framework=\"pt\", "
     "device=device) as f:\nException: device cuda is invalid", "device.safetensors_invalid_device",
     ["`cuda`", "cuda:N", "device=\"cpu\""]),
    ("UserWarning:\n    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability "
     "supported by this version of PyTorch is\n    (8.0) - (12.0) ", "device.capability_incompatible",
     ["NVIDIA GB10", "12.1", "(8.0) - (12.0)", "same major version"]),
    ("UserWarning: Found GPU0 NVIDIA GB10 which is of compute capability (CC) 12.1.\nYour installed "
     "torch==2.13.0+cu130 does not include kernels for this GPU.", "device.capability_incompatible",
     ["NVIDIA GB10", "12.1", "torch==2.13.0+cu130"]),
    ("/AppleInternal/Library/BuildRoots/c651a45f/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShaders/MPSCore/"
     "Types/MPSNDArray.mm:724: failed assertion `[MPSNDArray initWithDevice:descriptor:] Error: total bytes of NDArray "
     "> 2**32'", "device.mps_ndarray_assertion", ["MPSNDArray.mm:724", "2**32", "4 GiB", "tile"]),
    ("MPSNDArray.mm:794: failed assertion `[MPSNDArray, initWithBuffer:descriptor:] Error: buffer is not large enough. "
     "Must be 600 bytes\n'", "device.mps_ndarray_assertion", ["MPSNDArray.mm:794", "600 bytes", "bug"]),
    ("> rocBLAS error: Cannot read /home/u/venv/lib/python3.10/site-packages/torch/lib/rocblas/library/"
     "TensileLibrary.dat: Illegal seek", "device.rocblas_tensile_library",
     ["TensileLibrary.dat", "Illegal seek", "HSA_OVERRIDE_GFX_VERSION"]),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCReduceAll.cuh line=317 error=59 : device-side assert triggered",
     "device.device_assert", ["THCReduceAll.cuh", "317", "59"]),
    # wording families found after round 10
    ("Input tensors need to be on the same GPU, but found the following tensor and device combinations:\n "
     "[(torch.Size([1, 4096]), device(type='cuda', index=0)), (torch.Size([4096, 1]), device(type='cuda', index=1))]",
     "device.bnb_tensors_not_on_gpu", ["more than one GPU", "index=1"]),
    ("safetensors_rust.SafetensorError: device mps:0 is invalid", "device.safetensors_invalid_device",
     ["`mps:0`", "mps"]),
    ("2026-05-01 00:04:05,399 - torch_tensorrt [TensorRT Conversion Context] - ERROR - [executionContext.cpp::"
     "initializeExecutionContext::644] Error Code 2: OutOfMemory (Requested size was 149635638784 bytes.)",
     "memory.tensorrt_oom", ["149635638784", "139.36 GiB", "max shape"]),
    ("RuntimeError: CUDA driver error: out of memory", "memory.cuda_error_oom", ["expandable_segments", "cuMemCreate"]),
    ("RuntimeError: Triton Error [CUDA]: out of memory", "memory.cuda_error_oom", ["Triton Error [CUDA]", "Triton"]),
    ("terminate called after throwing an instance of 'sycl::_V1::exception'\n  what():  Enqueue process failed.\n"
     "level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
     "memory.xpu_out_of_device_memory", ["level_zero", "39", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"]),
    ("RuntimeError: UR backend failed. UR backend returns:39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
     "memory.xpu_out_of_device_memory", ["39", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"]),
    ("Memory access fault by GPU node-1 (Agent handle: 0x55eb9b596570) on address 0x7f66960b2000. Reason: Page not "
     "present or supervisor privilege.\nAbandon (core dumped)", "device.rocm_memory_access_fault",
     ["node-1", "0x7f66960b2000", "Page not present or supervisor privilege", "HSA_OVERRIDE_GFX_VERSION"]),
    ("AssertionError: Invalid device id", "device.invalid_ordinal", ["Invalid device id", "device_ids",
                                                                     "CUDA_VISIBLE_DEVICES"]),
    ("AssertionError: Error in memory profiling. Initial free memory 22.1 GiB, current free memory 23.5 GiB. This "
     "happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.",
     "memory.vllm_gpu_memory_utilization", ["Error in memory profiling", "22.1 GiB", "23.5 GiB"]),
    ("ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current "
     "capability: 70.", "device.vllm_quantization_capability", ["`awq`", "75", "7.5", "70", "Turing"]),
    ("RuntimeError: Expected tensor to have CUDA Backend, but got tensor with CPU Backend (while checking arguments "
     "for cudnn_convolution)", "device.mismatch", ["CPU", "CUDA", "cudnn_convolution"]),
    ("Error named symbol not found at line 74 in file /mmfs1/git/bitsandbytes/csrc/ops.cu", "device.cuda_runtime_error",
     ["named symbol not found", "cudaErrorSymbolNotFound", "ops.cu:74"]),
    ("RuntimeError: Input type (MPSFloatType) and weight type (torch.FloatTensor) should be the same",
     "device.input_weight_type", ["MPSFloatType", "torch.FloatTensor", "model.to(\"mps\")"]),
    ("RuntimeError: PyTorch is not linked with support for xpu devices", "device.no_cuda_build", ["xpu"]),
    ("RuntimeError: PyTorch is not linked with support for mps devices", "device.mps_unavailable",
     ["`mps`", "arm64", "Rosetta"]),
    ("RuntimeError: The MPS backend is supported on MacOS 13.0+.Current OS version can be queried using `sw_vers`",
     "device.mps_unavailable", ["13.0", "sw_vers", "x86_64"]),
    ("RuntimeError: MPS: power op with int64 input is supported natively starting from macOS 13.2.",
     "device.mps_unavailable", ["power op with int64 input", "13.2"]),
    ("ValueError: The model has been loaded with `accelerate` and therefore cannot be moved to a specific device. "
     "Please discard the `device` argument when creating your pipeline object.", "device.accelerate_offloaded_move",
     ["transformers.pipeline", "device="]),
    ("You are calling .generate() with the `input_ids` being on a device type different than your model's device. "
     "`input_ids` is on cpu, whereas the model is on cuda.", "device.mismatch", ["input_ids", "cpu", "cuda",
                                                                                 "model.device"]),
    ("UserWarning: Attempting to run cuBLAS, but there was no current CUDA context! Attempting to set the primary "
     "context... (Triggered internally at ../aten/src/ATen/cuda/CublasHandlePool.cpp:135.)",
     "device.cublas_no_current_context", ["warning, not an error", "primary context"]),
    ("RuntimeError: Attempted to set the storage of a tensor on device \"cuda:0\" to a storage on different device "
     "\"cpu\". This is no longer allowed; the devices must match.", "device.set_storage_device",
     ["cuda:0", "cpu", "set_default_tensor_type"]),
    ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n\nnvrtc compilation failed: ",
     "device.nvrtc_invalid_arch", ["NVRTC", "sm_86", "cu118"]),
    ("RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
     "device.flash_attn_arch", ["192", "A100/A800 or H100/H800", "attn_implementation"]),
    ("Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations encoded on it may not "
     "have completed.\n\tError: \n\t(null)\n\tInternal Error (0000000e:Internal Error)\n\t<AGXG13XFamilyCommandBuffer: "
     "0x3601ec380>\n    label = <none> \n    device = <AGXG13XDevice: 0x11f3b5400>\n        name = Apple M1 Pro \n",
     "device.mps_command_buffer_error", ["0000000e", "Internal Error", "Apple M1 Pro", "NaN"]),
    ("RuntimeError: correlation_forward_impl: implementation for device cpu not found.", "device.mmcv_op_device_impl",
     ["correlation_forward_impl", "cpu", "cuda:0"]),
    ("RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU "
     "(while checking arguments for addmm)", "device.mismatch", ["CPU", "GPU", "`out`", "addmm"]),
    ("RuntimeError: CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: "
     "CUDNN_STATUS_NOT_SUPPORTED", "device.cudnn_status",
     ["CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", "CUDNN_STATUS_NOT_SUPPORTED", "v8 graph API"]),
    ("RuntimeError: Tensor.item() cannot be called on meta tensors", "device.meta_tensor_copy",
     ["`Tensor.item()`", "meta", "init_empty_weights"]),
])
def test_round10_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, said(diagnosis))


def test_set_storage_fixture_is_explained_live():
    diagnosis = explain_fixture("fixtures/device/set_storage_other_device.py")
    assert_names(diagnosis, "device.set_storage_device", ["meta", "cpu", "assign=True"], said(diagnosis))


def test_meta_buffer_item_fixture_names_the_unloaded_buffer():
    diagnosis = explain_fixture("fixtures/device/meta_buffer_item.py")
    assert_names(diagnosis, "device.meta_tensor_copy", ["`Tensor.item()`", "model.scale", "3 of 3"], said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # bare TensorRT / trtexec output is TensorRT's own failure, not PyTorch's
    ("[11/22/2024-13:40:47] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of "
     "memory)", "memory.tensorrt_oom"),
    ("[08/03/2022-23:18:05] [E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)",
     "memory.tensorrt_oom"),
    # Intel GPU runtime failures other than out-of-device-memory stay the native-API rule's
    ("RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
     "memory.xpu_out_of_device_memory"),
    # two MPS tensors of different dtypes are not a device mismatch
    ("RuntimeError: Input type (MPSHalfType) and weight type (MPSFloatType) should be the same",
     "device.input_weight_type"),
    # torch's own bad device strings are the device-string rule's, not safetensors'
    ("RuntimeError: Invalid device string: 'cuda:cpu'", "device.safetensors_invalid_device"),
    # mmcv built without its CUDA ops is an installation problem, not a CPU-only op
    ("RuntimeError: nms_impl: implementation for device cuda:0 not found.", "device.mmcv_op_device_impl"),
    # llama.cpp / ollama print Metal's out-of-memory status too; they are not PyTorch
    ("error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\nggml_metal_graph_compute: "
     "command buffer 3 failed with status 5", "device.mps_command_buffer_error"),
    # CTranslate2's allocation failure is its own rule's
    ("RuntimeError: CUDA failed with error out of memory", "memory.cuda_error_oom"),
])
def test_near_misses_are_not_claimed_by_the_round10_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert not_rule not in rules, rules
