"""The shape family against its fixtures: each real torch error is explained with the module, the operands,
their live shapes, the dimension that disagrees and a fix carrying the value that would work."""

from __future__ import annotations

import pytest

import explainer

from conftest import raise_fixture


def explain_fixture(name: str):
    diagnosis = explainer.explain(raise_fixture(f"fixtures/shape/{name}.py"))
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def culprit(diagnosis, name: str) -> dict:
    found = {c["name"]: c for c in diagnosis.culprits}
    assert name in found, f"no culprit {name!r} in {sorted(found)}"
    return found[name]


def has_fix(diagnosis, text: str) -> bool:
    return any(text in fix for fix in diagnosis.fixes)


def test_linear_in_features_names_the_nested_layer():
    d = explain_fixture("linear_in_features")
    assert d.rule == "shape.matmul"
    assert culprit(d, "model.encoder.fc")["kind"] == "module"
    assert culprit(d, "x")["shape"] == [32, 512]
    assert d.facts["got_features"] == 512 and d.facts["in_features"] == 256
    assert has_fix(d, "model.encoder.fc = nn.Linear(512, 10)")


def test_conv_channels_names_the_conv_in_sequential_and_the_channel_count():
    d = explain_fixture("conv_channels")
    assert d.rule == "shape.conv_channels"
    assert "Conv2d(3, 16" in culprit(d, "model.features.0")["repr"]
    assert culprit(d, "x")["shape"] == [8, 1, 28, 28]
    assert (d.facts["channel_dim"], d.facts["got_channels"], d.facts["expected_channels"]) == (1, 1, 3)
    assert has_fix(d, "model.features.0 = nn.Conv2d(1, 16, kernel_size=3, padding=1)")
    assert has_fix(d, "x.expand(-1, 3, -1, -1)")
    assert "model.features.0" in d.summary and "(8, 1, 28, 28)" in d.summary


def test_conv_input_rank_suggests_the_missing_dimensions():
    d = explain_fixture("conv_input_rank")
    assert d.rule == "shape.conv_input_rank"
    assert culprit(d, "model.conv1")["kind"] == "module"
    assert culprit(d, "x")["shape"] == [28, 28]
    assert d.facts["input_rank"] == 2 and d.facts["batched_rank"] == 4
    assert has_fix(d, "x.unsqueeze(0).unsqueeze(0)` -> (1, 1, 28, 28)")


def test_broadcast_names_both_operands_and_their_own_dimension():
    d = explain_fixture("broadcast")
    assert d.rule == "shape.broadcast"
    assert culprit(d, "scores")["shape"] == [4, 3]
    assert culprit(d, "totals")["shape"] == [4]
    # The message's dimension 1 is dimension 1 of scores but dimension 0 of totals.
    assert (d.facts["dim"], d.facts["a_dim"], d.facts["b_dim"]) == (1, 1, 0)
    assert has_fix(d, "totals.unsqueeze(-1)` -> (4, 1)")
    assert "scores / totals" in d.summary


def test_view_size_counts_elements_and_suggests_flatten():
    d = explain_fixture("view_size")
    assert d.rule == "shape.view_size"
    assert culprit(d, "x")["shape"] == [8, 16, 5, 5]
    assert (d.facts["numel"], d.facts["requested_numel"]) == (3200, 2048)
    assert has_fix(d, "x.flatten(1)` -> (8, 400)")
    assert has_fix(d, "nn.Linear(400, ...)")
    assert has_fix(d, "x.view(8, 400)")


def test_view_stride_finds_the_transpose_that_broke_contiguity():
    d = explain_fixture("view_stride")
    assert d.rule == "shape.view_stride"
    assert culprit(d, "y")["shape"] == [2, 5, 4, 8]
    assert d.facts["input_stride"] == "(160, 8, 40, 1)"
    assert d.facts["made_by"] == "transpose"
    assert "y = y.transpose(1, 2)" in d.facts["made_at"]
    assert has_fix(d, "y.reshape(B, T, C)") and has_fix(d, "y.contiguous().view(B, T, C)")


def test_cat_lists_the_tensors_and_the_disagreeing_dimension():
    d = explain_fixture("cat_sizes")
    assert d.rule == "shape.cat_sizes"
    assert culprit(d, "image_features")["shape"] == [32, 128]
    assert culprit(d, "text_features")["shape"] == [16, 64]
    assert (d.facts["cat_dim"], d.facts["mismatch_dim"]) == (1, 0)
    assert d.facts["mismatch_name"] == "text_features"


