"""Compile, device and memory rules widened from round 14: the older and stranger wordings of known families (torch
0.3-1.x's tensor-type and backend checks, THC's runtime errors, Dynamo's Unsupported for the recompile limit, a
fake-tensor call that needed a tensor's value), the logs around them (torch.compile's backend line, Hydra's wrapper,
Inductor's autotuner, a Triton launch in a pasted traceback, FlashInfer's CUDA check) and a new warning rule for
ONNX's checker. None of these is raised by the CPU build of torch 2.13 (they need a GPU, an older torch, or onnx,
Lightning and Hydra), so every message is a real one, verbatim from the thread cited next to it."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream
from explainer.probes import ProbeContext
from explainer.probes.runtime.oom_processes import oom_processes

from conftest import assert_names, corpus_message, explain_paste, said


@pytest.mark.parametrize("text, rule, values", [
    # torch.compile's wrapper names the backend on the line above (triton-windows#34)
    ("backend='inductor' raised:\nRuntimeError: Cannot find a working triton installation. Either the package is not "
     "installed or it is too old. More information on installing Triton can be found at https://github.com/openai/triton"
     "\n\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information",
     "compile.triton_missing", ["torch.compile(backend='inductor')"]),
    # torch 2.0-2.4 raised the recompile limit as Unsupported (pytorch#124269)
    ("`torch._dynamo.exc.Unsupported: cache_size_limit reached`", "compile.recompile_limit",
     ["`torch._dynamo.exc.Unsupported: cache_size_limit reached`", "torch._dynamo.config.cache_size_limit",
      "FailOnRecompileLimitHit"]),
    # torch.export's UserError for a branch on a tensor (executorch#8823)
    ("torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment. Please use torch.cond to "
     "explicitly capture the control flow. For more information about this error, see: "
     "https://pytorch.org/docs/main/generated/exportdb/index.html#cond-operands",
     "compile.graph_break", ["`torch._dynamo.exc.UserError`", "torch.cond(pred, true_fn, false_fn, operands)"]),
    # the glog place of Inductor's SM check (Zonos#168)
    ("W0301 14:50:21.667000 3157 .venv/lib/python3.12/site-packages/torch/_inductor/utils.py:1137] [2/0] Not enough "
     "SMs to use max_autotune_gemm mode", "compile.inductor_not_enough_sms", ["torch/_inductor/utils.py:1137"]),
])
def test_compile_messages_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_a_failed_autotune_choice_is_logged_not_fatal_and_names_the_round():
    # https://github.com/pytorch/pytorch/issues/150980: the autotuner's table, its timing line, then the choice it dropped
    diagnosis = explain_paste(corpus_message("r14_b.yaml#89"))
    assert_names(diagnosis, "compile.inductor_no_valid_triton_configs",
                 ["select_algorithm.py:1905", "18 choices", "not fatal", "NoValidChoicesError"])
    assert any("nothing needs fixing" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_a_failed_autotune_choice_names_the_kernel_and_its_shared_memory():
    # https://github.com/pytorch/pytorch/pull/181198 (the logger's name instead of a glog prefix), verbatim as the
    # rule's example cites it
    diagnosis = explain_paste(
        "ERROR:torch._inductor.select_algorithm:Exception No valid triton configs. OutOfMemoryError: out of resource: "
        "triton_mm Required: 294912 Hardware limit:232448 Reducing block sizes or `num_stages` may help. for benchmark "
        "choice TritonTemplateCaller(/tmp/torchinductor_xmfan/2q/c2q5vcxzc54csmibb5bmhmxvlpejmwrj4tbv4dc6hwtbdyod4a3d.py, "
        "ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=128, BLOCK_M=64, BLOCK_N=128, EVEN_K=True, GROUP_M=8, "
        "OUT_DTYPE='tl.float32', USE_FAST_ACCUM=False, num_stages=4, num_warps=4)")
    assert_names(diagnosis, "compile.inductor_no_valid_triton_configs",
                 ["TritonTemplateCaller", "`triton_mm`", "294912", "232448", "not fatal"])


def test_a_failed_autotune_choice_is_found_in_a_long_log():
    lines = [f"step {i} loss 0.25" for i in range(300)]
    lines.append(corpus_message("r14_b.yaml#89"))  # https://github.com/pytorch/pytorch/issues/150980
    [diagnosis] = [d for d in explain_stream(io.StringIO("\n".join(lines))) if d.rule]
    assert_names(diagnosis, "compile.inductor_no_valid_triton_configs", ["dropped one of the kernels"])


# A fake-tensor call that needed a tensor's value would run eagerly: it is data-dependent, not a bad input.
FAILED_ON_GUARD = (  # https://github.com/pytorch/pytorch/issues/157355
    "RuntimeError: Failed running call_module L__self___activation_post_process_361(*(Parameter(FakeTensor(..., "
    "device='cuda:0', size=(512,), requires_grad=True)),), **{}):\nCould not guard on data-dependent expression "
    "Eq(u0, 1) (unhinted: Eq(u0, 1)).  (Size-like symbols: none)\n\nCaused by: activation_post_process_361 = "
    "self.activation_post_process_361(crosstransformer_layers_0_gamma_1_scale);  crosstransformer_layers_0_gamma_1_"
    "scale = None  # <eval_with_key>.1057:23 in forward (ao/quantization/observer.py:1266 in forward)")


def test_fake_tensor_call_on_a_data_dependent_guard_is_data_dependent_and_names_the_node():
    diagnosis = explain_paste(FAILED_ON_GUARD)
    assert_names(diagnosis, "compile.data_dependent",
                 ["`Eq(u0, 1)`", "`L__self___activation_post_process_361`", "`activation_post_process_361`",
                  "ao/quantization/observer.py:1266"])
    assert "would fail without torch.compile" not in diagnosis.summary


def test_fake_tensor_call_on_a_value_of_a_symbolic_int_is_data_dependent():
    # https://github.com/pytorch/pytorch/issues/116336 (torch 2.1's wording)
    diagnosis = explain_paste(
        "RuntimeError: Failed running call_function <built-in method empty of type object at 0x7f7a03469a40>(*((32, "
        "FakeTensor(..., size=(), dtype=torch.int64)),), **{'device': device(type='cpu'), 'dtype': torch.float32}):\n"
        "It appears that you're trying to get a value out of symbolic int/float whose value is data-dependent (and thus "
        "we do not know the true value.)  The expression we were trying to evaluate is Eq(32*i0, 0) (unhinted: "
        "Eq(32*i0, 0)).  Scroll up to see where each of these data-dependent accesses originally occurred.")
    assert_names(diagnosis, "compile.data_dependent", ["`Eq(32*i0, 0)`", "`empty`"])


def test_tracer_warning_is_shown_under_the_onnx_export_failure_it_came_with():
    # https://github.com/pytorch/pytorch/issues/27723: the trace's warning, then the export's, then KeyError: 'mv'
    text = corpus_message("r14_a.yaml#39")
    diagnoses = [d for d in explain_stream(io.StringIO(text)) if d.rule]
    assert [d.rule for d in diagnoses] == ["compile.onnx_unsupported_operator"], [d.rule for d in diagnoses]
    assert_names(diagnoses[0], "compile.onnx_unsupported_operator", ["`mv`", "`torch.onnx.symbolic_opset9.mv`"])
    [companion] = diagnoses[0].facts["printed_with"]
    assert companion["rule"] == "compile.tracer_warning" and "if ssh != up_out.shape[-2:]:" in companion["summary"]


@pytest.mark.parametrize("text, values", [
    ("`Warning: Checker does not support models with experimental ops: ATen`",  # onnx#3891
     ["`ATen` nodes", "ONNX_ATEN_FALLBACK", "a warning"]),
    ("Warning: ATen was a removed experimental ops. In the future, we may directly reject this operator. Please "
     "update your model as soon as possible.", ["ATen was a removed experimental ops"]),  # onnxruntime#2170
    ("Warning: Checker does not support models with experimental ops: ImageScaler",  # onnxruntime-inference-examples
     ["`ImageScaler`", "removed from its standard"]),
])
def test_onnx_checker_warning_names_the_operator(text, values):
    assert_names(explain_paste(text), "compile.onnx_experimental_op", values)


# --- device ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, values", [
    # torch 0.4.1's checkBackend (FaceForensics#25): the input on the CPU, the conv weight on the GPU
    ("RuntimeError: Expected object of backend CPU but got backend CUDA for argument #2 'weight'",
     ["expected backend CPU", "got backend CUDA", "argument #2 `weight`", "the input was not moved"]),
    # torch 0.4's tensor types (CCNet-Pure-Pytorch#6, efficientdensenet_crnn#2, pytorch-AGNN#3)
    ("RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #3 "
     "'other'", ["Argument #3 `other`", "torch.cuda.FloatTensor", "expected a torch.FloatTensor", "on the GPU"]),
    ("RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #2 "
     "'source'", ["Argument #2 `source`", "masked_scatter_"]),
    ("RuntimeError: Expected object of type Variable[torch.FloatTensor] but found type Variable[torch.cuda.FloatTensor] "
     "for argument #1 'other'", ["Variable[torch.cuda.FloatTensor]", "Argument #1 `other`"]),
])
def test_legacy_device_checks_name_both_sides(text, values):
    assert_names(explain_paste(text), "device.mismatch", values)


def test_legacy_type_check_on_one_device_stays_a_dtype_error():
    # https://github.com/chenyuntc/pytorch-book/issues/81
    diagnosis = explain_paste("RuntimeError: Expected object of type torch.LongTensor but found type torch.FloatTensor "
                              "for argument #2 'mat2'")
    assert diagnosis.rule == "dtype.argument_type_mismatch", diagnosis.rule


@pytest.mark.parametrize("text, rule, values", [
    # THC's runtime error names its code and torch's kernel (blackbox-attack#1)
    ("RuntimeError: cuda runtime error (48) : no kernel image is available for execution on the device at "
     "d:\\pytorch\\pytorch\\torch\\lib\\thcunn\\generic/Threshold.cu:34", "device.no_kernel_image",
     ["cuda runtime error (48)", "Threshold.cu:34", "PyTorch's own kernels"]),
    # THCudaCheck's spelling of the place (pytorch-yolo-v3#88, Progressive-Face-Super-Resolution#22)
    ("THCudaCheck FAIL file=..\\aten\\src\\THC\\THCGeneral.cpp line=87 error=30 : unknown error",
     "device.cuda_runtime_error", ["THCudaCheck FAIL file=THCGeneral.cpp line=87 error=30", "cudaErrorUnknown"]),
    ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1544174967633/work/aten/src/THC/THCGeneral.cpp line=405 "
     "error=11 : invalid argument", "device.thc_general_invalid_argument",
     ["THCudaCheck FAIL file=THCGeneral.cpp line=405 error=11", "THCGeneral.cpp:405"]),
    # torch.cuda's C++ module (Lipreading-PyTorch#2)
    ("cuda runtime error (10) : invalid device ordinal at torch/csrc/cuda/Module.cpp:32", "device.invalid_ordinal",
     ["CUDA error 10", "Module.cpp:32", "torch.cuda.set_device(i)"]),
    # SYCL's Level Zero adapter (pytorch#190972)
    ("RuntimeError: level_zero backend failed with error: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
     "device.xpu_native_api", ["`level_zero backend failed with error: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)`",
                               "usually memory"]),
    # accelerate's 8-bit check (chatGLM-6B-QLoRA#49)
    ("ValueError: You can't train a model that has been loaded in 8-bit precision on a different device than the one "
     "you're training on.", "device.quantized_train_device", ["8-bit", "a different device (GPU)"]),
])
def test_device_messages_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_thc_check_printed_before_the_python_error_names_its_place():
    # https://github.com/bubbliiiing/yolov5-pytorch/issues/125: a progress bar, THC's line, then the Python error
    diagnosis = explain_paste(corpus_message("r14_a.yaml#24"))
    assert_names(diagnosis, "device.cuda_runtime_error",
                 ["THCudaCheck FAIL file=THCCachingHostAllocator.cpp line=296 error=30"])


TRITON_LAUNCH = (  # https://github.com/lightonai/pylate/issues/75
    '  File "/tmp/torchinductor_root/iq/ciqrfu3ucgsquenkxp6d3hnf3br5rzxifpxeazprcynhjvbnl2na.py", line 413, in call\n'
    "    triton_poi_fused__to_copy_0.run(tangents_1, buf0, triton_poi_fused__to_copy_0_xnumel, "
    "grid=grid(triton_poi_fused__to_copy_0_xnumel), stream=stream0)\n"
    '  File "/workspace/sigrid/ModernBERT/.venv/lib/python3.11/site-packages/torch/_inductor/triton_heuristics.py", '
    "line 670, in run\n    return launcher(\n           ^^^^^^^^^\n"
    '  File "<string>", line 7, in launcher\n'
    "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n")


def test_triton_illegal_memory_access_names_the_generated_kernel_and_its_launcher():
    diagnosis = explain_paste(TRITON_LAUNCH)
    assert_names(diagnosis, "device.illegal_memory_access",
                 ["`triton_poi_fused__to_copy_0`", "inductor", "triton_heuristics.py:670", "Triton Error [CUDA]"])
    assert any('backend=\\"aot_eager\\"' in fix or 'backend="aot_eager"' in fix for fix in diagnosis.fixes)


def test_torchbench_model_is_named_with_the_triton_kernel():
    # https://github.com/pytorch/torchdynamo/issues/1365
    diagnosis = explain_paste(
        "cuda train swin_base_patch4_window7_224\n...\n"
        '  File "/tmp/torchinductor_jansel/nd/cndxz5mmbqajkiakvbzxdczaralpd7t57ajewnph4cqbiabmemjf.py", line 6011, in '
        "call\n    kernel76.run(buf1055, _unsafe_view_12, getitem_19, reciprocal_8, buf1061, buf1063, 3328, 121, "
        "grid=grid(3328), stream=stream0)\n"
        '  File "/home/jansel/torchdynamo/torchinductor/triton_ops/autotune.py", line 157, in run\n'
        "    return launcher(\n"
        '  File "<string>", line 4, in launcher\n'
        "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n")
    assert_names(diagnosis, "device.illegal_memory_access",
                 ["`kernel76`", "autotune.py:157", "swin_base_patch4_window7_224"])


def test_flashinfer_cuda_check_names_code_file_and_line():
    # https://github.com/sgl-project/sglang/issues/5491 (FlashInfer's check, its pieces printed out of order)
    diagnosis = explain_paste(
        "CUDA Error: an illegal memory access was encountered (CUDA Error: 700an illegal memory access was encountered)"
        "  (/opt/conda/lib/python3.10/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh700: line ) "
        "2349/opt/conda/lib/python3.10/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh at "
        "function cudaLaunchKernel((void*)kernel, nblks, nthrs, args, smem_size, stream): line 2349")
    assert_names(diagnosis, "device.illegal_memory_access",
                 ["`CUDA Error: 700`", "prefill.cuh: line 2349", "`cudaLaunchKernel`", "attention metadata"])


@pytest.mark.parametrize("text, values", [
    ('"MisconfigurationException: No supported gpu backend found!"',  # pytorch-lightning#15254
     ["Lightning raised MisconfigurationException", "No supported gpu backend found"]),
    ("Error executing job with overrides: ['data_module=mp_20', '~trainer.logger']\nError in call to target "
     "'pytorch_lightning.trainer.trainer.Trainer':\nMisconfigurationException('No supported gpu backend found!')\n"
     "full_key: trainer",  # mattergen#217
     ["`pytorch_lightning.trainer.trainer.Trainer`", "(full_key: trainer)", "'data_module=mp_20'"]),
    (corpus_message("r14_b.yaml#92"),  # ray_lightning#32
     ["`You requested GPUs: [0, 1]`", "`_sanitize_gpu_ids`", "Ray worker"]),
])
def test_lightning_gpu_requests_name_the_exception_and_the_config(text, values):
    assert_names(explain_paste(text), "device.lightning_accelerator_unavailable", values)


# --- memory ----------------------------------------------------------------------------------------------------------

OOM_TWO_PROCESSES = (  # https://github.com/tdrussell/diffusion-pipe/issues/153
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.68 GiB. GPU 0 has a total capacity of "
    "79.21 GiB of which 259.19 MiB is free. Process 2828469 has 516.00 MiB memory in use. Process 2856448 has 78.44 "
    "GiB memory in use. Of the allocated memory 70.48 GiB is allocated by PyTorch, and 6.78 GiB is reserved by PyTorch "
    "but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def test_oom_tells_this_process_from_the_others_it_lists():
    diagnosis = explain_paste(OOM_TWO_PROCESSES)
    assert_names(diagnosis, "memory.cuda_oom",
                 ["Process 2856448, with 78.44 GiB in use, is this process itself", "process 2828469 holds another "
                  "516.00 MiB"])
    assert any("Process 2828469 holds 516.00 MiB" in fix for fix in diagnosis.fixes), diagnosis.fixes


@pytest.mark.parametrize("facts, expected", [
    # PyTorch holds 77.26 GiB; 78.44 GiB listed is that plus the CUDA context: this process
    ({"allocated_bytes": 70.48 * 2**30, "unallocated_bytes": 6.78 * 2**30, "other_pid": 2828469,
      "other_used": "516.00 MiB", "last_pid": 2856448, "last_used": "78.44 GiB"},
     {"own_pid": 2856448, "own_used": "78.44 GiB", "busy_pid": 2828469, "busy_used": "516.00 MiB"}),
    # a process holding less than PyTorch reports for this one cannot be it
    ({"allocated_bytes": 13 * 2**30, "unallocated_bytes": 2**30, "other_pid": 7, "other_used": "2.00 GiB"}, None),
    # no amounts from PyTorch: nothing to compare with
    ({"other_pid": 7, "other_used": "2.00 GiB"}, None),
])
def test_oom_processes_probe(facts, expected):
    evidence = oom_processes(ProbeContext(None, [], facts))
    assert (evidence.facts if evidence else None) == expected


def test_mps_oom_with_nothing_allocated_is_not_memory_running_out():
    # https://github.com/pytorch/vision/issues/8433 (a hosted macOS runner)
    diagnosis = explain_paste(
        "RuntimeError: MPS backend out of memory (MPS allocated: 0 bytes, other allocations: 0 bytes, max allowed: "
        "1.70 GB). Tried to allocate 0 bytes on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper "
        "limit for memory allocations (may cause system failure).")
    assert_names(diagnosis, "memory.mps_oom",
                 ["Tried to allocate 0 bytes", "MPS allocated: 0 bytes", "max allowed: 1.70 GB", "did not run out"])
    assert not any("batch size" in fix and "Reduce" in fix for fix in diagnosis.fixes), diagnosis.fixes
    assert "0 bytes is used by other allocations" not in said(diagnosis)
