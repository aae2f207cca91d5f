"""Round 15, the lead's rules: timm's model registry (a label settled for the family, fixtures/real/README.md)."""

from __future__ import annotations

import io

import pytest

from conftest import corpus_message, explain_paste
from explainer.cli.explain import explain_stream


@pytest.mark.parametrize("where, model", [
    ("r7_a.yaml#22", "mobile_former_294m"),
    ("r8_a.yaml#70", "spikingtransformer_ti"),
    ("r15_a.yaml#53", "SHViT_S1"),
])
def test_timms_unknown_model_names_the_model_and_the_import_that_registers_it(where, model):
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == "other.timm_unknown_model"
    assert f"create_model('{model}')" in diagnosis.summary and "@register_model" in diagnosis.summary
    assert any(f"registers {model}" in fix for fix in diagnosis.fixes)


def test_a_projects_own_unknown_model_type_is_not_timms_registry():
    # indigo-99/FuRPE#5: the project's own switch over model types
    assert [d.rule for d in explain_stream(io.StringIO("ValueError: Unknown model type , exiting!"))] == [None]


@pytest.mark.parametrize("where, installed, wanted", [
    ("r6_b.yaml#52", "MMCV==1.3.1", "mmcv>=1.2.4, <=1.3"),
    ("r15_a.yaml#50", "MMCV==1.3.9", "mmcv>=(1, 3, 13, 0, 0, 0), <(1, 7, 0, 0, 0, 0)"),
])
def test_mmcvs_version_check_is_read_as_the_installed_release_against_the_range(where, installed, wanted):
    # a label settled in round 15: an OpenMMLab package refusing its mmcv is `other` (one early entry had `none`)
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == "other.mmcv_version_incompatible"
    assert installed in diagnosis.summary and wanted in diagnosis.summary


def test_the_pre_1_5_anomaly_warning_is_placed_at_the_forward_operation_it_traces():
    # r15_a#92: torch 1.x printed the forward traceback as "sys:1: RuntimeWarning: ..." with no backward named
    diagnosis = explain_paste(corpus_message("r15_a.yaml#92"))
    assert diagnosis.rule == "autograd.anomaly_error_detected" and "RuntimeWarning" in diagnosis.summary
    assert (diagnosis.location.line, diagnosis.location.code.split("  #")[0]) == (
        18, "FeatSimi_Mat = torch.sqrt(FeatSimi_Mat)")
    assert not any("No forward pass information" in fix for fix in diagnosis.fixes)
