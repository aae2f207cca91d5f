"""Round-35 wordings for device, distributed, memory and data, second wave (scientific ML, experiment tooling, robot
learning): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule
with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r35_a.yaml#10", "memory.esmfold_sequence_oom", ["hipAB-900", "918", "1071"]),
    ("r35_a.yaml#22", "data.checkpoint_save_failed", ["inline_container.cc:298", "317662336", "317662228",
                                                      "checkpoint65.pt"]),
    ("r35_a.yaml#51", "device.extension_cpu_not_supported", ["attn_softmax_inplace_forward_", "CPU"]),
    ("r35_b.yaml#7", "data.torchmetrics_target_not_binary",
     ["accuracy.py:219", "_check_shape_and_type_consistency", "binary"]),
    ("r35_c.yaml#31", "data.zarr_dataset_missing", ["'marks'", "sampler.py:129", "hierarchy.py:429"]),
    ("r35_c.yaml#33", "data.zarr_dataset_missing", ["path ''", "task.dataset"]),
    ("r33_a.yaml#35", "data.state_dict_not_module", ["CLIP", "clip.py:138", "state_dict"]),
    ("r33_b.yaml#7", "data.state_dict_not_module", ["SequenceTagger", "tagging_model.py:129", "state['hidden_size']"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the same OpenFold kernel in another report (openfold#293)
    ("RuntimeError: attn_softmax_inplace_forward_ not implemented on CPU", "device.extension_cpu_not_supported",
     ["attn_softmax_inplace_forward_"]),
    # a whole model where a loader iterates or indexes the weights dict (reid-strong-baseline#101, patchmix#4)
    ('  File ".\\modeling\\baseline.py", line 176, in load_param\n    for i in param_dict:\n'
     "TypeError: 'Baseline' object is not iterable", "data.state_dict_not_module", ["Baseline", "param_dict"]),
    ('  File "/data/source_code/CNN/patchmix/main_finetune.py", line 86, in get_model_from_frame\n'
     "    state_dict = checkpoint['state_dict']\nTypeError: 'VisionTransformerMoCo' object is not subscriptable",
     "data.state_dict_not_module", ["VisionTransformerMoCo", "checkpoint"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a bare KeyError with no zarr frame (deepchem#2679): not the zarr rule's
    ("`KeyError: 'edge_attr'\n`", "data.zarr_dataset_missing"),
    # the newer torchmetrics value check (chemprop#1000): another wording
    ("RuntimeError: Detected the following values in `target`: tensor([-1, 0]) but expected only the following values "
     "[0, 1].", "data.torchmetrics_target_not_binary"),
    # torch's own OOM for a long protein (esm#407): memory.cuda_oom's, not the fold script's log
    ("RuntimeError: CUDA out of memory. Tried to allocate 746.00 MiB (GPU 0; 15.78 GiB total capacity; 12.68 GiB "
     "already allocated; 718.75 MiB free; 13.63 GiB reserved in total by PyTorch)", "memory.esmfold_sequence_oom"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
