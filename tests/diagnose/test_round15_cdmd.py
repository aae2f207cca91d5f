"""Compile, device, memory and distributed rules from round 15. New rules: ATen's `_overrideable` placeholders for
device backends (raised here by real torch calls), oneDNN's refused primitives, THC's MTGP generator set-up, DGL's
feature on another device than its graph, torch.onnx.dynamo_export's opset notice. Widened: Dynamo's graph break on
an unsupported builtin and its "from user code:" frames, Inductor's TritonMissing, the place of Triton's launcher
compile error, a kernel assert's block and thread, accelerate's 8-bit refusals (the distributed one moved to the
distributed rule), NCCL's check without its colon and vLLM's NCCL call, torchrun's summary behind accelerate's
"stderr: " prefix, a TCPStore connect warning cut after its address. Messages other than the fixture's are real
ones, verbatim from the corpus or from the thread cited next to them."""

from __future__ import annotations

import io

import pytest
import torch

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised, said


def test_convolution_overrideable_fixture_names_the_op():
    diagnosis = explain_fixture("fixtures/device/convolution_overrideable.py")
    assert_names(diagnosis, "device.overrideable_op", ["`convolution_overrideable`", "convolution kernel",
                                                        "torch.ops.aten.convolution_overrideable"])
    assert diagnosis.location is not None and diagnosis.location.file.endswith("convolution_overrideable.py")


def test_convolution_backward_overrideable_from_a_real_call_names_the_gradient_op():
    # pytorch#97481: the backward placeholder, called on CPU tensors
    x = torch.rand(1, 1, 1, 1)
    exc = raised(lambda: torch.ops.aten.convolution_backward_overrideable(
        x, x, x, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]))
    diagnosis = explainer.explain(exc)
    assert_names(diagnosis, "device.overrideable_op", ["`convolution_backward_overrideable`", "gradient kernel"])
    assert any("torch.ops.aten.convolution_backward`" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_fused_attention_overrideable_from_a_real_call_is_the_privateuse1_placeholder():
    q = torch.rand(1, 1, 4, 8)
    exc = raised(lambda: torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, q, q))
    diagnosis = explainer.explain(exc)
    assert_names(diagnosis, "device.overrideable_op", ["`_scaled_dot_product_fused_attention_overrideable`",
                                                        "fused attention", "PrivateUse1"])


@pytest.mark.parametrize("where, rule, values", [
    ("r15_b.yaml#2", "device.overrideable_op", ["`convolution_overrideable`", "MPS"]),
    ("r15_b.yaml#6", "device.onednn_primitive", ["'could not create a primitive'", "Intel GPU", "int32 matmul"]),
    ("r15_b.yaml#11", "device.mtgp_constants", ["THCTensorRandom.cu:33", "device-side assert"]),
    ("r15_b.yaml#68", "device.dgl_feature_device",
     ["node feature \"h\"", "a tensor on cuda:0", "graph that lives on cpu", "the graph was not"]),
    ("r15_a.yaml#6", "device.device_assert", ["ScatterGatherKernel.cu:276", "block [13,0,0], thread [32,0,0]"]),
    ("r15_b.yaml#63", "device.quantized_train_device", ["8-bit", "a different device (GPU)"]),
    ("r15_b.yaml#62", "distributed.accelerate_device_map_distributed",
     ["8-bit precision", "multiple devices", "configured as distributed"]),
    ("r15_b.yaml#4", "distributed.nccl_error",
     ["NCCLUtils.cpp:77", "2.26.6", "socketPollConnect poll() returned 1, no POLLOUT events", "NCCL_SOCKET_IFNAME"]),
    ("r15_b.yaml#90", "distributed.nccl_error", ["`ncclCommInitRank`", "creating the communicator"]),
    ("r15_b.yaml#7", "distributed.child_failed",
     ["test_script.py failed", "rank      : 1 (local_rank: 1)", "on host wph178", "exitcode  : 1", "pid: 8835"]),
    ("r15_b.yaml#44", "distributed.store_connect_failed",
     ["[Lieber-Legion]:61215", "cut from this paste", "socket.cpp:697", "GLOBAL_RANK: 0, MEMBER: 1/1",
      "a single process"]),
    ("r15_b.yaml#34", "compile.graph_break",
     ["`models.curope.curope.PyCapsule.rope_2d`", "`x = blk(x,pos)`", "croco/models/croco.py:260",
      "`x = x + self.drop_path(self.attn(y, xpos))`", "croco/models/blocks.py:129"]),
    ("r15_b.yaml#61", "compile.triton_missing", ["`torch._inductor.exc.TritonMissing`"]),
    ("r15_b.yaml#74", "compile.triton_launcher_build", ["`Python.h`", "`main.c:4:10`"]),
    ("r15_b.yaml#33", "compile.onnx_dynamo_export_opset",
     ["torch.onnx.dynamo_export", "opset version 18", "exporter.py:130", "`Unsupported`"]),
])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


