"""Round-40 wordings for shape and numerics (speech and audio programs, robotics and reinforcement learning, the code
people learn PyTorch from): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by
the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r40_a.yaml#48", "shape.audio_save_rank", ["2D Tensor", "got 1D"]),
    ("r40_a.yaml#51", "shape.kaldi_window_size", ["400", "[2, 342]", "frame_processor.py:179"]),
    ("r40_a.yaml#78", "shape.vit_image_size", ["height (30)", "224"]),
    ("r40_b.yaml#39", "numerics.sampling_parameter", ["std >= 0.0"]),
    ("r40_b.yaml#40", "numerics.sampling_parameter", ["std >= 0.0"]),
    ("r40_b.yaml#43", "shape.loss_broadcast_warning", ["[256, 3]", "[256, 1]"]),
    ("r40_c.yaml#3", "shape.normal_mean_std_numel", ["torch.normal"]),
    ("r40_c.yaml#10", "shape.zero_dim_dimension", ["nn.Linear", "names.py:72", "Dimension 1", "0D tensor", "THTensor.c:24"]),
    ("r40_c.yaml#13", "shape.conv_channels", ["[64, 3, 3, 3]", "[128, 1, 28, 28]"]),
    ("r40_c.yaml#15", "shape.conv_channels", ["[64, 3, 7, 7]", "[32, 256, 192, 3]", "permute(0, 3, 1, 2)"]),
    ("r40_c.yaml#37", "shape.vector_op_operands", ["self", "1 dimension(s)", "has 2", "TensorMethods.cpp:23020"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torchaudio's Kaldi features on other clips: short audio (VoiceprintRecognition-Pytorch#64), a (1, time) tensor
    # where one 1-D clip was expected (ast#133), an empty one (FunASR#1924)
    ("AssertionError: choose a window size 400 that is [2, 171]", "shape.kaldi_window_size", ["400", "171"]),
    ("AssertionError: choose a window size 400 that is [2, 1]", "shape.kaldi_window_size", ["(channel, time)"]),
    ("AssertionError: choose a window size 400 that is [2, 0]", "shape.kaldi_window_size", ["empty"]),
    # timm's older wording of both sides (CSRA#3)
    ("AssertionError: Input image size (448*448) doesn't match model (224*224)", "shape.vit_image_size",
     ["448x448", "224x224"]),
    # a conv input of 5 dimensions (echonet/dynamic#79): not read as channels-last
    ("RuntimeError: Given groups=1, weight of size [45, 3, 1, 7, 7], expected input[1, 204, 3, 112, 112] to have 3 "
     "channels, but got 204 channels instead", "shape.conv_channels", ["[45, 3, 1, 7, 7]", "204"]),
    # torch 0.3's empty tensor in the word-language-model example (pytorch/examples#329)
    ("RuntimeError: invalid argument 2: dimension 0 out of range of 0D tensor at "
     "/pytorch/torch/lib/TH/generic/THTensor.c:24", "shape.zero_dim_dimension", ["Dimension 0", "THTensor.c:24"]),
    # torch 0.2's Dot through autograd (TorchGlove#1)
    ('  File "/usr/local/lib/python3.4/dist-packages/torch/autograd/_functions/blas.py", line 211, in forward\n'
     "    return vector1.new((vector1.dot(vector2),))\nRuntimeError: Expected argument self to have 1 dimension(s), but "
     "has 2 at /home/alec/pytorch/torch/csrc/generic/TensorMethods.cpp:23020", "shape.vector_op_operands",
     ["vector1.dot(vector2)", "has 2"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_loss_warning_names_the_line_printed_with_it():
    diagnosis = explain_paste(corpus_message("r40_b.yaml#43"))
    assert any("F.mse_loss(Q_2, Q_targets.detach())" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_conv_channels_does_not_call_a_5d_input_channels_last():
    text = ("RuntimeError: Given groups=1, weight of size [45, 3, 1, 7, 7], expected input[1, 204, 3, 112, 112] to have "
            "3 channels, but got 204 channels instead")
    assert "channels-last" not in explain_paste(text).summary


@pytest.mark.parametrize("text, not_rule", [
    # Lua Torch's own 0D message (torch7#1156): the foreign rule's, not the PyTorch one's
    ("/home/anthony/torch/install/bin/luajit: main.lua:40: bad argument #1 to 'size' (dimension 1 out of range of 0D "
     "tensor at /tmp/luarocks_torch_-scm-1-5751/torch7/generic/Tensor.c:19)", "shape.zero_dim_dimension"),
    # the CPU's broadcast wording for mean and std (pytorch#30480): shape.broadcast's, not the MPS rule's
    ("RuntimeError: The size of tensor a (3) must match the size of tensor b (6) at non-singleton dimension 1",
     "shape.normal_mean_std_numel"),
    # torchaudio's resampler rank assertion (VocGAN#11): another Kaldi check
    ('  File "/home/stuart/sagar/speech_analysis_synth/VocGAN/venv/lib/python3.6/site-packages/torchaudio/compliance/'
     'kaldi.py", line 802, in resample_waveform\n    assert waveform.dim() == 2\nAssertionError',
     "shape.kaldi_window_size"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
