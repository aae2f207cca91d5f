"""other.call_signature_mismatch: Python's argument-binding TypeErrors (an unexpected keyword, a missing, extra or
doubled argument) in a PyTorch program, the fallback under the rules that name the callee's library. Live: the
callee found from the failing call's source without running anything, its parameters read from its code object, the
installed release that defines it, and the library that made the call. Pasted: the corpus's messages verbatim."""

from __future__ import annotations

import importlib.metadata

import pytest
import torch
import yaml

import explainer
from explainer.probes.environment.signatures import _caller_release, parameters

from conftest import (assert_left_alone, assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised,
                      rules_of, said)

RULE = "other.call_signature_mismatch"
TORCH = importlib.metadata.version("torch")
PYYAML = importlib.metadata.version("PyYAML")


# --- live: real calls into installed libraries ---------------------------------------------------------------


def test_a_keyword_the_installed_torch_removed():
    diagnosis = explain_fixture("fixtures/other/signature_removed_keyword.py")
    assert_names(diagnosis, RULE, ["`torch.optim.lr_scheduler.ReduceLROnPlateau(…)`", "`ReduceLROnPlateau.__init__`",
                                   "torch.optim.lr_scheduler", f"torch {TORCH} is installed", "`verbose`",
                                   "optimizer, mode=…, factor=…, patience=…", "The call is in your code"])
    assert diagnosis.facts["callee_dist"] == "torch" and diagnosis.facts["callee_counts_self"] is True
    assert "verbose" not in diagnosis.facts["callee_params"]
    assert diagnosis.location.line == 7
    assert any("drop `verbose=…`" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_pyyaml_6_made_loader_required():
    diagnosis = explain_fixture("fixtures/other/signature_missing_positional.py")
    assert_names(diagnosis, RULE, ["`yaml.load(…)`", f"PyYAML {PYYAML} is installed", "1 required positional argument",
                                   "'Loader'", "(stream, Loader)"])
    assert diagnosis.facts["callee_module"] == "yaml"
    assert "yaml.safe_load(f)" in diagnosis.fixes[0], diagnosis.fixes


def test_too_many_positional_arguments_name_the_counts_and_parameters():
    diagnosis = explain_fixture("fixtures/other/signature_too_many_positional.py")
    assert_names(diagnosis, RULE, ["`random_split(…)`", "takes from 2 to 3 positional arguments but 4 were given",
                                   "(dataset, lengths, generator=…)", f"torch {TORCH}"])
    assert diagnosis.facts["callee_module"] == "torch.utils.data.dataset"


def test_an_argument_given_twice():
    diagnosis = explain_fixture("fixtures/other/signature_multiple_values.py")
    assert_names(diagnosis, RULE, ["`yaml.dump(…)`", "`stream` twice", "data, stream=…, Dumper=…, **kwds"])


def test_a_namedtuple_that_gained_a_field():
    diagnosis = explain_fixture("fixtures/other/signature_namedtuple_fields.py")
    assert_names(diagnosis, RULE, ["`RasterizationSettings(…)`", "`RasterizationSettings.__new__`",
                                   "'antialiasing'", "(image_height, image_width, bg, antialiasing)",
                                   "signature_namedtuple_fields.py"])
    assert diagnosis.facts["callee_is_user"] is True


def test_torch_calls_a_user_callback_that_takes_no_batch():
    diagnosis = explain_fixture("fixtures/other/signature_callback_arguments.py")
    assert_names(diagnosis, RULE, ["`self.collate_fn(…)`", "`stack_batch`", "signature_callback_arguments.py:6",
                                   "takes 0 positional arguments but 1 was given", f"torch ({TORCH}) makes it",
                                   "calling your `stack_batch` back"])
    facts = diagnosis.facts
    assert facts["call_in_library"] is True and facts["caller_package"] == "torch" and facts["callee_is_user"]
    assert diagnosis.location.line == 11  # the user's line, not torch's fetch.py
    assert any("Give `stack_batch` the parameters torch passes" in fix for fix in diagnosis.fixes)


def test_one_library_calls_another_with_arguments_it_does_not_take():
    """torch's LambdaLR calls its lr_lambda with the epoch alone; PyYAML 6's load needs a Loader too: the call is
    torch's, the callee PyYAML's, and both installed releases are named."""
    optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    diagnosis = explainer.explain(raised(lambda: torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=yaml.load)))
    assert_names(diagnosis, RULE, [f"PyYAML {PYYAML} is installed", f"torch ({TORCH}) makes it",
                                   "written for another release of PyYAML than the installed " + PYYAML,
                                   "'Loader'"])
    assert diagnosis.facts["caller_dist"] == "torch" and diagnosis.facts["callee_dist"] == "PyYAML"


def test_a_misspelt_keyword_gets_the_close_parameter():
    model = torch.nn.Linear(2, 2)
    diagnosis = explainer.explain(raised(lambda: torch.optim.SGD(model.parameters(), lr=0.1, weight_decy=1e-4)))
    assert_names(diagnosis, RULE, ["`SGD.__init__`", "`weight_decy`", "closest parameters are `weight_decay`",
                                   "*, maximize=…"])
    assert any(fix.startswith("If `weight_decy` is a misspelling, use `weight_decay`") for fix in diagnosis.fixes)


class _Base:
    def __init__(self, size, *, bias=True):
        self.size = size


class _Layer(_Base):
    def __init__(self, size, **kwargs):
        super().__init__(size, **kwargs)