def test_stack_lists_the_entries_and_suggests_padding():
    d = explain_fixture("stack_sizes")
    assert d.rule == "shape.stack_sizes"
    assert culprit(d, "sequences[0]")["shape"] == [3]
    assert culprit(d, "sequences[1]")["shape"] == [4]
    assert d.facts["mismatch_dim"] == 0
    assert has_fix(d, "pad_sequence(sequences, batch_first=True)")


def test_loss_batch_size_names_output_and_target_and_the_ratio():
    d = explain_fixture("loss_batch_size")
    assert d.rule == "shape.loss_batch_size"
    assert culprit(d, "criterion")["repr"] == "CrossEntropyLoss()"
    assert culprit(d, "logits")["shape"] == [32, 10]
    assert culprit(d, "labels")["shape"] == [16]
    assert (d.facts["input_batch"], d.facts["target_batch"], d.facts["batch_ratio"]) == (32, 16, 2)
    assert has_fix(d, "x.flatten(1)")


def test_bce_target_size_suggests_squeeze():
    d = explain_fixture("loss_target_size")
    assert d.rule == "shape.loss_target_size"
    assert culprit(d, "probs")["shape"] == [32, 1]
    assert culprit(d, "labels")["shape"] == [32]
    assert has_fix(d, "probs.squeeze(-1)` -> (32,)")
    assert has_fix(d, "labels.view_as(probs)")


def test_cross_entropy_on_sequence_logits_suggests_permute():
    d = explain_fixture("loss_target_dims")
    assert d.rule == "shape.loss_target_dims"
    assert d.facts["loss"] == "F.cross_entropy"
    assert culprit(d, "logits")["shape"] == [4, 7, 10]
    assert culprit(d, "targets")["shape"] == [4, 7]
    assert has_fix(d, "logits.permute(0, 2, 1)` -> (4, 10, 7)")
    assert has_fix(d, "logits.reshape(-1, 10), targets.reshape(-1)")


def test_multi_target_labels_suggest_squeeze():
    d = explain_fixture("loss_multi_target")
    assert d.rule == "shape.loss_target_dims"
    assert culprit(d, "labels")["shape"] == [32, 1]
    assert has_fix(d, "labels.squeeze(1)")


def test_embedding_index_reports_max_id_against_num_embeddings():
    d = explain_fixture("embedding_index")
    assert d.rule == "shape.embedding_index"
    assert culprit(d, "model.embed")["repr"] == "Embedding(1000, 32)"
    assert culprit(d, "token_ids")["shape"] == [2, 4]
    assert (d.facts["num_embeddings"], d.facts["max_index"], d.facts["out_of_range"]) == (1000, 1203, 2)
    assert "min_index" not in d.facts and d.facts["negative_count"] == 0
    assert "2 ids in token_ids (2, 4) are outside that range" in d.summary and "nn.Embedding(1204, 32)" in d.summary
    assert has_fix(d, "model.embed = nn.Embedding(1204, 32)")
    # Values are reduced to numbers; the ids themselves are never shown.
    assert "507" not in d.to_json()


def test_dim_out_of_range_gives_the_rank_and_the_last_dim():
    d = explain_fixture("dim_out_of_range")
    assert d.rule == "shape.dim_out_of_range"
    assert culprit(d, "logits")["shape"] == [32, 10]
    assert (d.facts["tensor_rank"], d.facts["dim"]) == (2, 2)
    assert has_fix(d, "`dim=1`")


def test_state_dict_size_summarises_every_mismatched_key():
    d = explain_fixture("state_dict_size")
    assert d.rule == "shape.state_dict_size"
    assert d.facts["mismatch_count"] == 3
    for key in ("body.weight", "body.bias", "fc.weight"):
        assert key in d.summary
    weight = culprit(d, "model.fc.weight")
    assert weight["shape"] == [10, 256] and weight["checkpoint_shape"] == [10, 512]
    assert has_fix(d, "model.body = nn.Linear(784, 512); model.fc = nn.Linear(512, 10)")


