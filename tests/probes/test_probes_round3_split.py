"""torch.split with a list of sizes: the layer whose output is split and the variables the sizes come from.
The fixture raises the real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit


def test_split_names_the_projection_and_the_size_variables():
    d = explain_fixture("fixtures/shape/split_fused_projection.py")
    assert d.rule == "shape.split_sizes"
    assert culprit(d, "qkv")["type"] == "Linear"
    assert culprit(d, "kv_dim")["repr"] == "32"
    assert culprit(d, "dim")["repr"] == "32"
    assert d.summary.startswith("qkv gives 40 values in dimension -1, but the split takes [32, 32, 32]")
    assert "which add up to 96" in d.summary
