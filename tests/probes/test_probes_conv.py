"""Shape probes: convolutions and pooling. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_conv_channels_names_the_conv_in_sequential_and_the_channel_count():
    d = explain_fixture("conv_channels")
    assert d.rule == "shape.conv_channels"
    assert "Conv2d(3, 16" in culprit(d, "model.features.0")["repr"]
    assert culprit(d, "x")["shape"] == [8, 1, 28, 28]
    assert (d.facts["channel_dim"], d.facts["got_channels"], d.facts["expected_channels"]) == (1, 1, 3)
    assert has_fix(d, "model.features[0] = nn.Conv2d(1, 16, kernel_size=3, padding=1)")
    assert has_fix(d, "x.expand(-1, 3, -1, -1)")
    assert "model.features.0" in d.summary and "(8, 1, 28, 28)" in d.summary


def test_conv_input_rank_suggests_the_missing_dimensions():
    d = explain_fixture("conv_input_rank")
    assert d.rule == "shape.conv_input_rank"
    assert culprit(d, "model.conv1")["kind"] == "module"
    assert culprit(d, "x")["shape"] == [28, 28]
    assert d.facts["input_rank"] == 2 and d.facts["batched_rank"] == 4
    assert has_fix(d, "x.unsqueeze(0).unsqueeze(0)` -> (1, 1, 28, 28)")


def test_pool_output_size_finds_the_pool_and_the_input_size_that_fits():
    d = explain_fixture("pool_output_size")
    assert d.rule == "shape.pool_output_size"
    assert culprit(d, "model.7")["type"] == "MaxPool2d"
    assert d.facts["input_shape"] == "(2, 16, 1, 1)"
    assert has_fix(d, "crops would need to be at least 16x16")
    assert has_fix(d, "`model[7] = nn.MaxPool2d(2, ceil_mode=True)`")


def test_conv_kernel_size_names_the_conv_and_the_map_that_reaches_it():
    d = explain_fixture("conv_kernel_size")
    assert d.rule == "shape.conv_kernel_size"
    assert culprit(d, "model.2")["kind"] == "module"
    assert "(5 x 5)" in d.summary and "(3 x 3)" in d.summary and "(4, 32, 3, 3)" in d.summary


def test_conv_transpose_channels_rebuilds_the_transposed_layer():
    d = explain_fixture("conv_transpose_channels")
    assert d.rule == "shape.conv_channels"
    assert culprit(d, "decoder.up")["type"] == "ConvTranspose2d"
    assert "expects 64 channels" in d.summary and "(4, 128, 8, 8)" in d.summary
    assert has_fix(d, "decoder.up = nn.ConvTranspose2d(128, 32, kernel_size=2, stride=2)")


def test_max_pool1d_output_size_finds_the_pool_and_the_sequence_length_that_fits():
    d = explain_fixture("pool1d_output_size")
    assert d.rule == "shape.pool_output_size"
    assert culprit(d, "model.3")["type"] == "MaxPool1d"
    assert d.facts["input_shape"] == "(16, 8, 3)" and d.facts["output_length"] == 0
    assert "needs at least 4 steps" in d.summary
    assert has_fix(d, "windows would need to be at least 16")
    assert has_fix(d, "`model[3] = nn.MaxPool1d(4, ceil_mode=True)`")
    assert has_fix(d, "nn.AdaptiveAvgPool1d(1)")
