"""Round-39 pandas wordings for data (PyTorch programs' data preparation: tabular and forecasting pipelines): each
corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it
holds named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_c.yaml#43", "data.pandas_columns_not_found", ["Index(['0', '1'], dtype='object')", "columns"]),
    ("r39_c.yaml#54", "data.pandas_int_cast_non_finite", ["IntCastingNaNError"]),
    ("r39_c.yaml#65", "data.pandas_timestamp_integer_arithmetic", ["Timestamp", "n * obj.freq"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # GMM-Demux#10 (string labels), analyzingalpha#3 (integer labels), deep_learning_cookbook#69 (set_index's wording)
    ("KeyError: \"None of [Index(['null'], dtype='object')] are in the [columns]\"", "data.pandas_columns_not_found",
     ["Index(['null'], dtype='object')"]),
    ("KeyError: \"None of [Int64Index([0, 1, 6, 7], dtype='int64')] are in the [columns]\"",
     "data.pandas_columns_not_found", ["Int64Index([0, 1, 6, 7], dtype='int64')"]),
    ("KeyError: \"None of ['Id'] are in the columns\"", "data.pandas_columns_not_found", ["['Id']"]),
    # raster2dggs#6 (pandas >= 1.3), amalgkit#48 (the older ValueError)
    ("pandas.errors.IntCastingNaNError: Cannot convert non-finite values (NA or inf) to integer",
     "data.pandas_int_cast_non_finite", ["IntCastingNaNError"]),
    ("ValueError: Cannot convert non-finite values (NA or inf) to integer", "data.pandas_int_cast_non_finite",
     ["ValueError"]),
    # graphene#866: pandas < 0.24's wording for the same addition
    ("Cannot add integral value to Timestamp without freq.", "data.pandas_timestamp_integer_arithmetic",
     ["Timestamp"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # some labels missing, not all (umami-csv-import-script#2)
    ("KeyError: \"['subdivision1', 'subdivision2'] not in index\"", "data.pandas_columns_not_found"),
    # a Series' datetime + int (pandas#19147): another wording
    ("TypeError: incompatible type for a datetime/timedelta operation [__add__]",
     "data.pandas_timestamp_integer_arithmetic"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
