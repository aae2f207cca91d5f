"""Round-36 wordings for compile (deploying PyTorch models: torch.onnx export, ONNX Runtime, TensorRT and
Torch-TensorRT, TorchScript on mobile, the lite interpreter, ExecuTorch's XNNPACK backend, Core ML, onnx2c; inductor
under TorchRec): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named; the same families raised live by torch are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import warnings

import pytest
import torch

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_a.yaml#57", "compile.inductor_clone_non_tensor", ["KeyedJaggedTensor", "'size'", "clone_preserve_strides"]),
    ("r36_a.yaml#82", "compile.cudagraphs_skipped", ["torch._inductor.compile_fx", "multiple devices",
                                                     "Segmentation fault"]),
    ("r36_b.yaml#13", "compile.torchscript_unresolved_name", ["unchecked_cast", "scatter.py:42:18", "torch_scatter",
                                                              "scatter_sum"]),
    ("r36_b.yaml#18", "compile.lite_interpreter_unsupported", ["__torch__.torch.classes"]),
    ("r36_b.yaml#19", "compile.lite_interpreter_unsupported", ["ENTER"]),
    ("r36_b.yaml#20", "compile.xnnpack_delegate_unsupported",
     ["aten._native_batch_norm_legit_no_training.default", "XNNPACK"]),
    ("r36_b.yaml#30", "compile.ort_model_load", ["tagger.onnx", "Model input (data)"]),
    ("r36_b.yaml#34", "compile.torch_tensorrt_conversion",
     ["aten::linalg_vector_norm", "prim::PythonOp", "functional.py(1519)"]),
    ("r36_b.yaml#35", "compile.torch_tensorrt_conversion",
     ["aten::index.Tensor", "aten::to.dtype_layout", "interactions.py(64)"]),
    ("r36_b.yaml#61", "compile.tensorrt_engine_version",
     ["213", "232", "hitnet_1x240x320_model_float16_quant_opt.trt"]),
    ("r36_b.yaml#62", "compile.tensorrt_engine_corrupt", ["engine.cpp:868", "size >= bsize"]),
    ("r36_b.yaml#63", "compile.tensorrt_engine_version", ["coreReadArchive.cpp (38)"]),
    ("r36_b.yaml#64", "compile.tensorrt_engine_corrupt", ["magicTagRead == magicTag", "trt_net.cpp:28"]),
    ("r36_b.yaml#70", "compile.coreml_tensor_assign_shape", ["(11,)", "(4,)"]),
    ("r36_b.yaml#73", "compile.onnx2c_unimplemented_node", ["torch_nn_modules_conv_Conv2d_conv1_1"]),
    ("r36_b.yaml#78", "compile.onnx_dynamic_axes_invalid_key", ["key input"]),
    ("r36_c.yaml#76", "compile.onnx_unsupported_operator",
     ["aten::pixel_shuffle", "torch.onnx.symbolic.pixel_shuffle", "utils.py:500"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def _lite_export_error(module: torch.nn.Module, tmp_path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the lite interpreter's deprecation warning
        scripted = torch.jit.script(module)
        with pytest.raises(RuntimeError) as info:
            scripted._save_for_lite_interpreter(str(tmp_path / "m.ptl"))
    return f"RuntimeError: {info.value}"


class _Box:
    def __init__(self, x: int):
        self.x = x


class _UsesClass(torch.nn.Module):
    def forward(self, x):
        return x + _Box(3).x


class _UsesWith(torch.nn.Module):
    def forward(self, x):
        with torch.no_grad():
            y = x + 1
        return y


def test_lite_interpreter_class_raised_live_names_the_type(tmp_path):
    # this torch's wording: "custom c++ classes" instead of "torchbind", and the class named
    text = _lite_export_error(_UsesClass(), tmp_path)
    assert "not supported in lite interpreter" in text
    assert_names(explain_paste(text), "compile.lite_interpreter_unsupported", ["_Box", "__torch__.torch.classes"])


def test_lite_interpreter_with_block_raised_live(tmp_path):
    text = _lite_export_error(_UsesWith(), tmp_path)
    assert_names(explain_paste(text), "compile.lite_interpreter_unsupported", ["ENTER", "`with`"])


def test_dynamic_axes_key_warning_raised_live():
    import io

    model = torch.nn.Linear(3, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.onnx.export(model, (torch.randn(1, 3),), io.BytesIO(), dynamo=False, input_names=["x"],
                              output_names=["y"], dynamic_axes={"input": {0: "batch"}})
        except Exception:  # onnx itself may be missing here; the warning comes before it is needed
            pass
    texts = [str(w.message) for w in caught if "dynamic axes" in str(w.message)]
    if not texts:
        pytest.skip("this torch no longer validates dynamic_axes keys")
    assert_names(explain_paste(texts[0]), "compile.onnx_dynamic_axes_invalid_key", ["input"])


@pytest.mark.parametrize("text, rule, values", [
    # TensorRT 8.x's version tag with the tag numbers (NVIDIA/TensorRT#2041), and TensorRT 10's (ComfyUI-Dwpose-Tensorrt#5)
    ("[06/08/2022-15:28:47] [TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization "
     "(Serialization assertion stdVersionRead == serializationVersion failed.Version tag does not match. Note: Current "
     "Version: 213, Serialized Engine Version: 205)", "compile.tensorrt_engine_version", ["213", "205"]),
    ("[E] IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization assertion stdVersionRead == "
     "kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 237, Serialized Engine Version: "
     "239)", "compile.tensorrt_engine_version", ["237", "239"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a TensorRT engine of another version: the version tag, not the magic tag (seanavery/yolov5-tensorrt#7)
    ("[TensorRT] ERROR: coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Version tag does not match)",
     "compile.tensorrt_engine_corrupt"),
    # a model not saved for the lite interpreter at all (pytorch#59381): lite_interpreter_not_saved's
    ("RuntimeError: The model is not generated from the api _save_for_lite_interpreter. Please regenerate the module by "
     "scripted_module._save_for_lite_interpreter('model.ptl'). Refer to https://pytorch.org/tutorials/prototype/"
     "lite_interpreter.html for more details.", "compile.lite_interpreter_unsupported"),
    # Torch-TensorRT's ERROR-level list with its bracketed tag (pytorch/TensorRT#829): other.tensorrt_unsupported_operator's
    ("ERROR: [Torch-TensorRT] - Method requested cannot be compiled by Torch-TensorRT.TorchScript.\nUnsupported operators "
     "listed below:\n  - aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int "
     "ignore_index=-100, float label_smoothing=0.) -> (Tensor)\n  - aten::Int.Tensor(Tensor a) -> (int)\nYou can either "
     "implement converters for these ops in your application or request implementation\n"
     "https://www.github.com/nvidia/Torch-TensorRT/issues", "compile.torch_tensorrt_conversion"),
    # ExecuTorch's memory planning without out variants (executorch#1132): not the XNNPACK backend's
    ("RuntimeError: Missing out variants: {'aten::alias'}", "compile.xnnpack_delegate_unsupported"),
    # another library's AttributeError on a value of the wrong type (segment-anything#47): no inductor copy in it
    ("  File \"/home/gabriel/.local/lib/python3.10/site-packages/segment_anything/automatic_mask_generator.py\", line "
     "198, in _generate_masks\n    orig_size = image.shape[:2]\nAttributeError: 'str' object has no attribute 'shape'",
     "compile.inductor_clone_non_tensor"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
