"""Round-24 wordings for compile, device and memory (libraries built on torch: spconv, nvdiffrast, PyTorch3D, DGL, NNI,
vLLM, onnxruntime, e3nn's torch.fx use, Triton kernels): each corpus message (verbatim from the opened rounds) is claimed,
from its text alone, by the right rule with the values it holds named; other wordings of the same families (from the
threads cited) are claimed too, and near misses stay unclaimed. Live fixtures raise the errors this CPU torch can."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r24_b.yaml#5", "device.extension_cuda_error_code",
     ["indice.cu 274", "error 3", "prepareSubMGridKernel", "cudaErrorInitializationError"]),
    ("r24_b.yaml#28", "device.extension_cuda_error_code", ["indice_cuda.cu 124", "error 2", "cudaErrorMemoryAllocation"]),
    ("r24_b.yaml#9", "device.extension_cuda_error_code",
     ["implicit_gemm", "torch.Size([16000, 4])", "torch.Size([16, 3, 3, 3, 4])", "GemmMainUnitTest_stream_synchronize.cc(11)"]),
    ("r24_b.yaml#37", "device.extension_cuda_error_code",
     ["`cudaGraphicsGLRegisterImage`", "CUDA error 801", "RasterizeGLContext"]),
    ("r24_b.yaml#38", "device.extension_cuda_error_code", ["`cudaMemcpyAsync`", "CUDA error 700", "cudaErrorIllegalAddress"]),
    ("r24_a.yaml#15", "device.dgl_cuda_check", ["random.cc:34", "CURAND_STATUS_INITIALIZATION_FAILED", "dgl.seed"]),
    ("r24_a.yaml#34", "device.pytorch3d_cpu_not_implemented", ["`_C.rasterize_points`", "NOT IMPLEMENTED", "bin_size"]),
    ("r24_a.yaml#46", "device.vllm_engine_dead",
     ["EngineDeadError", "serving_chat.py:885", "chatcmpl-3dd5c7cd8c134f3fa6e8fc27500cc840"]),
    ("r24_a.yaml#62", "device.mismatch", ["backend CUDA", "backend CPU", "dtype Float"]),
    ("r24_a.yaml#112", "device.mismatch", ["#2 `weight`", "which is on CPU", "`cudnn_batch_norm`"]),
    ("r24_a.yaml#27", "compile.torchscript_type_expression",
     ["`tuple[int, int] | int`", "blur_pool.py, line 129", "`blur_pool2d`", "`pyrdown`", "generic_utils.py, line 92"]),
    ("r24_a.yaml#42", "compile.triton_print_prefix", ["`int32[constexpr[8]]`", "tl.device_print"]),
    ("r24_a.yaml#107", "compile.ort_providers_required", ["ORT 1.9", "`providers=`", "TensorrtExecutionProvider"]),
    ("r24_a.yaml#108", "compile.ort_model_load",
     ["onnx/model.onnx", "`If_4653`", "source=9 target=2", "9 is bool", "2 is uint8"]),
    ("r24_a.yaml#117", "compile.fx_graphmodule_root", ["`tp_forward()`", "nn.Module"]),
    ("r24_a.yaml#131", "compile.nni_speedup", ["`de_pred.1.conv`", "`name_to_gnode`"]),
    ("r24_a.yaml#132", "compile.nni_speedup", ["`aten::sum`", "is not Supported!"]),
    ("r24_b.yaml#86", "compile.fx_trace_control_flow", ["symbolically traced variables cannot be used as inputs to control flow"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_trace_container_output_names_trace_strict():
    diagnosis = explain_paste(corpus_message("r24_a.yaml#90"))
    assert diagnosis.rule == "compile.trace_container_output", diagnosis.rule
    assert any("strict=False` to trace()" in fix for fix in diagnosis.fixes), diagnosis.fixes


@pytest.mark.parametrize("text, rule, values", [
    # spconv 1.x's other codes (spconv#287, spconv#136) and spconv 2.x with its code (OpenPCDet#690)
    ("RuntimeError: src/spconv/indice.cu 120 cuda execution failed with error 98", "device.extension_cuda_error_code",
     ["indice.cu 120", "error 98", "cudaErrorInvalidDeviceFunction"]),
    ("RuntimeError: /tmp/spconv/spconv/src/spconv/indice.cu 188\ncuda execution failed with error 209",
     "device.extension_cuda_error_code", ["indice.cu 188", "cudaErrorNoKernelImageForDevice"]),
    ("RuntimeError: /io/build/temp.linux-x86_64-3.8/spconv/build/src/cumm/gemm/main/GemmMainUnitTest/"
     "GemmMainUnitTest_stream_synchronize.cc(11) CUDA error 710", "device.extension_cuda_error_code",
     ["GemmMainUnitTest_stream_synchronize.cc 11", "error 710", "cudaErrorAssert"]),
    # DGL's CUDA_CALL check (dgl#2271)
    ("dgl._ffi.base.DGLError: [10:15:47] /dgl/src/array/cuda/utils.cu:19: Check failed: e == cudaSuccess || "
     "e == cudaErrorCudartUnloading", "device.dgl_cuda_check", ["utils.cu:19", "e == cudaSuccess"]),
    # PyTorch3D's point rasterizer, its code line pasted (https://github.com/facebookresearch/pytorch3d/issues/1954;
    # the mesh rasterizer's frame once typed here around that error had no real paste)
    ("idx, zbuf, dists = _C.rasterize_points(*args)\nRuntimeError: NOT IMPLEMENTED",
     "device.pytorch3d_cpu_not_implemented", ["`_C.rasterize_points`", "points were rasterized"]),
    # vLLM's EngineDeadError in other servers' logs (vllm#42362)
    ("(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
     "encountered an issue. See stack trace (above) for the root cause.", "device.vllm_engine_dead", ["EngineDeadError"]),
    # the backend wording the other way round, verbatim from https://github.com/shaoshengsong/MobileNetV3-SSD/issues/5
    ("RuntimeError: expected backend CPU and dtype Float but got backend CUDA and dtype Float", "device.mismatch",
     ["backend CPU", "backend CUDA"]),
    # onnxruntime's older "Type Error" wordings of a load-time type inference failure (pytorch#23724, jax2onnx#64)
    ("RuntimeError: [ONNXRuntimeError] : 1 : GENERAL ERROR : Load model from waveglow.onnx failed:Type Error: Type "
     "parameter (T) bound to different types (tensor(int64) and tensor(float) in node ()", "compile.ort_model_load",
     ["waveglow.onnx", "tensor(int64) and tensor(float)"]),
    ("onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load model from "
     "01_couette_flow/couette.onnx failed:Type Error: Type (tensor(float)) of output arg (var_294657) of node "
     "(concat_4373) does not match expected type (tensor(int32)).", "compile.ort_model_load", ["`concat_4373`"]),
    # the providers error on other builds (onnxruntime-inference-examples#111, RiboDetector#42)
    ("ValueError: This ORT build has ['AzureExecutionProvider', 'CPUExecutionProvider'] enabled. Since ORT 1.9, you are "
     "required to explicitly set the providers parameter when instantiating InferenceSession. For example, "
     "onnxruntime.InferenceSession(..., providers=['AzureExecutionProvider', 'CPUExecutionProvider'], ...)",
     "compile.ort_providers_required", ["AzureExecutionProvider", "onnxruntime 1.16"]),
    # PEP 604 unions in torch 2.0 (pytorch#101777) and without the source quoted (Model-Optimizer#221)
    ('RuntimeError: \nExpression of type | cannot be used in a type expression:\n  File "/Users/awb/torch_test/test.py", '
     "line 7\n@torch.jit.script\ndef jit_test(\n    ok: Union[int, float], bad: int | float\n"
     "                                ~~~~~~~~~~~ <--- HERE\n) -> None:\n    pass", "compile.torchscript_type_expression",
     ["`int | float`", "test.py, line 7", "PEP 604"]),
    ("RuntimeError: \nExpression of type | cannot be used in a type expression: \n@torch.jit.script\n"
     "def _fake_tensor_quant_backward(inputs, amax: torch.Tensor | None, grad_outputs):",
     "compile.torchscript_type_expression", ["PEP 604"]),
    # NNI's log line of another op (nni#4905)
    ("[2022-06-01 15:25:49] ERROR (nni.compression.pytorch.speedup.jit_translate/MainThread) aten::upsample_nearest2d is "
     "not Supported! Please report an issue at https://github.com/microsoft/nni. Thanks~", "compile.nni_speedup",
     ["`aten::upsample_nearest2d`"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # cumm's own asserts name a place too, but no CUDA error (spconv#344)
    ("ValueError: /tmp/pip-req-build-1lje66s3/build/temp.linux-x86_64-3.7/spconv/build/src/cumm/gemm/main/"
     "GemmMainUnitTest/GemmMainUnitTest_matmul2.cu(5736)\nk == k2 assert faild. error", "device.extension_cuda_error_code"),
    # MXNet's copy of the dmlc check stays foreign (mxnet#9031)
    ("cuda error:Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: unknown error", "device.dgl_cuda_check"),
    # a bare NOT IMPLEMENTED, a bare KeyError, a bare "is not string" and a truncated "Unsupported type": no sign
    ("RuntimeError: NOT IMPLEMENTED", "device.pytorch3d_cpu_not_implemented"),
    ("KeyError: 'de_pred.1.conv'", "compile.nni_speedup"),
    ("AssertionError: int32[constexpr[8]] is not string", "compile.triton_print_prefix"),
    ("RuntimeError: Unsupported type tp_forward()", "compile.fx_graphmodule_root"),
    # the same backend on both sides is a dtype error (dtype.legacy_mixed_operands)
    ("RuntimeError: expected backend CUDA and dtype Float but got backend CUDA and dtype Long", "device.mismatch"),
    # the engine died while starting: the startup rule's
    ("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
     "device.vllm_engine_dead"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_mxnet_check_is_still_read_as_foreign():
    text = "cuda error:Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: unknown error"
    assert claimed_by(text) == [], claimed_by(text)


def test_dgl_check_is_no_longer_read_as_caffe_or_mxnet():
    diagnosis = explain_paste(corpus_message("r24_a.yaml#15"))
    assert "Caffe" not in diagnosis.summary, diagnosis.summary


def test_live_torchscript_variadic_tuple_annotation():
    diagnosis = explain_fixture("fixtures/compile/torchscript_type_expression.py")
    assert_names(diagnosis, "compile.torchscript_type_expression",
                 ["`...`", "torchscript_type_expression.py, line 13", "dots", "`List[int]`"],
                 diagnosis.summary + " ".join(diagnosis.fixes))


def test_live_graphmodule_with_a_graph_as_root():
    diagnosis = explain_fixture("fixtures/compile/fx_graphmodule_root.py")
    assert_names(diagnosis, "compile.fx_graphmodule_root", ["a torch.fx Graph as its root", "`graph():`", "swapped"])
