"""Round-39 wordings for data (hand-written training loops, tabular pipelines around torch): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_a.yaml#24", "data.optimizer_state_shape_mismatch", ["tensor (3)", "25088", "buf.mul_(momentum)"]),
    ("r39_b.yaml#30", "other.variable_legacy_attribute",
     ["decoder.embeddings.make_embedding.pe.pe", "copy_", "module.py:360"]),
    ("r39_c.yaml#84", "data.target_out_of_bounds", ["Target 3", "TabNet"]),
    ("r39_c.yaml#45", "data.label_encoder_unseen_labels", ["-3.2328808487512815"]),
    ("r39_c.yaml#85", "data.numpy_stack_empty", ["shape_base.py", "stack"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # SGD's momentum buffer on resume, torch 1.x's wording (SlowFast#435)
    ('  File "/home/anaconda3/envs/pyt/lib/python3.8/site-packages/torch/optim/sgd.py", line 110, in step\n'
     "    F.sgd(params_with_grad,\n"
     '  File "/home/anaconda3/envs/pyt/lib/python3.8/site-packages/torch/optim/_functional.py", line 169, in sgd\n'
     "    buf.mul_(momentum).add_(d_p, alpha=1 - dampening)\n"
     "RuntimeError: The size of tensor a (400) must match the size of tensor b (150) at non-singleton dimension 0",
     "data.optimizer_state_shape_mismatch", ["400", "150", "buf"]),
    # a buffer smaller than the gradient (HRNet-Semantic-Segmentation#252)
    ("    optimizer.step()\n"
     '  File "/usr/local/lib/python3.5/dist-packages/torch/optim/sgd.py", line 100, in step\n'
     "    buf.mul_(momentum).add_(1 - dampening, d_p)\n"
     "RuntimeError: output with shape [256] doesn't match the broadcast shape [18, 72, 1, 256]",
     "data.optimizer_state_shape_mismatch", ["[256]", "[18, 72, 1, 256]"]),
    # transformers' AdamW after a token was added to the vocabulary (MultiPoint#8)
    ('  File "MultiPoint\\venv\\lib\\site-packages\\transformers\\optimization.py", line 646, in step\n'
     "    exp_avg.mul_(beta1).add_(grad, alpha=(1.0 - beta1))\n"
     "RuntimeError: The size of tensor a (50265) must match the size of tensor b (50266) at non-singleton dimension 0",
     "data.optimizer_state_shape_mismatch", ["50265", "50266", "exp_avg"]),
    # scikit-learn's wording from another tabular library (evalml#970)
    ("ValueError: y contains previously unseen labels: [2.0]", "data.label_encoder_unseen_labels", ["[2.0]"]),
    # NumPy's stack in a detection data pipeline (OpenPCDet#1392)
    ('  File "/usr/local/lib/python3.10/dist-packages/numpy/core/shape_base.py", line 422, in stack\n'
     "    raise ValueError('need at least one array to stack')\n"
     "ValueError: need at least one array to stack", "data.numpy_stack_empty", ["stack"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # weight decay adds the parameter to a gradient of the wrong shape: no state buffer (pytorch#7712)
    ("    optimizer.step()\n"
     '  File "/usr/local/lib/python3.5/dist-packages/torch/optim/sgd.py", line 93, in step\n'
     "    d_p.add_(weight_decay, p.data)\n"
     "RuntimeError: The expanded size of the tensor (56) must match the existing size (112) at non-singleton dimension 1",
     "data.optimizer_state_shape_mismatch"),
    # the same size error outside an optimizer (singleshotpose#33)
    ("RuntimeError: The expanded size of the tensor (3) must match the existing size (864) at non-singleton dimension 3",
     "data.optimizer_state_shape_mismatch"),
    # torch.stack's own empty-list wording (CMD-SE-release#6)
    ("RuntimeError: stack expects a non-empty TensorList", "data.numpy_stack_empty"),
    # pytorch-forecasting's encoder wording (pytorch-forecasting#830)
    ("KeyError: \"Unknown category 'Y' encountered. Set `add_nan=True` to allow unknown categories\"",
     "data.label_encoder_unseen_labels"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
