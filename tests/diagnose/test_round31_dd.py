"""Round-31 wordings for device, distributed and memory (the LLM fine-tuning and serving stacks, localised and
retyped pastes): each corpus message (verbatim from the opened round) is claimed, from its text alone, by the right
rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed too,
and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r31_a.yaml#10", "device.no_cuda_build", ["_check_driver", "torch/cuda/__init__.py:94"]),
    ("r31_a.yaml#27", "device.map_location", ["map_location"]),
    ("r31_a.yaml#36", "distributed.collective_mismatch", ["init.cc:1256", "rank 1"]),
    ("r31_a.yaml#67", "device.mismatch", ["`mat2`", "cpu", "cuda:0"]),
    ("r31_a.yaml#75", "distributed.child_failed", ["main.py", "childFailedError"]),
    ("r31_a.yaml#76", "distributed.child_failed", ["local_rank 0", "exitcode 1", "ERROR_FILE"]),
    ("r31_a.yaml#77", "device.triton_no_active_driver", ["0 active drivers"]),
    ("r31_b.yaml#23", "distributed.spawn_process_raised", ["local variable 'lr'", "train.py:506", "`run`"]),
    ("r31_c.yaml#17", "memory.cuda_oom", ["136.00 MiB", "Process 62200 has 21.98 GiB", "21.51 GiB"]),
    ("r31_c.yaml#31", "distributed.nccl_timeout", ["ALLREDUCE", "1800000", "SYSTEM_ERROR"]),
    ("r31_c.yaml#33", "distributed.elastic_sigterm", ["none_dealloc", "SIGTERM"]),
    ("r31_c.yaml#44", "device.flash_attn_arch", ["Ampere", "26961", "exit code: -15"]),
    ("r31_c.yaml#51", "device.device_assert", ["0 <= tmp4 < 16000", "llm_pretrain.py:179"]),
    ("r31_c.yaml#63", "device.capability_incompatible", ["NVIDIA GeForce RTX 5090 has", "sm_120", "engine.py:400"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_capability_summary_leaves_the_logger_prefix_out():
    summary = explain_paste(corpus_message("r31_c.yaml#63")).summary
    assert summary.startswith("NVIDIA GeForce RTX 5090"), summary


@pytest.mark.parametrize("text, rule, values", [
    # Triton's driver check: no backend active (EasyR1#211), two Triton installations (triton#2985)
    ('  File "/root/miniconda3/lib/python3.12/site-packages/triton/runtime/driver.py", line 8, in _create_driver\n'
     '    raise RuntimeError(f"{len(actives)} active drivers ({actives}). There should only be one.")\n'
     "RuntimeError: 0 active drivers ([]). There should only be one.", "device.triton_no_active_driver",
     ["0 active drivers ([])"]),
    ("RuntimeError: 2 active drivers ([<class 'c.CudaDriver'>, <class 'nvi.CudaDriver'>]).",
     "device.triton_no_active_driver", ["2 active drivers", "c.CudaDriver"]),
    # inductor's bounds check in a generated module with line info (an excerpt of
    # https://github.com/pytorch/torchtitan/issues/1640: its first assertion line)
    ("[rank0]:/tmp/torchinductor_danvm/k4/ck46uf2tjbfns332dtzd3q3m2mgw2hoguozdpq5bvqyjhntqiu23.py:30: unknown: block: "
     "[24127,0,0], thread: [23,0,0] Assertion `index out of bounds: 0 <= tmp4 < 1 + ks0` failed.", "device.device_assert",
     ["ck46uf2tjbfns332dtzd3q3m2mgw2hoguozdpq5bvqyjhntqiu23.py:30", "0 <= tmp4 < 1 + ks0", "`1 + ks0`"]),
    # NCCL's mismatch wording of the same check (collective_mismatch's own example)
    ("init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39.",
     "distributed.collective_mismatch", ["init.cc:1247", "rank 39"]),
    # the full device-mismatch wording of torch 2.5+ still reads the argument (docling-serve#316)
    (corpus_message("r12_b.yaml#12"), "device.mismatch", ["`boundaries`", "wrapper_CUDA_Tensor_bucketize"]),
    # the spawn header alone still says which process (an excerpt of fairseq#3464, dist2.yaml#80: its first line)
    ("-- Process 3 terminated with the following error:", "distributed.spawn_process_raised", ["Process 3"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # vLLM's own count of Triton's drivers is a warning it recovers from (vllm#53530)
    ("Triton is installed but 2 active driver(s) found (expected 1)", "device.triton_no_active_driver"),
    # a message naming cuda:0 and the CPU that is another family's (the NumPy conversion, r10_a.yaml#108)
    (corpus_message("r10_a.yaml#108"), "device.mismatch"),
    # a lowercase word ending in childFailedError-like text with no FAILED headline stays unclaimed by the new branch
    # (an excerpt of r31_a.yaml#76: the banner's middle line, without its padding)
    ("CHILD PROCESS FAILED WITH NO ERROR_FILE", "distributed.collective_mismatch"),
    # an NCCL WARN of another kind is not a collective mismatch (nccl#795)
    (corpus_message("dist2.yaml#29"), "distributed.collective_mismatch"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)