class _OldStyle(_Base):
    def __init__(self, size, **kwargs):
        super(_OldStyle, self).__init__(size, **kwargs)


@pytest.mark.parametrize("cls", [_Layer, _OldStyle])
def test_super_init_is_resolved_and_the_forwarded_keywords_named(cls):
    diagnosis = explainer.explain(raised(lambda: cls(4, concat=True)))
    assert_names(diagnosis, RULE, ["`_Base.__init__`", "`concat`", "(size, *, bias=…)"])
    assert diagnosis.facts["call_forwards_kwargs"] is True


def test_nothing_of_the_users_objects_runs():
    """The callee is reached through a property of an object with __getattr__: the call itself ran the property once;
    the diagnosis runs neither again (the property is not a function, so no parameters are claimed)."""
    touched = []

    def build(width):
        return width

    class Lazy:
        def __getattr__(self, name):
            touched.append(name)
            raise AttributeError(name)

        @property
        def build(self):
            touched.append("build")
            return build

    lazy = Lazy()
    error = raised(lambda: lazy.build(1, height=2))
    touched.clear()
    diagnosis = explainer.explain(error)
    assert touched == []
    assert diagnosis.rule == RULE and "callee_params" not in diagnosis.facts
    assert "`height`" in diagnosis.summary


def test_parameters_are_read_from_the_code_object():
    def f(a, b=1, /, c=2, *args, d, e=3, **kw):
        return a

    shown, keywords = parameters(f, bound=False)
    assert shown == ["a", "b=…", "c=…", "*args", "d", "e=…", "**kw"]
    assert keywords == ["c", "d", "e"]


def test_the_calling_library_is_named_from_its_path():
    found = _caller_release("/h2/x/lib/python3.7/site-packages/torch_geometric/nn/conv/sage_conv.py")
    assert found["call_in_library"] is True and found["caller_package"] == "torch_geometric"
    assert _caller_release(torch.__file__)["caller_dist"] == "torch"


# --- pasted: the corpus's real messages ----------------------------------------------------------------------

CORPUS = [
    ("r24_a.yaml#71", ["`LoraConfig.__init__()`", "`loftq_config`", "hands on `**kwargs`"]),
    ("r24_b.yaml#30", ["`concat`", "the constructor of `SAGEConv`'s base class", "hands it `concat`"]),
    ("r24_b.yaml#31", ["`learn_adj`", "hands on `**kwargs`"]),
    ("r24_a.yaml#57", ["`__init__()`", "takes 1 positional argument but 2 were given", "a method counts `self`"]),
    ("r13_a.yaml#22", ["`__new__()`", "2 required positional arguments, 'depth_threshold' and 'iteration'",
                       "namedtuple's fields"]),
    ("r23_b.yaml#28", ["`wrapped()`", "1 required positional argument, 'X'"]),
    ("r24_a.yaml#125", ["`AutoModel.build_model()`", "'self'"]),
    ("r23_b.yaml#79", ["`forward()`", "`img_metas` twice"]),
    ("modern.yaml#98", ["`weights_only`"]),
]


@pytest.mark.parametrize(("where", "values"), CORPUS, ids=[w for w, _ in CORPUS])
def test_corpus_messages_name_their_values(where, values):
    assert_names(explain_paste(corpus(where)), RULE, values)


def test_a_pasted_loader_error_gets_the_pyyaml_fix():
    diagnosis = explain_paste("TypeError: load() missing 1 required positional argument: 'Loader'")
    assert diagnosis.rule == RULE and "PyYAML 6 made `Loader` a required argument" in said(diagnosis)


@pytest.mark.parametrize(("where", "rule"), [
    ("r16_b.yaml#30", "other.keyword_newer_torch"),          # torch's own keyword, named by release
    ("r20_a.yaml#10", "other.hf_trainer_keyword_mismatch"),  # transformers' Trainer
    ("r17_b.yaml#90", "other.trainer_argument_removed"),     # Lightning's removed Trainer arguments
    ("r9_a.yaml#2", "other.module_call_arguments"),          # a module's forward
    ("r15_a.yaml#83", "other.torch_call_missing_argument"),  # torch's C++ argument parser
    ("r15_a.yaml#31", "other.library_call_unexpected_keyword"),
    ("r20_b.yaml#44", "other.plateau_step_metrics"),
])
def test_specific_rules_keep_their_messages(where, rule):
    assert rules_of(corpus(where))[:1] == [rule]


KERAS_CALL = """File "/home/enx/anaconda3/envs/GEM-env/lib/python3.6/site-packages/keras/engine/base_layer.py", line 489, in __call__
    output = self.call(inputs, **kwargs)
TypeError: call() got an unexpected keyword argument 'mode'"""  # palash1992/GEM#84


def test_another_frameworks_call_is_not_explained_as_pytorch():
    assert_left_alone(KERAS_CALL, RULE)
    diagnosis = next(iter(explainer_stream(KERAS_CALL)))
    assert diagnosis.rule is None and "keras" in diagnosis.summary


def explainer_stream(text):
    import io

    from explainer.cli.explain import explain_stream

    return explain_stream(io.StringIO(text))


@pytest.mark.parametrize("text", [
    'TypeError: new_ones() missing 1 required positional arguments: "size"',  # torch's C++ parser: double quotes
    "TypeError: list.append() takes exactly one argument (2 given)",          # a builtin's own wording
    "NameError: name 'x' is not defined",
])
def test_other_wordings_are_left_alone(text):
    assert_left_alone(text, RULE)
