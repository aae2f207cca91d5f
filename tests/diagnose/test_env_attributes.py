"""other.object_has_no_attribute and other.name_not_defined: Python's own AttributeError on an object (not NoneType,
not a module) and NameError / UnboundLocalError, the generic fallbacks under every specific rule. Live: the object
(AttributeError's `obj` or the failing line's expression read from the frame), its type, a tuple's tensors, the
methods of the user's class that set the attribute; where the file binds a missing name (a swallowed import, the
assignment that makes a name local). Pasted: the corpus's messages verbatim."""

from __future__ import annotations

import ast

import pytest

from explainer.probes.environment.attributes import CLOSE_CUTOFF, MAX_CLOSE, known_names, setter_facts
from explainer.probes.environment.releases import close_names
from explainer.probes.environment.names import bindings

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, rules_of

ATTR = "other.object_has_no_attribute"
NAME = "other.name_not_defined"


# --- live: AttributeError on an object ----------------------------------------------------------------------------

def test_an_attribute_set_only_in_another_method():
    diagnosis = explain_fixture("fixtures/other/attribute_set_in_method.py")
    assert_names(diagnosis, ATTR, ["`self` is a `__main__.Trainer`", "attribute_set_in_method.py:15",
                                   "set only in fit() (attribute_set_in_method.py:10)", "`__init__` never sets it"])
    assert diagnosis.facts["attr_init_sets"] is False
    assert "Set `self.use_amp` in `__init__`" in diagnosis.fixes[0]


def test_a_tuple_of_tensors_moved_as_one():
    diagnosis = explain_fixture("fixtures/other/attribute_tuple_of_tensors.py")
    assert_names(diagnosis, ATTR, ["`batch` is a `tuple`", "it holds 2 items",
                                   "tensor (4, 3) float32 cpu; tensor (4,) int64 cpu", "`.to` exists only on each"])
    assert diagnosis.facts["attr_tensor_items"] == 2
    assert "torch.stack" in diagnosis.fixes[0]


def test_a_numpy_method_on_a_tensor():
    diagnosis = explain_fixture("fixtures/other/attribute_numpy_method.py")
    assert_names(diagnosis, ATTR, ["`labels` is a `torch.Tensor`", "`.astype` is a NumPy",
                                   "`.to(torch.float32)`"])
    assert not any("Install the torch release" in fix for fix in diagnosis.fixes)


def test_close_names_and_setters_read_without_running_code():
    class Guarded:
        def __getattr__(self, name):  # a probe that called this would fail the test
            raise AssertionError("__getattr__ ran")

        @property
        def use_amp_flag(self):
            raise AssertionError("property ran")

    guarded = Guarded()
    names = known_names(guarded)  # reads __dict__ tables only: neither __getattr__ nor the property runs
    assert "use_amp_flag" in names
    assert close_names("use_amp", names, cutoff=CLOSE_CUTOFF, limit=MAX_CLOSE) == ["use_amp_flag"]
    assert "attr_setters" not in setter_facts(Guarded, "use_amp")


# --- live: NameError / UnboundLocalError --------------------------------------------------------------------------

def test_a_forgotten_import():
    diagnosis = explain_fixture("fixtures/other/name_forgot_import.py")
    assert_names(diagnosis, NAME, ["`F` is not defined at name_forgot_import.py:12 in forward",
                                   "`import torch.nn.functional as F`", "no import or assignment of it anywhere"])
    assert diagnosis.fixes[0] == "Add `import torch.nn.functional as F` at the top of the file."


def test_an_unbound_local_hiding_a_global():
    diagnosis = explain_fixture("fixtures/other/name_unbound_local.py")
    assert_names(diagnosis, NAME, ["`total_loss` is a local variable of `train_step`", "on line 9",
                                   "the failing line itself is that assignment", "the global `total_loss`"])
    assert diagnosis.facts["name_global_exists"] is True
    assert any("global total_loss" in fix for fix in diagnosis.fixes)


def test_an_import_swallowed_by_try_except():
    diagnosis = explain_fixture("fixtures/other/name_import_swallowed.py")
    assert_names(diagnosis, NAME, ["`import deepspeed_not_installed_here as deepspeed` (line 5)",
                                   "`except ImportError` hides the failure"])
    assert diagnosis.facts["name_swallowed_line"] == 5


def test_bindings_say_where_a_name_is_bound():
    tree = ast.parse("def setup():\n    import numpy as np\n\nif FLAG:\n    x = 1\n\ndef use():\n    return np.zeros(1)\n")
    found = {b["line"]: b for b in bindings(tree, "np")}
    assert found[2]["function"] == "setup" and found[2]["kind"] == "import"
    assert bindings(tree, "x")[0]["guard"] == "if"


# --- pasted: the corpus ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where, rule, said_text", [
    ("r7_a.yaml#50", ATTR, "'Separation' object has no attribute `use_amp`"),
    ("r7_a.yaml#54", ATTR, "expected a `torch.device`"),
    ("r9_a.yaml#4", ATTR, "'MatmulLtState' object has no attribute `memory_efficient_backward`"),
    ("r9_a.yaml#34", ATTR, "never adds `--noplots`"),
    ("r13_a.yaml#28", ATTR, "a file path was passed instead of the loaded image or tensor"),
    ("r17_a.yaml#36", ATTR, "`cfg_tb`"),
    ("r20_a.yaml#9", ATTR, "`_last_loaded_step`"),
    ("r23_b.yaml#77", ATTR, "`AddTransform`"),
    ("r24_b.yaml#23", ATTR, "`latent_dist`"),
    ("r10_b.yaml#63", NAME, "`garbageeeeee`"),
    ("r8_a.yaml#76", NAME, "Python suggests `results`"),
    ("dist2.yaml#99", NAME, "`import deepspeed`"),
    ("modern.yaml#97", NAME, "`import torch`"),
    ("r20_a.yaml#73", NAME, "`from peft import PeftModel`"),
])
def test_corpus_messages(where, rule, said_text):
    diagnosis = explain_paste(corpus(where))
    assert diagnosis.rule == rule
    assert said_text in diagnosis.summary


def test_other_rules_keep_their_messages():
    assert rules_of("AttributeError: 'NoneType' object has no attribute 'shape'") == ["other.none_value"]
    assert ATTR not in rules_of("AttributeError: module 'albumentations' has no attribute 'ReplayCompose'")
    keras = ("File \"C:\\Users\\USER\\anaconda3\\lib\\site-packages\\keras\\engine\\training.py\", line 741, in "
             "distribute_strategy\n    return self._distribution_strategy or tf.distribute.get_strategy()\n"
             "AttributeError: 'Sequential' object has no attribute '_distribution_strategy'")
    assert ATTR not in rules_of(keras)
    assert NAME not in rules_of("NameError: name '_C' is not defined")
