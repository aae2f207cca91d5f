"""Round-28 wordings for device (its second half), compile and memory (macOS, Windows and CPU-only users' threads of
2017-2021, torch 0.3-1.9): THC's checks (no kernel image, arguments on different GPUs, cuBLAS's resource allocation),
torch 1.x's ONNX exporter with its "Defined at:" frames, TorchScript's lifted `slotN` arguments and attribute lookups on
methods. Each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with
the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed. A live fixture raises the TorchScript error this CPU torch can."""

from __future__ import annotations

import traceback

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, raise_fixture


CORPUS_CASES = [
    ("r28_b.yaml#7", "device.no_kernel_image", ["THCTensorMath.cu line=238 error=48", "own kernels"]),
    ("r28_b.yaml#8", "device.no_kernel_image", ["THCTensorMath.cu line=244 error=48"]),
    ("r28_b.yaml#9", "device.capability_incompatible", ["GeForce 820M", "2.1", "THCTensorMathPairwise.cu:40",
                                                        "error = 48"]),
    ("r28_b.yaml#18", "device.mismatch", ["arguments are located on different GPUs", "THCTensorMathPointwise.cu:314"]),
    ("r28_b.yaml#19", "device.mismatch", ["THCTensorIndex.cu:390"]),
    ("r28_b.yaml#20", "device.mismatch", ["THCTensorIndex.cu:397"]),
    ("r28_b.yaml#21", "device.mismatch", ["THCTensorMathBlas.cu:236"]),
    ("r28_b.yaml#22", "device.mismatch", ["THCTensorMathPointwise.cu:269"]),
    ("r28_b.yaml#58", "device.mismatch", ["#1 `input`", "#2 `weight`", "cuda:1", "cuda:0", "cudnn_convolution"]),
    ("r28_b.yaml#80", "device.illegal_memory_access", ["cuda runtime error (77)", "THCCachingHostAllocator.cpp:271"]),
    ("r28_b.yaml#54", "memory.cublas_alloc", ["resource allocation failed", "THCGeneral.cpp:250",
                                              "CUBLAS_STATUS_ALLOC_FAILED"]),
    ("r28_b.yaml#55", "memory.cublas_alloc", ["THCGeneral.cpp:250", "ignite.engine.engine.Engine"]),
    ("r28_b.yaml#56", "memory.cublas_alloc", ["THCGeneral.cpp:228", "`insert_events`", "CUDACachingAllocator.cpp:564"]),
    ("r28_b.yaml#30", "memory.cuda_oom", ["1.72 GiB", "10.76 GiB", "4.01 GiB", "356.00 MiB", "5.54 GiB cached"]),
    ("r28_b.yaml#23", "compile.onnx_unsupported_operator", ["`aten::upsample_bilinear2d`", "`interpolate`",
                                                            "deeplab_resnet.py:192"]),
    ("r28_b.yaml#25", "compile.onnx_unsupported_operator", ["`align_corners == True`", "symbolic_helper.py:176",
                                                            "opset 11"]),
    ("r28_b.yaml#26", "compile.onnx_python_operator", ["`BlurFunction`", "model.py:178"]),
    ("r28_b.yaml#47", "compile.torchscript_call_arguments", ["`forward(Tensor x, int slot0) -> Tensor`", "slotN"]),
    ("r28_b.yaml#48", "compile.torchscript_method_attribute", ["`return v.forward(y)`", "torch 1.0-1.1"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # THC's same-GPU check with no place (a comment quoting it), and the cuBLAS wording with none (transformers#1443)
    ("RuntimeError: arguments are located on different GPUs", "device.mismatch", ["current GPU"]),
    ("RuntimeError: cublas runtime error : resource allocation failed", "memory.cublas_alloc",
     ["CUBLAS_STATUS_ALLOC_FAILED"]),
    # an embedding fed an index out of range (pytorch#24838)
    ("cublas runtime error : resource allocation failed at /opt/conda/conda-bld/pytorch_1556653099582/work/aten/src/"
     "THC/THCGeneral.cpp:228", "memory.cublas_alloc", ["THCGeneral.cpp:228", "num_embeddings"]),
    # the older wording of the device check in cudnn_convolution (pytorch-deeplab-xception#70)
    ("Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but device 1 "
     "does not equal 0", "device.mismatch", ["#1 `input`", "#2 `weight`"]),
    # the TorchScript call-arguments wording with a named operator keeps its own schema (pytorch#42562's __init__)
    ("RuntimeError: \n\n__init__(__torch__.TypedDataDict self, Dict(str, Tensor)? str_to_tensor, Dict(str, str[])? "
     "str_to_list_of_str) -> (None):\nArgument str_to_tensor not provided.\n:\n  File \"test.py\", line 18\n"
     "  def forward(self, input: torch.Tensor):\n    return TypedDataDict()\n           ~~~~~~~~~~~~~ <--- HERE",
     "compile.torchscript_call_arguments", ["`TypedDataDict()`", "`str_to_tensor`"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a Python value's attribute lookup keeps its rule (pytorch#36910; a builtin's is raised live below)
    ("RuntimeError: \nattribute lookup is not defined on python value of type 'bk':\n  File \"\", line 6\n"
     "@torch.jit.script\ndef f(a):\n    return backend.bkd.trace(a)\n           ~~~~~~~~~~~~~~~~~ <--- HERE",
     "compile.torchscript_method_attribute"),
    # cuBLAS's other THC statuses stay with device.cublas_status
    ("RuntimeError: cublas runtime error : the GPU program failed to execute at /pytorch/aten/src/THC/THCBlas.cu:411",
     "memory.cublas_alloc"),
    # another framework's cuBLAS allocation failure (TensorFlow's, tensorflow#7072)
    (corpus_message("r22_b.yaml#62"), "memory.cublas_alloc"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_near_miss_builtin_attribute_raised_here_stays_with_its_rule():
    # the builtin's attribute lookup, raised by the fixture's torch.jit.script and pasted as Python prints it
    exc = raise_fixture("fixtures/compile/torchscript_builtin_attribute.py")
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert "attribute lookup is not defined on builtin" in text
    assert "compile.torchscript_method_attribute" not in claimed_by(text)


def test_extension_check_after_thc_keeps_the_extension_reading():
    # FSOD-code#56: THC's own failure printed before the extension's check
    diagnosis = explain_paste(corpus_message("devmem.yaml#41"))
    assert diagnosis.rule == "device.no_kernel_image", diagnosis.rule
    assert "compiled CUDA extension" in diagnosis.summary, diagnosis.summary


def test_live_attribute_lookup_on_a_method():
    diagnosis = explain_fixture("fixtures/compile/torchscript_method_attribute.py")
    assert_names(diagnosis, "compile.torchscript_method_attribute", ["`return self.helper.forward(x)`", "a method"])
