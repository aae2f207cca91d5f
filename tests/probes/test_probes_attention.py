"""Shape probes: nn.MultiheadAttention and the layers around it. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_attention_embed_dim_names_the_layer_inside_the_encoder():
    d = explain_fixture("attention_embed_dim")
    assert d.rule == "shape.attention_embed_dim"
    culprit(d, "model.encoder.layers.0.self_attn")
    assert culprit(d, "h")["shape"] == [2, 5, 32]
    assert (d.facts["embed_dim"], d.facts["got_embed"]) == (64, 32)
    assert has_fix(d, "nn.TransformerEncoderLayer(d_model=32, nhead=4, batch_first=True)")
    assert has_fix(d, "nn.Linear(32, 64)")


def test_attention_mask_reads_query_and_key_lengths():
    d = explain_fixture("attention_mask")
    assert d.rule == "shape.attention_mask"
    assert culprit(d, "queries")["shape"] == [2, 5, 64]
    assert d.facts["key_shape"] == "(2, 6, 64)"
    assert d.facts["expected_dims"] == "5, 6"
    assert "seq_first_layout" not in d.facts  # batch_first=True: no batch_first advice


def test_attention_heads_reads_embed_dim_and_num_heads_from_the_constructor():
    d = explain_fixture("attention_heads")
    assert d.rule == "shape.attention_heads"
    assert (d.facts["embed_dim"], d.facts["num_heads"]) == (100, 8)
    assert has_fix(d, "num_heads in") and has_fix(d, "e.g. 104")


def test_key_padding_mask_is_checked_against_the_key_length():
    d = explain_fixture("attention_key_padding_mask")
    assert d.rule == "shape.attention_mask"
    assert (d.facts["expected_len"], d.facts["got_len"]) == (6, 5)
    assert "(2, 6, 64)" in d.summary and "second dimension is 5" in d.summary
    assert has_fix(d, "shape (batch, 6)")
    assert not has_fix(d, "causal mask")   # that advice is for attn_mask
