"""Shape probes: embedding lookups, index_select and indexing past the end. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_embedding_index_reports_max_id_against_num_embeddings():
    d = explain_fixture("embedding_index")
    assert d.rule == "shape.embedding_index"
    assert culprit(d, "model.embed")["repr"] == "Embedding(1000, 32)"
    assert culprit(d, "token_ids")["shape"] == [2, 4]
    assert (d.facts["num_embeddings"], d.facts["max_index"], d.facts["out_of_range"]) == (1000, 1203, 2)
    assert "min_index" not in d.facts and d.facts["negative_count"] == 0
    assert "2 ids in token_ids (2, 4) are outside that range" in d.summary and "nn.Embedding(1204, 32)" in d.summary
    # sized for the vocabulary, this batch's largest id only a floor, never the first advice (review 58, defect 12)
    assert has_fix(d, "`model.embed = nn.Embedding(vocab_size, 32)`") and has_fix(d, "at least max id + 1 = 1204")
    assert "nn.Embedding(1204" not in d.fixes[0]
    # Values are reduced to numbers; the ids themselves are never shown.
    assert "507" not in d.to_json()


def test_index_out_of_bounds_names_the_tensor_and_the_off_by_one():
    d = explain_fixture("index_out_of_bounds")
    assert d.rule == "shape.index_out_of_bounds"
    assert culprit(d, "multihot")["shape"] == [10]
    assert "multihot[label]" in d.summary and "0..9" in d.summary
    assert has_fix(d, "give dimension 0 size 11")


def test_index_select_out_of_range_names_the_table_and_the_largest_index():
    d = explain_fixture("index_select_index")
    assert d.rule == "shape.embedding_index"
    assert culprit(d, "table")["shape"] == [5, 8] and culprit(d, "rows")["shape"] == [3]
    assert (d.facts["select_size"], d.facts["max_index"], d.facts["out_of_range"]) == (5, 7, 1)
    assert "valid indices 0..4" in d.summary and "go up to 7" in d.summary
    assert has_fix(d, "rows.max() < table.size(0)")
    assert not has_fix(d, "tokenizer")


def test_index_select_along_dim1_reads_the_out_of_bounds_wording():
    d = explain_fixture("index_select_dim1")
    assert d.rule == "shape.embedding_index"
    assert (d.facts["bad_index"], d.facts["axis_size"], d.facts["select_dim"]) == (12, 10, 1)
    assert "features (32, 10) has 10 entries in dimension 1" in d.summary
    assert has_fix(d, "keep.max() < features.size(1)")