def test_onednn_primitive_names_the_call_that_failed():
    diagnosis = explain_paste(corpus("r15_b.yaml#6"))
    assert diagnosis.location is not None and diagnosis.location.line == 8, diagnosis.location
    assert "torch.matmul(tensor1, tensor2)" in diagnosis.location.code


def test_accelerate_suggestion_of_a_device_map_is_repeated_in_the_fix():
    diagnosis = explain_paste(corpus("r15_b.yaml#63"))
    assert any("`device_map={'':torch.cuda.current_device()}`" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_ddp_unused_parameters_fix_spells_the_class_in_full():
    diagnosis = explain_paste(corpus("r15_b.yaml#36"))
    assert "torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)" in said(diagnosis)


@pytest.mark.parametrize("text, rule, values", [
    # oneDNN 3.x's wording on an Intel GPU (torch-xpu-ops#3047)
    ("RuntimeError: could not create a primitive descriptor for the matmul primitive. Run workload with environment "
     "variable ONEDNN_VERBOSE=all to get additional diagnostic information.",
     "device.onednn_primitive", ["for this matmul", "ONEDNN_VERBOSE=all"]),
    # the CPU's mkldnn convolution with a dilated transposed kernel (pytorch#68775)
    ("RuntimeError: could not create a descriptor for a dilated convolution forward propagation primitive",
     "device.onednn_primitive", ["dilated convolution forward propagation"]),
    # a CI job's timestamped log, the generator set up by dropout (pytorch#20489)
    ("May 14 00:04:52     else _VF.feature_dropout(input, p, training))\nMay 14 00:04:52 RuntimeError: Creating MTGP "
     "constants failed. at /var/lib/jenkins/workspace/aten/src/THC/THCTensorRandom.cu:33",
     "device.mtgp_constants", ["THCTensorRandom.cu:33", "dropout"]),
    # DGL's guide, the other direction (dmlc/dgl docs/source/guide/graph-gpu.rst)
    ("DGLError: Cannot assign node feature \"h\" on device cpu to a graph on device\n    cuda:0. Call DGLGraph.to() "
     "to copy the graph to the same device.",
     "device.dgl_feature_device", ["a tensor on cpu", "lives on cuda:0", "created or left on cpu"]),
    # accelerate before the distributed-only check refused any 8-bit model split over GPUs (qlora#137)
    ("ValueError: You can't train a model that has been loaded in 8-bit precision on multiple devices",
     "device.quantized_train_device", ["multiple devices", "older accelerate releases"]),
])
def test_thread_messages_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_the_dgl_rule_leaves_a_feature_count_mismatch_alone():
    # r15_a#38: DGL's other DGLError about features is about sizes, not devices
    found = [d.rule for d in explain_stream(io.StringIO(corpus("r15_a.yaml#38")))]
    assert "device.dgl_feature_device" not in found, found


def test_the_dynamo_export_notice_is_shown_under_the_export_failure_it_came_with():
    # the notice at exporter.py:130 (pytorch#118740), then dynamo_export's OnnxExporterError (r5_b#99)
    text = ("/usr/local/lib/python3.10/dist-packages/torch/onnx/_internal/exporter.py:130: UserWarning: torch.onnx."
            "dynamo_export only implements opset version 18 for now. If you need to use a different opset version, "
            "please register them with register_custom_op.\n  warnings.warn(\n" + corpus("r5_b.yaml#99"))
    diagnoses = [d for d in explain_stream(io.StringIO(text)) if d.rule]
    assert [d.rule for d in diagnoses] == ["compile.onnx_export_failed"], [d.rule for d in diagnoses]
    [companion] = diagnoses[0].facts["printed_with"]
    assert companion["rule"] == "compile.onnx_dynamo_export_opset"