def test_rnn_input_size_shows_the_batch_first_layout_and_the_transpose():
    d = explain_fixture("rnn_input_size")
    assert d.rule == "shape.rnn_input_size"
    assert culprit(d, "model.encoder")["repr"] == "LSTM(10, 32, batch_first=True)"
    assert culprit(d, "x")["shape"] == [4, 10, 20]
    assert d.facts["layout"] == "(batch=4, seq=10, features=20)"
    assert has_fix(d, "x.transpose(1, 2)` -> (4, 20, 10)")
    assert has_fix(d, "model.encoder = nn.LSTM(20, 32, batch_first=True)")


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


@pytest.mark.parametrize("message, rule, words", [
    ("RuntimeError: Given groups=1, weight of size [64, 3, 3, 3], expected input[1, 1, 256, 256] to have 3 "
     "channels, but got 1 channels instead", "shape.conv_channels", ["[64, 3, 3, 3]", "expects 3", "has 1"]),
    ("RuntimeError: The size of tensor a (16) must match the size of tensor b (48) at non-singleton dimension 1",
     "shape.broadcast", ["16", "48", "dimension 1"]),
    ("RuntimeError: shape '[-1, 400]' is invalid for input of size 384", "shape.view_size",
     ["[-1, 400]", "384 elements", "must divide 384"]),
    ("RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with "
     "shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([10, 256]).",
     "shape.state_dict_size", ["fc.weight", "[10, 512]", "[10, 256]"]),
])
def test_text_only_messages_fall_back_to_message_templates(message, rule, words):
    d = explainer.explain_text(message)
    assert d.rule == rule
    for word in words:
        assert word in d.summary, f"{word!r} not in {d.summary!r}"
    assert not d.culprits


def test_state_dict_size_wins_over_missing_keys_in_a_mixed_message():
    message = ("RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"head.bias\". "
               "\n\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from checkpoint, "
               "the shape in current model is torch.Size([10, 256]).")
    assert explainer.explain_text(message).rule == "shape.state_dict_size"


def test_bmm_attention_scores_suggest_transposing_the_keys():
    d = explain_fixture("attention_scores")
    assert d.rule == "shape.bmm"
    assert culprit(d, "q")["shape"] == [2, 4, 8] and culprit(d, "k")["shape"] == [2, 4, 8]
    assert (d.facts["inner"], d.facts["got_inner"]) == (8, 4)
    assert d.fixes[0].startswith("Use `q @ k.transpose(-2, -1)` -> (2, 4, 4)")


@pytest.mark.parametrize("message, fix", [
    ("RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [2, 1280] but got: [2, 640].",
     "shape (2, 1280, N)"),
    ("RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [16, 40] but got: [8, 40].",
     "both operands need 16 matrices"),
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)",
     "the layer is `nn.Linear(512, 10)`"),
    ("RuntimeError: The expanded size of the tensor (64) must match the existing size (96) at non-singleton "
     "dimension 1.  Target sizes: [96, 64].  Tensor sizes: [96]", "Reshape the tensor to (96, 1)"),
    ("RuntimeError: Given normalized_shape=[1280], expected input with shape [*, 1280], but got input of "
     "size[1, 257, 1664]", "the layer is `nn.LayerNorm(1664)`"),
    ("RuntimeError: running_mean should contain 256 elements not 512", "`nn.BatchNorm2d(256)`"),
    ("RuntimeError: Expected hidden[0] size (1, 32, 256), got [1, 8, 256]", "`torch.zeros(1, 32, 256)`"),
    ("RuntimeError: Given input size: (2048x1x1). Calculated output size: (2048x-5x-5). Output size is too small",
     "use kernel_size=1 there"),
])
def test_text_only_diagnoses_carry_a_working_value(message, fix):
    d = explainer.explain_text(message)
    assert d.rule is not None and d.rule.startswith("shape."), d.summary
    assert has_fix(d, fix), d.fixes


def test_matmul_text_fix_gives_way_to_the_live_one():
    d = explain_fixture("linear_in_features")
    assert d.fixes[0] == ("If 512 features is what x should have, build the layer for it: "
                          "`model.encoder.fc = nn.Linear(512, 10)`.")
    assert sum("nn.Linear(512, 10)" in fix for fix in d.fixes) == 1


def test_expand_mask_lines_up_the_missing_dimension():
    d = explain_fixture("expand_mask")
    assert d.rule == "shape.expand_size"
    assert culprit(d, "mask")["shape"] == [8, 1, 10]
    assert d.facts["dim"] == 1 and d.facts["aligned_shape"] == "(8, 1, 1, 10)"
    assert has_fix(d, "`mask.view(8, 1, 1, 10).expand(8, 4, 10, 10)`")


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
    assert has_fix(d, "`model.1 = nn.BatchNorm2d(16)`")


