"""Round-40 wordings for device, distributed, memory and compile (speech and audio programs, reinforcement learning and
robotics, the code people learn PyTorch from): each corpus message (verbatim from the opened rounds) is claimed, from its
text alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r40_a.yaml#44", "compile.tensorrt_binding_not_found",
     ["input__0", "engine.cpp::isShapeBinding::1835", "engine.cpp::getBindingDimensions::1851"]),
    ("r40_a.yaml#46", "compile.inductor_implicit_fallback", ["aten._weight_norm_interface.default", "[768, 48, 128]"]),
    ("r40_a.yaml#47", "device.torchaudio_input_not_cpu", ["CPU"]),
    ("r40_a.yaml#75", "device.driver_too_old", ["Module.cpp line=33", "error=35", "dist_utils.py:55"]),
    ("r40_b.yaml#29", "compile.rllib_onnx_export_unsupported", ["RLModule"]),
    ("r40_b.yaml#35", "distributed.ray_worker_died", ["ray::PPO.__init__()", "IndexError"]),
    ("r40_b.yaml#55", "device.no_kernel_image", ["sm_120", "RTX 5090"]),
    ("r40_c.yaml#6", "compile.triton_passmanager", ["TritonGPU", "BrokenProcessPool", "llvm.cond_br"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # TensorRT 7's wording through torch2trt (torch2trt#227), TensorRT 6's without the name (torch2trt#173), and a
    # trtexec-style logger (YOLOX#571)
    ("[TensorRT] ERROR: INVALID_ARGUMENT: Cannot find binding of given name: input_0",
     "compile.tensorrt_binding_not_found", ["input_0"]),
    ("[TensorRT] ERROR: INVALID_ARGUMENT: Can not find binding of given name",
     "compile.tensorrt_binding_not_found", ["getBindingIndex"]),
    ("[08/24/2021-16:40:02] [E] [TRT] INVALID_ARGUMENT: Cannot find binding of given name: input_0",
     "compile.tensorrt_binding_not_found", ["input_0"]),
    # the same log in nanoGPT's first torch.compile run (nanoGPT#102) and as glog INFO lines (pytorch#120774)
    ("[2023-01-30 23:47:24,269] torch._inductor.graph: [WARNING] Creating implicit fallback for:\n"
     "  target: aten._scaled_dot_product_efficient_attention.default",
     "compile.inductor_implicit_fallback", ["aten._scaled_dot_product_efficient_attention.default"]),
    ('[rank0]:I0227 20:02:12.576000 139718474198016 torch/_inductor/graph.py:789] [0/0] Creating implicit fallback for: '
     '#threadId="139718474198016" #callSite="torch/_inductor/graph.py:789"\n'
     '[rank0]:I0227 20:02:12.576000 139718474198016 torch/_inductor/graph.py:789] [0/0]   target: fb.bucketize.default '
     '#threadId="139718474198016" #callSite="torch/_inductor/graph.py:789"',
     "compile.inductor_implicit_fallback", ["fb.bucketize.default"]),
    # the line torchaudio.save raised it on, with the error (torchsynth#314)
    ('torchaudio.save("synth1B1-312-6.wav", synth1B1_312_6.unsqueeze(0), voice.sample_rate)\n'
     "--> RuntimeError: Input tensor has to be on CPU.", "device.torchaudio_input_not_cpu", ["CPU", "torchaudio.save"]),
    # the worker's own log line for a constructor that raised (vlarl#8)
    ("Exception raised in creation task: The actor died because of an error raised in its creation task, "
     "ray::VLARayActor.__init__() (pid=1166618, ip=192.168.80.2, actor_id=03ecc51b2b97122c34e99ab601000000, "
     "repr=<ppo.utils.vllm_utils2.VLARayActor object at 0x7ed1f173d090>)",
     "distributed.ray_worker_died", ["ray::VLARayActor.__init__()"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the ONNX parser failing while the engine is built (Syencil/tensorRT#14): not a binding lookup
    ("ERROR: ModelImporter.cpp:124 In function parseGraph:\n[5] Assertion failed: ctx->tensors().count(inputName)",
     "compile.tensorrt_binding_not_found"),
    # make_fallback's note on an explicit fallback with a decomposition (pytorch#99474)
    ("[2023-04-18 22:54:24,618] torch._inductor.utils: [WARNING] make_fallback(aten.cumprod): a decomposition exists, "
     "we should switch to it", "compile.inductor_implicit_fallback"),
    # the CUDA tensor reaching numpy in ComfyUI's save node (ComfyUI#4077): device.numpy_cuda's
    ("!!! Exception during processing!!! can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
     "tensor to host memory first.", "device.torchaudio_input_not_cpu"),
    # an op the TorchScript ONNX exporter has no symbolic for (stable-baselines3#383), not RLlib's refusal
    ("RuntimeError: Exporting the operator broadcast_tensors to ONNX opset version 9 is not supported.\n"
     "Please open a bug to request ONNX export support for the missing operator.", "compile.rllib_onnx_export_unsupported"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
