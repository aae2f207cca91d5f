"""InstanceNorm's num_features against the channels its input has. Each fixture raises the real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_instance_norm_features_names_the_norm_and_the_conv_before_it():
    d = explain_fixture("fixtures/shape/instance_norm_features.py")
    assert d.rule == "shape.instance_norm_features"
    assert (d.facts["num_features"], d.facts["got_channels"], d.facts["feature_dim"]) == (64, 32, 1)
    assert culprit(d, "decoder.1")["type"] == "InstanceNorm2d"
    assert d.facts["producer_name"] == "decoder.0"
    assert has_fix(d, "`decoder[1] = nn.InstanceNorm2d(32)`")


def test_instance_norm_is_not_claimed_by_the_batchnorm_rule():
    d = explain_fixture("fixtures/shape/batchnorm_features.py")
    assert d.rule == "shape.batchnorm_features"
