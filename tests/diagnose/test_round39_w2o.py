"""Round-39 wordings for `other` (installs, extensions, tabular libraries) and one numerics printout: each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_b.yaml#68", "other.hydra_primary_config_missing", ["train", "pkg://schnetpack.configs"]),
    ("r33_a.yaml#36", "other.hydra_primary_config_missing", ["./sam2_configs/sam2_hiera_l.yaml", "pkg://sam2_configs"]),
    ("r39_b.yaml#76", "numerics.nan_tensor_printout", ["mps:0", "LinearBackward0"]),
    ("r39_b.yaml#81", "other.cuequivariance_triton_component_import",
     ["triangle_multiplicative_update", "triton==3.3.0", "Not Supported"]),
    ("r39_b.yaml#87", "other.shared_library_missing",
     ["libtorch_cuda_cpp.so", "_version_cuda.so", "_ZN5torch3jit17parseSchemaOrNameERKSs", "torch-scatter"]),
    ("r39_b.yaml#89", "other.import_name_missing", ["filter_backbone", "esm_if1_gvp4_t16_142M_UR50", "biotite<1.0"]),
    ("r39_c.yaml#11", "other.native_heap_corruption", ["double free detected in tcache 2", "SIGABRT"]),
    ("r39_c.yaml#12", "other.autogluon_model_import_failed",
     ["NeuralNetFastAI_r102_BAG_L1", "ImportError", "autogluon.tabular[fastai]==1.5.0"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # Hydra with a file:// config path (myria3d#60), and its one-line form (solo-learn#363)
    ("Cannot find primary config 'configs/config.yaml'. Check that it's in your config search path.\n\n"
     "Config search path:\n        provider=hydra, path=pkg://hydra.conf\n"
     "        provider=main, path=file:///home/anass/myria3d/configs\n"
     "        provider=hydra-colorlog, path=pkg://hydra_plugins.hydra_colorlog.conf\n"
     "        provider=schema, path=structured://\n\n"
     "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
     "other.hydra_primary_config_missing", ["configs/config.yaml", "file:///home/anass/myria3d/configs"]),
    ("Cannot find primary config 'config.yaml'. Check that it's in your config search path. Set the environment "
     "variable HYDRA_FULL_ERROR=1 for a complete stack trace.", "other.hydra_primary_config_missing", ["config.yaml"]),
    # AutoGluon's logger prefix (autogluon#4467)
    ("autogluon.core.trainer.abstract_trainer - ERROR - \tWarning: Exception caused NeuralNetFastAI to fail during "
     "training (ImportError)... Skipping this model.\nautogluon.core.trainer.abstract_trainer - ERROR - \t\tImport "
     "fastai failed. A quick tip is to install via `pip install autogluon.tabular[fastai]==1.0.0`. ",
     "other.autogluon_model_import_failed", ["NeuralNetFastAI", "autogluon.tabular[fastai]==1.0.0"]),
    # Boltz's copy of the cuEquivariance message, in markdown bold (boltz#485)
    ("**Exception: Failed to import Triton-based component: triangle_multiplicative_update:\nNot Supported\n"
     "Please make sure to install triton==3.3.0. Other versions may not work**!",
     "other.cuequivariance_triton_component_import", ["triangle_multiplicative_update", "triton==3.3.0"]),
    # glibc's tcache check with the shell's abort line (pysam#991)
    ("free(): double free detected in tcache 2\nAborted (core dumped)", "other.native_heap_corruption",
     ["double free detected in tcache 2", "Aborted (core dumped)"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_a_printed_all_nan_output_of_a_linear_layer():
    torch.manual_seed(0)
    out = torch.nn.Linear(3, 4)(torch.full((2, 3), float("nan")))
    assert_names(explain_paste(repr(out)), "numerics.nan_tensor_printout", ["AddmmBackward0"])


def test_a_printed_tensor_with_finite_values_stays_unclaimed():
    torch.manual_seed(0)
    x = torch.ones(2, 3)
    x[0, 0] = float("nan")
    assert_left_alone(repr(torch.nn.Linear(3, 4)(x)), "numerics.nan_tensor_printout")


@pytest.mark.parametrize("text, not_rule", [
    # Hydra's other MissingConfigException: the config folder is missing (Mapperatorinator#48)
    ("MissingConfigException: Primary config directory not found.\n"
     "Check that the config directory '/tmp/configs' exists and readable", "other.hydra_primary_config_missing"),
    # torch.compile without triton (ComfyUI-WanVideoWrapper#148), not a cuEquivariance kernel
    ("RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at "
     "https://github.com/openai/triton", "other.cuequivariance_triton_component_import"),
    # autogluon's own import (autogluon#818), not a skipped model
    ("ImportError: cannot import name 'TabularPrediction' from 'autogluon' (unknown location)",
     "other.autogluon_model_import_failed"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)

