"""Round-37 third wave (leftovers of rounds 32-35 in compile and device): TorchScript interpreter failures (the new and
the torch 1.3 wording, a quantized op's check under it), torch_xla's XRTCompile comparison-type check, detectron2's
Caffe2 export, code written for torch 0.3's `torch.jit.trace` pair, and the CUDA multinomial kernel's assert. Each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r32_a.yaml#43", "compile.torchscript_interpreter_failed",
     ["universal_vocoder.py:58", "inference.py:46", "vocoder.generate"]),
    ("r35_c.yaml#67", "compile.torchscript_interpreter_failed",
     ["qlinear_dynamic.cpp", "ops.quantized.linear_dynamic", "___torch_mangle_59.py:288:8"]),
    ("r32_c.yaml#12", "compile.xla_comparison_type", ["TPU:6", "XRTCompile", "UNSIGNED", "f32[64,113,512]"]),
    ("r33_a.yaml#48", "compile.detectron2_caffe2_export", ["c10.py:360", "roi_feat_shuffled.numel() > 0"]),
    ("r33_a.yaml#49", "compile.detectron2_caffe2_export", ["PanopticFPN", "api.py:60", "export_model.py:43"]),
    ("r35_b.yaml#37", "compile.trace_returns_function",
     ["'function'", "torch.jit.trace", "graph.py:52", "demo_graph.py:56"]),
    ("r35_c.yaml#3", "device.device_assert", ["MultinomialKernel.cu:243", "val >= zero", "sampleMultinomialOnce"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the same kernel's other check: a row whose sum is not positive (gsplat#796, pytorch3d#984)
    ("../aten/src/ATen/native/cuda/MultinomialKernel.cu:112: binarySearchForMultinomial: block: [158,0,0], thread: "
     "[0,0,0] Assertion `cumdist[size - 1] > static_cast<scalar_t>(0)` failed.", "device.device_assert",
     ["MultinomialKernel.cu:112", "binarySearchForMultinomial", "torch.multinomial"]),
    ("/opt/conda/conda-bld/pytorch_1614378083779/work/aten/src/ATen/native/cuda/MultinomialKernel.cu:89: "
     "binarySearchForMultinomial: block: [2,0,0], thread: [45,0,0] Assertion `cumdist[size - 1] > "
     "static_cast<scalar_t>(0)` failed.", "device.device_assert", ["MultinomialKernel.cu:89", "torch.multinomial"]),
    # XRTCompile's check of a signed integer compare, each line under the XLA client's log prefix (pytorch/xla#2641)
    ("2020-11-21 18:52:46.881649: E    4498 tensorflow/compiler/xla/xla_client/xla_util.cc:76]   (0) Failed "
     "precondition: Expected comparison type SIGNED.\n"
     "2020-11-21 18:52:46.881669: E    4498 tensorflow/compiler/xla/xla_client/xla_util.cc:76] actual: UNSIGNED\n"
     "2020-11-21 18:52:46.881689: E    4498 tensorflow/compiler/xla/xla_client/xla_util.cc:76] operand: s64[1,2048]\n",
     "compile.xla_comparison_type", ["SIGNED", "UNSIGNED", "s64[1,2048]"]),
    # the same failure in another of the reporter's runs (pytorch/xla#2645)
    ("2 root error(s) found.\n  (0) Failed precondition: Expected comparison type FLOAT or TOTALORDER.\nactual: "
     "UNSIGNED\noperand: f32[2,128,768]\n\n         [[{{node XRTCompile}}]]", "compile.xla_comparison_type",
     ["FLOAT or TOTALORDER", "f32[2,128,768]", "XRTCompile"]),
    # tensorboardX 1.1 under torch 0.4 (tensorboardX#99); pytorchviz's notebook, an IPython frame (pytorchviz#6)
    ('Traceback (most recent call last):\n  File "demo_graph.py", line 56, in <module>\n    w.add_graph(model, '
     '(dummy_input, ))\n  File "/home/dana/Desktop/tensorboard-pytorch/tensorboardX/writer.py", line 400, in '
     "add_graph\n    self.file_writer.add_graph(graph(model, input_to_model, verbose))\n  File "
     '"/home/dana/Desktop/tensorboard-pytorch/tensorboardX/graph.py", line 52, in graph\n    trace, _ = '
     "torch.jit.trace(model, args)\nTypeError: 'function' object is not iterable",
     "compile.trace_returns_function", ["graph.py:52", "demo_graph.py:56", "torch 0.4"]),
    ("----> 1 trace, _ = torch.jit.trace(model, args=(x,))\n      2 make_dot_from_trace(trace)\n\n"
     "TypeError: 'function' object is not iterable", "compile.trace_returns_function", ["torch.jit.trace", "'function'"]),
    # a saved YOLOv5 model failing in its serialized code (ultralytics/yolov5#5070, the paste's first lines)
    ("RuntimeError: The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript, "
     'serialized code (most recent call last):\n  File "code/__torch__/models/yolo.py", line 33, in forward',
     "compile.torchscript_interpreter_failed", ["models/yolo.py:33", "forward"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the op's own error under the interpreter's traceback has its own rule (triton-inference-server/server#2173)
    ("failed to run model 'resnet50_libtorch_0_0_gpu0': The following operation failed in the TorchScript "
     'interpreter.\nTraceback of TorchScript (most recent call last):\n  File "code/resnet50_libtorch.py", line 4, in '
     "forward\ndef forward(self,\n    input: Tensor) -> Tensor:\n  input0 = torch._convolution(input, self.conv1.weight, "
     "None, [2, 2], [3, 3], [1, 1], False, [0, 0], 1, False, False, True)\n           ~~~~~~~~~~~~~~~~~~ <--- HERE\n"
     "  input1 = torch.batch_norm(input0, self.bn1.weight, self.bn1.bias, self.bn1.running_mean, "
     "self.bn1.running_var, False, 0., 1.0000000000000001e-05, True)\n  input2 = torch.threshold_(input1, 0., 0.)\n"
     "RuntimeError: Input type (CUDAHalfType) and weight type (CUDAFloatType) should be the same",
     "compile.torchscript_interpreter_failed"),
    ("RuntimeError: The following operation failed in the TorchScript interpreter. Traceback of TorchScript (most "
     "recent call last): RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)",
     "compile.torchscript_interpreter_failed"),
    # the TPU runtime restarted (pytorch/xla#3024): an XRT failure, not the compile check
    ("RuntimeError: tensorflow/compiler/xla/xla_client/xrt_computation_client.cc:421 : Check failed: "
     "session->session()->Run(session_work->feed_inputs, session_work->outputs_handles, &outputs) == "
     "::tensorflow::Status::OK() (Aborted: Session 018370a5591ff66c is not found. vs. OK)",
     "compile.xla_comparison_type"),
    # Detectron's config without the export option (facebookresearch/Detectron#986)
    ("AttributeError: EXPORT_CAFFE2", "compile.detectron2_caffe2_export"),
    # tracing a model whose output is not a tensor: another tracer failure (microsoft/nni#5655)
    ("RuntimeError: Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
     "functions", "compile.trace_returns_function"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
