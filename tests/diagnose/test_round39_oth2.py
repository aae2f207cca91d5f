"""Round-39 wordings for `other` (installs and extensions, tabular libraries, biology models' scripts): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_b.yaml#13", "other.extension_build_failed", ["cusolverDn.h", "fps_cuda.cu", "torch-cluster"]),
    ("r39_b.yaml#29", "other.cross_implicit_dim", ["torch.cross", "util.py:255", "Cross.cpp:63"]),
    ("r39_b.yaml#74", "other.extension_scalar_type_old_headers",
     ["cpu/scatter.cpp:51:40", "at::Type", "c10::ScalarType", "torch-scatter"]),
    ("r39_c.yaml#17", "other.float_size_argument", ["(float, int)"]),
    ("r39_c.yaml#18", "other.float_size_argument", ["(float, int)"]),
    ("r39_c.yaml#49", "other.tabpfn_pretraining_limits", ["100"]),
    ("r39_c.yaml#50", "other.tabpfn_pretraining_limits", ["637342", "10000", "ignore_pretraining_limits=True"]),
    ("r39_c.yaml#51", "other.tabpfn_pretraining_limits", ["1024", "10k", "overwrite_warning=True"]),
    ("r39_c.yaml#59", "other.omegaconf_value_type_validation", ["[0, 1]", "Integer"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch 0.4's legacy constructor under nn.Linear and nn.Conv2d (icml18-jtnn#26, BaiDuBigData19-URFC#7)
    ("TypeError: new() received an invalid combination of arguments - got (float, int), but expected one of:",
     "other.float_size_argument", ["(float, int)", "new()"]),
    ("TypeError: new() received an invalid combination of arguments - got (float, int, int, int), but expected one of:",
     "other.float_size_argument", ["(float, int, int, int)"]),
    # gcc's wording with typographic quotes (pytorch_geometric#507), clang's (pytorch_geometric#279)
    ("cpu/scatter.cpp:8:40: error: invalid initialization of reference of type ‘const at::Type&’ from expression of "
     "type ‘c10::ScalarType’", "other.extension_scalar_type_old_headers", ["cpu/scatter.cpp:8:40", "const at::Type"]),
    ("cpu/scatter.cpp:68:3: error: reference to type 'const at::Type' could not bind to an rvalue of type "
     "'c10::ScalarType'", "other.extension_scalar_type_old_headers", ["cpu/scatter.cpp:68:3", "c10::ScalarType"]),
    # TabPFN 2's feature limit through tabpfn-extensions (TabPFN#139), 0.1's feature tuple (TabPFN#119)
    ("Number of features 506 in the input data is greater than the maximum number of features 500 officially "
     "supported by the TabPFN model. Set `ignore_pretraining_limits=True` to override this error!",
     "other.tabpfn_pretraining_limits", ["506", "500", "ignore_pretraining_limits=True"]),
    ("_ValueError: ('The number of features for this classifier is restricted to ', 100)_",
     "other.tabpfn_pretraining_limits", ["100"]),
    # OmegaConf 2.0's wording without the value's type (fairseq#2935, textlesslib#37)
    ("ValidationError: Value '1.0' could not be converted to Integer", "other.omegaconf_value_type_validation",
     ["1.0", "Integer"]),
    ("omegaconf.errors.ValidationError: Value '50.0' could not be converted to Integer",
     "other.omegaconf_value_type_validation", ["50.0", "Integer"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the flag lifted the limit, and scikit-learn's quantile transform then refused (TabPFN#115)
    ("ValueError: The number of quantiles cannot be greater than the number of samples used. Got 127468 quantiles and "
     "10000 samples.", "other.tabpfn_pretraining_limits"),
    # Lightning's own check of gpus, not OmegaConf's validation (pytorch-lightning#2137)
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUs must be int, string or list of ints or "
     "None.", "other.omegaconf_value_type_validation"),
    # the reverse API change, old source against new headers (SMILe-FSOD#3)
    ("error: cannot convert ‘const at::DeprecatedTypeProperties’ to ‘c10::ScalarType’",
     "other.extension_scalar_type_old_headers"),
    # the softmax deprecation warning, not torch.cross's (alpha-zero-general#5)
    ("UserWarning: Implicit dimension choice for log_softmax has been deprecated. Change the call to include dim=X as "
     "an argument.", "other.cross_implicit_dim"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