def test_gru_hidden_state_built_for_another_batch():
    d = explain_fixture("rnn_hidden_size")
    assert d.rule == "shape.rnn_hidden_size"
    assert culprit(d, "model.rnn")["repr"] == "GRU(10, 20)"
    assert culprit(d, "self.h0")["shape"] == [1, 4, 20] and culprit(d, "x")["shape"] == [5, 8, 10]
    assert has_fix(d, "`self.h0 = torch.zeros(1, x.size(1), 20)`")


def test_lstm_hidden_zero_names_h0_and_the_batch_first_dimension():
    d = explain_fixture("lstm_hidden_size")
    assert d.rule == "shape.rnn_hidden_size"
    assert d.facts["which"] == "[0]" and d.facts["batch_dim"] == 0
    assert culprit(d, "h0")["shape"] == [1, 4, 20]
    assert "hidden[0] must be (1, 8, 20), but h0 is (1, 4, 20)" in d.summary
    assert has_fix(d, "`h0 = torch.zeros(1, x.size(0), 20)`")


def test_pool_output_size_finds_the_pool_and_the_input_size_that_fits():
    d = explain_fixture("pool_output_size")
    assert d.rule == "shape.pool_output_size"
    assert culprit(d, "model.7")["type"] == "MaxPool2d"
    assert d.facts["input_shape"] == "(2, 16, 1, 1)"
    assert has_fix(d, "crops would need to be at least 16x16")
    assert has_fix(d, "`model.7 = nn.MaxPool2d(2, ceil_mode=True)`")


def test_conv_kernel_size_names_the_conv_and_the_map_that_reaches_it():
    d = explain_fixture("conv_kernel_size")
    assert d.rule == "shape.conv_kernel_size"
    assert culprit(d, "model.2")["kind"] == "module"
    assert "(5 x 5)" in d.summary and "(3 x 3)" in d.summary and "(4, 32, 3, 3)" in d.summary


def test_inplace_broadcast_names_both_operands_and_the_out_of_place_fix():
    d = explain_fixture("inplace_broadcast")
    assert d.rule == "shape.inplace_broadcast"
    assert culprit(d, "image")["shape"] == [1, 28, 28] and culprit(d, "mean")["shape"] == [3, 1, 1]
    assert "[3, 28, 28]" in d.summary and "image.sub_(mean)" in d.summary
    assert has_fix(d, "`image = image - mean`")


def test_index_out_of_bounds_names_the_tensor_and_the_off_by_one():
    d = explain_fixture("index_out_of_bounds")
    assert d.rule == "shape.index_out_of_bounds"
    assert culprit(d, "multihot")["shape"] == [10]
    assert "multihot[label]" in d.summary and "0..9" in d.summary
    assert has_fix(d, "give dimension 0 size 11")


def test_loss_spatial_target_names_the_mask_with_its_channel_dimension():
    d = explain_fixture("loss_spatial_target")
    assert d.rule == "shape.loss_spatial_target"
    assert culprit(d, "masks")["shape"] == [2, 1, 16, 16]
    assert "(2, 5, 16, 16)" in d.summary and "(2, 1, 16, 16)" in d.summary
    assert has_fix(d, "mask.squeeze(1).long()")


def test_attention_heads_reads_embed_dim_and_num_heads_from_the_constructor():
    d = explain_fixture("attention_heads")
    assert d.rule == "shape.attention_heads"
    assert (d.facts["embed_dim"], d.facts["num_heads"]) == (100, 8)
    assert has_fix(d, "num_heads in") and has_fix(d, "e.g. 104")


def test_regression_loss_broadcast_warning_names_output_and_target():
    d = explain_fixture("loss_broadcast_warning")
    assert d.rule == "shape.loss_broadcast_warning"
    assert culprit(d, "targets")["shape"] == [32]
    assert "(32, 1)" in d.summary and "(32,)" in d.summary


def test_mm_rank_names_the_operand_that_is_not_a_matrix():
    d = explain_fixture("mm_rank")
    assert d.rule == "shape.mm_rank"
    assert d.facts["operand"] == "mat2" and "mat2" in d.summary


