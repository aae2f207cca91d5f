"""Round 16 `other` rules: code written for torch 0.3 indexing a 0-dim loss (`loss.data[0]`, moved here from
`shape`: the value is 0-dim, the cause an API change), softmax called without dim=, DGL's GraphBolt library
missing for the running torch, TorchCodec's failed load and torchaudio's need for it. Messages verbatim from the
corpus and their threads; the two torch ones also raised live (warnings turned into errors)."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised, rules_of

CORPUS = [
    # the code line of the failing frame names the expression and what replaces it
    ("r16_a.yaml#7", "other.zero_dim_index", ["`loss.data[0]`", "`loss.item()`", "PyTorch 0.3"]),
    ("r16_a.yaml#8", "other.zero_dim_index", ["`loss.data[0]`", "0-dim tensor"]),
    ("r16_a.yaml#35", "other.softmax_implicit_dim", ["`softmax`", "dim 0"]),
    ("r16_a.yaml#36", "other.softmax_implicit_dim", ["`log_softmax`", "without `dim=`"]),
    ("r16_a.yaml#37", "other.softmax_implicit_dim", ["`softmax`"]),
    ("r16_b.yaml#73", "other.dgl_graphbolt_missing", ["`libgraphbolt_pytorch_2.3.0.so`", "torch 2.3.0"]),
    ("r16_b.yaml#74", "other.dgl_graphbolt_missing", ["`libgraphbolt_pytorch_2.5.1.dylib`", "torch 2.5.1"]),
    ("r16_b.yaml#75", "other.dgl_graphbolt_missing", ["could not load it", "load_graphbolt"]),
    ("r16_b.yaml#76", "other.dgl_graphbolt_missing", ["could not load it"]),
    ("r16_b.yaml#37", "other.torchcodec_load_failed", ["`save_with_torchcodec`", "torchaudio 2.9"]),
    ("r16_b.yaml#38", "other.torchcodec_load_failed",
     ["2.10.0.dev20251105+cu130", "FFmpeg 8", "libtorchcodec_core8.so", "nightly torchcodec"]),
    ("r16_b.yaml#39", "other.torchcodec_load_failed", ["2.9.0+cu130", "libtorchcodec_core8.dll", "0.8 or 0.9"]),
    ("r16_b.yaml#40", "other.torchcodec_load_failed",
     ["2.4.0+cu124", "libavutil.so.60", "FFmpeg 8's own libraries are missing", "torchcodec 0.0.3"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # torch 0.4's warning, with the code line Python printed under it
    ("UserWarning: invalid index of a 0-dim tensor. This will be an error in PyTorch 0.5. Use tensor.item() to "
     "convert a 0-dim tensor to a Python number\n  train_loss += loss.data[0]",
     "other.zero_dim_index", ["`loss.data[0]`", "from PyTorch 0.5 on it is an IndexError"]),
    # https://github.com/ShulinCao/OpenNRE-PyTorch/issues/11
    ("    return loss.data[0]\nIndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor "
     "to a Python number", "other.zero_dim_index", ["`loss.item()`"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text", [
    "IndexError: invalid index to scalar variable",                 # NumPy's scalar, not a tensor
    "IndexError: too many indices for tensor of dimension 0",       # shape.too_many_indices
    "UserWarning: nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.",
    # DGL's own library on Windows (https://github.com/dmlc/dgl/issues/3067, verbatim as the rule's counter-example
    # cites it): not GraphBolt
    "FileNotFoundError: Could not find module 'c:\\users\\ewindpeng\\appdata\\local\\programs\\python\\python38\\lib\\"
    "site-packages\\dgl\\dgl.dll' (or one of its dependencies). Try using the full path with constructor syntax.",
    "OSError: Could not load this library: /tmp/tmpo59o24tl/my_ops.so",    # other.ops_load_library_failed
])
def test_near_misses_are_not_claimed(text):
    new = {"other.zero_dim_index", "other.softmax_implicit_dim", "other.dgl_graphbolt_missing",
           "other.torchcodec_load_failed"}
    assert not set(rules_of(text)) & new, (text, rules_of(text))


def test_a_softmax_warning_printed_before_an_error_is_shown_with_that_error():
    """r4_a#10: the warning printed just before a shape error; the error leads, the warning is printed with it."""
    diagnoses = [d for d in explain_stream(io.StringIO(corpus("r4_a.yaml#10"))) if d.rule]
    assert diagnoses[0].rule == "shape.broadcast", [d.rule for d in diagnoses]
    assert [p["rule"] for p in diagnoses[0].facts.get("printed_with", [])] == ["other.softmax_implicit_dim"]


def test_live_zero_dim_index_is_the_other_rule():
    diagnosis = explain_fixture("fixtures/other/zero_dim_index.py")
    assert_names(diagnosis, "other.zero_dim_index", ["0-dim tensor", "PyTorch 0.4"])


def test_live_zero_dim_index_of_a_sum():
    import explainer

    correct = torch.tensor([1, 0, 1]).eq(torch.tensor([1, 1, 1]))
    diagnosis = explainer.explain(raised(lambda: correct.sum()[0]))
    assert diagnosis.rule == "other.zero_dim_index", diagnosis.rule


def test_live_softmax_without_dim():
    diagnosis = explain_fixture("fixtures/other/softmax_implicit_dim.py")
    assert_names(diagnosis, "other.softmax_implicit_dim", ["`softmax`", "dim 0"])


def test_live_log_softmax_module_without_dim():
    import explainer

    def call():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            torch.nn.LogSoftmax()(torch.randn(2, 3))

    assert_names(explainer.explain(raised(call)), "other.softmax_implicit_dim", ["`log_softmax`"])
