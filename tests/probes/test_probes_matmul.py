"""Shape probes: nn.Linear / F.linear, `a @ b`, bmm and mm. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_linear_in_features_names_the_nested_layer():
    d = explain_fixture("linear_in_features")
    assert d.rule == "shape.matmul"
    assert culprit(d, "model.encoder.fc")["kind"] == "module"
    assert culprit(d, "x")["shape"] == [32, 512]
    assert d.facts["got_features"] == 512 and d.facts["in_features"] == 256
    assert has_fix(d, "model.encoder.fc = nn.Linear(512, 10)")


def test_bmm_attention_scores_suggest_transposing_the_keys():
    d = explain_fixture("attention_scores")
    assert d.rule == "shape.bmm"
    assert culprit(d, "q")["shape"] == [2, 4, 8] and culprit(d, "k")["shape"] == [2, 4, 8]
    assert (d.facts["inner"], d.facts["got_inner"]) == (8, 4)
    assert d.fixes[0].startswith("Use `q @ k.transpose(-2, -1)` -> (2, 4, 4)")


def test_matmul_text_fix_gives_way_to_the_live_one():
    d = explain_fixture("linear_in_features")
    assert d.fixes[0].startswith("If 512 features is what x should have, build the layer for it: "
                                 "`model.encoder.fc = nn.Linear(512, 10)`.")
    # a layer replaced after the optimizer took model.parameters() never trains (the review of 2026-12-07)
    assert "before the optimizer takes `model.parameters()`" in d.fixes[0]
    assert sum("nn.Linear(512, 10)" in fix for fix in d.fixes) == 1


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


def test_linear_fix_points_at_the_constructor_arithmetic_that_sized_it():
    # the new user's review of 2026-12-07 (s1_cnn.py): 32 * 7 * 7 written for 28x28 images, fed 32x32 ones
    d = explain_fixture("linear_in_features_arithmetic")
    assert d.rule == "shape.matmul"
    assert (d.facts["in_features_expr"], d.facts["in_features_fit"]) == ("32 * 7 * 7", "32 * 8 * 8")
    assert d.facts["in_features_at"].endswith("linear_in_features_arithmetic.py:14")
    assert d.fixes[0].startswith("net.classifier was built with in_features=`32 * 7 * 7` (1568) at ")
    assert "x has 2048 = 32 * 8 * 8 features: its maps are 8 x 8 there, not 7 x 7" in d.fixes[0]
    assert not has_fix(d, "nn.Linear(2048, 10)"), "the constructor's own line is the place to change"


def test_linear_fix_reads_an_item_of_a_sequential_built_from_an_argument():
    d = explain_fixture("linear_in_features_sequential")
    assert d.facts["in_features_expr"] == "width * 2" and "in_features_fit" not in d.facts
    assert d.fixes[0].startswith("head.mlp.0 was built with in_features=`width * 2` (200) at ")
    assert "has 300 features: recompute that expression" in d.fixes[0]


def test_a_literal_in_features_keeps_the_rebuild_fix():
    d = explain_fixture("linear_in_features")
    assert "in_features_expr" not in d.facts
    assert has_fix(d, "model.encoder.fc = nn.Linear(512, 10)")
