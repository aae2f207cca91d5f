"""Round 36's last data/other entries, taken by the lead: the TorchScript loader's open failures with an empty path and
in the mobile loader's own wording, named with the C++ place that raised them; ONNX Runtime's check of an exported
model broken over lines, still the exported model's (not another framework's message). Corpus messages verbatim from
the opened rounds (torch 2.13's torch.jit.load checks the path in Python first, so this machine cannot raise them)."""

from __future__ import annotations

import pytest
from conftest import assert_names, corpus_message, explain_paste


@pytest.mark.parametrize(("where", "values"), [
    # pytorch#195283: errno 22 with nothing after "file path:", raised from RAIIFile
    ("r36_b.yaml#6", ["errno 22", "Invalid argument", "file_adapter.cc:31", "given empty"]),
    # triton-inference-server#4848: the mobile loader's check, as Triton's PyTorch backend printed it
    ("r36_b.yaml#38", ["no such file or directory", "file_not_found_error", "file_format.h:126"]),
])
def test_the_torchscript_loader_s_open_failures_name_the_place_that_raised(where, values):
    assert_names(explain_paste(corpus_message(where)), "other.jit_load_open_failed", values)



def test_onnx_runtime_s_model_check_broken_over_lines_is_the_exported_model_s():
    # pytorch#29645: "[ONNXRuntimeError] : 1 :" over "FAIL : Load model from test.onnx failed:" over the type error
    diagnosis = explain_paste(corpus_message("r36_b.yaml#29"))
    assert_names(diagnosis, "compile.ort_model_load", ["test.onnx", "tensor(float)", "tensor(double)"])
