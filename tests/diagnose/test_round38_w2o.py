"""Round-38 wordings for `other` (tools around a model and libraries that reach into it: torchinfo, torch.hub's trust
list and downloads, NumPy's C-API check, ART, AutoAttack, torch's own repr on Python 2): each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r38_b.yaml#29", "other.art_model_not_nn_module", ["nn.Module", "pytorch.py:664", "get_layers"]),
    ("r38_b.yaml#33", "other.autoattack_version_custom", ["attacks_to_run", "version='custom'"]),
    ("r38_b.yaml#70", "other.numpy_incompatible", ["0xe", "0xd"]),
    ("r38_c.yaml#4", "other.torchinfo_failed_to_run", ["torchinfo", "layers up to: []"]),
    ("r38_c.yaml#16", "other.hub_untrusted_repo_warning", ["hub.py:294", "trust_repo"]),
    ("r38_c.yaml#53", "other.tensor_repr_python2_rsplit", ["_tensor_str.pyc", "rsplit"]),
    ("r38_c.yaml#85", "other.hub_download_network_error",
     ["CERTIFICATE_VERIFY_FAILED", "_ssl.c:1091", "resnet50-0676ba61.pth"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # numpy's bare C-API check from other modules (NeuralRecon#147, motion-diffusion-model#129)
    ("`RuntimeError:module compiled against API version 0x10 but this version of numpy is 0xe . Check the section C-API "
     "incompatibility at the Troubleshooting ImportError section at "
     "https://numpy.org/devdocs/user/troubleshooting-importerror.html#c-api-incompatibility for indications on how to "
     "solve this problem .`", "other.numpy_incompatible", ["0x10", "0xe"]),
    ("RuntimeError: module compiled against API version 0xf but this version of numpy is 0xe",
     "other.numpy_incompatible", ["0xf", "0xe"]),
    # torchinfo's wrapper seen in its own test run (torchinfo#161), and torch-summary's earlier name (pytorch-summary#180)
    ("E           RuntimeError: Failed to run torchinfo. See above stack traces for more details. Executed layers up to: []",
     "other.torchinfo_failed_to_run", ["torchinfo", "layers up to: []"]),
    ("RuntimeError: Failed to run torchsummary. See above stack traces for more details. Executed layers up to: []",
     "other.torchinfo_failed_to_run", ["torchsummary", "[]"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a bare GitHub rate-limit line with nothing that shows torch.hub made the call (zigma#27)
    (corpus_message("r38_c.yaml#11"), "other.hub_http_error"),
    # a certificate failure with no torch.hub frame or download line (ctc_tensorflow_example#17)
    ("urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed (_ssl.c:749)>",
     "other.hub_download_network_error"),
    # torchsummary's own hook failing on a dict output is not torchinfo's wrapper (r38_c#10)
    (corpus_message("r38_c.yaml#10"), "other.torchinfo_failed_to_run"),
    # cleverhans' model-type check, not ART's (defensegan#19)
    ("TypeError: The model argument should be an instance of the cleverhans.model.Model class.",
     "other.art_model_not_nn_module"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
