"""Compile, device and memory rules from round 16: ExecuTorch's two lowering errors (an operator outside Core ATen at
to_edge, no out variant at to_executorch), a custom op's fake implementation whose parameters do not match the op,
SGLang's static memory share, CUTLASS's arch-conditional kernels, cuDNN's nvrtc workaround warning and the Ascend NPU
runtime; and known families in other wordings (cuBLASLt's m/n/k and computeType, rocBLAS on Windows, torch 2.7's list
of CUDA builds for a GPU, a tracer warning pasted in markdown, vLLM's raise statement quoted in a traceback,
ComfyUI's report of an InductorError). Only the fake implementation can be raised by the CPU build of torch 2.13; the
others need a GPU, an NPU, ExecuTorch or SGLang, so those messages are real ones, verbatim from the cited threads."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, said


def test_a_fake_implementation_that_takes_fewer_arguments_than_the_op_is_explained_live():
    diagnosis = explain_fixture("fixtures/compile/fake_impl_signature.py")
    assert_names(diagnosis, "compile.fake_impl_signature",
                 ["`_scale_norm_fake()`", "takes 2 positional arguments but 3 were given", "FakeTensorMode"])


@pytest.mark.parametrize("text, rule, values", [
    # sglang#19725: the fake function's missing argument, logged by fake_tensor.py on each rank
    ("[rank0]:E0303 00:33:59.254000 965504 torch/_subclasses/fake_tensor.py:1378] [48/0] TypeError: "
     "_fused_scale_residual_norm_scale_shift_fake() missing 1 required positional argument: 'eps'\n"
     "[rank0]:E0303 00:33:59.311000 965504 torch/_subclasses/fake_tensor.py:1378] [49/0] fake tensor raised TypeError",
     "compile.fake_impl_signature", ["`_fused_scale_residual_norm_scale_shift_fake()`", "'eps'"]),
    # executorch#5068 and #8369: to_executorch's out-variant pass
    ("RuntimeError: Missing out variants: {'aten::mean'}", "compile.executorch_missing_out_variants",
     ["'aten::mean'", "`.out` overload"]),
    ("RuntimeError: Missing out variants: {'quantized_decomposed::dequantize_per_tensor', "
     "'quantized_decomposed::quantize_per_tensor'}", "compile.executorch_missing_out_variants",
     ["'quantized_decomposed::quantize_per_tensor'", "`import executorch.kernels.quantized`"]),
    # executorch#2389 (2024 wording) and #15673 (the later one, its message opening on the next line)
    ("torch._export.verifier.SpecViolationError: Operator torch._ops.aten._native_batch_norm_legit_functional.default "
     "is not Aten Canonical.", "compile.export_not_core_aten",
     ["`aten._native_batch_norm_legit_functional.default`", "training mode", "`_native_batch_norm_legit_no_training`"]),
    ("torch._export.verifier.SpecViolationError: \nOperator torch._ops.aten.bitwise_right_shift.Tensor is not in Core "
     "ATen opset (https://pytorch.org/docs/stable/torch.compiler_ir.html#core-aten-ir).\"",
     "compile.export_not_core_aten", ["`aten.bitwise_right_shift.Tensor`", "is not in Core ATen opset"]),
    # executorch#3832: dropout's Bernoulli mask, exported in training mode
    ("torch._export.verifier.SpecViolationError: Operator torch._ops.aten.bernoulli.p is not Aten Canonical.",
     "compile.export_not_core_aten", ["`aten.bernoulli.p`", "random operator"]),
    # mmdetection#922: the source line under the warning, as a markdown paste wrapped it
    ("_TracerWarning: Converting a tensor to a Python boolean might cause the trace to be incorrect. We can't record "
     "the data flow of Python values, so this value will be treated as a constant in the future. This means that the "
     "trace might not generalize to other inputs!_\n**_if nms_pre > 0 and scores.shape[0] > nms_pre:_**",
     "compile.tracer_warning", ["`if nms_pre > 0 and scores.shape[0] > nms_pre:`"]),
])
def test_compile_messages_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_comfyui_report_of_a_missing_msvc_names_the_inductor_error_it_was_raised_as():
    # openvino-dev-samples/comfyui_openvino#18
    diagnosis = explain_paste(
        "# ComfyUI Error Report\n## Error Details\n- **Node ID:** 3\n- **Node Type:** KSampler\n"
        "- **Exception Type:** torch._inductor.exc.InductorError\n"
        "- **Exception Message:** RuntimeError: Compiler: cl is not found.\n")
    assert_names(diagnosis, "compile.cxx_compiler_missing", ["`cl`", "`torch._inductor.exc.InductorError`"])


@pytest.mark.parametrize("text, rule, values", [
    # pytorch#141749: cublasLt's arguments after the status
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasLtMatmul with transpose_mat1 t "
     "transpose_mat2 n m 2048 n 2048 k 2048 mat1_ld 2048 mat2_ld 2048 result_ld 2048 computeType 68 scaleType 0",
     "device.cublas_status", ["m=2048, n=2048, k=2048", "computeType 68 = CUBLAS_COMPUTE_32F"]),
    # FramePack-ZLUDA#4: a Windows path (a drive colon) and a paste that lost the first letter
    ("> ocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.2\\bin\\/rocblas/library/TensileLibrary.dat: No such "
     "file or directory for GPU arch : gfx1201\n> rocBLAS error: Could not initialize Tensile host:\n"
     "> regex_error(error_backref): The expression contained an invalid back reference.",
     "device.rocblas_tensile_library", ["TensileLibrary.dat", "gfx1201", "C:\\Program Files\\AMD\\ROCm\\6.2\\bin\\"]),
    # fedbiomed#464: the second line of the warning, alone
    ("The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
     "device.capability_incompatible", ["sm_37 sm_50 sm_60 sm_70", "no kernel image"]),
    # pytorch/ao#2904
    ("ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting.\n"
     "ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting.",
     "device.cutlass_arch_conditional", ["Arch conditional MMA instruction", "sm_90a", "TORCH_CUDA_ARCH_LIST"]),
    # cutlass#1874: CuTe's guard of one instruction
    ("Attempting to use wgmma.fence without CUTE_ARCH_MMA_SM90A_ENABLED", "device.cutlass_arch_conditional",
     ["`wgmma.fence`", "`CUTE_ARCH_MMA_SM90A_ENABLED`"]),
    # model-angelo#104 and MagicTime#26: torch 2.x with cuDNN 8's two warnings before the first convolution
    (">~/anaconda3/envs/model-angelo_local/lib/python3.10/site-packages/torch/nn/modules/conv.py:605: UserWarning: "
     "Applied workaround for CuDNN issue, install nvrtc.so (Triggered internally at /opt/conda/conda-bld/"
     "pytorch_1711403388920/work/aten/src/ATen/native/cudnn/Conv_v8.cpp:80.)",
     "device.cudnn_nvrtc_workaround", ["nvrtc.so", "Conv_v8.cpp:80", "conv.py:605", "warning"]),
    ("miniforge3/envs/magictime/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Attempt to "
     "open cnn_infer failed: handle=0 error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or "
     "directory (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:78.)",
     "device.cudnn_nvrtc_workaround", ["`libcudnn_cnn_infer.so.8`", "conv.py:456", "harmless"]),
    # verl#332: CANN's log lines under a Ray worker, the actor call after them
    (corpus_message("r16_b.yaml#14"),
     "device.ascend_npu_runtime_error", ["`rtGetDevMsg`", "retCode=0x7020010", "`WorkerDict.ref_init_model()`"]),
    # vllm-ascend#1443: torch_npu's check of an ACL call
    ("RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: "
     "AclrtSynchronizeDeviceWithTimeout, error code is 507048", "device.ascend_npu_runtime_error",
     ["`npuSynchronizeDevice`", "`AclrtSynchronizeDeviceWithTimeout`", "507048"]),
])
def test_device_messages_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_torch_27s_capability_warning_names_the_cuda_builds_that_support_the_gpu():
    # https://github.com/pytorch/pytorch/issues/182250, verbatim as the rule's example cites it
    diagnosis = explain_paste(
        "/home/matti/test/test_torch_2.7/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:371: UserWarning: "
        "Found GPU0 Tesla V100-PCIE-32GB which is of compute capability (CC) 7.0.\n"
        "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:\n"
        "- 7.5 which supports hardware CC >=7.5,<8.0\n- 8.0 which supports hardware CC >=8.0,<9.0 except {8.7}\n"
        "- 8.6 which supports hardware CC >=8.6,<9.0 except {8.7}\n- 9.0 which supports hardware CC >=9.0,<10.0\n"
        "- 10.0 which supports hardware CC >=10.0,<11.0 except {10.1}\n- 12.0 which supports hardware CC >=12.0,<13.0\n"
        "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that "
        "supports one of these CUDA versions: 12.6, 12.8\n  _warn_unsupported_code(d, device_cc, code_ccs)")
    assert_names(diagnosis, "device.capability_incompatible",
                 ["Tesla V100-PCIE-32GB", "(CC) 7.0", "CUDA 12.6, 12.8", "whl/cu126"])


@pytest.mark.parametrize("text, rule, values", [
    # sglang#4330 and the 2026 wording with the value (sglang#36260)
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
     "memory.sglang_mem_fraction_static", ["`--mem-fraction-static`", "increase it is right"]),
    ("ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.1",
     "memory.sglang_mem_fraction_static", ["--mem-fraction-static=0.1", "--mem-fraction-static 0.15"]),
    # vllm#27508: the traceback ends in the raise statement's source lines, the error line cut off
    ("(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]   File \"/opt/conda/envs/vllm_env/lib/python3.13/"
     "site-packages/vllm/v1/core/kv_cache_utils.py\", line 699, in check_enough_kv_cache_memory\n"
     "(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]     raise ValueError(\"No available memory for the "
     "cache blocks. \"\n(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]                      \"Try "
     "increasing `gpu_memory_utilization` when \"\n(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]"
     "                      \"initializing the engine.\")",
     "memory.vllm_gpu_memory_utilization", ["`gpu_memory_utilization`", "KV cache blocks"]),
])
def test_memory_messages_name_their_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))  # the setting to use is in the fixes


@pytest.mark.parametrize("text, rule", [
    # a user's class called without an argument: no fake implementation (speedy-splat#1)
    ("TypeError: __new__() missing 1 required positional argument: 'antialiasing'", "compile.fake_impl_signature"),
    # ptxas at build time, not CUTLASS's runtime guard (llama.cpp#18363)
    ("ptxas /tmp/tmpxft_00007d6d_00000000-6_mmq-instance-mxfp4.compute_120.ptx, line 1025; error   : Instruction 'mma "
     "with block scale' not supported on .target 'sm_120'", "device.cutlass_arch_conditional"),
    # the crash cuDNN's workaround prevents (sdnext#539)
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file "
     "or directory", "device.cudnn_nvrtc_workaround"),
    # torch_npu's allocator log line (Ascend/pytorch#108)
    ("torch_npu.memory: [ERROR] [269128] Get a block from the existing pool failed. Try to free cached blocks and "
     "reallocate. This error log can be ignored.", "device.ascend_npu_runtime_error"),
])
def test_near_misses_are_not_claimed(text, rule):
    import io

    from explainer.cli.explain import explain_stream

    assert rule not in [d.rule for d in explain_stream(io.StringIO(text))]
