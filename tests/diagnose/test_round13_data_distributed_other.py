"""Round 13 data, distributed and other rules: the round's misses and the wording families around them. Real torch
calls where CPU torch raises the error (new_subgroups larger than the job, a checkpoint with one damaged record,
pickle.load against torch.load of the same web page); elsewhere the messages as pasted in their threads (the
Windows TCPStore's fmt error, IValue type asserts, NCCL's WARN line after the error, torch_geometric's warning about
an extension, tinygrad's copy of a PyTorch message, cut load_state_dict reports)."""

from __future__ import annotations

import io
import pickle

import pytest
import torch

import explainer
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised, rules_of


# --- raised by real torch calls --------------------------------------------------------------------

def test_new_subgroups_larger_than_the_job_names_both_sizes():
    d = explain_fixture("fixtures/distributed/new_subgroups_too_large.py")
    assert_names(d, "distributed.group_ranks",
                 ["`dist.new_subgroups(group_size=2)`", "groups of 2 ranks", "world size 1", "torch.cuda.device_count()"])
    assert any("dist.get_world_size() % g == 0" in fix for fix in d.fixes), d.fixes


def test_a_damaged_tensor_record_names_the_record_not_a_cut_download():
    d = explain_fixture("fixtures/data/checkpoint_record_corrupt.py")
    assert_names(d, "data.checkpoint_corrupt", ["reading the record data/0", "one tensor's storage", "damaged"])
    assert "cut short" not in d.summary, d.summary


def _web_page(tmp_path):
    path = tmp_path / "model.pth"
    path.write_bytes(b"<!DOCTYPE html><html><body>Quota exceeded</body></html>\n")
    return path


def test_torch_load_of_a_web_page_is_explained(tmp_path):
    path = _web_page(tmp_path)
    d = explainer.explain(raised(lambda: torch.load(path, weights_only=False)))
    assert_names(d, "data.checkpoint_not_a_checkpoint", ["invalid load key, '<'", "HTML"])


def test_pickle_load_of_the_same_page_is_not_a_pytorch_failure(tmp_path):
    path = _web_page(tmp_path)

    def load():
        with open(path, "rb") as handle:
            return pickle.load(handle)

    d = explainer.explain(raised(load))
    assert d.rule is None, (d.rule, d.summary)


# --- round 13's misses and their families, as pasted --------------------------------------------------

CORPUS = [
    ("r12_b.yaml#8", "distributed.child_failed", ["llamafactory/launcher.py", "exitcode  : 1", "pid: 14661"]),
    ("r13_b.yaml#59", "distributed.child_failed", ["return code = -9", "SIGKILL", "out-of-memory killer"]),
    ("r13_a.yaml#89", "data.worker_killed", ["pid 270071", "killed by signal: Bus error", "/dev/shm"]),
    ("r13_a.yaml#10", "data.checkpoint_corrupt", ["reading the record data/11", "invalid header or archive is corrupted"]),
    ("r13_a.yaml#31", "other.numpy_incompatible", ["NumPy 2.0.0", "_ARRAY_API not found"]),
    ("r13_b.yaml#30", "other.undefined_symbol",
     ["`torch-scatter`", "torch_scatter/_scatter_cuda.so", "_ZNK3c107SymBool10guard_boolEPKcl"]),
    ("r13_b.yaml#60", "other.undefined_symbol", ["`flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so`"]),
    ("r13_a.yaml#26", "data.state_dict_errors_cut", ["EncoderRNN", "Missing key(s) in state_dict", "stops before"]),
    ("r13_a.yaml#78", "data.state_dict_errors_cut", ["GraphNetwork", "Missing key(s)"]),
    # THC's same-GPU check in a DataParallel replica: the device rule, naming the replica (round 28's THC wordings)
    ("r12_b.yaml#84", "device.mismatch",
     ["replica 0", "arguments are located on different GPUs", "THCTensorMasked.cu:27"]),
    ("r12_b.yaml#44", "other.cuda_home_not_set", ["tiny-cuda-nn 1.7", "`CUDA_HOME`"]),
    ("r13_b.yaml#38", "distributed.nccl_error",
     ["NCCL Error 2: unhandled system error", "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument"]),
    ("r13_b.yaml#1", "distributed.nccl_watchdog_stuck", ["ProcessGroupNCCL's watchdog got stuck for 480 seconds"]),
    ("r13_b.yaml#53", "distributed.group_ranks", ["group_size=8", "only 2 processes", "world size 2"]),
    ("r13_a.yaml#23", "distributed.tcpstore_format_string",
     ["TCPStore", "unmatched '}' in format string", "Windows", "MASTER_ADDR"]),
    ("r13_b.yaml#48", "other.ivalue_type_mismatch",
     ["read as Tuple", "`isTuple()`", "ivalue_inl.h:1400", "holds String"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # the TCPStore made by hand, by torchrun's static rendezvous, and by the env:// handler
    ("Traceback (most recent call last):\n  File \"O:\\test.py\", line 3, in <module>\n    dist.TCPStore(\"localhost\", "
     "51515)\nRuntimeError: unmatched '}' in format string", "distributed.tcpstore_format_string", ["TCPStore", "fmt"]),
    # an excerpt, verbatim, of runbooks/distributed/tcpstore_format_string.md example #3
    # (https://github.com/MCG-NJU/EMA-VFI/issues/10)
    ("  File \"C:\\anaconda3\\envs\\tf2.5\\lib\\site-packages\\torch\\distributed\\elastic\\rendezvous\\"
     "static_tcp_rendezvous.py\", line 55, in next_rendezvous\n    self._store = TCPStore(  # type: ignore[call-arg]\n"
     "RuntimeError: unmatched '}' in format string", "distributed.tcpstore_format_string", ["Windows"]),
    # LibTorch's C++ reading a model's output with the wrong accessor; torch 1.0's wording without the types
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  isTuple() INTERNAL ASSERT FAILED at "
     "\"/dxd/libtorch-yolov5/libtorch/include/ATen/core/ivalue_inl.h\":842, please report a bug to PyTorch. Expected "
     "Tuple but got GenericList", "other.ivalue_type_mismatch", ["holds GenericList", "returns a list"]),
    ("  what():  isTensorList() ASSERT FAILED at /home/super/Work/CLionProjects/lib/libtorch/include/ATen/core/ivalue.h"
     ":367, please report a bug to PyTorch. (toTensorList at /home/super/Work/CLionProjects/lib/libtorch/include/ATen/"
     "core/ivalue.h:367)", "other.ivalue_type_mismatch", ["`toTensorList()`", "ivalue.h:367"]),
    # the extension's name on the error's own line (an issue title)
    ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root. Building PyTorch "
     "extension for tiny-cuda-nn version 1.7 Obtained compute capabilities [86] from environment",
     "other.cuda_home_not_set", ["tiny-cuda-nn 1.7"]),
    # torch.load's frame above the key
    # an excerpt, verbatim, of the corpus entry r13_a.yaml#52 (https://github.com/arimousa/DDAD/issues/33)
    ("  File \"/usr/local/lib/python3.10/dist-packages/torch/serialization.py\", line 1033, in _legacy_load\n"
     "    magic_number = pickle_module.load(f, **pickle_load_args)\n_pickle.UnpicklingError: invalid load key, '\\x9e'.",
     "data.checkpoint_not_a_checkpoint", ["'\\x9e'"]),
]


