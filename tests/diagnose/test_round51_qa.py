"""Round-51 wordings from question-and-answer threads (a notebook's setStorage out of bounds, two missing PyG
packages in one paste, a legacy cuda runtime error code, an inf gradient norm in an epoch summary, the ONNX export's
input-stack assertion, a result-type cast with a curly quote, a one-line `python -c` segfault, PIL's unidentified
image): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with
the values it holds named the way the coverage judge reads them; other wordings of the same families (from the
threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r51_c.yaml#20", "other.set_storage_zero_bytes", ["setStorage", "15", "128"]),
    ("r51_c.yaml#21", "other.module_not_installed", ["torch_geometric", "torch_scatter", 'model.py", line 2']),
    ("r51_c.yaml#24", "device.device_assert", ["(710)"]),
    ("r51_c.yaml#45", "numerics.grad_norm_log", ["inf", "Grad", "3"]),
    ("r51_c.yaml#48", "compile.onnx_input_stack_assert", ["s_iter != stack.end()", "script_init.cpp", "448"]),
    ("r51_c.yaml#55", "dtype.result_cast", ["Float", "long int"]),
    ("r51_c.yaml#60", "other.native_segfault", ["torch.randn(10).cuda()", "Segmentation fault"]),
    ("r51_c.yaml#62", "data.image_file_unreadable", ["UnidentifiedImageError", "_io.BytesIO"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # an 8-byte 0-d tensor at element 15 needs 16 x 8 bytes: a counter or float64 value, not a sharded weight
    assert_names(explain_paste(corpus_message("r51_c.yaml#20")), "other.set_storage_zero_bytes",
                 ["(offset 15 + 1) x 8", "int64 or float64", "not a weight of a sharded model"])
    # the code is cudaErrorAssert, the reason cut from the paste
    assert_names(explain_paste(corpus_message("r51_c.yaml#24")), "device.device_assert",
                 ["cudaErrorAssert", "cut after its code"])
    # SCNet's Grad is the epoch's average of the scaled norm: epoch 1's figure shows the scale, the loss stays finite
    assert_names(explain_paste(corpus_message("r51_c.yaml#45")), "numerics.grad_norm_log",
                 ["epoch 1's Grad=9164.2812", "The loss, 0.1673, is finite", "GradScaler"])
    # a one-liner runs no code of the user's: the install, and with .cuda() CUDA's start-up
    diagnosis = explain_paste(corpus_message("r51_c.yaml#60"))
    assert_names(diagnosis, "other.native_segfault", ["`python -c \"import torch; x = torch.randn(10).cuda()\"`",
                                                      "LD_LIBRARY_PATH"])
    assert any("unset LD_LIBRARY_PATH" in fix for fix in diagnosis.fixes)


def test_two_scripts_missing_packages_are_one_failure_with_both_named():
    # run.py lacks torch_geometric, glam.py torch_scatter (yvquanli/GLAM#7): the second shown under the first
    diagnosis = explain_paste(corpus_message("r51_c.yaml#21"))
    assert diagnosis.rule == "other.module_not_installed"
    assert "torch_geometric" in diagnosis.summary
    parts = diagnosis.facts.get("printed_with", [])
    assert any("torch_scatter" in part["summary"] for part in parts), parts


@pytest.mark.parametrize("text, rule, values", [
    # another LMDB entry PIL could not decode (seasonSH/SemanticStyleGAN#8)
    ("PIL.UnidentifiedImageError: cannot identify image file <_io.BytesIO object at 0x7fd3aa7f1900>",
     "data.image_file_unreadable", ["UnidentifiedImageError", "<_io.BytesIO object at 0x7fd3aa7f1900>", "LMDB"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # a ColossalAI Gemini flat parameter freed after its forward: distributed.sharded_param_outside_forward's
    ("RuntimeError: setStorage: sizes [640, 640], strides [1, 640], storage offset 54179840, and itemsize 2 requiring a "
     "storage size of 109178880 are out of bounds for storage of size 0", "other.set_storage_zero_bytes"),
    # the same function's other assertion, on the count list of quantized parameters (pytorch/pytorch#79333)
    ("input_values.size() == param_count_list.size()INTERNAL ASSERT FAILED at \"../torch/csrc/jit/python/script_init.cpp"
     "\":493, please report a bug to PyTorch.", "compile.onnx_input_stack_assert"),
    # a bare code that is not cudaErrorAssert (hezhangsprinter/DID-MDN#33, on the CPU)
    ("RuntimeError: cuda runtime error (100)", "device.device_assert"),
    # the large SCNet model under AMP whose loss is nan too (starrytong/SCNet#14): numerics.loss_nan_log's
    ("2024-08-25 14:12:43,466 - INFO - Training Epoch 4 ...\n"
     "2024-08-25 14:48:04,998 - INFO - Train Summary | Epoch 4 | Loss=nan | Grad=nan", "numerics.grad_norm_log"),
    # SCNet's epoch summary with a finite, scaled gradient norm (starrytong/SCNet#11)
    ("> 2024-07-26 17:06:38,010 - INFO - Train Summary | Epoch 1 | Loss=0.2242 | Grad=9164.2812", "*"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_freed_flat_parameter_keeps_the_distributed_reading():
    # the ColossalAI message keeps its reading as a freed flat parameter
    text = ("RuntimeError: setStorage: sizes [640, 640], strides [1, 640], storage offset 54179840, and itemsize 2 "
            "requiring a storage size of 109178880 are out of bounds for storage of size 0")
    assert explain_paste(text).rule == "distributed.sharded_param_outside_forward"
