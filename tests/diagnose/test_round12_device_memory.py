"""Device and memory rules written from round 12 and from the wording families searched after it: torch 2.8's
torch.AcceleratorError and its `Search for 'cudaErrorX'` line on the CUDA runtime errors, THC's check of an illegal
memory access, the legacy type constructors given another device, MIOpen's kernel builds on AMD GPUs, and the two
category decisions of this round (a quantized model's `.to` is `other`, Windows error 1455 is `memory`)."""

from __future__ import annotations

import io

import pytest
import torch

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, raised, said

# an excerpt, verbatim (MIOpen's lines), of https://github.com/ryujaehun/pytorch-gpu-benchmark/issues/19 (r12_b.yaml#53)
MIOPEN_BLOCK = (
    "MIOpen(HIP): Warning [SQLiteBase] Unable to read system database file:/opt/rocm/miopen/share/miopen/db/"
    "gfx900_64.kdb Performance may degrade\n"
    "MIOpen(HIP): Error [SetIsaName] 'amd_comgr_action_info_set_isa_name(handle, isa.c_str())' "
    "amdgcn-amd-amdhsa--gfx900:sramecc-:xnack-: INVALID_ARGUMENT (2)\n"
    "MIOpen(HIP): Error [BuildOcl] comgr status = INVALID_ARGUMENT (2)\n"
    "MIOpen(HIP): Warning [BuildOcl] amdgcn-amd-amdhsa--gfx900:sramecc-:xnack-\n"
    "MIOpen Error: /MIOpen/src/hipoc/hipoc_program.cpp:286: Code object build failed. Source: MIOpenIm2d2Col.cl\n")


