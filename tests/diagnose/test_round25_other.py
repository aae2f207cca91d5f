"""Round-25 wordings for `other`: test and CI logs (pytest's short summary lines, a failed assertLogs, pytest.raises
finding nothing or another message), a sparse COO tensor read before .coalesce(), and torchvision's warning that its
image extension did not load: each corpus message (verbatim from the opened rounds) is claimed, from its text alone,
by the right rule with its values named (the failed test's id from pytest's "FAILED path::test - Error: ..." line as
facts.failed_test); the sparse, assertLogs and pytest.raises errors are explained live; near misses stay with their
own rules or none."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste, rules_of

CORPUS_CASES = [
    # PyG's test suite against a newer torch: one FAILED line per test, the error after the test id
    ("r25_b.yaml#19", "other.sparse_uncoalesced", ["`.indices()`", "uncoalesced"]),
    # torchvision's import-time warning, the paste cut inside the quoted error
    ("r25_b.yaml#6", "other.torchvision_image_extension",
     ["_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs", "torchvision.io"]),
    # torch's own test suite: unittest's assertLogs
    ("r25_b.yaml#11", "other.unittest_assertlogs_no_logs", ["`torch._dynamo`", "ERROR"]),
    # Lightning's CI: pytest.raises found nothing
    ("r25_b.yaml#12", "other.test_expected_exception_not_raised", ["MisconfigurationException", "returned normally"]),
    # a compiled extension's module name never bound (its guarded import failed): VMamba's kernels, Open3D-ML's ops
    ("r24_b.yaml#35", "other.extension_name_not_defined", ["`selective_scan_cuda`", "`selective_scan_cuda.fwd`"]),
    ("r17_a.yaml#35", "other.extension_name_not_defined", ["`ml_ops`"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, test_id", [
    ("r25_b.yaml#19", "test/nn/conv/test_antisymmetric_conv.py::test_antisymmetric_conv"),
    ("r25_b.yaml#12", "tests/tests_pytorch/models/test_gpu.py::test_root_gpu_property_0_raising[1]"),
])
def test_pytest_summary_line_names_the_failed_test(where, test_id):
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.facts["failed_test"]["file"] == test_id


def test_each_summary_line_is_its_own_record():
    # the first summary line of two real runs, one under the other: r25_b.yaml#19
    # (https://github.com/pyg-team/pytorch_geometric/issues/7029) and r25_b.yaml#12
    # (https://github.com/Lightning-AI/pytorch-lightning/issues/14980)
    text = "".join(corpus_message(where).splitlines()[0] + "\n" for where in ("r25_b.yaml#19", "r25_b.yaml#12"))
    assert rules_of(text) == ["other.sparse_uncoalesced", "other.test_expected_exception_not_raised"]


CITED_CASES = [
    # torchvision 0.13's wording: the loader's error alone, no advice after it (NixOS/nixpkgs#162286)
    ("/home/octopus/workdir/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image "
     "Python extension: /home/octopus/workdir/lib/python3.10/site-packages/torchvision/image.so: undefined symbol: "
     "_ZN3c105ErrorC2ENS_14SourceLocationESs",
     "other.torchvision_image_extension", ["_ZN3c105ErrorC2ENS_14SourceLocationESs", "another torch release"]),
    # a library it links is missing (AUTOMATIC1111/stable-diffusion-webui#11343)
    ("UserWarning: Failed to load image Python extension: 'libc10_hip.so: cannot open shared object file: No such file "
     "or directory'If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning.",
     "other.torchvision_image_extension", ["`libc10_hip.so`"]),
    # Windows (pytorch/vision#7294)
    ("UserWarning: Failed to load image Python extension: [WinError 126]", "other.torchvision_image_extension",
     ["[WinError 126]"]),
    # Python 3.10's suggestion (MzeroMiko/VMamba#124)
    ("NameError: name 'selective_scan_cuda' is not defined. Did you mean: 'selective_scan_cuda_core'?",
     "other.extension_name_not_defined", ["`selective_scan_cuda`", "`selective_scan_cuda_core`"]),
    # PyG's cat_coo (pyg-team/pytorch_geometric#9089)
    ("RuntimeError: Cannot get indices on an uncoalesced tensor, please call .coalesce() first",
     "other.sparse_uncoalesced", ["`.indices()`", "`.coalesce()`"]),
    # pytest.raises(match=) in Lightning's CI (Lightning-AI/pytorch-lightning#14980), pytest < 8
    ("AssertionError: Regex pattern 'No supported gpu backend found!' does not match 'You requested gpu: [0, 1...'",
     "other.test_expected_exception_not_raised", ["'No supported gpu backend found!'", "'You requested gpu: [0, 1...'"]),
]


@pytest.mark.parametrize("text, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_message_is_explained_with_its_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("fixture, rule, values", [
    ("other/sparse_uncoalesced.py", "other.sparse_uncoalesced", ["`.indices()`"]),
    ("other/assertlogs_no_logs.py", "other.unittest_assertlogs_no_logs", ["`torch._dynamo`", "ERROR"]),
    ("other/pytest_did_not_raise.py", "other.test_expected_exception_not_raised", ["<class 'ValueError'>"]),
])
def test_live_exception_is_explained(fixture, rule, values):
    assert_names(explain_fixture(f"fixtures/{fixture}"), rule, values)


def test_pytest_regex_mismatch_is_explained_live():
    with pytest.raises(AssertionError) as caught:
        with pytest.raises(ValueError, match="shape 2x3"):
            raise ValueError("shape [3, 2] is invalid")
    import explainer

    assert_names(explainer.explain(caught.value), "other.test_expected_exception_not_raised",
                 ["'shape 2x3'", "'shape [3, 2] is invalid'"])


@pytest.mark.parametrize("text, rule", [
    # the accessor on a dense tensor: a layout error
    ("RuntimeError: indices expected sparse coordinate tensor layout but got Strided", "other.sparse_uncoalesced"),
    # assertNoLogs' failure is the opposite expectation
    ("AssertionError: Unexpected logs found: ['WARNING:root:careful']", "other.unittest_assertlogs_no_logs"),
    # torchvision's _C library, not image.so
    ("RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are "
     "incompatible", "other.torchvision_image_extension"),
    # a NameError of the user's own code, and one inside torch's import, stay with their own rules
    ("NameError: name 'garbageeeeee' is not defined", "other.extension_name_not_defined"),
    ("NameError: name 'PeftModel' is not defined", "other.extension_name_not_defined"),
    # a pytest summary line of a test that failed on its own assertion
    # (https://github.com/pytorch/helion/pull/628, its first line)
    (corpus_message("r25_b.yaml#22").splitlines()[0], "other.test_expected_exception_not_raised"),
])
def test_near_miss_is_left_alone(text, rule):
    assert_left_alone(text, rule)
