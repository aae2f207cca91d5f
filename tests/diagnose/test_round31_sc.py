"""Round-31 wordings for shape, dtype, numerics, autograd and compile (the LLM fine-tuning and serving stacks, localised
Windows, older torch): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the
right rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed
too, and near misses stay unclaimed. The live fixture raises the checkpoint error this CPU torch can."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r31_c.yaml#19", "compile.triton_compilation_error", ["`_swiglu_forward_kernel`", "4:31", "cast"]),
    ("r31_c.yaml#41", "numerics.amp_overflow_skip", ["Attempted loss scale: 1, reducing to 1", "min_loss_scale"]),
    ("r31_c.yaml#13", "autograd.checkpoint_output_no_grad", ["checkpoint.py:317", "requires_grad=True"]),
    ("r31_c.yaml#64", "shape.attention_mask", ["(1, 1, 30, 30)", "torch.Size([1, 30, 30])", "3D mask"]),
    ("r31_c.yaml#20", "shape.merge_tensor_size_mismatch",
     ["model.layers.0.mlp.down_proj.weight", "torch.Size([8192, 24576])", "torch.Size([8192, 28672])", "intermediate_size"]),
    ("r31_a.yaml#60", "dtype.argument_type_mismatch", ["Byte", "Bool", "#2 'other'", "torch 1.2"]),
    ("r31_c.yaml#53", "dtype.torch_check_scalar_type",
     ["query.scalar_type() == torch::kHalf", "page_attn_decode", "eagle.sycl:444"]),
    ("r31_a.yaml#48", "compile.tensorrt_onnx_parse", ["PolygraphyException", "Failed to parse ONNX model"]),
    ("r31_b.yaml#40", "compile.inductor_msvc_decode", ["0x8e", "cpp_builder.py:431", "`_is_msvc_cl`", "utf-8"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # transformers' attention mask checks of other threads: a key length without the cache (Moonlight#18,
    # llama2-lora-fine-tuning#12) and a mask of another sequence (EEG-To-Text#12)
    ("ValueError: Attention mask should be of size (1, 1, 1, 30), but is torch.Size([1, 1, 1, 29])",
     "shape.attention_mask", ["(1, 1, 1, 30)", "torch.Size([1, 1, 1, 29])", "key length is 29"]),
    ("ValueError: Attention mask should be of size (4, 1, 240, 480), but is torch.Size([4, 1, 240, 240])",
     "shape.attention_mask", ["key length is 240", "480"]),
    ("`ValueError: Attention mask should be of size (1, 1, 11, 11), but is torch.Size([1, 1, 56, 56])`",
     "shape.attention_mask", ["56x56 instead of 11x11"]),
    # the legacy scalar-type check with "got" (pix2pixHD#215) and the reverse (OnlineMiningTripletLoss#4)
    ("RuntimeError: Expected object of scalar type Byte but got scalar type Bool for argument #2 'other' in call to _th_or",
     "dtype.argument_type_mismatch", ["`_th_or`", "Byte", "Bool", ".bool()"]),
    ("RuntimeError: Expected object of scalar type Bool but got scalar type Byte for argument #2 'other' in call to _th_and",
     "dtype.argument_type_mismatch", ["`_th_and`", "torch 1.2"]),
    # Polygraphy's older wording (DiffusionTexturePainting#5) and its log line after TensorRT's (ComfyUI-Upscaler-Tensorrt#5)
    ("polygraphy.exception.exception.PolygraphyException: Could not parse ONNX correctly",
     "compile.tensorrt_onnx_parse", ["Could not parse ONNX correctly"]),
    ("[E] ModelImporter.cpp:780: Input is not a regular file: C:\\Apps\\ComfyUI_windows_portable\\ComfyUI\\models\\onnx\n"
     "[!] Failed to parse ONNX model. Does the model file exist and contain a valid ONNX model?",
     "compile.tensorrt_onnx_parse", ["Input is not a regular file", "not an ONNX file"]),
    # the checkpoint error alone (LlamaFactory#6358)
    ("RuntimeError: none of output has requires_grad=True, this checkpoint() is not necessary",
     "autograd.checkpoint_output_no_grad", ["requires_grad=True", "use_reentrant=False"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values, text=" ".join([explain_paste(text).summary,
                                                                   *explain_paste(text).fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # mergekit's issue title alone names neither weight nor sizes
    ("RuntimeError: Tensor size mismatch", "shape.merge_tensor_size_mismatch"),
    # a decode error with no Inductor compiler frame above it
    ("UnicodeDecodeError: 'utf-8' codec can't decode byte 0x8e in position 0: invalid start byte",
     "compile.inductor_msvc_decode"),
    # a TORCH_CHECK on something other than a dtype stays with the generic rule
    ("RuntimeError: Expected has_running_mean == has_running_var to be true, but got false.",
     "dtype.torch_check_scalar_type"),
    # the forward-side warning of a reentrant checkpoint is its own rule's
    ("UserWarning: None of the inputs have requires_grad=True. Gradients will be None",
     "autograd.checkpoint_output_no_grad"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_live_checkpoint_without_grad_outputs():
    diagnosis = explain_fixture("fixtures/autograd/checkpoint_output_no_grad.py")
    assert diagnosis.rule == "autograd.checkpoint_output_no_grad"
    assert "requires_grad=True" in diagnosis.summary