@pytest.mark.parametrize("message, rule, values", [
    # torch 2.8+: the class and the runtime's error name
    ("torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\nSearch for "
     "`cudaErrorNoKernelImageForDevice' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for "
     "more information.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", "device.no_kernel_image",
     ["cudaErrorNoKernelImageForDevice", "`torch.AcceleratorError`"]),
    ("# ComfyUI Error Report\n## Error Details\n- **Node ID:** 542\n- **Node Type:** WanMoeKSampler\n"
     "- **Exception Type:** torch.AcceleratorError\n- **Exception Message:** CUDA error: no kernel image is available "
     "for execution on the device", "device.no_kernel_image", ["`torch.AcceleratorError`", "cudaErrorNoKernelImage"]),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "device.no_kernel_image",
     ["cudaErrorNoKernelImageForDevice"]),
    ("torch.AcceleratorError: CUDA error: unspecified launch failure Search for `cudaErrorLaunchFailure' in "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information. CUDA kernel errors "
     "might be asynchronously reported at some other API call, so the stacktrace below migh",
     "device.unspecified_launch_failure", ["cudaErrorLaunchFailure", "`torch.AcceleratorError`"]),
    ("torch.AcceleratorError: CUDA error: invalid device ordinal", "device.invalid_ordinal",
     ["cudaErrorInvalidDevice", "`torch.AcceleratorError`"]),
    # Jupyter prints the class without its module
    ("AcceleratorError: CUDA error: device-side assert triggered\nSearch for `cudaErrorAssert' in https://docs.nvidia."
     "com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.", "device.device_assert",
     ["cudaErrorAssert", "`torch.AcceleratorError`", "index out of range"]),
    # THC's own check, and the full call a CUDA library's check names
    ("THCudaCheck FAIL file=c:\\programdata\\miniconda3\\conda-bld\\pytorch_1533090265711\\work\\aten\\src\\thc\\"
     "THCReduceAll.cuh line=317 error=77 : an illegal memory access was encountered", "device.illegal_memory_access",
     ["error=77", "THCReduceAll.cuh:317", "cudaErrorIllegalAddress"]),
    # an excerpt, verbatim, of r12_b.yaml#45
    # (https://github.com/nerfstudio-project/nerfstudio/issues/2437)
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  /tmp/pip-req-build-410_teg0/"
     "include/tiny-cuda-nn/multi_stream.h:83 cudaEventRecord(m_event, m_stream) failed with error an illegal memory "
     "access was encountered\nAborted (core dumped)", "device.illegal_memory_access",
     ["`cudaEventRecord(m_event, m_stream)`", "multi_stream.h:83"]),
    # the values as the messages spell them
    # an excerpt, verbatim, of the corpus entry r12_b.yaml#25 (https://github.com/Lightricks/LTX-Video/issues/64)
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 24.00 GiB "
     "of which 0 bytes is free. Of the allocated memory 22.89 GiB is allocated by PyTorch, and 355.13 MiB is reserved by "
     "PyTorch but unallocated.", "memory.cuda_oom", ["0 bytes is free", "64.00 MiB", "24.00 GiB"]),
    # an excerpt, verbatim, of the corpus entry r12_b.yaml#91 (https://github.com/gensyn-ai/rl-swarm/issues/299)
    ("ValueError: Your setup doesn't support bf16/gpu.", "device.bf16_gpu_capability", ["bf16/gpu", "fp16"]),
    ('  File "/opt/conda/lib/python3.7/site-packages/torch_scatter/scatter.py", line 65, in scatter_min\n'
     "    return torch.ops.torch_scatter.scatter_min(src, index, dim, out, dim_size)\n"
     "RuntimeError: Not compiled with CUDA support", "other.extension_not_compiled_gpu",
     ["Not compiled with CUDA support"]),
    # legacy type constructors: a tensor on another device, device= on a CPU constructor (torch 1.8+ and 1.0-1.7)
    # an excerpt, verbatim, of the corpus entry r12_b.yaml#38 (https://github.com/idiap/coqui-ai-TTS/issues/234)
    ('    y = torch.FloatTensor(audio_ref)\nTypeError: expected TensorOptions(dtype=float, device=cpu, layout=Strided, '
     "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)) (got TensorOptions("
     "dtype=float, device=cuda:0, layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
     "memory_format=(nullopt)))", "device.legacy_constructor_device", ["device=cpu", "device=cuda:0", "as_tensor"]),
    ("RuntimeError: legacy constructor expects device type: cpubut device type: cuda was passed",
     "device.legacy_constructor_device", ["`device=cuda`", "cpu tensors", "torch.tensor("]),
    ("RuntimeError: legacy constructor for device type: cpu was passed device type: cuda, but device type must be: cpu",
     "device.legacy_constructor_device", ["`device=cuda`", "torch.cuda.FloatTensor"]),
    # MIOpen: its own lines pasted alone
    (MIOPEN_BLOCK, "device.miopen_error", ["`MIOpenIm2d2Col.cl`", "gfx900", "INVALID_ARGUMENT (2)",
                                          "hipoc_program.cpp:286"]),
    # ... and followed by the traceback of the call that needed the kernel: an excerpt, verbatim, of
    # https://github.com/ryujaehun/pytorch-gpu-benchmark/issues/19 (the benchmark's progress line, MIOpen's lines, the
    # first frames; the thread's last line, torch's miopenStatusUnknownError, is not in what was copied)
    ("Benchmarking Training float precision type mnasnet0_5 \n" + MIOPEN_BLOCK + "Traceback (most recent call last):\n"
     '  File "benchmark_models.py", line 183, in <module>\n    train_result = train(precision)\n'
     '  File "benchmark_models.py", line 93, in train', "device.miopen_error",
     ["`MIOpenIm2d2Col.cl`", "gfx900", "INVALID_ARGUMENT (2)"]),
    ("RuntimeError: miopenStatusUnknownError", "device.miopen_error", ["miopenStatusUnknownError", "MIOpen Error:"]),
    # one rule for a quantized model's .to/.cuda, all wordings (category `other`)
    # an excerpt, verbatim, of the corpus entry r7_a.yaml#32 (https://github.com/TTPlanetPig/Comfyui_JC2/issues/26)
    ("Error loading models: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as "
     "it is, since the model has already been set to the correct devices and casted to the correct `dtype`.",
     "other.quantized_model_move", ["`.to()`", "`4-bit` or `8-bit` bitsandbytes models"]),
    ("ValueError: `.cuda` is not supported for HQQ-quantized models.", "other.quantized_model_move",
     ["`.cuda()`", "HQQ-quantized models"]),
    # Windows error 1455 is the commit limit whatever was loading (category `memory`)
    ('OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "D:\\Anaconda3\\envs\\wssam\\lib\\site-packages\\'
     'torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.', "memory.windows_paging_file",
     ["`cudnn_cnn_infer64_8.dll`", "WinError 1455", "页面文件太小", "DataLoader workers"]),
    # verbatim from https://github.com/thu-ml/tianshou/issues/297
    ("OSError: [WinError 1455] The paging file is too small for this operation to complete\nError loading "
     '"E:\\Anaconda\\envs\\Python37\\lib\\site-packages\\torch\\lib\\cudnn_cnn_train64_8.dll" or one of its '
     "dependencies.", "memory.windows_paging_file", ["`cudnn_cnn_train64_8.dll`", "commit limit"]),
])
def test_round12_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # MIOpen's performance-database warning is printed on every first run
    ("MIOpen(HIP): Warning [SQLiteBase] Unable to read system database file:/opt/rocm/miopen/share/miopen/db/"
     "gfx900_64.kdb Performance may degrade", "device.miopen_error"),
    # a DLL that is missing (126) stays the DLL rule's; a full page file (1455) is not
    # verbatim from https://github.com/modelscope/FunClip/issues/105
    ('OSError: [WinError 126] The specified module could not be found. Error loading "C:\\Users\\username\\AppData\\'
     'Local\\Programs\\Python\\Python312\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
     "memory.windows_paging_file"),
    # an excerpt, verbatim, of the corpus entry r8_a.yaml#1 (https://github.com/ultralytics/ultralytics/issues/9476)
    ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
     '"D:\\Anaconda\\envs\\yolov8_custom\\Lib\\site-packages\\torch\\lib\\torch_python.dll" or one of its dependencies.',
     "other.dll_load_failed"),
    # an operator's device check of the 0.4-1.x era is not a constructor's
    ("RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #3 "
     "'other'", "device.legacy_constructor_device"),
])
def test_near_misses_are_not_claimed_by_the_round12_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert not_rule not in rules, rules


def test_legacy_constructor_given_a_tensor_on_another_device_live():
    diagnosis = explain_fixture("fixtures/device/legacy_constructor_device.py")
    assert_names(diagnosis, "device.legacy_constructor_device", ["device=cpu", "device=meta", "on meta"])


def test_legacy_constructor_given_a_device_live():
    exc = raised(lambda: torch.FloatTensor([1.0], device="meta"))
    assert_names(explainer.explain(exc), "device.legacy_constructor_device", ["`device=meta`", "cpu tensors"])


def test_legacy_constructor_given_a_tensor_and_a_device_live():
    exc = raised(lambda: torch.Tensor(torch.zeros(2), device="cpu"))
    assert_names(explainer.explain(exc), "device.legacy_constructor_device",
                 ["`torch.Tensor(tensor, device=device)`", "torch 1.9"])


def test_legacy_constructor_with_the_same_device_is_left_to_the_dtype_rules_live():
    # torch.FloatTensor of a float64 CPU tensor: the options differ only in dtype
    exc = raised(lambda: torch.FloatTensor(torch.zeros(3, dtype=torch.float64)))
    assert "(got TensorOptions(dtype=double, device=cpu" in str(exc)
    assert explainer.explain(exc).rule != "device.legacy_constructor_device"
