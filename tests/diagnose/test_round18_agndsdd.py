"""Round-18 wordings for autograd, numerics, dtype, shape, data and distributed (deployment: ONNX Runtime, Ascend NPU,
MPS, InfiniBand): each corpus message (verbatim from the opened rounds) or pasted message (verbatim from the thread it
cites) is claimed, from its text alone, by the right rule with the values it holds named; near misses stay unclaimed;
a failed torch.testing.assert_close is explained live."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # ONNX Runtime running an exported torch model: its input and Reshape checks (no longer "not PyTorch")
    ("r18_a.yaml#2", "shape.onnxruntime_input_shape", ["`batched_inputs.1`", "dimension 2 is 256", "declares 384"]),
    ("r18_a.yaml#20", "dtype.onnxruntime_input_type", ["tensor(double)", "tensor(float)", "astype(np.float32)"]),
    ("r18_a.yaml#44", "shape.onnxruntime_reshape_node", ["'Reshape_149'", "{1,10,8,32}", "{1,7,256}", "reshape_helper.h:41"]),
    ("r18_a.yaml#45", "shape.onnxruntime_reshape_node", ["'Reshape_62'", "{56,1,256}", "{22,256}", "frozen"]),
    ("r18_a.yaml#46", "shape.onnxruntime_reshape_node", ["'/Reshape_17_output_0_ReduceMax_Reshape'", "input is empty"]),
    # assert_close comparing a torch op with its ONNX function
    ("r18_a.yaml#62", "numerics.assert_close_mismatch",
     ["1 of 250 elements (0.4%)", "1.0 at index (3, 8, 2)", "0.0208282470703125", "discrete step"]),
    # Ascend NPU: an aclnn kernel's dtype check, HCCL collectives
    ("r18_b.yaml#98", "dtype.npu_aclnn_dtype_unsupported", ["`aclnnCast`", "DT_BFLOAT16", "`dtype` argument", "EZ1001"]),
    ("r18_b.yaml#99", "dtype.npu_aclnn_dtype_unsupported",
     ["`aclnnQuantMatmulWeightNz`", "`npu_quant_matmul_symint`", "error code 161002", "`scale`", "DT_FLOAT16"]),
    ("r18_b.yaml#69", "distributed.hccl_error",
     ["`HcclAllreduce, error code is 6`", "HCCL_E_NOT_FOUND", "EI0006", "Remote Rank did not send the data in time"]),
    ("r18_b.yaml#70", "distributed.hccl_error",
     ["ProcessGroupHCCL.cpp:64", "ERR02200", "EJ0001", "retCode=0x7020010", "previous training process"]),
    ("r18_b.yaml#72", "distributed.hccl_error", ["EI9999", "hccl fftsplus task timeout", "`timeout:30min(default)`"]),
    # NCCL: the result code alone, an InfiniBand completion error, vLLM's worker
    ("r18_b.yaml#16", "distributed.nccl_error", ["ncclSystemError", "remote rank exited"]),
    ("r18_b.yaml#43", "distributed.nccl_ib_completion_error",
     ["10.216.210.236<54862>", "`status=12`", "vendor err 129", "IBV_WC_RETRY_EXC_ERR", "ib_plugin.c:1615"]),
    ("r15_b.yaml#90", "distributed.nccl_error", ["VllmWorker rank=6 (pid 409)", "`ncclCommInitRank`"]),
    ("r18_b.yaml#42", "distributed.store_connect_failed", ["6841231:47389", "to 0.104.99.143:47389", "errno: 110"]),
    # MPS's older dtype check, an in-place error pasted with a space in the node's name, rl_games' torch.load retry
    ("r18_b.yaml#61", "dtype.mps_unsupported_dtype", ["BFloat16", "macOS 14"]),
    ("r18_b.yaml#84", "autograd.inplace_modified", ["[1, 128, 192, 120]", "ReluBackward 0", "version 3"]),
    ("r18_a.yaml#65", "data.checkpoint_not_a_checkpoint", ["'v'", "Git LFS pointer"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


def test_the_checkpoint_path_rl_games_printed_is_named():
    diagnosis = explain_paste(corpus_message("r18_a.yaml#65"))
    assert any("calm/data/models/calm_llc_reallusion_sword_shield.pth" in fix for fix in diagnosis.fixes), diagnosis.fixes


PASTED_CASES = [
    ("onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid "
     "rank for input: input_image Got: 3 Expected: 4 Please fix either the inputs or the model.",  # vietanhdev/samexporter#8
     "shape.onnxruntime_input_shape", ["`input_image`", "3 dimensions", "declares 4", "batch axis is missing"]),
    ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: images for the following indices\n"
     " index: 2 Got: 960 Expected: 736\n index: 3 Got: 960 Expected: 1088\n Please fix either the inputs or the model.",
     # https://github.com/stephansturges/WALDO/issues/9: two axes refused at once
     "shape.onnxruntime_input_shape", ["`images`", "dimension 2 is 960", "dimension 3 is 960, not 1088"]),
    ("INVALID_ARGUMENT : Unexpected input data type. Actual: (N11onnxruntime17PrimitiveDataTypeIlEE) , expected: "
     "(N11onnxruntime17PrimitiveDataTypeIiEE)",  # microsoft/onnxruntime#4787
     "dtype.onnxruntime_input_type", ["PrimitiveDataTypeIlEE", "Il = int64"]),
    ("RuntimeError: call aclnnCast failed, detail:EZ1001: 2024-06-10-00:01:59.325.061 self not implemented for "
     "DT_BFLOAT16, should be in dtype support list [DT_FLOAT16,DT_FLOAT,DT_DOUBLE,DT_INT8,DT_UINT8,DT_INT16,DT_INT32,"
     "DT_INT64,DT_UINT16,DT_UINT32,DT_UINT64,DT_BOOL,DT_COMPLEX64,DT_COMPLEX128,].",
     # https://github.com/hiyouga/LlamaFactory/issues/4165 (a comment of 2024-06-09)
     "dtype.npu_aclnn_dtype_unsupported", ["`self` argument", "DT_BFLOAT16", "torch_dtype=torch.float16"]),
    ("(VllmWorker rank=2 pid=10233) ERROR 06-17 06:11:34 [multiproc_executor.py:492] RuntimeError: createHCCLComm:build/"
     "CMakeFiles/torch_npu.dir/compiler_depend.ts:1508 HCCL function error: HcclGetRootInfo(&hcclID), error code is 7",
     "distributed.hccl_error",  # vllm-project/vllm-ascend#1704
     ["`createHCCLComm`", "compiler_depend.ts:1508", "HCCL_E_UNAVAIL", "port or IP is already bound"]),
    ("AssertionError: Tensor-likes are not close!\n\nMismatched elements: 15 / 25 (60.0%)\nGreatest absolute difference: "
     "2.037109375 at index (2, 3) (up to 1e-05 allowed)\nGreatest relative difference: 2.646484375 at index (0, 1) "
     "(up to 0.001 allowed)",  # microsoft/onnxscript#1056
     "numerics.assert_close_mismatch", ["15 of 25", "2.037109375 at index (2, 3)", "disagree"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, text=" ".join([diagnosis.summary, *diagnosis.fixes]))


ROUND18_RULES = {"shape.onnxruntime_input_shape", "shape.onnxruntime_reshape_node", "dtype.onnxruntime_input_type",
                 "numerics.assert_close_mismatch", "dtype.npu_aclnn_dtype_unsupported", "distributed.hccl_error",
                 "distributed.nccl_ib_completion_error"}


@pytest.mark.parametrize("text", [
    # ONNX Runtime's CUDA provider failing is still ONNX Runtime's own problem (C0untFloyd/roop-unleashed#465)
    corpus_message("r6_b.yaml#65"),
    # the tracer's own check of a traced model (compile.tracer_warning; runbooks/compile/tracer_warning.md's example,
    # printed by fixtures/compile/trace_output_mismatch.py)
    "torch.jit._trace.TracerWarning: Output nr 1. of the traced function does not match the corresponding output of the "
    "Python function. Detailed error:\nTensor-likes are not close!\n\nMismatched elements: 2 / 8 (25.0%)\nGreatest "
    "absolute difference: 1.2561020851135254 at index (1, 1) (up to 1e-05 allowed)\nGreatest relative difference: 1.0 at "
    "index (0, 0) (up to 1e-05 allowed)",
    # numpy's tolerance check (wenet-e2e/wenet#1827)
    "AssertionError: \nNot equal to tolerance rtol=0.001, atol=1e-05\n\nMismatched elements: 1 / 1059600 (9.44e-05%)\n"
    "Max absolute difference: 0.00576973\nMax relative difference: 0.0011973",
    # an aclnn call that failed without a dtype reason (Ascend/pytorch#100)
    corpus_message("r18_b.yaml#100"),
    # torch_npu's device synchronisation: the NPU runtime, not HCCL (vllm-project/vllm-ascend#1443)
    "RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: "
    "AclrtSynchronizeDeviceWithTimeout, error code is 507048",
    # the IB completion quoted inside the process group's NCCL error (tatsu-lab/stanford_alpaca#207)
    "NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: A call failed "
    "possibly due to a network error or a remote process exiting prematurely. Last error: NET/IB : Got completion from "
    "peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129",
])
def test_near_misses_are_not_claimed_by_the_round18_rules(text):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in ROUND18_RULES]
    assert not claimed, (text, claimed)


@pytest.mark.parametrize("text", [
    # https://github.com/hacksider/Deep-Live-Cam/issues/584, an excerpt (one whole line of the paste, which repeats it
    # for each frame): the provider's "[ONNXRuntimeError] : 1 : FAIL" glued to a tqdm bar, CUDA's out of memory
    r"Processing:  99%|▉| 1732/1744 [08:43<00:03,  3.79frame/s, execution_providers=['CUDAExecutionProvider'], "
    r"execution_thre[ONNXRuntimeError] : 1 : FAIL : D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:121 "
    r"onnxruntime::CudaCall D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:114 onnxruntime::CudaCall "
    r"CUDA failure 2: out of memory ; GPU=0 ; hostname=DESKTOP-QUBEI ; "
    r"file=D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_stream_handle.cc ; line=175 ; "
    r"expr=cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);",
    # https://github.com/hacksider/Deep-Live-Cam/issues/642: a RuntimeError naming the driver's CUDA status 35
    r"RuntimeError: D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:121 onnxruntime::CudaCall "
    r"D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:114 onnxruntime::CudaCall CUDA failure 35: CUDA "
    r"driver version is insufficient for CUDA runtime version ; GPU=-1594703432 ; hostname=DESKTOP-PQK28NQ ; "
    r"file=D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_execution_provider.cc ; line=236 ; "
    r"expr=cudaSetDevice(info_.device_id);",
])
def test_onnxruntime_provider_failures_stay_foreign(text):
    diagnoses = list(explain_stream(io.StringIO(text)))
    assert diagnoses and diagnoses[0].rule is None and "ONNX Runtime" in diagnoses[0].title, diagnoses


def test_a_failed_assert_close_is_named_live():
    diagnosis = explain_fixture("fixtures/numerics/assert_close_mismatch.py")
    assert_names(diagnosis, "numerics.assert_close_mismatch",
                 ["1 of 250 elements (0.4%)", "1.0 at index (3, 8, 2)", "up to 1e-05 allowed", "discrete step"])
