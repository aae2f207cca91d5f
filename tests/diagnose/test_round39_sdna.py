"""Round-39 wordings for shape, dtype, numerics and autograd (training-loop machinery, biology and chemistry models,
tabular machine learning): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by
the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r39_a.yaml#64", "dtype.kernel_scalar_type", ["Half", "Float"]),
    ("r39_b.yaml#49", "dtype.kernel_scalar_type", ["Double", "Float"]),
    ("r39_b.yaml#10", "autograd.cdist_backward_contiguous", ["_cdist_backward", "requires X2"]),
    ("r39_b.yaml#56", "shape.embedding_index", ["embed_positions"]),
    ("r39_b.yaml#57", "shape.esm_max_sequence_length", ["1042", "embed_positions"]),
    ("r39_c.yaml#4", "shape.tabnet_target_shape", ["(1837,)"]),
    ("r39_c.yaml#14", "shape.skorch_target_dims", ["_validation.py:536", "y.reshape(-1, 1)"]),
    ("r39_c.yaml#15", "shape.skorch_target_dims", ["1-dimensional"]),
    ("r39_c.yaml#20", "shape.index_out_of_bounds", ["595"]),
    ("r39_c.yaml#35", "dtype.target_float", ["torch.FloatTensor", "torch.LongTensor", "#2 'target'"]),
    ("r39_c.yaml#37", "numerics.autogluon_fastai_nan_loss",
     ["tabular_nn_fastai.py:182", "NeuralNetFastAI", "EarlyStoppingCallbackWithTimeLimit", "epoch 0"]),
    ("r39_c.yaml#39", "numerics.nan_check_log", ["gaussian loss"]),
    ("r39_c.yaml#55", "shape.zero_dim_dimension", ["0-d tensor"]),
    ("r39_c.yaml#69", "dtype.numpy_safe_cast", ["<M8[ns]", "float64", "safe"]),
    ("r39_c.yaml#81", "numerics.tabpfn_nan_encoded", ["embedded_x", "embedded_y"]),
    ("r39_c.yaml#89", "shape.tabtransformer_categories_count", ["0 values", "categories"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, rule, values", [
    # the code of the innermost frame outside torch (Python's, and TorchScript's `<--- HERE` line)
    ("r39_a.yaml#64", "dtype.kernel_scalar_type", ["torch.einsum('iomn,ojkl->ijklmn', (grad_output, weight))"]),
    ("r39_b.yaml#49", "dtype.kernel_scalar_type", ["torch.matmul", "blocks.py:146"]),
    # the indexing expression a paste kept above the IndexError
    ("r39_c.yaml#20", "shape.index_out_of_bounds", ["X_num[part][idx]"]),
    # the optimizer's earlier warning in the same paste
    ("r39_a.yaml#59", "autograd.grad_none_attribute", ["adam.py:74"]),
])
def test_corpus_values_named_in_the_diagnosis(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # the ESM issue's title, the message unabridged (esm#166)
    ("ValueError: Sequence length 1042 above maximum sequence length of 1024.", "shape.esm_max_sequence_length",
     ["1042", "1024"]),
    # iteration over a 0-d tensor: a recursive repackage_hidden (PyTorch_GBW_LM#9), a loss unpacked (TorchSeg#42); `other`
    # since round 53 (other.zero_dim_iteration)
    ('File "main_dev.py", line 99, in repackage_hidden\n    return [repackage_hidden(state) for state in h]\n'
     '  File "/Users/admin/anaconda3/lib/python3.7/site-packages/torch/tensor.py", line 381, in __iter__\n'
     "    raise TypeError('iteration over a 0-d tensor')\nTypeError: iteration over a 0-d tensor",
     "other.zero_dim_iteration", ["iteration over a 0-d tensor", "repackage_hidden"]),
    ('Traceback (most recent call last):\n  File "train.py", line 144, in <module>\n'
     "    loss = Reduce.apply(*loss) / len(loss)\n"
     '  File "/home/work/anaconda3/envs/pytorch/lib/python3.6/site-packages/torch/tensor.py", line 422, in __iter__\n'
     "    raise TypeError('iteration over a 0-d tensor')\nTypeError: iteration over a 0-d tensor",
     "other.zero_dim_iteration", ["0-d tensor", "Reduce.apply(*loss)"]),
    # NumPy's older spelling and other dtypes (clust#46, tsfresh#677)
    ('Traceback (most recent call last):\n  File "pandas/_libs/parsers.pyx", line 1191, in '
     "pandas._libs.parsers.TextReader._convert_tokens\nTypeError: Cannot cast array from dtype('O') to dtype('float64') "
     "according to the rule 'safe'", "dtype.numpy_safe_cast", ["'O'", "'float64'"]),
    ("TypeError: Cannot cast array data from dtype('float64') to dtype('<U32') according to the rule 'safe'",
     "dtype.numpy_safe_cast", ["'<U32'"]),
    # AutoGluon's error as the description quotes it (autogluon#4508)
    ("AssertionError: Exception occured in `EarlyStoppingCallbackWithTimeLimit` when calling event `after_epoch`:\n"
     "\tWARNING: NaN loss encountered in epoch 0!", "numerics.autogluon_fastai_nan_loss",
     ["epoch 0", "EarlyStoppingCallbackWithTimeLimit"]),
    # the TabSurvey issue's title (TabSurvey#9)
    ("AssertionError: you must pass in 0 values for your categories input", "shape.tabtransformer_categories_count",
     ["0 categorical columns"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_len_of_a_zero_dim_tensor_raised_live():
    import torch

    with pytest.raises(TypeError) as raised:
        len(torch.tensor(3.0))
    assert_names(explain_paste(f"TypeError: {raised.value}"), "shape.zero_dim_dimension", ["len() of a 0-d tensor"])


@pytest.mark.parametrize("text, not_rule", [
    # BCEWithLogitsLoss's size check once y was flattened (skorch#502)
    ("ValueError: Target size (torch.Size([128])) must be the same as input size (torch.Size([128, 1]))",
     "shape.skorch_target_dims"),
    # a ufunc's output cast, another NumPy check (scikit-learn#6467)
    ("TypeError: Cannot cast ufunc add output from dtype('float64') to dtype('int64') with casting rule 'same_kind'",
     "dtype.numpy_safe_cast"),
    # a transformers tokenizer's warning about a long text (AffordanceNet#4)
    ("Token indices sequence length is longer than the specified maximum sequence length for this model (533 > 512). "
     "Running this sequence through the model will result in indexing errors", "shape.esm_max_sequence_length"),
    # an RNN's hidden state that is not contiguous (darts#730)
    ("rnn: hx is not contiguous", "autograd.cdist_backward_contiguous"),
    # a training loop's own NaN stop (DEIM#96)
    ("Loss is nan, stopping training", "numerics.autogluon_fastai_nan_loss"),
    # scikit-learn's input validation (Raindrop#4)
    ('Traceback (most recent call last):\n    File "Raindrop.py", line 336, in <module>\n'
     "    train_auroc = roc_auc_score(train_y, train_probs[:, 1])\nValueError: Input contains NaN. ",
     "numerics.tabpfn_nan_encoded"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