@pytest.mark.parametrize(("message", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_pasted_messages_name_their_values(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_nccl_warn_printed_before_the_error_is_read_as_context():
    # NCCL's WARN line, its INFO trail, then rank 0's DistBackendError (https://github.com/pytorch/pytorch/issues/150852)
    assert_names(explain_paste(corpus("r30_c.yaml#29")), "distributed.nccl_error",
                 ["NCCL WARN Cuda failure 1 'invalid argument'", "transport/nvls.cc:254"])


# --- not PyTorch failures ----------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["r13_a.yaml#51", "r13_a.yaml#53", "r6_a.yaml#17"])
def test_pickle_load_outside_torch_is_not_claimed(where):
    found = rules_of(corpus(where))
    assert not any(found), found


def test_tinygrad_raising_pytorchs_sentence_is_said_to_be_tinygrads():
    diagnoses = list(explain_stream(io.StringIO(corpus("r13_a.yaml#99"))))
    assert diagnoses and all(d.rule is None for d in diagnoses), [(d.rule, d.title) for d in diagnoses]
    assert "tinygrad" in diagnoses[0].summary and "tensor.py, line 171" in diagnoses[0].summary, diagnoses[0].summary


def test_the_same_sentence_from_torch_stays_a_dtype_error():
    d = explainer.explain(raised(lambda: torch.nn.Parameter(torch.arange(3))))
    assert d.rule == "dtype.requires_grad_integer", (d.rule, d.summary)


NEAR_MISSES = [
    # Python's own str.format, not c10d's fmt
    ("ValueError: Single '}' encountered in format string", "distributed.tcpstore_format_string"),
    # TorchScript's own passes
    ("RuntimeError: hasSpecialCase INTERNAL ASSERT FAILED at /pytorch/torch/csrc/jit/passes/alias_analysis.cpp:300, "
     "please report a bug to PyTorch. We don't have an op for aten::to but it isn't a special case. (analyzeImpl at "
     "/pytorch/torch/csrc/jit/passes/alias_analysis.cpp:300)", "other.ivalue_type_mismatch"),
    # a full report: its keys are there, data.state_dict_keys reads them
    ("RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"fc.weight\", \"fc.bias\". ",
     "data.state_dict_errors_cut"),
]


@pytest.mark.parametrize(("message", "rule"), NEAR_MISSES, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NEAR_MISSES)])
def test_near_misses_are_not_claimed(message, rule):
    assert explain_text(message).rule != rule, message