def test_mm_rank_names_the_vector_and_the_unsqueeze_that_makes_it_a_matrix():
    d = explain_fixture("mm_rank")
    assert "weight (16,)" in d.summary and d.facts["bad_rank"] == 1
    assert has_fix(d, "`weight.unsqueeze(1)` -> (16, 1)")
    d = explain_fixture("mm_rank_self")
    assert d.rule == "shape.mm_rank" and d.facts["operand"] == "self"
    assert "sample (16,)" in d.summary
    assert has_fix(d, "`sample.unsqueeze(0)` -> (1, 16)")
    assert not has_fix(d, "torch.bmm")   # a vector, not a batch


def test_index_select_out_of_range_names_the_table_and_the_largest_index():
    d = explain_fixture("index_select_index")
    assert d.rule == "shape.embedding_index"
    assert culprit(d, "table")["shape"] == [5, 8] and culprit(d, "rows")["shape"] == [3]
    assert (d.facts["select_size"], d.facts["max_index"], d.facts["out_of_range"]) == (5, 7, 1)
    assert "valid indices 0..4" in d.summary and "go up to 7" in d.summary
    assert has_fix(d, "rows.max() < table.size(0)")
    assert not has_fix(d, "tokenizer")


def test_key_padding_mask_is_checked_against_the_key_length():
    d = explain_fixture("attention_key_padding_mask")
    assert d.rule == "shape.attention_mask"
    assert (d.facts["expected_len"], d.facts["got_len"]) == (6, 5)
    assert "(2, 6, 64)" in d.summary and "second dimension is 5" in d.summary
    assert has_fix(d, "shape (batch, 6)")
    assert not has_fix(d, "causal mask")   # that advice is for attn_mask


def test_cat_of_tensors_with_different_ranks_names_both():
    d = explain_fixture("cat_rank")
    assert d.rule == "shape.cat_sizes"
    assert culprit(d, "scores")["shape"] == [32, 1, 1]
    assert "(got 2 and 3)" in d.summary and "scores (32, 1, 1)" in d.summary
    assert has_fix(d, ".squeeze(...)") and not has_fix(d, "U-Net")


def test_conv_transpose_channels_rebuilds_the_transposed_layer():
    d = explain_fixture("conv_transpose_channels")
    assert d.rule == "shape.conv_channels"
    assert culprit(d, "decoder.up")["type"] == "ConvTranspose2d"
    assert "expects 64 channels" in d.summary and "(4, 128, 8, 8)" in d.summary
    assert has_fix(d, "decoder.up = nn.ConvTranspose2d(128, 32, kernel_size=2, stride=2)")


def test_cross_entropy_spatial_size_mismatch_names_scores_and_masks():
    d = explain_fixture("loss_spatial_size")
    assert d.rule == "shape.loss_spatial_target"
    assert culprit(d, "masks")["shape"] == [2, 64, 48]
    assert "(2, 5, 64, 64)" in d.summary and "(2, 64, 48)" in d.summary


def test_bce_with_logits_target_size_names_logits_and_labels():
    d = explain_fixture("bce_target_size")
    assert d.rule == "shape.loss_target_size"
    assert culprit(d, "labels")["shape"] == [32]
    assert "logits is (32, 1)" in d.summary and "labels is (32,)" in d.summary
    assert has_fix(d, "`logits.squeeze(-1)` -> (32,)")


def test_max_pool1d_output_size_finds_the_pool_and_the_sequence_length_that_fits():
    d = explain_fixture("pool1d_output_size")
    assert d.rule == "shape.pool_output_size"
    assert culprit(d, "model.3")["type"] == "MaxPool1d"
    assert d.facts["input_shape"] == "(16, 8, 3)" and d.facts["output_length"] == 0
    assert "needs at least 4 steps" in d.summary
    assert has_fix(d, "windows would need to be at least 16")
    assert has_fix(d, "`model.3 = nn.MaxPool1d(4, ceil_mode=True)`")
    assert has_fix(d, "nn.AdaptiveAvgPool1d(1)")


def test_index_select_along_dim1_reads_the_out_of_bounds_wording():
    d = explain_fixture("index_select_dim1")
    assert d.rule == "shape.embedding_index"
    assert (d.facts["bad_index"], d.facts["axis_size"], d.facts["select_dim"]) == (12, 10, 1)
    assert "features (32, 10) has 10 entries in dimension 1" in d.summary
    assert has_fix(d, "keep.max() < features.size(1)")
