"""F.fold / F.unfold: the blocks, the output_size and the size the blocks would fill. Each fixture raises the
real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_fold_output_size_names_the_blocks_and_the_size_that_fits():
    d = explain_fixture("fixtures/shape/fold_output_size.py")
    assert d.rule == "shape.fold_blocks"
    assert (d.facts["want_blocks"], d.facts["got_blocks"], d.facts["fit_size"]) == (49, 64, "(32, 32)")
    assert culprit(d, "patches")["shape"] == [2, 48, 64]
    culprit(d, "output_size")
    assert has_fix(d, "`output_size=(32, 32)`")


def test_fold_channels_not_a_multiple_of_the_kernel():
    d = explain_fixture("fixtures/shape/fold_channels.py")
    assert d.rule == "shape.fold_blocks"
    assert culprit(d, "blocks")["shape"] == [2, 47, 64]
    assert "4 * 4 elements" in d.summary


def test_unfold_kernel_larger_than_the_input():
    d = explain_fixture("fixtures/shape/unfold_kernel_too_large.py")
    assert d.rule == "shape.fold_blocks"
    assert culprit(d, "features")["shape"] == [2, 3, 2, 2]
    assert "fit_size" not in d.facts
