"""Straggler sweep of the opened rounds for device, distributed, memory, compile and numerics: each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
other wordings of the same families are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r20_a.yaml#15", "distributed.child_failed", ["rank      : 1 (local_rank: 1)", "exitcode  : 1"]),
    ("r21_b.yaml#12", "distributed.child_failed", ["rank      : 0", "pid: 2870757"]),
    ("r25_a.yaml#64", "distributed.child_failed", ["rank 1 (local_rank: 1)", "autotrain.trainers.clm"]),
    ("r24_a.yaml#89", "device.generator_device", ["'cpu' device", "found 'cuda'"]),
    ("r19_a.yaml#44", "compile.onnx_unsupported_opset", ["opset version: 17", "onnx 1.13.0"]),
    ("r19_a.yaml#45", "compile.onnx_unsupported_opset", ["opset version: 13", "onnx 1.10.1"]),
    ("r26_b.yaml#50", "device.mismatch", ["Received cpu and cuda:0"]),
    ("r26_b.yaml#51", "device.mismatch", ["found input tensor at cpu and hidden tensor at cuda:0"]),
    ("r26_a.yaml#40", "compile.tracer_warning", ["Python boolean", "Python number"]),
    ("r21_b.yaml#74", "compile.torchscript_value_type", ["aten::tensor", "List[t]", "`data`"]),
    ("r22_a.yaml#40", "numerics.bce_input_range", ["Loss.cu:102", "block: [328,0,0]"]),
    ("r21_b.yaml#4", "memory.windows_paging_file", ["cudnn_cnn_infer64_8.dll", "WinError 5", "spawn_main"]),
    ("r25_a.yaml#41", "device.capability_incompatible",
     ["Tesla P100-PCIE-16GB", "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "12.6", "whl/cu126"]),
    ("r26_a.yaml#10", "compile.torchscript_unsupported", ["ValueError", "keyword-only arguments"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch.cat of torch 1.5-1.9 the other way round (Minimal-Hand-pytorch), and a GRU's hidden state on the GPU
    ("RuntimeError: All input tensors must be on the same device. Received cuda:0 and cpu", "device.mismatch",
     ["Received cuda:0 and cpu"]),
    ("RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
     "tensor at cpu", "device.mismatch", ["found input tensor at cuda:0 and hidden tensor at cpu"]),
    # the generator of the other direction (DRRG#25)
    ("RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'", "device.generator_device",
     ["'cuda' device", "found 'cpu'"]),
    # torch <= 2.0's check of the requested opset alone
    ("ValueError: Unsupported ONNX opset version: 16", "compile.onnx_unsupported_opset", ["opset version: 16"]),
    # a Failures list naming another rank above the root cause (MiniGPT-4#237)
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
     "============================================================\ntrain.py FAILED\n"
     "------------------------------------------------------------\nFailures:\n[1]:\n  time      : 2023-05-19_16:39:58\n"
     "  host      : n136-117-136.byted.org\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 78971)\n"
     "  error_file: <N/A>\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
     "------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n"
     "  time      : 2023-05-19_16:39:58\n  host      : n136-117-136.byted.org\n  rank      : 0 (local_rank: 0)\n"
     "  exitcode  : 1 (pid: 78970)\n  error_file: <N/A>\n"
     "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
     "============================================================", "distributed.child_failed",
     ["rank      : 0 (local_rank: 0)", "rank 1 (local_rank: 1)", "pid: 78970"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_one_root_cause_rank_is_not_named_twice():
    text = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n====\ntrain.py FAILED\n----\n"
            "Failures:\n  <NO_OTHER_FAILURES>\n----\nRoot Cause (first observed failure):\n[0]:\n"
            "  time      : 2024-07-24_11:39:43\n  host      : node1\n  rank      : 0 (local_rank: 0)\n"
            "  exitcode  : 1 (pid: 42)\n  error_file: <N/A>\n")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "distributed.child_failed"
    assert "also names rank" not in diagnosis.summary


def test_tracer_warnings_of_one_kind_name_no_other_kind():
    import warnings

    import torch

    def branchy(x):
        if x.sum() > 0:  # a tensor turned into a Python boolean: torch.jit.trace warns
            return x + 1
        return x - 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(branchy, torch.ones(2))
        torch.jit.trace(branchy, torch.ones(3))
    text = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
                   for w in caught if w.category.__name__ == "TracerWarning")
    assert text.count("TracerWarning: Converting a tensor to a Python boolean") >= 2 and "Python number" not in text
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "compile.tracer_warning"
    assert "other lines too" not in diagnosis.summary


@pytest.mark.parametrize("text, not_rule", [
    # a permission error of a spawned child with no paging-file error is not this rule's
    ('  File "D:\\Anaconda3\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main\n'
     '  File "D:\\Anaconda3\\lib\\multiprocessing\\reduction.py", line 131, in detach\n'
     "PermissionError: [WinError 5] Access is denied", "memory.windows_paging_file"),
    # torch's list of CUDA builds alone names no GPU: only context for the capability warning
    ("Please install PyTorch with a following CUDA\n    configurations:  12.6 following instructions at",
     "device.capability_incompatible"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)
