"""The lead's shared changes while round 40 was open: a paste read whole has a word its console broke at the width
joined as each record's text is ("torc" / "h.Size([1, 256])"), and torch 2.6's weights-only message goes on over the
blank lines a poster put between its numbered options. Corpus messages verbatim from the opened rounds."""

from __future__ import annotations

from conftest import assert_names, corpus_message, explain_paste

from explainer.diagnose.textframes import word_rejoined


def test_a_size_broken_inside_torch_is_read_whole():
    # FastSpeech2#127: one state_dict line, hard-wrapped by the console inside "torch.Size"
    message = corpus_message("r40_a.yaml#7")
    assert "torc\nh.Size" in message
    assert "torch.Size([1, 256])" in word_rejoined(message)
    assert_names(explain_paste(message), "shape.state_dict_size", ["speaker_emb.weight", "[218, 256]", "[1, 256]"])


def test_blank_lines_between_the_weights_only_options_keep_the_unsupported_global():
    # bark#653: the poster's paste has a blank line before "(1) In PyTorch 2.6" and before "(2) Alternatively"
    message = corpus_message("r40_a.yaml#36")
    assert "\n\n(1) In PyTorch 2.6" in message and "\n\n(2) Alternatively" in message
    assert_names(explain_paste(message), "data.weights_only_load", ["numpy.core.multiarray.scalar"])
