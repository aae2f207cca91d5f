"""Round-37 second wave, leftovers of rounds 32-36 in compile, device, distributed and memory: each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r32_c.yaml#74", "device.driver_too_old", ["10010", "torch/cuda/__init()"]),
    ("r35_b.yaml#40", "distributed.fsdp_non_root_is_root", ["_is_root", "lora.py:82"]),
    ("r35_b.yaml#3", "device.mismatch", ["cuda:0", "cuda:1"]),
    ("r35_b.yaml#56", "device.composer_precision_cpu", ["Precision.AMP_BF16", "CPU"]),
    ("r35_c.yaml#41", "compile.dynamo_args_mismatch", ["ArgsMismatchError", "quantize.py:311", "generation_hf.py:286"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch 1.x's AssertionError with the lazy-init frames (ai4d-iasc/trixie#9)
    ('  File "/home/drozdyuka/anaconda3/envs/patchy_discs_model/lib/python3.7/site-packages/torch/cuda/__init__.py", '
     "line 149, in _lazy_init\n    _check_driver()\n"
     '  File "/home/drozdyuka/anaconda3/envs/patchy_discs_model/lib/python3.7/site-packages/torch/cuda/__init__.py", '
     'line 63, in _check_driver\n    of the CUDA driver.""".format(str(torch._C._cuda_getDriverVersion())))\n'
     "AssertionError: \nThe NVIDIA driver on your system is too old (found version 10010).",
     "device.driver_too_old", ["10010", "torch/cuda/__init__.py:149"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # Dynamo's warning that a builtin took another path (pytorch/torchdynamo#1832): not a failed binding
    ("torch._dynamo.variables.builtin: [WARNING] incorrect arg count <bound method BuiltinVariable.call_dict of "
     "BuiltinVariable(dict)> missing a required argument: 'arg'", "compile.dynamo_args_mismatch"),
    # accelerate's fp16 check (kijai/ComfyUI-FluxTrainer#181): not Composer's
    ("`fp16 mixed precision requires a GPU (not 'mps').`", "device.composer_precision_cpu"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
