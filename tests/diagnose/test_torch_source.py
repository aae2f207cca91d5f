"""Where torch's C++ raised, read from the wordings real pastes hold: "Exception raised from X at file:line"
(X may be `operator()`), "(Triggered internally at  file:line.)" with the space doubled, .cc files, torch 1.x's
"(function at file:line)"."""

import io

import pytest

from conftest import benchmark_module
from explainer.cli.explain import explain_stream
from explainer.diagnose.render import render_text

CORPUS = {e.where: e for e in benchmark_module("coverage").load_corpus()}


@pytest.mark.parametrize("where, source", [
    ("r10_b.yaml#79", {"file": "c10/cuda/CUDAFunctions.cpp", "line": 115}),
    ("r7_b.yaml#57", {"file": "aten/src/ATen/native/cudnn/Conv.cpp", "line": 1141, "function": "operator()"}),
    ("r9_b.yaml#75", {"file": "caffe2/serialize/inline_container.cc", "line": 158, "function": "valid"}),
    # torch 1.x: "(insert_events at .../THCCachingAllocator.cpp:470)" in std::terminate's what(), printed after
    # Python's report of the same CUDA error: one diagnosis
    ("devmem.yaml#209", {"file": "aten/src/THC/THCCachingAllocator.cpp", "line": 470, "function": "insert_events"}),
])
def test_torchs_cpp_source_is_named_in_every_wording(where, source):
    [diagnosis] = [d for d in explain_stream(io.StringIO(CORPUS[where].message)) if d.rule]
    found = diagnosis.facts["torch_source"]
    assert {k: found.get(k) for k in source} == source


@pytest.mark.parametrize("where, file", [
    ("r21_b.yaml#34", "horovod/torch/cuda_util.cc"),  # horovod's own file under a torch/ folder
    ("r11_b.yaml#4", "mmdet/ops/roi_align/src/roi_align_kernel.cu"),
])
def test_an_extensions_thc_check_is_not_torchs_cpp(where, file):
    assert f"THCudaCheck FAIL file={file}" in CORPUS[where].message
    [diagnosis] = [d for d in explain_stream(io.StringIO(CORPUS[where].message)) if d.rule]
    assert "torch_source" not in diagnosis.facts
    assert diagnosis.facts["extension_source"]["file"] == file
    assert f"in the extension's C++ at {file}:" in render_text(diagnosis)
