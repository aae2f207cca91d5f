"""Round-20 wordings for autograd, numerics, dtype and shape (everyday nn modules and LLM training logs): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; near misses stay unclaimed; the errors this torch can raise are explained live from their fixtures."""

from __future__ import annotations

import io

import pytest
import torch
from torch import nn

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised

CORPUS_CASES = [
    # torch 2.0's assert in nn.RNN.forward, pasted on one line with its source line before it
    ("r20_b.yaml#73", "shape.rnn_input_rank", ["RNN got a 1-D tensor", "2-D", "3-D"]),
    # nn.Transformer's own check of src and tgt (DETR's demo runs one image at a time)
    ("r20_b.yaml#16", "shape.transformer_src_tgt", ["src and tgt", "batch_first=True", "query_pos.unsqueeze(1)"]),
    # Module.to with an integer dtype
    ("r20_a.yaml#19", "dtype.module_to_integer", ["dtype=torch.int32", "torch.int32 belongs on the inputs"]),
    # mmcv's registry names the classes it was building before the assert's message
    ("r20_b.yaml#79", "shape.attention_heads",
     ["DividedTemporalAttentionWithNorm", "TransformerLayerSequence -> BaseTransformerLayer", "num_heads"]),
    ("r20_a.yaml#53", "numerics.nan_probabilities", ["probability tensor", "torch.multinomial"]),
    # Megatron-DeepSpeed's iteration log: bf16 (loss scale 1.0), nothing skipped
    ("r20_a.yaml#102", "numerics.grad_norm_log",
     ["iteration 5426/  250000", "grad norm: nan", "loss scale: 1.0", "number of skipped iterations: 0"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


def test_a_warning_issued_in_an_old_ipython_cell_is_placed_there():
    # IPython < 8 names a cell "<ipython-input-97-37d0eadce605>": the warning's place is that cell's line 13
    diagnosis = explain_paste(corpus_message("r20_b.yaml#86"))
    assert diagnosis.rule == "autograd.nonleaf_grad_access"
    assert diagnosis.location is not None
    assert (diagnosis.location.file, diagnosis.location.line) == ("<ipython-input-97-37d0eadce605>", 13)


def test_megatron_nan_grad_norm_is_named_with_its_iteration_and_loss_scale():
    # https://github.com/bigscience-workshop/Megatron-DeepSpeed/issues/396 (its first line). The "lm loss: NAN" case
    # this test once had (Megatron's {:.6E} of a nan loss) was typed, with no real log found: dropped
    line = corpus_message("r20_a.yaml#102").splitlines()[0]
    assert_names(explain_paste(line), "numerics.grad_norm_log", ["grad norm: nan", "5426/  250000", "loss scale: 1.0"])


# verbatim from https://github.com/epfLLM/Megatron-LLM/issues/33 (the log line before the nan ones)
MEGATRON_FINITE = ("iteration     3383/    8000 | consumed samples:       216512 | elapsed time per iteration (ms): 7613.1 |"
                   " learning rate: 6.680E-06 | global batch size:    64 | lm loss: 7.334521E-01 | loss scale: 1.0 |"
                   " grad norm: 0.752 | number of skipped iterations:   0 | number of nan iterations:   0 |")

NEAR_MISSES = [
    # a finite gradient norm in Megatron's log is training going on
    (MEGATRON_FINITE, "numerics.grad_norm_log"),
    # a tensor's requires_grad on an integer dtype, not a module's cast
    ("RuntimeError: Only Tensors of floating point and complex dtype can require gradients", "dtype.module_to_integer"),
    # the attention layer's query check, not nn.Transformer's src/tgt check
    ("AssertionError: was expecting embedding dimension of 64, but got 32", "shape.transformer_src_tgt"),
]


@pytest.mark.parametrize("text, rule", NEAR_MISSES, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NEAR_MISSES)])
def test_near_misses_stay_with_other_rules(text, rule):
    claimed = [d.rule for d in explain_stream(io.StringIO(text))]
    assert rule not in claimed, claimed


def test_the_exception_type_is_not_read_as_an_mmcv_class():
    diagnosis = explain_paste("AssertionError: embed_dim must be divisible by num_heads")
    assert diagnosis.rule == "shape.attention_heads"
    assert "AssertionError" not in diagnosis.summary, diagnosis.summary


LIVE_CASES = [
    ("fixtures/shape/transformer_src_tgt.py", "shape.transformer_src_tgt", ["batch_first=True", "src and tgt"]),
    ("fixtures/dtype/module_to_integer.py", "dtype.module_to_integer", ["dtype=torch.int32"]),
    ("fixtures/shape/rnn_input_rank.py", "shape.rnn_input_rank", ["LSTM got a 4D input"]),
]


@pytest.mark.parametrize("fixture, rule, values", LIVE_CASES, ids=[c[0].rsplit("/", 1)[1] for c in LIVE_CASES])
def test_live_error_is_explained_with_its_values(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)


def test_a_transformer_input_without_d_model_features_is_explained_live():
    import explainer

    model = nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32)
    error = raised(lambda: model(torch.randn(10, 4, 16), torch.randn(7, 4, 12)))
    assert "feature number of src and tgt" in str(error)
    assert_names(explainer.explain(error), "shape.transformer_src_tgt", ["last dimension is not its d_model"])


def test_an_rnn_given_one_sequence_of_scalars_is_explained_live():
    import explainer

    error = raised(lambda: nn.RNN(3, 4)(torch.randn(3)))
    assert_names(explainer.explain(error), "shape.rnn_input_rank", ["RNN got a 1D input", "unsqueeze(-1)"])
