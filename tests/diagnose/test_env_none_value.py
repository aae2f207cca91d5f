"""other.none_value and data.image_not_loaded: a None where the code expected an object (`'NoneType' object has no
attribute 'shape'`, `... is not subscriptable`, `cannot unpack non-iterable NoneType object`), the fallback under the
rules that know the None (collate, hooks, grads, tokenizers). Live: which expression of the failing line is None, read
from the frame without running anything, the line that assigned it and what that call is (a function of the user's
that returns nothing, `re.match`, `dict.get`, a library's failed optional import), and for a None inside a library,
the library and the user's line that called it. Pasted: the corpus's messages verbatim."""

from __future__ import annotations

import importlib.util

import pytest

from explainer.probes.environment.none_values import candidates, optional_import, returns_of

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, rules_of

RULE = "other.none_value"
IMAGE = "data.image_not_loaded"


# --- live: real scripts that die of a None ---------------------------------------------------------------------


def test_a_helper_without_return():
    diagnosis = explain_fixture("fixtures/other/none_helper_no_return.py")
    assert_names(diagnosis, RULE, ["reads `.to` of `features`, which is None", "none_helper_no_return.py:11",
                                   "`features = build_features(batch)`", "on line 10",
                                   "`build_features` (none_helper_no_return.py:5) has no `return` of a value"])
    assert diagnosis.facts["none_function_returns"] == "never"
    assert diagnosis.culprits[0]["name"] == "features"
    assert "Make `build_features` (none_helper_no_return.py:5) return its result" in diagnosis.fixes[0]


def test_a_helper_that_returns_on_some_paths_unpacked():
    diagnosis = explain_fixture("fixtures/other/none_unpack_some_paths.py")
    assert_names(diagnosis, RULE, ["unpacks (`a, b = ...`) `split_batch(batch)`", "cannot unpack non-iterable NoneType",
                                   "`split_batch` (none_unpack_some_paths.py:6) returns a value only on some paths"])
    assert diagnosis.facts["none_source_direct"] is True


def test_a_regex_that_did_not_match():
    diagnosis = explain_fixture("fixtures/other/none_regex_no_match.py")
    assert_names(diagnosis, RULE, ["`.group` of `found`", "`re.match` returns None when the pattern does not match",
                                   r"'checkpoints/epoch_(\d+)\.pt'", "on line 8"])
    assert diagnosis.facts["none_source_callee"] == "match"


def test_a_config_section_read_with_get():
    diagnosis = explain_fixture("fixtures/other/none_dict_get_subscript.py")
    assert_names(diagnosis, RULE, ["indexes (`[...]`) `scheduler_cfg`", "'NoneType' object is not subscriptable",
                                   "`scheduler_cfg = config.get(\"scheduler\")`",
                                   "`config.get` returns None (its default) when the key is missing",
                                   "'scheduler' is not there"])


def test_a_none_inside_a_library_names_it_and_the_users_call():
    diagnosis = explain_fixture("fixtures/other/none_library_argument.py")
    version = importlib.metadata.version("PyYAML")
    assert_names(diagnosis, RULE, ["`.read` of `self.stream`", "reader.py:", "inside `yaml`",
                                   "called from your line none_library_argument.py:10",
                                   "`config = yaml.safe_load(config_text)`"])
    assert diagnosis.facts["none_library"] == "yaml"
    assert diagnosis.facts["none_library_version"] == f"{version} (PyYAML)"
    assert diagnosis.location.file.endswith("none_library_argument.py") and diagnosis.location.line == 10


@pytest.mark.skipif(importlib.util.find_spec("opt_einsum") is not None, reason="opt-einsum is installed: no None")
def test_a_library_function_that_returns_a_failed_optional_import():
    diagnosis = explain_fixture("fixtures/other/none_optional_dependency.py")
    assert_names(diagnosis, RULE, ["`oe = torch.backends.opt_einsum.get_opt_einsum()`",
                                   "`torch.backends.opt_einsum.get_opt_einsum` returns the optional module "
                                   "`opt_einsum`",
                                   "`opt_einsum` is not installed here"])
    assert diagnosis.facts["none_missing_installed"] is False
    assert any("pip install opt-einsum" in fix for fix in diagnosis.fixes)


def test_an_image_reader_that_returns_none_for_a_missing_file():
    diagnosis = explain_fixture("fixtures/data/image_not_loaded.py")
    assert_names(diagnosis, IMAGE, ["`img` is None where image_not_loaded.py:26 reads its `.shape`",
                                    "`img = read_image(path)`", "`read_image` (image_not_loaded.py:9) returns None",
                                    "'data/widerface/train/images/0001.jpg', which does not exist"])
    assert diagnosis.location.function == "__getitem__"
    assert "'data/widerface/train/images/0001.jpg' does not exist" in diagnosis.fixes[0]


# --- what the probes read, on source text only -----------------------------------------------------------------


@pytest.mark.parametrize(("code", "operation", "attribute", "expected"), [
    ("height, width, _ = img.shape", "attribute", "shape", ["img"]),
    ("if len(img.shape) == 3 and img.shape[2] == 4:", "attribute", "shape", ["img"]),
    ("mixed_precision = PrecisionType(args.mixed_precision.lower())", "attribute", "lower", ["args.mixed_precision"]),
    ("shift_logits = outputs.logits[..., :-1, :].contiguous()", "subscriptable", None, ["outputs.logits"]),
    ("loss_resolver.synonyms[_synonym] = _cls", "assignment", None, ["loss_resolver.synonyms"]),
    ("mean, var, count = _backend.statistics(x)", "unpack", None, ["_backend.statistics(x)"]),
    ("downnorm = norm_layer(inner_nc)", "callable", None, ["norm_layer"]),
    ("for batch in loader:", "iterable", None, ["loader"]),
    ("n = len(names[i]) + len(names[j])", "len", None, ["names[i]", "names[j]"]),
])
def test_the_operand_of_the_failing_operation(code, operation, attribute, expected):
    import ast

    assert [ast.unparse(n) for n in candidates(code, operation, attribute)] == expected


