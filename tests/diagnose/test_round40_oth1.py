"""Round-40 wordings for other (speech and audio libraries: torchaudio's FFmpeg, extension and backend reports, its
deprecations, SpeechBrain's interfaces, transformers without torch, WaveGlow's forward): each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r40_a.yaml#19", "other.torchaudio_ffmpeg_not_found", ["_init_ffmpeg", "torchaudio.io"]),
    ("r40_a.yaml#24", "other.torchaudio_extension_unavailable_warning", ["torchaudio", "_extension.py:11", "utils.py:67"]),
    ("r40_a.yaml#41", "other.speechbrain_missing_hparam", ["tokenizer", "interfaces.py:239"]),
    ("r40_a.yaml#43", "other.waveglow_forward_tuple", ["glow.py:212", "expected 2", "got 1"]),
    ("r40_a.yaml#49", "other.torchaudio_backend_unavailable", ["infura.py:82", "dispatcher"]),
    ("r40_a.yaml#52", "other.transformers_requires_pytorch",
     ["Wav2Vec2ForCTC", "jonatasgrosman/wav2vec2-large-xlsr-53-chinese-zh-cn"]),
    ("r40_a.yaml#79", "other.torchaudio_function_deprecated", ["transforms.py:204", "complex_norm", "torch.view_as_complex"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the same FFmpeg failure on Windows (pytorch/audio#3016)
    ('  File "C:\\Python\\Python39\\lib\\site-packages\\torchaudio\\_extension.py", line 73, in _init_ffmpeg\n'
     '    raise ImportError("FFmpeg libraries are not found. Please install FFmpeg.") from err\n'
     "ImportError: FFmpeg libraries are not found. Please install FFmpeg.",
     "other.torchaudio_ffmpeg_not_found", ["_init_ffmpeg"]),
    # the extension warning alone, from demucs (demucs#183)
    ("C:\\Users\\leona\\anaconda3\\envs\\demucs\\lib\\site-packages\\torchaudio\\extension\\extension.py:13: UserWarning: "
     "torchaudio C++ extension is not available.\n  warnings.warn('torchaudio C++ extension is not available.')",
     "other.torchaudio_extension_unavailable_warning", ["extension.py:13"]),
    # transformers' dummy objects in a newer and an older release (transformers#28999, chatting-transformer#14)
    ("BertForMaskedLM requires the PyTorch library but it was not found in your environment. Checkout the instructions "
     "on the\ninstallation page: https://pytorch.org/get-started/locally/ and follow the ones that match your environment.",
     "other.transformers_requires_pytorch", ["BertForMaskedLM"]),
    ("AutoModelForCausalLM requires the PyTorch library but it was not found in your enviromnent. Checkout the "
     "instructions on the\ninstallation page: https://pytorch.org/get-started/locally/ and follow the ones that match "
     "your enviromnent.", "other.transformers_requires_pytorch", ["AutoModelForCausalLM"]),
    # the dispatcher's full wording still answered by its first branch (ChatTTS#438)
    ("RuntimeError: Couldn't find appropriate backend to handle uri output1.wav and format None.",
     "other.torchaudio_backend_unavailable", ["output1.wav"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, rule", [
    # a control: gaussian-splatting's rasterizer returning two values, not WaveGlow's forward
    (corpus_message("r10_a.yaml#42"), "other.waveglow_forward_tuple"),
    # torchaudio's raised error, not the import-time warning (encodec#57)
    ("RuntimeError: No audio I/O backend is available", "other.torchaudio_extension_unavailable_warning"),
    # the set_audio_backend no-op warning belongs to its own rule (audio-denoiser#1)
    ("> k:\\AI\\AudioDenoiser\\__main__.py:9: UserWarning: torchaudio._backend.set_audio_backend has been deprecated. "
     "With dispatch\n> er enabled, this function is no-op. You can remove the function call.\n"
     ">   torchaudio.set_audio_backend(\"soundfile\")", "other.torchaudio_function_deprecated"),
])
def test_near_misses_stay_unclaimed(text, rule):
    assert_left_alone(text, rule)
