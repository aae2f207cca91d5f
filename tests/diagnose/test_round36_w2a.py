"""Round-36 wordings, second wave, for compile, shape, numerics and distributed (deployment, medical imaging, time
series): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with
the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_a.yaml#76", "shape.negative_dimension", ["negative dimension -1", "[-1, 3, 736, 480]", "c10::Error"]),
    ("r36_a.yaml#88", "shape.swinunetr_img_size", ['swin_unetr.py", line 111', "img_size"]),
    ("r36_b.yaml#21", "compile.executorch_tensor_resize", ["XNNExecutor", "instruction 6", "0x10"]),
    ("r36_b.yaml#31", "compile.ort_model_load",
     ["styleganex_toonify_pixar.onnx", "aten_floor_divide", "Floor", "tensor(int64)"]),
    ("r36_b.yaml#45", "compile.openvino_conversion_failure", ["prim::Constant", "frontend.cpp:171", "utils.py(66)"]),
    ("r36_c.yaml#19", "distributed.child_failed", ["qasciikey.cpp, line 501", "SIGABRT", "process 0"]),
    ("r36_c.yaml#28", "numerics.var_degrees_of_freedom", ["var()", "ReduceOps.cpp:1807"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # std() with the warning's place and a line break inside the message (Yu-Maryland/Gamora#9)
    ("/workspace/examples/Gamora/abc2pyg/logger.py:38: UserWarning: std(): degrees of freedom is <= 0. Correction "
     "should be \nstrictly less than the reduction factor (input numel divided by output numel). (Triggered internally "
     "at /opt/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1827.)\n  print(f'Highest Train: {r.mean():.2f} ± "
     "{r.std():.2f}')", "numerics.var_degrees_of_freedom", ["std()", "ReduceOps.cpp:1827", "logger.py:38"]),
    # sbi's std() (sbi-dev/sbi#1040)
    ("/home/steinb95/development/sbi-dev/repo/sbi/diagnostics/sbc.py:363: UserWarning: std(): degrees of freedom is <= "
     "0. Correction should be strictly less than the reduction factor (input numel divided by output numel). "
     "(Triggered internally at ../aten/src/ATen/native/ReduceOps.cpp:1760.)", "numerics.var_degrees_of_freedom",
     ["std()", "sbc.py:363"]),
    # ORT's type-parameter wording on one line (pytorch#23724)
    ("RuntimeError: [ONNXRuntimeError] : 1 : GENERAL ERROR : Load model from waveglow.onnx failed:Type Error: Type "
     "parameter (T) bound to different types (tensor(int64) and tensor(float) in node ()", "compile.ort_model_load",
     ["waveglow.onnx", "tensor(int64)", "tensor(float)"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_var_warning_raised_live():
    from conftest import explain_fixture

    assert_names(explain_fixture("fixtures/numerics/var_degrees_of_freedom.py"), "numerics.var_degrees_of_freedom",
                 ["var()", "ReduceOps.cpp"])


def test_input_resize_failure_is_not_the_delegate_branch():
    # ExecuTorch's static-shape input failure (executorch#1350's title): the same rule, without the XNNPACK branch
    diagnosis = explain_paste("Attempted to resize a static tensor to a new shape at dimension 0")
    assert_names(diagnosis, "compile.executorch_tensor_resize", ["dimension 0"])
    assert "XNNPACK delegate" not in diagnosis.summary
