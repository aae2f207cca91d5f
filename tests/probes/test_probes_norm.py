"""Shape probes: LayerNorm and BatchNorm. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_layer_norm_names_the_nested_norm_and_the_width_it_gets():
    d = explain_fixture("layer_norm_shape")
    assert d.rule == "shape.layer_norm_shape"
    assert "LayerNorm((64,)" in culprit(d, "model.block.norm")["repr"]
    assert culprit(d, "h")["shape"] == [8, 32]
    assert has_fix(d, "`model.block.norm = nn.LayerNorm(32)`")
    assert not has_fix(d, "If the input is right, the layer is")


def test_batchnorm_features_uses_the_input_channels():
    d = explain_fixture("batchnorm_features")
    assert d.rule == "shape.batchnorm_features"
    assert culprit(d, "model.1")["type"] == "BatchNorm2d"
    assert d.facts["input_shape"] == "(8, 16, 8, 8)"
    assert (d.facts["got_channels"], d.facts["num_features"]) == (16, 3)
    assert has_fix(d, "`model[1] = nn.BatchNorm2d(16)`")
