"""Round-36 wordings for the other family, second wave (darts' covariates at predict time, PyTorch Android's load and
output errors, torchvision's quantization engine check): each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste
from explainer.diagnose.render import render_text


CORPUS_CASES = [
    ("r36_a.yaml#84", "other.darts_missing_covariates", ["future_covariates", "predict()"]),
    ("r36_b.yaml#12", "other.android_module_load_check_failed",
     ["aten/src/ATen/Functions.h:3535", "org.pytorch.Module.load"]),
    ("r36_b.yaml#16", "other.android_native_peer_init_error",
     ["java.lang.ExceptionInInitializerError", "org.pytorch.NativePeer.initHybrid"]),
    ("r36_b.yaml#79", "other.android_scalar_type_unsupported_java", ["at::Tensor scalar type"]),
    ("r36_b.yaml#80", "other.torchvision_quantized_backend_unsupported", ["quantize_model"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_quantize_model_frames_are_printed():
    # the raising frame in torchvision (utils.py, line 22) and the user's call (main.py, line 34) are printed as places
    diagnosis = explain_paste(corpus_message("r36_b.yaml#80"))
    assert diagnosis.rule == "other.torchvision_quantized_backend_unsupported"
    printed = render_text(diagnosis)
    assert all(value in printed for value in ["utils.py:22 in quantize_model", "main.py:34"]), printed


@pytest.mark.parametrize("text, rule, values", [
    # darts' past-covariates wording (darts#1395)
    ("ValueError: The model has been trained with past covariates. Some matching past_covariates have to be provided "
     "to `predict()`.", "other.darts_missing_covariates", ["past_covariates", "predict()"]),
    # the same Android CHECK when the activity starts (android-demo-app#16)
    ("java.lang.RuntimeException: Unable to start activity ComponentInfo{com.dummy.app/com.dummy.app.MainActivity}: "
     "com.facebook.jni.CppException: false CHECK FAILED at aten/src/ATen/Functions.h (empty at "
     "aten/src/ATen/Functions.h:3535)", "other.android_module_load_check_failed",
     ["aten/src/ATen/Functions.h:3535", "empty"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the schema's input check in forward() (android-demo-app#39), the model file missing (pytorch#47609)
    ("Caused by: com.facebook.jni.CppException: false CHECK FAILED at ../aten/src/ATen/core/function_schema_inl.h "
     "(checkAndNormalizeInputs at ../aten/src/ATen/core/function_schema_inl.h:270)",
     "other.android_module_load_check_failed"),
    ("com.facebook.jni.CppException: false CHECK FAILED at ../caffe2/serialize/file_adapter.cc (FileAdapter at "
     "../caffe2/serialize/file_adapter.cc:11)", "other.android_module_load_check_failed"),
    # Java and native halves of different releases: a missing method, not a failed initialiser (java-demo#23)
    ('Exception in thread "main" java.lang.NoSuchMethodError: Method org.pytorch.NativePeer.initHybrid'
     "(Ljava/lang/String;Ljava/util/Map;I)Lcom/facebook/jni/HybridData; not found",
     "other.android_native_peer_init_error"),
    # TensorFlow Lite's Java dtype limit (tensorflow#41212)
    ("java.lang.IllegalArgumentException: DataType error: DataType 6 is not recognized in Java (version 2.4.0)",
     "other.android_scalar_type_unsupported_java"),
    # a quantized tensor given to a float kernel (PyTorch-Quantization-Aware-Training#6)
    ("RuntimeError: Could not run 'aten::add_.Tensor' with arguments from the 'QuantizedCPU' backend.",
     "other.torchvision_quantized_backend_unsupported"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
