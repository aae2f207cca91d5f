"""Round-19 wordings for compile, device and memory (vision stacks, old-torch threads, operator edge cases): each
corpus message (verbatim from the opened rounds) or pasted message (verbatim from the thread it cites) is claimed,
from its text alone, by the right rule with the values it holds named; near misses stay unclaimed; the errors CPU
torch can raise are explained live from their fixtures."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # the legacy Tensor.new() on a DirectML (PrivateUse1) tensor
    ("r19_a.yaml#55", "device.legacy_new_backend", ["`x.new(...)`", "PrivateUse1", "torch-directml",
                                                     "DispatchKeySet(CPU, CUDA, HIP, XLA, MPS, IPU, XPU, HPU, Lazy, Meta)"]),
    # torch 0.4's CPU-only build asked for a CUDA tensor type
    ("r19_b.yaml#16", "device.no_cuda_build", ["`torch.cuda.FloatTensor`", "CPU-only build"]),
    # torch.jit.script given the model's output (torch 1.3's _qualified_name)
    ("r19_a.yaml#77", "compile.jit_script_instance", ["'tuple' object", "`__name__`"]),
    # Torch-TensorRT lowering a module that assigns to self in forward
    ("r19_a.yaml#78", "compile.torchscript_lower_graph_module_use", ["`self._has_warned`", "prim::SetAttr"]),
    # fx's TraceError with the reason on the next line (mmrazor)
    ("r19_b.yaml#9", "compile.fx_trace_control_flow", ["Proxy object cannot be iterated"]),
    # the sm_XY warning with a journald prefix on each line
    ("r19_a.yaml#32", "device.capability_incompatible",
     ["NVIDIA GeForce RTX 5090", "sm_120", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"]),
    # YOLO's exporter: the checkpoint and the onnx package it logged
    ("r19_a.yaml#44", "compile.onnx_unsupported_opset", ["yolov8n.pt", "opset version 17", "onnx 1.13.0"]),
    ("r19_a.yaml#45", "compile.onnx_unsupported_opset", ["opset version 13", "onnx 1.10.1"]),
    # torch 0.3's THC error with a truncated path
    ("r19_b.yaml#30", "device.device_assert", ["error 59", "/b/wheel/pytorch-src/torch/lib/T1"]),
    # ROCm's guard printed the illegal access as a warning
    ("r19_a.yaml#59", "device.illegal_memory_access", ["HIP warning", "hipErrorIllegalAddress", "printed it as a warning"]),
    # sglang 0.1 using the None its exhausted request pool returned
    ("r16_b.yaml#51", "memory.sglang_req_pool_exhausted", ["'NoneType' object has no attribute 'cpu'",
                                                           "`req_pool_indices.cpu()`"]),
    # dynamo 2.0 calling aten::_conj on a Python complex constant
    ("r19_b.yaml#7", "compile.torchscript_value_type",
     ["`aten::_conj()`", "complex", "-6.283185307179586j", "FNO2D.py line 87", "`<graph break in fft2d>`"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


PASTED_CASES = [
    # sulaimanvesal/vertebraeSegementation#4: the later wording of the same CPU-only build
    ("TypeError: type torch.cuda.FloatTensor not available. Torch not compiled with CUDA enabled.",
     "device.no_cuda_build", ["`torch.cuda.FloatTensor`"]),
    # sgl-project/sglang#10408: the later wording of the exhausted request pool, with its numbers
    ("RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. "
     "self.req_to_token_pool.available_size()=1, num_reqs=2,",
     "memory.sglang_req_pool_exhausted", ["2 request slots asked for, 1 available"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES)
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, rule", [
    # Mikubill/sd-webui-controlnet#2506: a DirectML tensor's storage restored by torch.load, not Tensor.new()
    ("RuntimeError: don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
     "privateuseone:0)", "device.legacy_new_backend"),
    # pytorch/pytorch#8934: cuDNN switched off, not a CPU-only build
    ("RuntimeError: AffineGridGenerator needs CuDNN for processing CUDA inputs, but CuDNN is not enabled",
     "device.no_cuda_build"),
    # pytorch/pytorch#52920: a nameless callable instance, another rule's
    ("RuntimeError: Could not get name of python class object", "compile.jit_script_instance"),
    # pmj110119/YOLOX_deepsort_tracker#17: a detector that found nothing, not sglang's request pool
    ("YOLOX_deepsort_tracker/detector.py\", line 51, in detect\n    outputs = postprocess(\nAttributeError: "
     "'NoneType' object has no attribute 'cpu'", "memory.sglang_req_pool_exhausted"),
])
def test_near_misses_are_not_claimed(text, rule):
    assert all(d.rule != rule for d in explain_stream(io.StringIO(text)))


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/device/legacy_new_backend.py", "device.legacy_new_backend", ["QuantizedCPU", "a quantized tensor"]),
    ("fixtures/compile/torchscript_lower_graph_setattr.py", "compile.torchscript_lower_graph_module_use",
     ["`self._has_warned`", "prim::SetAttr"]),
    ("fixtures/compile/jit_script_instance.py", "compile.jit_script_instance", ["'tuple' object", "built-in class"]),
])
def test_live_exception_is_explained(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)


def test_cuda_tensor_type_on_a_cpu_build_is_explained_live():
    import explainer
    import torch

    if torch.cuda.is_available():
        pytest.skip("needs a CPU-only build")
    try:
        torch.cuda.FloatTensor(2)
    except TypeError as exc:
        assert_names(explainer.explain(exc), "device.no_cuda_build", ["`torch.cuda.FloatTensor`"])
    else:
        pytest.fail("torch.cuda.FloatTensor(2) did not raise on a CPU-only build")
