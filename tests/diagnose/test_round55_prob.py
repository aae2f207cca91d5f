"""Round-55 wordings from probabilistic and scientific deep learning (the third collector's second half): a graph
break quoted as a comment (cuEquivariance), FrEIA's block shape check and its API rework, BackPACK's missing
backpropagated quantity, fairchem's registry, a pyro.plate parameter of a stale param store, a distribution's
parameter that is no tensor, NequIP's unused config keys and its statistics over a field never loaded, DDP's hint
printed apart from its error, and torch 0.4's size mismatch cut inside its shape: each corpus message (verbatim from
the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the
coverage judge reads them; other wordings of the same families (from the threads cited, or raised by torch) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste, raised

import explainer


CORPUS_CASES = [
    ("r55_c.yaml#46", "compile.graph_break", ["__add__", "Subscripts"]),
    ("r55_c.yaml#49", "shape.freia_block_input_shape", ["(256,1,1)", "(256, 64,64)", "paraller_flow"]),
    ("r55_c.yaml#53", "autograd.backpack_missing_backprop_quantity",
     ["BackPACK", "KFLR", "Linear(in_features=128, out_features=1, bias=True)"]),
    ("r55_c.yaml#55", "other.freia_block_api_mismatch",
     ["fixed_transforms.py", "x[0][:, self.perm]", 'Inn_8_modes mixture model.py", line 155']),
    ("r55_c.yaml#58", "other.ocp_registry_name_not_found", ["equiformer_v2s"]),
    ("r55_c.yaml#59", "shape.pyro_plate_param_shape",
     ["obs_plate", "2815", "torch.Size([2801, 1])", "AutoNormal.locs.n_s_cells_per_location"]),
    ("r55_c.yaml#60", "dtype.distribution_param_not_tensor", ["numbers.Number, torch.Tensor", "__torch_function__"]),
    ("r55_c.yaml#63", "other.nequip_unused_config_keys", ["optimizer_amsgradi", "--warn-unused", 'train.py", line 263']),
    ("r55_c.yaml#66", "distributed.ddp_unused_parameters",
     ["TORCH_DISTRIBUTED_DEBUG", "find_unused_parameters=True", 'main.py", line 126']),
    ("r55_c.yaml#67", "data.nequip_statistics_field_none",
     ["NoneType", "statistics", 'dataset.py", line 328', "ASEDataset(1000)"]),
    ("r55_c.yaml#68", "shape.state_dict_size", ["BSequential", "drop_0.noise", "torch.Size([])", "torch.Size([100, 100,"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # the plate's dim -2 minus event_dim 0: 2801 rows where the plate has 2815; a stale global param store
    assert_names(explain_paste(corpus_message("r55_c.yaml#59")), "shape.pyro_plate_param_shape",
                 ["its dim -2", "is 2801, where the plate needs 2815", "global param store"])
    # torch 0.4 printed the model's shape first: the fresh model's mask is empty, the checkpoint's has the batch's shape
    assert_names(explain_paste(corpus_message("r55_c.yaml#68")), "shape.state_dict_size",
                 ["torch.Size([]) is the current model's drop_0.noise", "buffer whose shape comes from the data"])
    # the loaded Batch has no forces and no total_energy: the labels were not read from the ASE file
    assert_names(explain_paste(corpus_message("r55_c.yaml#67")), "data.nequip_statistics_field_none",
                 ["no forces and no total_energy", "nequip/data/dataset.py:328"])
    # the block was built for (256,1,1) and fed (256, 64,64); FrEIA 0.2 from PyPI fixed it in the thread
    assert_names(explain_paste(corpus_message("r55_c.yaml#49")), "shape.freia_block_input_shape",
                 ["`z, jac = paraller_flow(y, [cond, ])`", "FrEIA 0.2"])
    # an operator on a user-defined class: the dunder Python calls for `a + b`
    assert_names(explain_paste(corpus_message("r55_c.yaml#46")), "compile.graph_break", ["such as `a + b`"])
    # the registry's own list is named with the name it lacked
    assert_names(explain_paste(corpus_message("r55_c.yaml#58")), "other.ocp_registry_name_not_found",
                 ["'equiformer_v2'", "registered"])
    # the hint printed above the traceback names the variable that lists the parameters
    diagnosis = explain_paste(corpus_message("r55_c.yaml#66"))
    assert any("TORCH_DISTRIBUTED_DEBUG=DETAIL" in fix for fix in diagnosis.fixes), diagnosis.fixes
    # Pyro's trace shapes under the error: raised while Pyro ran a model
    assert_names(explain_paste(corpus_message("r55_c.yaml#60")), "dtype.distribution_param_not_tensor",
                 ["Pyro's trace shapes"])


@pytest.mark.parametrize("text, rule, values", [
    # torch <= 1.7's wording of broadcast_all's refusal (HEmile/storchastic#86)
    ("ValueError: Input arguments must all be instances of numbers.Number or torch.tensor.",
     "dtype.distribution_param_not_tensor", ["numbers.Number or torch.tensor", "NumPy array"]),
    # a Petri-net ODE model calibrated with Pyro on data given as Python floats (ciemss/pyciemss#91)
    ("ValueError: Input arguments must all be instances of numbers.Number, torch.Tensor or objects implementing "
     "__torch_function__.\nTrace Shapes:\n Param Sites:\nSample Sites:",
     "dtype.distribution_param_not_tensor", ["numbers.Number, torch.Tensor", "Pyro's trace shapes"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_a_numpy_array_as_a_distribution_parameter_is_read_from_a_real_call():
    exc = raised(lambda: torch.distributions.Normal(np.zeros(3), 1.0))
    diagnosis = explainer.explain(exc)
    assert_names(diagnosis, "dtype.distribution_param_not_tensor", ["torch.Tensor", "__torch_function__"])


@pytest.mark.parametrize("text, not_rule", [
    # torch.distributions' value check of another shape (DLR-RM/stable-baselines3#1515): not FrEIA's block check
    ("ValueError: Value is not broadcastable with batch_shape+event_shape: torch.Size([64]) vs torch.Size([8]).",
     "shape.freia_block_input_shape"),
    # the value passed to log_prob, not a parameter (HEmile/storchastic#90)
    ("ValueError: The value argument to log_prob must be a Tensor", "dtype.distribution_param_not_tensor"),
    # mmsegmentation's registry (dongbo811/AFFormer#3): not fairchem's
    ("KeyError: \"EncoderDecoder: 'afformer_base is not in the models registry'\"", "other.ocp_registry_name_not_found"),
    # another tool's unused config keys, a warning (adobe-apiplatform/user-sync.py#4)
    ("2017-02-01 14:43:53 14292 WARNING config - Found unused keys: ['ldap'] in: <user-sync-config.yml>.directory.connectors",
     "other.nequip_unused_config_keys"),
    # None's length in a DataLoader's sampler (RangiLyu/nanodet#13): not NequIP's statistics
    ("  File \"/home/lw/anaconda3/envs/nanodet/lib/python3.7/site-packages/torch/utils/data/sampler.py\", line 102, "
     "in num_samples\n    return len(self.data_source)\nTypeError: object of type 'NoneType' has no len()",
     "data.nequip_statistics_field_none"),
    # a sample site's log_prob shape (BayraktarLab/cell2location#416): another Pyro check than the plate's param shape
    ("ValueError: at site \"data_target\", invalid log_prob shape", "shape.pyro_plate_param_shape"),
    # a first-order BackPACK quantity missing on a parameter (dayu11/Differentially-Private-Deep-Learning#6)
    ("n = params[0].grad_batch.shape[0] AttributeError: 'Parameter' object has no attribute 'grad_batch'",
     "autograd.backpack_missing_backprop_quantity"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_an_old_block_under_the_new_graph_keeps_its_call_argument_reading():
    # the other side of FrEIA's rework (vislearn/IB-INN#4): a keyword the old block's forward does not take
    assert explain_paste(corpus_message("r55_c.yaml#57")).rule == "other.module_call_arguments"


def test_torch_1_wording_of_the_size_mismatch_keeps_its_reading():
    # the full message of torch >= 1.0 (vishalned/MMEarth-train#6): checkpoint first, the cut pattern not involved
    text = ("RuntimeError: Error(s) in loading state_dict for FCMAE:\n\tsize mismatch for encoder.downsample_layers.0.1."
            "bias: copying a param with shape torch.Size([1, 80]) from checkpoint, the shape in current model is "
            "torch.Size([80]).")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "shape.state_dict_size"
    assert "the other way round" not in diagnosis.summary
