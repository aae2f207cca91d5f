"""Round-57 wordings from learning beyond one supervised dataset (torchmeta's class lookup with class augmentations,
Dassl's missing image view, a research registry's missing model, NCCL's watchdog teardown line, DeiT's distillation
loss given one output, DomainBed's empty zip of training loaders, DINO's head keys left out of a backbone, detectron2's
exploded losses and its "Inf/Nan" check, a teacher's soft labels in an old CrossEntropyLoss, multiprocessing's start
method set twice, a meta-learner's unused LSTM parameter): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named the way the coverage judge reads them;
other wordings of the same families (from the threads cited, or raised by torch) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r57_b.yaml#4", "data.torchmeta_class_index_range", ['cifar100/base.py", line 53', "__getitem__"]),
    ("r57_b.yaml#15", "data.dassl_batch_view_missing", ["img2", "batch_x"]),
    ("r57_b.yaml#20", "other.registry_dict_key_missing", ["'moco'", 'models.py", line 20']),
    ("r57_b.yaml#32", "distributed.nccl_timeout", ["ALLGATHER", "Timeout(ms)=1800000", "ProcessGroupNCCL.cpp:414"]),
    ("r57_b.yaml#33", "other.deit_distillation_single_output", ['losses.py", line 43', 'engine.py", line 39']),
    ("r57_b.yaml#39", "data.domainbed_no_training_env", ['train.py", line 228', "train_minibatches_iterator"]),
    ("r57_b.yaml#41", "data.incompatible_keys_report", ["head.mlp.0.weight", "head.last_layer.weight_g"]),
    ("r57_b.yaml#44", "numerics.detection_boxes_nonfinite", ["4.02e+06", "3.218e+06"]),
    ("r57_b.yaml#55", "dtype.target_long", ["Long", "Float", "outputs_teacher"]),
    ("r57_b.yaml#64", "other.mp_context_already_set", ["context has already been set"]),
    ("r57_b.yaml#67", "numerics.detection_boxes_nonfinite", ["Inf/Nan"]),
    ("r57_b.yaml#68", "autograd.grad_unused_input", ['metaLearner.py", line 174', "torch.autograd.grad"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # the class index ran past the label list: augmented classes, looked up without the modulo
    assert_names(explain_paste(corpus_message("r57_b.yaml#4")), "data.torchmeta_class_index_range",
                 ["self.labels[index]", "class augmentations", "index % self.num_classes"])
    # 'img2' is filled only by a list of transforms; K_TRANSFORMS makes a list under 'img'
    assert_names(explain_paste(corpus_message("r57_b.yaml#15")), "data.dassl_batch_view_missing",
                 ["custom_tfm_train", "K_TRANSFORMS", "batch['img'][0]"])
    # the name came from the config through models.make
    assert_names(explain_paste(corpus_message("r57_b.yaml#20")), "other.registry_dict_key_missing",
                 ["`models.make(config['model'], **config['model_args'])`", "@register"])
    # the teardown line is the watchdog's abort after the timeout, not a second failure
    assert_names(explain_paste(corpus_message("r57_b.yaml#32")), "distributed.nccl_timeout",
                 ["logged at ProcessGroupNCCL.cpp:414", "not a second failure"])
    # a plain ViT where a DistilledVisionTransformer is needed
    assert_names(explain_paste(corpus_message("r57_b.yaml#33")), "other.deit_distillation_single_output",
                 ["deit_small_distilled_patch16_224", "eval mode"])
    # zip over no loaders: no training environment
    assert_names(explain_paste(corpus_message("r57_b.yaml#39")), "data.domainbed_no_training_env",
                 ["zip(*train_loaders)", "--test_envs", "one level too deep"])
    # only the unexpected list is shown, and it is DINO's head
    assert_names(explain_paste(corpus_message("r57_b.yaml#41")), "data.incompatible_keys_report",
                 ["missing_keys (not shown)", "DINOHead", "nn.Identity()"])
    # losses of millions at iteration 1: wrong from the start, not diverged over many steps
    assert_names(explain_paste(corpus_message("r57_b.yaml#44")), "numerics.detection_boxes_nonfinite",
                 ["iter 1", "wrong from the start", "detectron2 0.3"])
    # a teacher's soft labels in a CrossEntropyLoss older than 1.10; the fix does not cast them
    diagnosis = explain_paste(corpus_message("r57_b.yaml#55"))
    assert_names(diagnosis, "dtype.target_long", ["PyTorch 1.10", "SoftTargetCrossEntropy", "stops after 'for argument'"])
    assert not any("target.long()" in fix for fix in diagnosis.fixes), diagnosis.fixes
    # torch 0.3's "Variables", and every parameter of the LSTM asked for
    assert_names(explain_paste(corpus_message("r57_b.yaml#68")), "autograd.grad_unused_input",
                 ["`self.lstm2.parameters()`", "torch 0.3's wording"])


def test_a_second_start_method_raised_by_multiprocessing_is_read():
    # the fixture sets the start method, makes a lock, then asks for another method
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "other" / "mp_context_already_set.py"
    run = subprocess.run([sys.executable, str(fixture)], capture_output=True, text=True, timeout=120)
    assert "context has already been set" in run.stderr, run.stderr
    assert_names(explain_paste(run.stderr), "other.mp_context_already_set",
                 ['`mp.set_start_method("forkserver")`', "context.py:", "force=True"],
                 " ".join([explain_paste(run.stderr).summary, *explain_paste(run.stderr).fixes]))


@pytest.mark.parametrize("text, rule, values", [
    # the same DomainBed step on OfficeHome, the dataset downloaded wrongly (facebookresearch/DomainBed#147)
    ("Traceback (most recent call last):\n  File \"/home/users/.conda/envs/domainbed/lib/python3.8/runpy.py\", line 194, "
     "in _run_module_as_main\n    return _run_code(code, main_globals, None,\n  File \"/home/users/.conda/envs/domainbed/"
     "lib/python3.8/runpy.py\", line 87, in _run_code\n    exec(code, run_globals)\n  File \"/data/projects/domainbed/"
     "scripts/train.py\", line 225, in <module>\n    for x,y in next(train_minibatches_iterator)]\nStopIteration",
     "data.domainbed_no_training_env", ["train.py:225", "train_minibatches_iterator"]),
    # torch >= 0.4's wording, from a MAML step with several inner updates (tristandeleu/pytorch-meta#91)
    ("`  File \"/gradient_based.py\", line 51, in gradient_update_parameters\n    create_graph=not first_order)\n"
     "  File \"/gscratch/cse/xliu0/anaconda3/envs/torch-gpu/lib/python3.6/site-packages/torch/autograd/__init__.py\", "
     "line 158, in grad\n    inputs, allow_unused)\nRuntimeError: One of the differentiated Tensors appears to not have "
     "been used in the graph. Set allow_unused=True if this is the desired behavior.`",
     "autograd.grad_unused_input", ["torch.autograd.grad", "allow_unused=True"]),
    # the whole message, with its argument, from a torch < 1.10 run (WhirlFirst/STEM#3)
    ("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #2 'target' in call to "
     "_thnn_nll_loss_forward", "dtype.target_long", ["_thnn_nll_loss_forward", "#2 'target'"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_the_other_wordings_keep_their_own_readings():
    # a Tensors message is not told it comes from torch 0.3
    text = ("RuntimeError: One of the differentiated Tensors appears to not have been used in the graph. Set "
            "allow_unused=True if this is the desired behavior.")
    assert "torch 0.3" not in explain_paste(text).summary
    # the whole Long/Float message keeps the class-index reading and its cast
    diagnosis = explain_paste("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument "
                              "#2 'target' in call to _thnn_nll_loss_forward")
    assert "for argument'" not in diagnosis.summary
    assert any("target.long()" in fix for fix in diagnosis.fixes), diagnosis.fixes


LM_EVAL_REGISTRY = (
    "```\nTraceback (most recent call last):\nSelected Tasks: ['hellaswag', 'winogrande', 'arc_challenge', 'boolq', "
    "'openbookqa', 'arc_easy', 'piqa']\n  File \"/ssddata/zchenhj/LMFlow/utils/lm_evaluator.py\", line 108, in <module>\n"
    "    main()\n  File \"/ssddata/zchenhj/LMFlow/utils/lm_evaluator.py\", line 79, in main\n    results = "
    "evaluator.simple_evaluate(\n  File \"/ssddata/zchenhj/miniconda3/envs/lmflow/lib/python3.9/site-packages/lm_eval/"
    "utils.py\", line 161, in _wrapper\n    return fn(*args, **kwargs)\n  File \"/ssddata/zchenhj/miniconda3/envs/lmflow/"
    "lib/python3.9/site-packages/lm_eval/evaluator.py\", line 64, in simple_evaluate\n    lm = lm_eval.models.get_model("
    "model).create_from_arg_string(\n  File \"/ssddata/zchenhj/miniconda3/envs/lmflow/lib/python3.9/site-packages/lm_eval/"
    "models/__init__.py\", line 16, in get_model\n    return MODEL_REGISTRY[model_name]\nKeyError: 'hf-causal-experimental'"
    "\n[2024-05-08 16:53:38,340] [INFO] [launch.py:347:main] Process 4024922 exits successfully.\n```")


@pytest.mark.parametrize("text, not_rule", [
    # lm_eval's own registry lookup, no call on it (OptimalScale/LMFlow#816): other.lm_eval_model_not_registered's
    (LM_EVAL_REGISTRY, "other.registry_dict_key_missing"),
    # CUDA in a forked child (facebookresearch/pycls#183): not a start method set twice
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
     "'spawn' start method", "other.mp_context_already_set"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_dataloader_that_ran_out_keeps_its_reading():
    # a plain iterator past its epoch (r32_b#45, amdegroot/ssd.pytorch#337): not DomainBed's empty zip
    assert explain_paste(corpus_message("r32_b.yaml#45")).rule == "data.dataloader_exhausted"


def test_a_users_own_few_shot_index_error_stays_a_control():
    # MetaR-CNN's own metadata builder (r57_b#5, a control): no torchmeta frame
    assert_left_alone(corpus_message("r57_b.yaml#5"), "*")


def test_a_whole_incompatible_keys_tuple_keeps_its_first_reading():
    # Ark's printed tuple (jlianglab/Ark#1) names its missing keys: not the lone-list reading
    text = ("_IncompatibleKeys(missing_keys=['head.weight', 'head.bias'], unexpected_keys=['projector.0.weight', "
            "'projector.0.bias', 'projector.2.weight', 'projector.2.bias', 'omni_heads.0.weight', 'omni_heads.0.bias', "
            "'omni_heads.1.weight', 'omni_heads.1.bias', 'omni_heads.2.weight', 'omni_heads.2.bias', 'omni_heads.3.weight', "
            "'omni_heads.3.bias', 'omni_heads.4.weight', 'omni_heads.4.bias', 'omni_heads.5.weight', 'omni_heads.5.bias'])")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "data.incompatible_keys_report"
    assert "not shown" not in diagnosis.summary and "head.weight" in diagnosis.summary