def test_returns_of_reads_the_def():
    import ast

    never, some, always = ast.parse("def f(x):\n    y = x\n\ndef g(x):\n    if x:\n        return 1\n\n"
                                    "def h(x):\n    if x:\n        return 1\n    return 2\n").body
    assert (returns_of(never), returns_of(some), returns_of(always)) == ("never", "some paths", "")


def test_optional_import_in_torchs_own_source():
    import torch.backends.opt_einsum as module

    source = module.__dict__["m"].__file__ if "m" in module.__dict__ else module.__file__
    assert optional_import(source, "_opt_einsum") == "opt_einsum"
    assert optional_import(source, "warnings") is None


# --- pasted: the corpus's messages ------------------------------------------------------------------------------


def test_pasted_library_frame_names_the_field_and_the_library():
    diagnosis = explain_paste(corpus("r24_a.yaml#1"))
    assert_names(diagnosis, RULE, ["reads `.lower` of `args.mixed_precision`, which is None",
                                   "`mixed_precision = PrecisionType(args.mixed_precision.lower())`",
                                   "inside `accelerate`"])


def test_pasted_code_line_without_its_frame():
    diagnosis = explain_paste(corpus("r24_a.yaml#45"))
    assert_names(diagnosis, RULE, ["indexes (`[...]`) `outputs.logits`", "a field of `outputs` that was left None",
                                   "`shift_logits = outputs.logits[..., :-1, :].contiguous()`"])
    diagnosis = explain_paste(corpus("r24_a.yaml#99"))
    assert_names(diagnosis, RULE, ["assigns an item (`[...] = ...`) into `loss_resolver.synonyms`"])


def test_pasted_message_alone_is_honest():
    diagnosis = explain_paste(corpus("r11_a.yaml#21"))
    assert_names(diagnosis, RULE, ["'NoneType' object has no attribute 'reshape'",
                                   "reads `.reshape` of a value that is None"])
    assert "none_expr" not in diagnosis.facts and "none_code" not in diagnosis.facts  # the report's lines are not code
    diagnosis = explain_paste("TypeError: cannot unpack non-iterable NoneType object")
    assert_names(diagnosis, RULE, ["cannot unpack non-iterable NoneType object", "unpacks (`a, b = ...`)"])


@pytest.mark.parametrize("where", ["r12_a.yaml#65", "r12_a.yaml#66", "r24_a.yaml#98", "r17_a.yaml#18"])
def test_pasted_image_reads_are_images(where):
    diagnosis = explain_paste(corpus(where))
    assert diagnosis.rule == IMAGE, (where, diagnosis.rule, diagnosis.summary)
    assert "'NoneType' object has no attribute 'shape'" in diagnosis.summary


def test_the_last_item_an_inference_script_announced():
    diagnosis = explain_paste(corpus("r24_a.yaml#98"))
    assert_names(diagnosis, IMAGE, ["`CODE_OF_CONDUCT`", "a name without an image extension",
                                    "`if len(img.shape) == 3 and img.shape[2] == 4:`"])


def test_a_library_none_inside_easyocr():
    diagnosis = explain_paste(corpus("r17_a.yaml#18"))
    assert_names(diagnosis, IMAGE, ["`img` is None", "inside `easyocr`", "`maximum_y,maximum_x = img.shape`"])


@pytest.mark.parametrize("where", ["r16_b.yaml#51", "r9_a.yaml#88", "r18_a.yaml#48", "r13_a.yaml#41"])
def test_specific_rules_that_read_the_code_line_keep_their_messages(where):
    rules = rules_of(corpus(where))
    assert RULE not in rules and IMAGE not in rules, (where, rules)


def test_teardown_inside_tensorflow_is_not_explained():
    message = ("Exception ignored in: <bound method BaseSession.__del__ of <tensorflow.python.client.session.Session "
               "object at 0x7fb2e08cee48>>\nTraceback (most recent call last):\n  File \"$HOME/.local/lib/python3.5/"
               "site-packages/tensorflow/python/client/session.py\", line 595, in __del__\n"
               "AttributeError: 'NoneType' object has no attribute 'TF_NewStatus'")
    assert rules_of(message) == [None]


def test_a_none_raised_in_a_keras_frame_is_not_explained():
    # https://github.com/avolkov1/keras_experiments/issues/9, verbatim
    message = ("Traceback (most recent call last):\n"
               "  File \"examples/mnist/mnist_tfrecord_mgpu.py\", line 266, in <module>\n    main()\n"
               "  File \"examples/mnist/mnist_tfrecord_mgpu.py\", line 224, in main\n"
               "    train_model.fit(epochs=epochs,batch_size=128)\n"
               "  File \"build/bdist.linux-x86_64/egg/keras/engine/training.py\", line 1358, in fit\n"
               "  File \"build/bdist.linux-x86_64/egg/keras/engine/training.py\", line 1245, in _standardize_user_data\n"
               "  File \"build/bdist.linux-x86_64/egg/keras/engine/training.py\", line 597, in _standardize_weights\n"
               "AttributeError: 'NoneType' object has no attribute 'shape'")
    assert rules_of(message) == [None]
