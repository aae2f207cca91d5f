"""Round-23 wordings for autograd, numerics, data and shape (torch.stft's argument checks, EmbeddingBag's offsets,
torchvision's image-rank checks, `param.data = <integer tensor>`, torch 0.3's THC BLAS and TH `view` messages, and
pastes that wrap or cut a message): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; the errors this CPU build can raise are explained live;
near misses stay with their own rules."""

from __future__ import annotations

import io
import traceback

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised

CORPUS_CASES = [
    # a (samples, channels) stereo clip given to torch.stft: time is the last dimension, 2 samples long
    ("r23_b.yaml#67", "shape.stft_arguments", ["torch.FloatTensor[16412, 2]", "0 < n_fft < 2", "n_fft=512", "n_fft=160"]),
    # EmbeddingBag's fused CPU kernel: the bags its offsets describe do not cover the indices
    ("r23_b.yaml#23", "shape.embedding_bag_offsets", ["embedding_lookup_idx.cc:215", "covered 0 indices", "holds -1"]),
    # torchvision.transforms.v2 on a 1-D tensor
    ("r23_b.yaml#76", "shape.torchvision_image_dims", ["TypeError", "1 dimension"]),
    # `.data` of a Parameter set to an integer tensor (post-training quantization code)
    ("r23_a.yaml#50", "dtype.requires_grad_integer", ["`.data`", "floating point and complex"]),
    # torch 0.3's THC BLAS check: no sizes, only its place
    ("r23_b.yaml#32", "shape.matmul", ["size mismatch", "THCTensorMathBlas.cu:247"]),
    # "output" broken by the paste's fixed width
    ("r23_b.yaml#56", "autograd.inplace_modified", ["[20, 1]", "TBackward", "version 2"]),
    # einops' first line only
    ("r23_b.yaml#60", "shape.einops_pattern", ["(c s) d -> c s d", "EinopsError"]),
    # an extension's (or torch 0.3's view) contiguity check worded "is not contiguous"
    ("r22_b.yaml#12", "other.input_not_contiguous", ["`input` is not contiguous"]),
    # the tail of anomaly mode's warning, its first line cut from the paste
    ("r21_b.yaml#56", "autograd.anomaly_error_detected", ["python_anomaly_mode.cpp:110", "ret = input.log_softmax(dim)"]),
    # tensorboardX's check_nan through a root logger that prints its line, and wenet's "loss nan" log line after it
    ("r23_b.yaml#97", "numerics.tensorboard_nonfinite", ["line:14"]),
    ("r23_b.yaml#98", "numerics.tensorboard_nonfinite", ["Batch 20100/282164", "loss nan", "loss_ctc nan"]),
    # BatchNorm's running statistics: the input's channels and the layer's num_features
    ("r20_b.yaml#76", "shape.batchnorm_features", ["36 elements", "num_features=2048"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


CITED_CASES = [
    # torchvision v1's _assert_image_tensor and normalize's older check (sail-sg/Agent-Smith#3, xuduo35/StyleFlowPytorch#4)
    ("TypeError: Tensor is not a torch image.", "shape.torchvision_image_dims", ["Tensor is not a torch image"]),
    ("TypeError: tensor is not a torch image.", "shape.torchvision_image_dims", ["tensor is not a torch image"]),
]


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/shape/stft_n_fft_range.py", "shape.stft_arguments",
     ["torch.FloatTensor[16412, 2]", "2 samples", "n_fft=512", "win_length=160", "channels, not time"]),
    ("fixtures/shape/stft_win_length.py", "shape.stft_arguments", ["win_length=600", "n_fft=512"]),
    ("fixtures/shape/stft_batch_3d.py", "shape.stft_arguments", ["torch.FloatTensor[2, 3, 16924]", "1D or 2D"]),
    ("fixtures/shape/embedding_bag_offsets.py", "shape.embedding_bag_offsets", ["last offset is 5", "4 indices"]),
    ("fixtures/shape/embedding_bag_first_offset.py", "shape.embedding_bag_offsets", ["start at 2", "offsets[0] must be 0"]),
], ids=lambda v: v if isinstance(v, str) and v.startswith("fixtures") else "")
def test_fixture_is_explained_live(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)


def test_live_data_set_to_integer_tensor():
    # the probe names the integer tensor that was written into the Parameter's .data
    assert_names(explain_fixture("fixtures/dtype/requires_grad_data_integer.py"), "dtype.requires_grad_integer",
                 ["`.data`", "`q` (int8, shape (4, 4))"])


def test_live_stft_hop_length_zero():
    import explainer

    call = lambda: torch.stft(torch.randn(1000), n_fft=512, hop_length=0, window=torch.ones(512),  # noqa: E731
                              return_complex=True)
    assert_names(explainer.explain(raised(call)), "shape.stft_arguments", ["hop_length=0", "at least 1"])


def _rules(message: str) -> list[str]:
    return [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]


def test_near_misses_stay_with_their_own_rules():
    # an RNN's hidden state is its own rule, not an extension's contiguity check
    assert _rules("RuntimeError: rnn: hx is not contiguous")[:1] == ["shape.rnn_hidden_contiguous"]
    # Lua Torch7's cutorch BLAS check is not PyTorch's (a negative control of the corpus)
    assert "shape.matmul" not in _rules(corpus_message("r17_b.yaml#64"))
    # stft's reflect padding of a too-short clip is the padding rule's (raised live: a 100-sample clip, n_fft=512)
    try:
        torch.stft(torch.zeros(1, 100), n_fft=512, return_complex=True)
    except RuntimeError as exc:
        padding = "".join(traceback.format_exception_only(exc))
    assert "padding (256, 256) at dimension 2 of input [1, 1, 100]" in padding
    assert _rules(padding)[:1] == ["shape.reflect_pad_size"]
    # an embedding's out-of-range id is not an offsets problem
    assert _rules("IndexError: index out of range in self")[:1] == ["shape.embedding_index"]
