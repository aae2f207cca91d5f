"""Round-35 wordings for `other`, second wave part two (RL libraries, compiled extensions and their builds, apex):
each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the
values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near misses
stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r35_c.yaml#70", "other.tianshou_empty_batch_len", ["Batch()", 'base.py", line 209', 'batch.py", line 688']),
    ("r34_a.yaml#63", "other.pybind_default_arg_type_not_registered",
     ["indice_pair_mask: tv::Tensor", "generate_subm_conv_inds", 'algo.py", line 18']),
    ("r34_a.yaml#91", "other.extension_toolchain_missing", ["[WinError 2]", "lietorch"]),
    ("r33_b.yaml#10", "other.apex_amp_param_not_fp32",
     ["model.model.shared.weight", "torch.cuda.HalfTensor", "torch.cuda.FloatTensor", '_amp_state.py", line 32']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # pybind11's wording in a method (open_spiel#568) and release builds' short wording (drake#7844)
    ("ImportError: arg(): could not convert default argument 'imperfect_information_observation_type: "
     "absl::lts_2020_09_23::nullopt_t' in method '<class 'pyspiel.Game'>.make_observer' into a Python object "
     "(type not registered yet?)", "other.pybind_default_arg_type_not_registered",
     ["imperfect_information_observation_type: absl::lts_2020_09_23::nullopt_t"]),
    ("ImportError: arg(): could not convert default argument into a Python object (type not registered yet?). "
     "Compile in debug mode for more information.", "other.pybind_default_arg_type_not_registered",
     ["not registered with Python"]),
    # build_ext's WinError 2 in English (pytorch#100538) and under pip (fast-transformers#129)
    ("running build_ext\nerror: [WinError 2] The system cannot find the file specified",
     "other.extension_toolchain_missing", ["[WinError 2] The system cannot find the file specified"]),
    ("      running build_ext\n      error: [WinError 2] The system cannot find the file specified\n      [end of output]"
     "\n\n  note: This error originates from a subprocess, and is likely not a problem with pip.\n  ERROR: Failed "
     "building wheel for pytorch-fast-transformers\n  Running setup.py clean for pytorch-fast-transformers",
     "other.extension_toolchain_missing", ["[WinError 2]", "pytorch-fast-transformers"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # Python's own wording for a class without __len__ (DeepCycle#15)
    ("object of type 'BatchDataset' has no len()", "other.tianshou_empty_batch_len"),
    # autocast's dtype mismatch in an op, not amp.initialize's check (apex#798)
    ("RuntimeError: expected scalar type Half but found Float", "other.apex_amp_param_not_fp32"),
    # pybind11's failure on a Python class as a default (pybind11#2028)
    ("ImportError: TypeError: descriptor '__repr__' of 'decimal.Decimal' object needs an argument",
     "other.pybind_default_arg_type_not_registered"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
