"""Round-34 wordings for other, part B (the entries the first writer left): a compiled extension's input check in
torch_cluster's older wording (no "please report a bug" sentence), and a torch CUDA extension with a public name
(auto-gptq's `exllama_kernels`, exllama's `exllama_ext`) that Windows could not load. Each corpus message (verbatim
from the opened round) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_a.yaml#18", "other.extension_internal_assert",
     ["ptr.dim() == 1", "fps_cpu.cpp:17", "torch_cluster"], ("utils.py", 214)),
    ("r34_c.yaml#20", "other.dll_load_failed",
     ["exllama_kernels"], ("ai.py", 18)),
]


@pytest.mark.parametrize("where, rule, values, frame", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values, frame):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)
    # the user's own frame, where the failing call was made, is the place printed
    assert diagnosis.location.file.endswith(frame[0]) and diagnosis.location.line == frame[1]


@pytest.mark.parametrize("text, rule, values", [
    # exllama's own extension (turboderp/exllama#100) and exllamav2's (Zuellni/ComfyUI-ExLlama-Nodes#7)
    ("ImportError: DLL load failed while importing exllama_ext: 找不到指定的模块。", "other.dll_load_failed",
     ["exllama_ext"]),
    ("ImportError: DLL load failed while importing exllamav2_ext: 找不到指定的程序。", "other.dll_load_failed",
     ["exllamav2_ext"]),
])
def test_other_wordings_are_explained(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_another_frameworks_module_stays_unclaimed():
    # onnx's own compiled module (dll_load_failed's counter-example: another framework's public name)
    text = "Exception: DLL load failed while importing onnx_cpp2py_export: 动态链接库(DLL)初始化例程失败。"
    assert_left_alone(text, "other.dll_load_failed")


@pytest.mark.parametrize("text", [
    # torch's own asserts (c10's paths, r34_b#2 and r34_b#57) are not an extension's input check
    corpus_message("r34_b.yaml#2"),
    corpus_message("r34_b.yaml#57"),
])
def test_torchs_own_asserts_stay_unclaimed_by_the_extension_rule(text):
    assert_left_alone(text, "other.extension_internal_assert")
