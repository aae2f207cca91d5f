"""index_add_ / index_copy_ / index_put: the tensor written into, the index and the source by the user's names
(shape, device and dtype of the same writes). Each fixture raises the real torch error."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_index_add_count_names_the_index_and_the_source():
    d = explain_fixture("fixtures/shape/index_add_count.py")
    assert d.rule == "shape.index_write_size"
    assert (d.facts["index_count"], d.facts["source_count"]) == (4, 10)
    assert culprit(d, "dst")["shape"] == [4]
    assert culprit(d, "messages")["shape"] == [10, 4]
    assert d.culprits[-1]["name"] == "out"  # the tensor written into only frames the two that disagree
    assert "`out.index_add_(0, dst, messages)`" in d.summary
    assert has_fix(d, "`len(dst) == messages.shape[0]`")


def test_index_copy_slice_shape_names_the_destination_slice():
    d = explain_fixture("fixtures/shape/index_copy_slice.py")
    assert d.rule == "shape.index_write_size"
    assert culprit(d, "updates")["shape"] == [3, 5]
    assert "each slice of the source must have the destination's slice shape, 4, not 5" in d.summary
    assert has_fix(d, "a slice of cache is 4, of the source 5")
    assert not has_fix(d, "len(rows)")  # the count is right: no advice about it


def test_index_add_device_names_the_index_left_on_the_cpu():
    d = explain_fixture("fixtures/device/index_add_device.py")
    assert d.rule == "device.index_write_device"
    assert d.category == "device"
    assert culprit(d, "dst")["device"] == "cpu"
    assert culprit(d, "messages")["device"] == "meta"
    assert d.summary.startswith("dst is on cpu but `out.index_add_(0, dst, messages)` runs on meta")


def test_index_add_double_source_names_what_made_it_double():
    d = explain_fixture("fixtures/dtype/index_add_double_source.py")
    assert d.rule == "dtype.index_source_dtype"
    assert culprit(d, "sums")["dtype"] == "float32"


def test_indexed_assignment_names_the_values_and_the_destination():
    d = explain_fixture("fixtures/dtype/index_put_numpy_values.py")
    assert d.rule == "dtype.index_source_dtype"
    assert d.facts["op"] == "index_put"
    assert d.facts["self_name"] == "scores"
    assert "writes Double values into a Float tensor (scores)" in d.summary


def test_index_add_source_names_the_float64_tensor_it_was_computed_from():
    d = explain_fixture("fixtures/dtype/index_add_weighted_messages.py")
    assert d.rule == "dtype.index_source_dtype"
    assert (d.facts["source_name"], d.facts["origin_name"], d.facts["origin_dtype"]) == (
        "messages", "edge_weight", "float64")
    assert culprit(d, "edge_weight")["dtype"] == "float64"
    assert culprit(d, "messages")["dtype"] == "float64"
    assert has_fix(d, "`edge_weight = edge_weight.to(torch.float32)`")
