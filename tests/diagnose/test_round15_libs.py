"""Round 15 `other` errors of libraries built on torch: Lightning's self.log outside a hook, its fit minimum and its
older EarlyStopping wordings, yacs configs (detectron2, fvcore, pysot), AllenNLP's ConfigurationError, detectron2's
proposals assertion, DGL's FFI type check, and torch's own argument parser reporting a missing argument (the one of
these CPU torch raises, live in a fixture)."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, place, raised, rules_of


CORPUS = [
    ("r15_a.yaml#1", "other.lightning_log_outside_hook", ["`self.log()`", "not managed by the Trainer control flow"]),
    ("r15_a.yaml#2", "other.lightning_hook_missing", ["`training_step()`", "`configure_optimizers()`", "Trainer.fit"]),
    ("r15_a.yaml#3", "other.lightning_monitor_missing", ["`val_loss`", "['loss', 'l_mle', 'l_length', 'logdet']"]),
    ("r15_a.yaml#45", "other.lightning_monitor_missing", ["`val_loss`", "`loss`, `train_loss`", "Lightning 0.7-0.9"]),
    ("r15_a.yaml#47", "other.lightning_monitor_missing",
     ["`val_loss`", "avg_val_loss_total,avg_val_jacc10,avg_val_ce", "pt_callbacks.py:128", "stops training"]),
    ("r15_a.yaml#4", "other.detectron2_batched_inputs_key",
     ["rcnn.py:206 in inference", "no proposal generator", "PrecomputedProposals"]),
    ("r15_a.yaml#15", "other.dgl_ffi_type_check", ["packed_func_ext.h:117", "list<graph.Graph>", "a List"]),
    ("r15_a.yaml#24", "other.yacs_config_key", ["MODEL.RESNETS.RADIX", "add_*_config(cfg)"]),
    ("r15_a.yaml#25", "other.yacs_config_key", ["MODEL.ROI_MASK_HEAD.DCT_VECTOR_DIM"]),
    ("r15_a.yaml#35", "other.allennlp_configuration_error",
     ['no "type" at "dataset_reader."', 'key "type" is required at location "dataset_reader."']),
    ("r15_a.yaml#83", "other.torch_call_missing_argument", ['new_ones()', '"size"', "`torch.ones_like(x)`"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


def test_the_allennlp_error_is_placed_at_params_pop():
    d = explain_paste(corpus("r15_a.yaml#35"))
    assert place(d.location)[:3] == ("params.py", 96, "pop"), d.location


def test_the_detectron2_assertion_is_placed_at_the_meta_architectures_line():
    d = explain_paste(corpus("r15_a.yaml#4"))
    assert place(d.location) == ("rcnn.py", 206, "inference", 'assert "proposals" in batched_inputs[0]'), d.location


# The same families in other threads' words.
PASTED = [
    ("Exception[pytorch_lightning]: You are trying to `self.log()` but it is not managed by the `Trainer` control flow",
     "other.lightning_log_outside_hook", ["not managed by the Trainer control flow", "nested in another"]),
    ("MisconfigurationException: You are trying to `self.log()` but the loop's result collection is not registered "
     "yet.", "other.lightning_log_outside_hook", ["loop's result collection", "`predict_step`"]),
    # yacs under fvcore, the value type check (with values, from the command line), and a frozen config
    ("  File \"/usr/local/lib/python3.6/dist-packages/yacs-0.1.6-py3.6.egg/yacs/config.py\", line 473, in "
     "_merge_a_into_b\n    raise KeyError(\"Non-existent config key: {}\".format(full_key))\nKeyError: "
     "'Non-existent config key: MODEL.MASKIOU_ON'", "other.yacs_config_key", ["MODEL.MASKIOU_ON"]),
    ("ValueError: Type mismatch (<class 'tuple'> vs. <class 'int'>) with values ((0,) vs. 0) for config key: "
     "SOLVER.gpu", "other.yacs_config_key", ["SOLVER.gpu", "<class 'tuple'>", "<class 'int'>", "0 where the default "
                                             "is (0,)"]),
    ("ValueError: Type mismatch (<class 'str'> vs. <class 'list'>) with values (COCO vs. ['VID', 'YOUTUBEBB', 'COCO', "
     "'DET']) for config key: DATASET.NAMES", "other.yacs_config_key", ["DATASET.NAMES", "<class 'list'>"]),
    ("AttributeError: Attempted to set WEIGHTS to /checkpoints/FRCN-V2-39-3x/model_final.pth, but CfgNode is immutable",
     "other.yacs_config_key", ["`WEIGHTS`", "/checkpoints/FRCN-V2-39-3x/model_final.pth", "`cfg.freeze()`"]),
    # AllenNLP's registry in its 0.x and 1.x+ words, and a name registered twice
    ("allennlp.common.checks.ConfigurationError: srl is not a registered name for Model. You probably need to use the "
     "--include-package flag to load your custom code.", "other.allennlp_configuration_error",
     ['type "srl"', "registered as Model", "allennlp-models"]),
    ("allennlp.common.checks.ConfigurationError: \"constituency_parser not in acceptable choices for model.type: "
     "['bidaf', 'decomposable_attentio n', 'srl', 'simple_tagger']", "other.allennlp_configuration_error",
     ['type "constituency_parser" at model.type', "'simple_tagger'"]),
    ("ConfigurationError: 'Cannot register simple_tagger as Model; name already in use for SimpleTagger'",
     "other.allennlp_configuration_error", ['"simple_tagger"', "SimpleTagger holds it"]),
    # DGL 0.4's homogeneous-graph API given a heterograph
    ("DGLError: [23:05:38] /opt/dgl/include/dgl/packed_func_ext.h:117: Check failed: ObjectTypeChecker<TObjectRef>::"
     "Check(sptr.get()): Expected type graph.Graph but get graph.HeteroGraph", "other.dgl_ffi_type_check",
     ["graph.Graph", "graph.HeteroGraph", "packed_func_ext.h:117"]),
]


@pytest.mark.parametrize(("message", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_pasted_messages_name_their_values(message, rule, values):
    assert_names(explain_paste(message), rule, values)


# Near misses that must stay unexplained (or keep their own rule).
NOT_CLAIMED = [
    # Keras' EarlyStopping, worded as Lightning 0.5 copied it
    "WARNING:tensorflow:Early stopping conditioned on metric `val_loss` which is not available. Available metrics "
    "are: loss,accuracy",
    # TVM's FFI check, from which DGL's derives
    "Check failed: ObjectTypeChecker<TObjectRef>::Check(ptr) == false: Expect Array[Operation] but get Array",
    # another ConfigurationError of AllenNLP (a list where a dict belongs)
    "allennlp.common.checks.ConfigurationError: from_params was passed a `params` object that was not a `Params`. "
    "This probably indicates malformed parameters in a configuration file",
    # a bare assertion of Detectron's own tool
    "  File \"/content/coco/PythonAPI/Detectron/tools/infer.py\", line 183, in check_args\n    assert "
    "len(args.models_to_run) % 2 == 0\nAssertionError",
]


@pytest.mark.parametrize("message", NOT_CLAIMED, ids=range(len(NOT_CLAIMED)))
def test_near_misses_are_not_claimed(message):
    assert not any(rules_of(message)), rules_of(message)


@pytest.mark.parametrize("message", [
    "TypeError: ModelNet: ModelNet.__init__() missing 1 required positional argument: 'num_classes'",
    "TypeError: __new__() missing 2 required positional arguments: 'depth_threshold' and 'iteration'",
])
def test_python_missing_arguments_get_only_the_generic_argument_rule(message):
    # Python's own missing-argument wording, any function's (a user's class here): no library's rule claims it
    assert rules_of(message) == ["other.call_signature_mismatch"], rules_of(message)


def test_a_libdgl_check_of_a_corrupt_file_is_not_a_type_check():
    text = ("dgl._ffi.base.DGLError: [00:56:20] /opt/dgl/src/graph/serialize/graph_serialize.cc:128: Check failed: "
            "magicNum == kDGLSerializeMagic (2336927755350992246 vs. 15937764024707752255) : Invalid DGL files")
    assert "other.dgl_ffi_type_check" not in rules_of(text)


# torch's argument parser, live: the tensor the method was called on is named.
def test_new_ones_without_a_size_names_the_tensor_and_the_like_function():
    d = explain_fixture("fixtures/other/torch_call_missing_argument.py")
    assert_names(d, "other.torch_call_missing_argument", ["`mask.new_ones()`", '"size"', "`torch.ones_like(mask)`"])
    assert any("mask.new_ones(mask.shape)" in fix for fix in d.fixes), d.fixes


@pytest.mark.parametrize(("call", "values"), [
    (lambda: torch.zeros(*[]), ['"size"', "empty sequence"]),
    (lambda: torch.ones(2, 3).permute(), ['"dims"', "empty sequence"]),
    (lambda: torch.full(), ['2 of its required arguments', '"size", "fill_value"']),
    (lambda: torch.gather(torch.ones(3), 0), ['"index"', "fewer positional arguments"]),
], ids=["zeros", "permute", "full", "gather"])
def test_torch_functions_called_without_arguments(call, values):
    import explainer

    d = explainer.explain(raised(call))
    assert_names(d, "other.torch_call_missing_argument", values)
