"""Round-40 wordings for other (RL libraries and learners' code): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same
families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r40_b.yaml#10", "other.rsl_rl_obs_groups_missing", ["obs_groups", "'policy'", "on_policy_runner.py:45",
                                                         "train.py:85"]),
    ("r40_b.yaml#24", "other.d3rlpy_impl_not_built", ["self._impl is not None", "base.py:157", "predict_value",
                                                     "td_error_scorer"]),
    ("r40_c.yaml#11", "other.size_average_reduce_deprecated", ["reduction='sum'", "_reduction.py:43"]),
    ("r40_c.yaml#12", "other.size_average_reduce_deprecated", ["reduction='none'", "functional.py:52"]),
    ("r40_c.yaml#33", "other.pybind_type_already_registered", ["WorkerId", "generic_type", "Aborted (core dumped)"]),
    ("r40_c.yaml#46", "other.floordiv_deprecated_warning", ["core.py:52", "__floordiv__", "i = i // self.groups"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # rsl_rl 3.x with a config that has no obs_groups entry at all (RoboCubPilot/g1_deploy_mujoco#6)
    ('  File "/home/xueluo/anaconda3/envs/issac/lib/python3.11/site-packages/rsl_rl/runners/on_policy_runner.py", '
     'line 50, in __init__\n    self.cfg["obs_groups"] = resolve_obs_groups(obs, self.cfg["obs_groups"], default_sets)\n'
     "                                                     ~~~~~~~~^^^^^^^^^^^^^^\nKeyError: 'obs_groups'",
     "other.rsl_rl_obs_groups_missing", ["on_policy_runner.py:50", "'obs_groups'"]),
    # d3rlpy 1.x/2.x's wording of the same assertion (takuseno/d3rlpy#332)
    ("AssertionError: The neural network parameters are not initialized. Pleaes call build_with_dataset, "
     "build_with_env, or directly call fit or fit_online method. ~~~", "other.d3rlpy_impl_not_built",
     ["build_with_dataset"]),
    # torch 0.4.1's 'elementwise_mean' (pytorch/ignite#223), torch 1.x's 'mean' (ndrplz/planar-distance-estimation#5)
    ("/usr/local/lib/python3.5/dist-packages/torch/nn/functional.py:52: UserWarning: size_average and reduce args "
     "will be deprecated, please use reduction='elementwise_mean' instead.\n    warnings.warn(warning.format(ret))",
     "other.size_average_reduce_deprecated", ["reduction='elementwise_mean'", "functional.py:52"]),
    ("lib/python3.9/site-packages/torch/nn/_reduction.py:42: UserWarning: size_average and reduce args will be "
     "deprecated, please use reduction='mean' instead.\n  warnings.warn(warning.format(ret))",
     "other.size_average_reduce_deprecated", ["reduction='mean'", "_reduction.py:42"]),
    # pybind11's error raised in Python from torch's own import (googlecolab/colabtools#2405), a source build
    # (pytorch/pytorch#62656)
    ('RuntimeError: generic_type: cannot initialize type "TensorProtoDataType": an object with that name is already '
     "defined", "other.pybind_type_already_registered", ["TensorProtoDataType"]),
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  generic_type: cannot initialize "
     'type "Options": an object with that name is already defined\nAborted', "other.pybind_type_already_registered",
     ["Options"]),
    # the __floordiv__ warning with its calling line (aiqm/torchani#614), ATen's floor_divide (pytorch/vision#3668)
    ("torchani/aev.py:236: UserWarning: __floordiv__ is deprecated, and its behavior will change in a future version "
     "of pytorch. It currently rounds toward 0 (like the 'trunc' function NOT 'floor'). This results in incorrect "
     "rounding for negative values. To keep the current behavior, use torch.div(a, b, rounding_mode='trunc'), or for "
     "actual floor division, use torch.div(a, b, rounding_mode='floor').\n  pair_sizes = counts * (counts - 1) // 2",
     "other.floordiv_deprecated_warning", ["aev.py:236", "pair_sizes = counts * (counts - 1) // 2"]),
    ("./Users/fmassa/anaconda3/lib/python3.8/site-packages/torch/_tensor.py:565: UserWarning: floor_divide is "
     "deprecated, and will be removed in a future version of pytorch. It currently rounds toward 0 (like the 'trunc' "
     "function NOT 'floor'). This results in incorrect rounding for negative values.\nTo keep the current behavior, "
     "use torch.div(a, b, rounding_mode='trunc'), or for actual floor division, use torch.div(a, b, "
     "rounding_mode='floor'). (Triggered internally at  /Users/distiller/project/conda/conda-bld/"
     "pytorch_1616403588275/work/aten/src/ATen/native/BinaryOps.cpp:341.)",
     "other.floordiv_deprecated_warning", ["_tensor.py:565", "floor_divide"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_size_average_warning_raised_live():
    import warnings

    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.MSELoss(size_average=False)
    text = "\n".join(f"UserWarning: {w.message}" for w in caught)
    assert_names(explain_paste(text), "other.size_average_reduce_deprecated", ["reduction='sum'"])


@pytest.mark.parametrize("text, not_rule", [
    # d3rlpy's dataset constructor asserting its arrays (takuseno/d3rlpy#16): not the algorithm's networks
    ('Traceback (most recent call last):\n  File "/Users/jens/Documents/CameraShading/Artificial-Eye/jj.py", line 77, '
     "in <module>\n    dataset = MDPDataset(observations, actions, rewards, terminals)\n  File \"d3rlpy/dataset.pyx\", "
     "line 138, in d3rlpy.dataset.MDPDataset.__init__\nAssertionError", "other.d3rlpy_impl_not_built"),
    # a custom operator defined twice (pytorch/pytorch#148148): the dispatcher's family, not pybind11's
    ("RuntimeError: Tried to register an operator (mylib::foo(Tensor(a!) x, Tensor(b!) y) -> ()) with the same name "
     "and overload name multiple times. Each overload's schema should only be registered with a single call to def(). "
     "Duplicate registration: registered at /dev/null:135. Original registration: registered at /dev/null:203",
     "other.pybind_type_already_registered"),
    # rsl_rl 3.x handed a tuple of observations (zitongbai/legged_lab#19): another step of the port
    ('  File ".../rsl_rl/rsl_rl/utils/utils.py", line 275, in resolve_obs_groups\n    f" environment. Available '
     'observations from the environment: {list(obs.keys())}"\n'
     "                                                                       ^^^^^^^^\n"
     "AttributeError: 'tuple' object has no attribute 'keys'", "other.rsl_rl_obs_groups_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_floordiv_warning_does_not_hide_the_error_after_it():
    # ru-dalle#71: the warning printed before a CUDA out-of-memory error; the error leads
    diagnosis = explain_paste(corpus_message("r31_b.yaml#15"))
    assert diagnosis is not None and diagnosis.rule != "other.floordiv_deprecated_warning"
