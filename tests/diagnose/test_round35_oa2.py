"""Round-35 wordings for other (second wave, part one: Hydra, LightningCLI, Accelerate with DeepSpeed, SB3's
SubprocVecEnv, AIMET, featomic, tensorboard-pytorch, torch.cat given one tensor, pybind11 signatures over several
lines): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with
the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r35_a.yaml#56", "other.featomic_precomputed_gradients_missing", ["positions", "requires_grad"]),
    ("r35_b.yaml#36", "other.tensorboard_add_graph_id2name", ["id2name", "graph.py:12", "4654832816"]),
    ("r35_b.yaml#46", "other.accelerate_mixed_precision_deepspeed_conflict", ["bf16", "fp16"]),
    ("r35_b.yaml#51", "other.hydra_error_locating_target",
     ["mattergen.common.gemnet.gemnet.GemNetT", "lightning_module.diffusion_module.model.gemnet"]),
    ("r35_b.yaml#55", "other.lightning_cli_config_check_failed", ["optimizer", "torch.optim.Adam"]),
    ("r35_c.yaml#20", "other.sb3_subproc_vec_env_eoferror", ["subproc_vec_env.py:135", "EOFError", "reset"]),
    ("r35_c.yaml#21", "other.sb3_subproc_vec_env_eoferror", ["subproc_vec_env.py:145", "EOFError"]),
    ("r35_c.yaml#22", "other.cat_tensor_not_sequence", ["cat()", "TracedTensor", "int"]),
    ("r35_c.yaml#25", "other.aimet_custom_marker_not_iterable", ["CustomMarker"]),
    ("r35_c.yaml#26", "other.aimet_activation_input_not_tensor", ["torch.Tensor", "<class 'list'>"]),
    ("r35_c.yaml#27", "other.extension_incompatible_arguments", ["quantizeDequantize()", "TfEncoding"]),
    ("r34_a.yaml#12", "other.extension_incompatible_arguments", ["k_nearest_neighbors()", "numpy.ndarray"]),
    ("r35_b.yaml#50", "other.pickle_local_object", ["unload_records.<locals>.inner", "gpus=2", "ddp_spawn"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # Hydra 1.1's one-line form (cdvae#59), 1.2's "see chained exception above" (lightning-hydra-template#350)
    ("hydra.errors.InstantiationException: Error locating target 'cdvae.pl_data.datamodule.CrystDataModule', set env "
     "var HYDRA_FULL_ERROR=1 to see chained exception. full_key: data.datamodule",
     "other.hydra_error_locating_target", ["cdvae.pl_data.datamodule.CrystDataModule", "data.datamodule"]),
    ("Error locating target 'src.models.xxx_module.XXXLitModule', see chained exception above.\nfull_key: model",
     "other.hydra_error_locating_target", ["src.models.xxx_module.XXXLitModule", "`model`"]),
    # the same Accelerate check without backticks (transformers#39856)
    ("ValueError: --mixed_precision arg cannot be set to bf16 when fp16 is set in the DeepSpeed config file.",
     "other.accelerate_mixed_precision_deepspeed_conflict", ["bf16", "fp16"]),
    # jsonargparse 4.x's wording (pytorch-lightning#20722)
    ('argparse.ArgumentError: Parser key "lr_scheduler":\n  Does not validate against any of the Union subtypes\n'
     "  Subtypes: [<class 'NoneType'>, <class 'torch.optim.lr_scheduler.LRScheduler'>, <class "
     "'lightning.pytorch.cli.ReduceLROnPlateau'>]\n  Errors:\n    - Expected a <class 'NoneType'>\n"
     "    - Problem with given class_path 'torch.optim.lr_scheduler.CosineAnnealingLR':\n"
     '        Parser key "T_max":\n          Expected a <class \'int\'>. Got value: ${trainer.max_epochs}',
     "other.lightning_cli_config_check_failed", ["lr_scheduler", "torch.optim.lr_scheduler.CosineAnnealingLR"]),
    # torch.cat given a tensor (comfyui-animatediff#44), tensors as separate arguments (libfacedetection.train#30),
    # torch 0.1's wording (pytorch#1332)
    ("cat() received an invalid combination of arguments - got (Tensor, int), but expected one of:\n"
     "* (tuple of Tensors tensors, int dim, *, Tensor out)\n* (tuple of Tensors tensors, name dim, *, Tensor out)",
     "other.cat_tensor_not_sequence", ["cat()", "(Tensor, int)"]),
    ("TypeError: cat() received an invalid combination of arguments - got (Tensor, Tensor, int), but expected one of:\n"
     " * (tuple of Tensors tensors, name dim, *, Tensor out)\n * (tuple of Tensors tensors, int dim, *, Tensor out)",
     "other.cat_tensor_not_sequence", ["(Tensor, Tensor, int)", "separate arguments"]),
    ("TypeError: cat received an invalid combination of arguments - got (torch.FloatTensor, torch.FloatTensor, "
     "out=torch.FloatTensor), but expected one of:\n * (sequence[torch.FloatTensor] seq)\n"
     " * (sequence[torch.FloatTensor] seq, int dim)", "other.cat_tensor_not_sequence", ["torch.FloatTensor"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_cat_fix_names_the_sequence():
    diagnosis = explain_paste(corpus_message("r35_c.yaml#22"))
    assert "torch.cat([a, b], dim=1)" in said(diagnosis)


@pytest.mark.parametrize("text, not_rule", [
    # a list given to cat (pytorch-dnc#29): its elements differ, not a lone tensor
    ("TypeError: cat received an invalid combination of arguments - got (list, int), but expected one of:\n"
     " * (sequence[torch.cuda.FloatTensor] seq)\n * (sequence[torch.cuda.FloatTensor] seq, int dim)\n"
     "      didn't match because some of the arguments have invalid types: (list, int)",
     "other.cat_tensor_not_sequence"),
    # a structured-config key error of Hydra (HN-UnifiedSourceFilterGAN#2), not an import of a _target_
    ("Key 'chdir' not in 'JobConf'\n    full_key: hydra.job.chdir\n    reference_type=JobConf\n    object_type=JobConf",
     "other.hydra_error_locating_target"),
    # LightningCLI's unknown key (pytorch-lightning#18183), not a rejected value
    ("error: 'Configuration check failed :: No action for destination key \"trainer.precision\" to check its value.'",
     "other.lightning_cli_config_check_failed"),
    # another library's pybind11 binding (exatn#29): no torch tensor, no NumPy array in its signature
    ("TypeError: setTensorOperand(): incompatible function arguments. The following argument types are supported:\n"
     "    1. (self: exatn._pyexatn.TensorOperation, arg0: exatn::numerics::Tensor, arg1: bool) -> None\n\n"
     "Invoked with: <exatn._pyexatn.TensorOpCreate object at 0x7f272d4af3b0>, "
     "<exatn._pyexatn.Tensor object at 0x7f272d4af2d0>", "other.extension_incompatible_arguments"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
