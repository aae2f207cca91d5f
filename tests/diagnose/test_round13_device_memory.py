"""Device and memory rules written from round 13 and the wording families searched after it: the error checks of
tiny-cuda-nn (CUTLASS status, its bindings' tensor checks, its CUDA_CHECK_THROW of CUDA graph and stream calls), the
same CUDA runtime texts from NVIDIA Warp, CUTLASS's bare status from vLLM's kernels, and the older allocator wordings
as people paste them (a word broken by the paste, torch 0.3's THGeneral.c). None of these can be raised by the CPU
build of torch, so every message is a real one, verbatim from the thread cited next to it."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_paste, said

VLLM_TRACEBACK = (  # https://github.com/vllm-project/vllm/pull/5560
    '  File "/home/ccyang/github.com/vllm/vllm/_custom_ops.py", line 236, in cutlass_scaled_mm\n'
    "    torch.ops._C.cutlass_scaled_mm(out, a, b, scale_a, scale_b, bias)\n"
    '  File "/net/storage149/mnt/md0/ccyang/miniforge3/envs/vllm/lib/python3.11/site-packages/torch/_ops.py", '
    "line 854, in __call__\n"
    "    return self_._op(*args, **(kwargs or {}))\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "RuntimeError: Error Internal")


@pytest.mark.parametrize("message, rule, values", [
    # CUTLASS's status, as tiny-cuda-nn's CUTLASS_CHECK_THROW words it (nerfacc#241, DReg-NeRF#3, instant-ngp#1101)
    ("RuntimeError: tiny-cuda-nn/include/tiny-cuda-nn/cutlass_matmul.h:332 status failed with error Error Internal",
     "device.cutlass_status", ["cutlass_matmul.h:332", "'Error Internal'", "tiny-cuda-nn", "large batches"]),
    ('  File "/root/miniconda3/envs/nerf/lib/python3.9/site-packages/tinycudann/modules.py", line 98, in forward\n'
     "    native_ctx, output = native_tcnn_module.fwd(input, params)\n"
     "RuntimeError: /tmp/pip-req-build-3a45ith0/include/tiny-cuda-nn/cutlass_matmul.h:330 status failed with error "
     "Error Internal", "device.cutlass_status", ["cutlass_matmul.h:330", "`status`", "Error Internal"]),
    ("ERROR    Uncaught exception: /matt_disk/3d/dev/instant-ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/"
     "cutlass_matmul.h:332 status failed with error Error Internal", "device.cutlass_status",
     ["cutlass_matmul.h:332", "outputs wider than 16"]),
    # ... and as vLLM's CUTLASS_CHECK raises it: the status alone (vllm#5560, vllm#11763)
    (VLLM_TRACEBACK, "device.cutlass_status", ["'Error Internal'", "another GPU architecture"]),
    ("ERROR 01-06 15:47:24 engine.py:366] return self._op(*args, **(kwargs or {}))\n"
     "ERROR 01-06 15:47:24 engine.py:366] RuntimeError: Error Internal", "device.cutlass_status", ["'Error Internal'"]),
    # tiny-cuda-nn's bindings check that every tensor is a CUDA tensor (tiny-cuda-nn#358)
    ("RuntimeError: tinycudann/bindings.cpp:81 check failed params.device().is_cuda()",
     "device.extension_expects_cuda_tensor", ["`params.device().is_cuda()`", "bindings.cpp:81", "are on the CPU",
                                              "model.to('cuda')"]),
    # tiny-cuda-nn's CUDA_CHECK_THROW: the CUDA runtime's text after the call that failed
    ("`terminate called after throwing an instance of 'std::runtime_error'\n  what():  /tmp/pip-req-build-z4954kz1/"
     "include/tiny-cuda-nn/cuda_graph.h:124 cudaGraphExecUpdate(m_graph_instance, m_graph, &error_node, "
     "&update_result) failed with error the graph update was not performed because it included changes which "
     "violated constraints specific to instantiated graph update\nAborted`", "device.cuda_runtime_error",
     ["cuda_graph.h:124", "`cudaGraphExecUpdate(m_graph_instance, m_graph, &error_node, &update_result)`",
      "cudaErrorGraphExecUpdateFailure", "batch size", "tiny-cuda-nn"]),
    ("/home/nvidia/project/tiny-cuda-nn/include/tiny-cuda-nn/cuda_graph.h:99 cudaStreamEndCapture(stream, &m_graph) "
     "failed with error operation failed due to a previous error during capture\nAborted", "device.cuda_runtime_error",
     ["cuda_graph.h:99", "cudaStreamEndCapture", "cudaErrorStreamCaptureInvalidated"]),
    ("/instant-ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/multi_stream.h:44 cudaStreamCreate(&m_stream) "
     "failed with error unknown error", "device.cuda_runtime_error",
     ["multi_stream.h:44", "`cudaStreamCreate(&m_stream)`", "cudaErrorUnknown"]),
    # the runtime texts the runtime-error rule had no reading for (ComfyUI#1253, MonoGS#127), and the same texts from
    # the CUDA checks of LMDeploy's TurboMind (lmdeploy#708), Transformer Engine (TransformerEngine#734) and Triton
    # (torchdynamo#2026)
    ("    return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)\nRuntimeError: "
     "CUDA error: API call is not supported in the installed CUDA driver\nCUDA kernel errors might be asynchronously "
     "reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
     "CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
     "device.cuda_runtime_error", ["cudaErrorCallRequiresNewerDriver", "cudaMallocAsync", "--disable-cuda-malloc"]),
    ("    return torch._UntypedStorage._new_shared_cuda(*args, **kwargs)\nRuntimeError: CUDA error: invalid device "
     "context\nCUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below "
     "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.", "device.cuda_runtime_error",
     ["cudaErrorDeviceUninitialized", "Producer process has been terminated"]),
    ("RuntimeError: [TM][ERROR] CUDA runtime error: API call is not supported in the installed CUDA driver "
     "/lmdeploy/src/turbomind/utils/allocator.h:169 ", "device.cuda_runtime_error",
     ["LMDeploy TurboMind", "allocator.h:169", "cudaErrorCallRequiresNewerDriver"]),
    ("RuntimeError: /tmp/pip-req-build-z55m7lkv/transformer_engine/common/util/rtc.cpp:114 in function operator(): "
     "CUDA Error: invalid device context", "device.cuda_runtime_error",
     ["Transformer Engine", "`operator()`", "rtc.cpp:114", "cudaErrorDeviceUninitialized"]),
    ("RuntimeError: Triton Error [CUDA]: invalid device context", "device.triton_cuda_error",
     ["`Triton Error [CUDA]: invalid device context`", "no valid CUDA context"]),
    # torch 1.2-1.5's operand check, with the dtypes when an output was given (a-PyTorch-Tutorial-to-Object-Detection#26,
    # pytorch-AGNN#5, pytorch-ssd#78)
    ("    return torch.cat([(cxcy[:, :2] - priors_cxcy[:, :2]) / (priors_cxcy[:, 2:] / 10),  # g_c_x, g_c_y\n"
     "RuntimeError: expected device cuda:0 but got device cpu", "device.mismatch", ["cpu and cuda:0"]),
    # an excerpt, verbatim, of runbooks/device/mismatch.md example #27
    # (https://github.com/dawnranger/pytorch-AGNN/issues/5)
    ("RuntimeError: expected device cpu but got device cuda:0", "device.mismatch", ["cuda:0 and cpu"]),
    ("RuntimeError: expected device cpu and dtype Float but got device cuda:0 and dtype Float", "device.mismatch",
     ["cuda:0 and cpu"]),
    # torch's ROCm build: hipBLAS's status, hipified twice (ComfyUI#3698)
    ("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `HIPBLAS_STATUS_NOT_SUPPORTED`",
     "device.cublas_status", ["HIPBLAS_STATUS_NOT_SUPPORTED", "hipBLASLt", "TORCH_BLAS_PREFER_HIPBLASLT=0"]),
    # cuSPARSE's status through torch's TORCH_CUDASPARSE_CHECK (pytorch#94966, SDG#1 as pasted in bold over three lines)
    ("    x = x.add_(x)\nRuntimeError: CUDA error: kernel launch failure when calling `cusparseXcsrgeam2Nnz( handle, m, n, "
     "descrA, nnzA, csrSortedRowPtrA, csrSortedColIndA, descrB, nnzB, csrSortedRowPtrB, csrSortedColIndB, descrC, "
     "csrSortedRowPtrC, nnzTotalDevHost", "device.cusparse_error",
     ["'kernel launch failure'", "CUSPARSE_STATUS_EXECUTION_FAILED", "`cusparseXcsrgeam2Nnz`"]),
    ("    return torch._sparse_mm(mat1, mat2)\n**RuntimeError: CUDA error: kernel launch failure when calling `cusparse\n"
     "Xcoo2csr(handle, coorowind, i_nnz, i_m, csrrowptr, CUSPARSE_INDEX_B\nASE_ZERO)`**", "device.cusparse_error",
     ["CUSPARSE_STATUS_EXECUTION_FAILED", "torch.sparse.mm"]),
    # torch 2.9+'s own check of the MPSGraph size limit, spelled as torch spells it (pytorch#164415)
    ("    a = torch.ones((2, 1<<31), dtype=torch.int8, device='mps')\n>>> print(a)\n...\nRuntimeError: MPSGaph does not "
     "support tensor dims larger than INT_MAX", "device.mps_ndarray_assertion", ["INT_MAX", "2**31 - 1", "tile"]),
    # the allocator's older wording with a word broken by the paste (demucs#46, so-vits-svc#43)
    ("RuntimeError: CUDA out of memory. Tried to allocate 1.53 GiB (GPU 0; 4.00 GiB to tal capacity; 2.34 GiB already "
     "allocated; 568.58 MiB free; 29.77 MiB cached", "memory.cuda_oom",
     ["1.53 GiB", "568.58 MiB free of 4.00 GiB", "2.34 GiB already allocated", "29.77 MiB cached"]),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.10 GiB (GPU 0; 16.00 GiB total capacity; "
     "8.90 GiB already allocated; 5.82 GiB free; 8.97 GiB rese\nrved in total by PyTorch) If reserved memory is >> "
     "allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management "
     "and PYTORCH_CUDA_ALLOC_CONF", "memory.cuda_oom", ["5.82 GiB free of 16.00 GiB", "8.97 GiB reserved"]),
    # TH's allocator of torch 0.1-0.3 (THGeneral.c; 0.4-1.0 compiled it as THGeneral.cpp) (Xlearn#6)
    ("RuntimeError: $ Torch: not enough memory: you tried to allocate 0GB. Buy new RAM! at "
     "/pytorch/torch/lib/TH/THGeneral.c:270", "memory.cpu_alloc", ["THGeneral.c:270", "'you tried to allocate 0GB'"]),
])
def test_round13_messages_are_explained_with_their_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message, not_rule", [
    # tiny-cuda-nn's shape check is not a device check (nerfstudio#843)
    ("RuntimeError: /tiny-cuda-nn/bindings/torch/tinycudann/bindings.cpp:88 check failed input.size(1) == "
     "n_input_dims()", "device.extension_expects_cuda_tensor"),
    ("RuntimeError: /tiny-cuda-nn/bindings/torch/tinycudann/bindings.cpp:88 check failed input.size(1) == "
     "n_input_dims()", "device.cutlass_status"),
    # xformers' cutlass attention kernel finding no kernel is not a CUTLASS status (VLMEvalKit#330)
    ("RuntimeError: cutlassF: no kernel found to launch!", "device.cutlass_status"),
    # FullyFusedMLP's shared-memory check stays the memory rule's (tiny-cuda-nn#511)
    ("FullyFusedMLP: insufficient shared memory available on the GPU. Reduce `n_neurons` or use `CutlassMLP` (better "
     "compatibility but slower) instead.", "device.cutlass_status"),
    # cuSPARSE's handle refused by the platform stays the unsupported-operation rule's (GCond#14)
    ("RuntimeError: CUDA error: operation not supported when calling `cusparseCreate(handle)`", "device.cusparse_error"),
    # the same operand check with one device and two dtypes is a dtype error (attention-is-all-you-need-pytorch#117)
    ("RuntimeError: expected device cuda:0 and dtype Byte but got device cuda:0 and dtype Bool", "device.mismatch"),
    # tiny-cuda-nn's own allocation running out of memory stays the extension-allocation rule's (nerfstudio#2311)
    ("RuntimeError: /tmp/pip-req-build-_zyqj171/include/tiny-cuda-nn/gpu_memory.h:582 cuMemCreate(&m_handles.back(), "
     "n_bytes_to_allocate, &prop, 0) failed with error CUDA_ERROR_OUT_OF_MEMORY", "device.cuda_runtime_error"),
])
def test_near_misses_are_not_claimed_by_the_round13_rules(message, not_rule):
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule is not None]
    assert rules and not_rule not in rules, rules


def test_tcnn_illegal_memory_access_stays_with_its_own_rule():
    # the CUDA_CHECK_THROW prefix now reads for the runtime-error rule too; the error with its own page keeps it
    # an excerpt, verbatim, of r10_b.yaml#33
    # (https://github.com/nerfstudio-project/nerfstudio/issues/1534)
    message = ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  /home/w/nerf/ngp_pl/"
               "tiny-cuda-nn/include/tiny-cuda-nn/multi_stream.h:83 cudaEventRecord(m_event, m_stream) failed with "
               "error an illegal memory access was encountered")
    assert explain_paste(message).rule == "device.illegal_memory_access"
