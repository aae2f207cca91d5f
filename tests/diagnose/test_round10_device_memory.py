"""Device and memory rules written from round 10 and from the wording families searched after it (libraries
built on PyTorch: bitsandbytes, safetensors, vLLM, transformers, diffusers, Torch-TensorRT, tiny-cuda-nn; Apple
MPS, ROCm and Intel XPU runtimes; torch's own newer and older wordings): pasted messages whose diagnosis must
repeat their values, and near misses left unclaimed."""

from __future__ import annotations

import io

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said


def _live(call) -> str:
    """The message a real torch call on this build raises, as a traceback's last line prints it."""
    exc = raised(call)
    return f"{type(exc).__name__}: {exc}"



@pytest.mark.parametrize("message, rule, values", [
    # round 10
    ("RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'index' in call to "
     "_th_index_select", "device.mismatch", ["#3 `index`", "_th_index_select", "cpu", "cuda"]),
    # excerpt of https://github.com/nerfstudio-project/nerfstudio/issues/1534 (fixtures/real/r10_b.yaml#33)
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  /home/w/nerf/ngp_pl/tiny-cuda-nn/"
     "include/tiny-cuda-nn/multi_stream.h:83 cudaEventRecord(m_event, m_stream) failed with error an illegal memory "
     "access was encountered", "device.illegal_memory_access", ["multi_stream.h:83", "cudaEventRecord", "tiny-cuda-nn"]),
    ("RuntimeError： Attempting todeserialize object on a CUDA device but torch。cuda.is_available() is False。",
     "device.map_location", ["map_location"]),
    # excerpt of https://github.com/pytorch/pytorch/issues/5522 (fixtures/real/r10_a.yaml#85)
    ("[Fri Mar  2 11:34:55 2018] java invoked oom-killer: gfp_mask=0x24201ca, order=0, oom_score_adj=0",
     "memory.linux_oom_killer", ["`java`", "gfp_mask=0x24201ca", "Killed process"]),
    ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err`\n value: TorchError { c_error: \"[enforce fail "
     "at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment,\nnbytes) == 0. 12 vs 0", "memory.cpu_alloc",
     ["12 vs 0", "ENOMEM", "CPUAllocator.cpp:56"]),
    ("RuntimeError: All input tensors need to be on the same GPU, but found some tensors to not be on a GPU",
     "device.bnb_tensors_not_on_gpu", ["bitsandbytes", "not on a GPU", "device_map"]),
    # https://github.com/kohya-ss/sd-scripts/issues/354
    (corpus_message("r10_b.yaml#28"), "device.safetensors_invalid_device",
     ["`cuda`", "cuda:N", "device=\"cpu\""]),
    ("UserWarning:\n    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability "
     "supported by this version of PyTorch is\n    (8.0) - (12.0) ", "device.capability_incompatible",
     ["NVIDIA GB10", "12.1", "(8.0) - (12.0)", "same major version"]),
    # excerpt of https://github.com/pytorch/pytorch/issues/172629 (fixtures/real/r10_b.yaml#43)
    ("UserWarning: Found GPU0 NVIDIA GB10 which is of compute capability (CC) 12.1.\nYour installed "
     "torch==2.13.0+cu130 does not include kernels for this GPU.", "device.capability_incompatible",
     ["NVIDIA GB10", "12.1", "torch==2.13.0+cu130"]),
    # https://github.com/xinntao/ESRGAN/issues/134
    (corpus_message("r10_b.yaml#89"), "device.mps_ndarray_assertion", ["MPSNDArray.mm:724", "2**32", "4 GiB", "tile"]),
    # excerpt of https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/5359 (fixtures/real/r10_b.yaml#90)
    ("MPSNDArray.mm:794: failed assertion `[MPSNDArray, initWithBuffer:descriptor:] Error: buffer is not large enough. "
     "Must be 600 bytes\n'", "device.mps_ndarray_assertion", ["MPSNDArray.mm:794", "600 bytes", "bug"]),
    # https://github.com/ROCm/rocBLAS/issues/1339
    (corpus_message("r10_b.yaml#94"), "device.rocblas_tensile_library",
     ["TensileLibrary.dat", "Illegal seek", "HSA_OVERRIDE_GFX_VERSION"]),
    # excerpt of https://github.com/facebookresearch/fairseq/issues/2352 (fixtures/real/r10_b.yaml#16)
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCReduceAll.cuh line=317 error=59 : device-side assert triggered",
     "device.device_assert", ["THCReduceAll.cuh", "317", "59"]),
    # wording families found after round 10
    # https://github.com/Mikubill/sd-webui-controlnet/issues/661
    (corpus_message("r32_c.yaml#9"), "device.safetensors_invalid_device", ["`privateuseone:0`"]),
    ("2026-05-01 00:04:05,399 - torch_tensorrt [TensorRT Conversion Context] - ERROR - [executionContext.cpp::"
     "initializeExecutionContext::644] Error Code 2: OutOfMemory (Requested size was 149635638784 bytes.)",
     "memory.tensorrt_oom", ["149635638784", "139.36 GiB", "max shape"]),
    # excerpt of https://github.com/noonghunna/club-3090/issues/60 (fixtures/real/r15_b.yaml#88)
    ("RuntimeError: CUDA driver error: out of memory", "memory.cuda_error_oom", ["expandable_segments", "cuMemCreate"]),
    # excerpt of https://github.com/open-edge-platform/physical-ai-studio/issues/440 (fixtures/real/r32_c.yaml#61)
    ("terminate called after throwing an instance of 'sycl::_V1::exception'\n  what():  Enqueue process failed.\n"
     "level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
     "memory.xpu_out_of_device_memory", ["level_zero", "39", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"]),
    ("Memory access fault by GPU node-1 (Agent handle: 0x55eb9b596570) on address 0x7f66960b2000. Reason: Page not "
     "present or supervisor privilege.\nAbandon (core dumped)", "device.rocm_memory_access_fault",
     ["node-1", "0x7f66960b2000", "Page not present or supervisor privilege", "HSA_OVERRIDE_GFX_VERSION"]),
    # https://github.com/vllm-project/vllm/issues/14154 (runbooks/device/vllm_quantization_capability.md's example)
    ("ValueError: The quantization method bitsandbytes is not supported for the current GPU. Minimum capability: 70. "
     "Current capability: 52.", "device.vllm_quantization_capability", ["`bitsandbytes`", "70", "52"]),
    # https://github.com/pytorch/pytorch/issues/133692
    (corpus_message("r29_a.yaml#4"), "device.cuda_runtime_error", ["named symbol not found"]),
    # https://github.com/open-mmlab/mmaction2/issues/2243
    (corpus_message("r31_a.yaml#40"), "device.input_weight_type", ["MPSFloatType", "torch.FloatTensor", 'x.to("mps")']),
    # https://github.com/intel/intel-extension-for-pytorch/issues/392
    (corpus_message("r11_b.yaml#25"), "device.no_cuda_build", ["xpu"]),
    # excerpt of https://github.com/pytorch/pytorch/issues/96881 (fixtures/real/r28_a.yaml#74)
    ("RuntimeError: PyTorch is not linked with support for mps devices", "device.mps_unavailable",
     ["`mps`", "arm64", "Rosetta"]),
    ("RuntimeError: The MPS backend is supported on MacOS 13.0+.Current OS version can be queried using `sw_vers`",
     "device.mps_unavailable", ["13.0", "sw_vers", "x86_64"]),
    ("RuntimeError: MPS: power op with int64 input is supported natively starting from macOS 13.2.",
     "device.mps_unavailable", ["power op with int64 input", "13.2"]),
    # excerpt of https://github.com/lucidrains/stylegan2-pytorch/issues/287 (runbooks/device/cublas_no_current_context.md's example)
    ("UserWarning: Attempting to run cuBLAS, but there was no current CUDA context! Attempting to set the primary "
     "context... (Triggered internally at ../aten/src/ATen/cuda/CublasHandlePool.cpp:135.)",
     "device.cublas_no_current_context", ["warning, not an error", "primary context"]),
    ("RuntimeError: Attempted to set the storage of a tensor on device \"cuda:0\" to a storage on different device "
     "\"cpu\". This is no longer allowed; the devices must match.", "device.set_storage_device",
     ["cuda:0", "cpu", "set_default_tensor_type"]),
    # excerpt of https://github.com/happyharrycn/actionformer_release/issues/124 (fixtures/real/r32_b.yaml#58)
    ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n\nnvrtc compilation failed: ",
     "device.nvrtc_invalid_arch", ["NVRTC", "sm_86", "cu118"]),
    ("RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
     "device.flash_attn_arch", ["192", "A100/A800 or H100/H800", "attn_implementation"]),
    # excerpt of https://github.com/pytorch/pytorch/issues/125442 (runbooks/device/mps_command_buffer_error.md's example)
    ("Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations encoded on it may not "
     "have completed.\n\tError: \n\t(null)\n\tInternal Error (0000000e:Internal Error)\n\t<AGXG13XFamilyCommandBuffer: "
     "0x3601ec380>\n    label = <none> \n    device = <AGXG13XDevice: 0x11f3b5400>\n        name = Apple M1 Pro \n",
     "device.mps_command_buffer_error", ["0000000e", "Internal Error", "Apple M1 Pro", "NaN"]),
    ("RuntimeError: correlation_forward_impl: implementation for device cpu not found.", "device.mmcv_op_device_impl",
     ["correlation_forward_impl", "cpu", "cuda:0"]),
    ("RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU "
     "(while checking arguments for addmm)", "device.mismatch", ["CPU", "GPU", "`out`", "addmm"]),
    # https://github.com/2noise/ChatTTS/issues/301
    (corpus_message("r16_b.yaml#22"), "device.cudnn_status",
     ["CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", "CUDNN_STATUS_NOT_SUPPORTED", "v8 graph API"]),
    # https://github.com/QwenLM/Qwen2.5-Omni/issues/261
    (corpus_message("r19_b.yaml#56"), "device.meta_tensor_copy",
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
    # excerpt of https://github.com/NVIDIA/TensorRT/issues/4258 (runbooks/memory/tensorrt_oom.md's example)
    ("[11/22/2024-13:40:47] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of "
     "memory)", "memory.tensorrt_oom"),
    ("[08/03/2022-23:18:05] [E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)",
     "memory.tensorrt_oom"),
    # Intel GPU runtime failures other than out-of-device-memory stay the native-API rule's
    # https://github.com/pytorch/pytorch/issues/190972
    (corpus_message("r14_b.yaml#7"), "memory.xpu_out_of_device_memory"),
    # two tensors on one device with different dtypes are not a device mismatch (no MPS paste of it was found; a CUDA
    # one: https://github.com/Yu-Fangxu/COLD-Attack/issues/20)
    (corpus_message("dtype_autograd.yaml#6"), "device.input_weight_type"),
    # torch's own bad device strings are the device-string rule's, not safetensors' (raised live)
    (_live(lambda: torch.device("cuda:cpu")), "device.safetensors_invalid_device"),
    # mmcv built without its CUDA ops is an installation problem, not a CPU-only op
    ("RuntimeError: nms_impl: implementation for device cuda:0 not found.", "device.mmcv_op_device_impl"),
    # CTranslate2's allocation failure is its own rule's
    # excerpt of https://github.com/OpenNMT/CTranslate2/issues/1458 (fixtures/real/r34_c.yaml#17)
    ("RuntimeError: CUDA failed with error out of memory", "memory.cuda_error_oom"),
])
def test_near_misses_are_not_claimed_by_the_round10_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert not_rule not in rules, rules
