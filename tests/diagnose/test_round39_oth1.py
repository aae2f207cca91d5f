"""Round-39 wordings of hand-written training-loop machinery (optimizers and param groups, schedulers, AMP, gradient
clipping, LR finders): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the
right rule with the values it holds named; other wordings of the same families (from the threads cited, or raised live
by the fixtures) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_a.yaml#2", "other.deprecated_overload_signature",
     ["addcmul_", "ranger.py:136", "exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)"]),
    ("r39_a.yaml#3", "other.deprecated_overload_signature", ["addcmul_", "radam.py:58"]),
    ("r39_a.yaml#4", "other.deprecated_overload_signature", ["add_", "exp_avg.mul_(beta1).add_(1 - beta1, grad)"]),
    ("r39_a.yaml#6", "other.deprecated_overload_signature", ["add_", "python_arg_parser.cpp:756"]),
    ("r39_a.yaml#8", "other.save_state_warning_import_removed",
     ["SAVE_STATE_WARNING", 'trainer_pt_utils.py", line 40', 'third_party/run_tag.py", line 39']),
    ("r39_a.yaml#10", "other.scheduler_save_state_warning", ["lr_scheduler.py:200"]),
    ("r39_a.yaml#30", "other.lightning_lr_finder_failed", ["for `lr`"]),
    ("r39_a.yaml#32", "other.amp_device_api_deprecated",
     ["torch.cuda.amp.custom_fwd(args...)", "@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)"]),
    ("r39_a.yaml#46", "other.clip_grad_norm_deprecated",
     ["torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad_norm_", "clip_grad_norm(model.parameters(), grad_clip)"]),
    ("r39_a.yaml#47", "other.clip_grad_norm_deprecated", ["train.py:227", "torch.nn.utils.clip_grad_norm"]),
    ("r39_a.yaml#49", "other.lightning_lr_scheduler_config", ["LambdaLR"]),
    ("r39_a.yaml#66", "other.optimizer_duplicate_parameters",
     ["tied_modules.SharedEmbedding.embedding_weight", "fused_adam.py:70"]),
    ("r39_a.yaml#67", "other.optimizer_duplicate_parameters", ["sgd.py:68"]),
    ("r39_a.yaml#68", "other.optimizer_duplicate_parameters", ["Adam"]),
    ("r39_a.yaml#69", "other.optimizer_sparse_gradients_unsupported", ['adam.py", line 70', "SparseAdam"]),
    ("r39_a.yaml#73", "other.reduce_lr_on_plateau_metric_none",
     ["NoneType", 'lr_scheduler.py", line 1052', 'trainer.py", line 1575', "current = float(metrics)"]),
    ("r39_a.yaml#78", "other.kohya_optimizer_package_missing", ["bitsandbytes", 'train_util.py", line 3421']),
    ("r39_a.yaml#90", "other.testing_assert_equal_prec", ['test_optim.py", line 1800', "prec"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch 2.x's wordings, raised live by the fixtures (fixtures/other/*.py)
    ("FutureWarning: `torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
     "other.clip_grad_norm_deprecated", ["torch.nn.utils.clip_grad_norm_"]),
    ("RuntimeError: Adam does not support sparse gradients, please consider SparseAdam instead",
     "other.optimizer_sparse_gradients_unsupported", ["Adam", "SparseAdam"]),
    ("UserWarning: optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; "
     "see github.com/pytorch/pytorch/issues/40967 for more information", "other.optimizer_duplicate_parameters", []),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the opposite sparse case, SparseAdam given dense gradients (OpenNMT-py#1015)
    ("RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead",
     "other.optimizer_sparse_gradients_unsupported"),
    # SparseAdam given sparse parameters (pytorch#84537): other.sparse_adam_dense_params'
    ("ValueError: Sparse params at indices [0]: SparseAdam requires dense parameter tensors",
     "other.optimizer_sparse_gradients_unsupported"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
