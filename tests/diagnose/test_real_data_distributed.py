"""Data (checkpoint loading, DataLoader) and distributed rules on real torch errors and real-world wordings."""

from __future__ import annotations

import sys

import pytest
import torch

import explainer
from explainer.diagnose.explain import explain_text
from explainer.rules.base import default_rulebase

from conftest import assert_names, corpus_message, explain_fixture, raised


def _store_barrier_alone() -> str:
    """The DistStoreError torch's store-based barrier raises when rank 3 of 8 waits alone (1 s timeout)."""
    import datetime

    from torch.distributed import HashStore, distributed_c10d

    error = raised(lambda: distributed_c10d._store_based_barrier(3, HashStore(), "", 8, datetime.timedelta(seconds=1)))
    return f"{type(error).__module__}.{type(error).__name__}: {error}"


def _live(call) -> str:
    """The error line a real torch call raises on this machine, as its traceback ends."""
    error = raised(call)
    return f"{type(error).__name__}: {error}"



# --- checkpoint files, from real torch.load calls ----------------------------------------------

def test_weights_only_names_the_refused_class_and_the_allowlist_call():
    d = explain_fixture("fixtures/data/weights_only_namespace.py")
    assert d.rule == "data.weights_only_load" and d.category == "data"
    assert d.facts["global_name"] == "argparse.Namespace"
    assert "argparse.Namespace" in d.summary and "PyTorch 2.6" in d.summary
    assert "`from argparse import Namespace`, then `torch.serialization.add_safe_globals([Namespace])`" in d.fixes[0]
    assert any("weights_only=False" in fix for fix in d.fixes)


def test_html_page_loaded_as_a_checkpoint_names_file_size_and_first_byte():
    d = explain_fixture("fixtures/data/checkpoint_html_page.py")
    assert d.rule == "data.checkpoint_not_a_checkpoint"
    assert d.facts["load_key"] == "<" and d.facts["checkpoint_size"] == "61 bytes"
    assert d.facts["checkpoint_path"].endswith("model.pth")
    assert "HTML" in d.summary and "61 bytes" in d.summary and d.facts["checkpoint_path"] in d.summary
    assert d.culprits[0]["kind"] == "file" and d.culprits[0]["size"] == 61


def test_html_page_under_weights_only_reads_the_operand_as_a_byte(tmp_path):
    path = tmp_path / "weights.pth"
    path.write_text("<html><body>quota exceeded</body></html>\n")
    with pytest.raises(Exception) as caught:
        torch.load(str(path))
    d = explainer.explain(caught.value)
    assert d.rule == "data.weights_only_load"
    assert d.facts["operand"] == 60 and d.facts["load_key"] == "<"
    assert "Unsupported operand 60" in d.summary and str(path) in d.summary and "HTML" in d.summary


def test_truncated_checkpoint_names_reason_path_and_size():
    d = explain_fixture("fixtures/data/checkpoint_truncated.py")
    assert d.rule == "data.checkpoint_corrupt"
    assert d.facts["reason"] == "failed finding central directory"
    assert d.facts["checkpoint_size"] == "1000 bytes"
    assert "cut short" in d.summary and "1000 bytes" in d.summary


def test_invalid_load_key_from_text_reads_git_lfs_pointer():
    # torch.load's frame above the error says it is torch's (a bare line is any pickle.load's: see test_round13_*)
    frame = "  File \"/usr/local/lib/python3.10/site-packages/torch/serialization.py\", line 1033, in _legacy_load\n"
    d = explain_text(frame + "_pickle.UnpicklingError: invalid load key, 'v'.")
    assert d.rule == "data.checkpoint_not_a_checkpoint" and "Git LFS" in d.summary
    d = explain_text(frame + "_pickle.UnpicklingError: invalid load key, '\\x0a'.")
    assert d.facts["load_key"] == "\\x0a" and "'\\x0a'" in d.summary


def test_weights_only_operand_from_text():
    # https://github.com/gseg-ethz/CoFF/issues/2
    d = explain_text(corpus_message("modern.yaml#11"))
    assert d.rule == "data.weights_only_load" and d.facts["load_key"] == "<"
    assert "Unsupported operand 60" in d.summary and "HTML" in d.summary


def test_state_dict_key_lists_without_the_first_line():
    d = explain_text('Missing key(s) in state_dict: "map_classifier.0.weight", "map_classifier.0.bias". \n\n'
                     'Unexpected key(s) in state_dict: "world_classifier.0.weight", "world_classifier.0.bias".')
    assert d.rule == "data.state_dict_keys"
    assert (d.facts["renamed_from"], d.facts["renamed_to"]) == ("world_classifier.", "map_classifier.")
    assert "map_classifier.0.weight" in d.summary and "world_classifier.0.weight" in d.summary


def test_legacy_unexpected_key_names_the_module_prefix():
    d = explain_text("KeyError: 'unexpected key \"module.layer_module.0.weight\" in state_dict'")
    assert d.rule == "data.state_dict_keys" and "module.layer_module.0.weight" in d.summary
    assert "DataParallel" in d.summary


# --- DataLoader --------------------------------------------------------------------------------

def test_collate_of_none_names_the_type_and_the_filtering_fix():
    d = explain_fixture("fixtures/data/collate_none_sample.py")
    assert d.rule == "data.default_collate_type" and d.facts["found_class"] == "NoneType"
    assert "returned None" in d.summary
    assert any("is not None" in fix for fix in d.fixes)


def test_collate_of_numpy_strings_from_text():
    d = explain_text("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                     "found <U14")
    assert d.rule == "data.default_collate_type" and "<U14" in d.summary and "strings" in d.summary


def test_worker_killed_by_segfault_and_shm_bus_error_from_text():
    d = explain_text("RuntimeError: DataLoader worker (pid 25902) is killed by signal: Segmentation fault")
    assert d.rule == "data.worker_killed" and d.facts["signal"] == "Segmentation fault" and "25902" in d.summary
    assert any("faulthandler" in fix for fix in d.fixes)
    d = explain_text("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
                     "memory (shm).")
    assert d.rule == "data.worker_killed" and "shm" in d.summary and any("--shm-size" in fix for fix in d.fixes)


def test_too_many_open_files_names_the_shared_memory_object():
    d = explain_text("RuntimeError: unable to open shared memory object </torch_30997_2076642173> in read-write mode")
    assert d.rule == "data.too_many_open_files" and "</torch_30997_2076642173>" in d.summary
    assert any("set_sharing_strategy('file_system')" in fix for fix in d.fixes)


def test_batchnorm_size_is_repeated_as_printed():
    d = explain_text("ValueError: Expected more than 1 value per channel when training, got input size "
                     "torch.Size([1, 512, 1, 1])")
    assert d.rule == "shape.batchnorm_batch_one" and "torch.Size([1, 512, 1, 1])" in d.summary


def test_worker_error_in_collate_names_the_function():
    # https://github.com/Megvii-BaseDetection/YOLOX/issues/548
    d = explain_text(corpus_message("data_dist.yaml#16"))
    assert d.rule == "data.worker_error" and d.facts["collate_function"] == "default_collate"
    assert "default_collate" in d.summary


# --- distributed -------------------------------------------------------------------------------

def test_process_group_not_initialized_from_a_real_collective():
    d = explain_fixture("fixtures/distributed/no_process_group.py")
    assert d.rule == "distributed.process_group_not_initialized"
    assert d.location.file.endswith("no_process_group.py") and d.location.line == 7
    assert any("torchrun" in fix for fix in d.fixes)


@pytest.mark.skipif(sys.platform == "win32", reason="TCPStore port semantics differ")
def test_address_in_use_names_the_port():
    d = explain_fixture("fixtures/distributed/address_in_use.py")
    assert d.rule == "distributed.address_in_use"
    port = d.facts["port"]
    assert isinstance(port, int) and f"port {port}" in d.summary
    assert any(f"lsof -i :{port}" in fix for fix in d.fixes)


def test_ddp_ready_twice_names_index_and_parameter():
    rule = default_rulebase().by_id["distributed.ddp_ready_twice"]
    d = explain_text(rule.examples[0].message)
    assert d.rule == rule.id and d.facts["param_index"] == 387
    assert "hf_model.roberta.encoder.layer.23.output.LayerNorm.weight" in d.summary
    assert any("use_reentrant=False" in fix for fix in d.fixes)
    assert any("_set_static_graph()" in fix for fix in d.fixes)


def test_nccl_error_names_file_version_and_nccl_code():
    # https://github.com/huggingface/accelerate/issues/72
    d = explain_text(corpus_message("r13_b.yaml#92"))
    assert d.rule == "distributed.nccl_error"
    for value in ("ProcessGroupNCCL.cpp:761", "2.7.8", "ncclInternalError", "internal error"):
        assert value in d.summary


def test_nccl_communicator_aborted_names_rank_op_and_timeout():
    d = explain_text("NCCL communicator was aborted on rank 1. Original reason for failure was: Work: "
                     "WorkNCCL(OpType=ALLREDUCE, TensorShape=[1], Timeout(ms)=2000) timed out in call to wait().")
    assert d.rule == "distributed.nccl_timeout" and (d.facts["rank"], d.facts["op_type"]) == (1, "ALLREDUCE")
    assert "rank 1" in d.summary and "ALLREDUCE" in d.summary and "2000 ms" in d.summary


def test_child_failed_sigkill_names_exitcode_pid_and_signal():
    rule = default_rulebase().by_id["distributed.child_failed"]
    # (the open-r1 example, found by its script: examples are appended to the rule's list)
    d = explain_text(next(e.message for e in rule.examples if "grpo_gsm.py" in e.message))
    assert d.rule == rule.id and d.facts["exitcode"] == -9
    for value in ("src/open_r1/grpo_gsm.py", "exitcode  : -9", "14750", "Signal 9 (SIGKILL)", "out-of-memory"):
        assert value in d.summary


def test_dtensor_messages_name_the_operator():
    d = explain_text("RuntimeError: aten.add.Tensor: got mixed torch.Tensor and DTensor, need to convert all "
                     "torch.Tensor to DTensor before calling distributed operators!")
    assert d.rule == "distributed.dtensor_mixed_tensor" and "aten.add.Tensor" in d.summary
    # https://github.com/pytorch/pytorch/pull/161574 (as modern.yaml#106)
    d = explain_text(corpus_message("modern.yaml#106"))
    assert d.rule == "distributed.dtensor_sharding_propagation"
    assert "aten.view.default" in d.summary and "[64, 4]" in d.summary and "(1, 2, 2, 2)" in d.summary


# --- the real-world corpus (tuning split only) -------------------------------------------------

# --- live probes of the distributed family ----------------------------------------------------

def test_ddp_ready_twice_names_the_owner_module_and_ddp_settings():
    d = explain_fixture("fixtures/distributed/ddp_ready_twice.py")
    assert d.rule == "distributed.ddp_ready_twice"
    assert (d.facts["param_index"], d.facts["param_name"]) == (1, "block.bias")
    assert d.facts["ddp_name"] == "model" and d.facts["find_unused"] is True
    assert d.facts["owner_module"] == "model.module.block"
    assert "model.module.block = Linear(in_features=4, out_features=4, bias=True)" in d.summary
    assert [c["name"] for c in d.culprits] == ["model.module.block"]


def test_process_group_not_initialized_reads_the_launch_environment(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    d = explain_fixture("fixtures/distributed/no_process_group.py")
    assert d.facts["rank_assigned"] is False and "not started by torchrun" in d.summary
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    d = explain_fixture("fixtures/distributed/no_process_group.py")
    assert "RANK=3" in d.summary and "WORLD_SIZE=4" in d.summary and "assigned it a rank" in d.summary


def test_rendezvous_timeout_names_joined_clients():
    d = explain_fixture("fixtures/distributed/rendezvous_timeout.py")
    assert d.rule == "distributed.rendezvous_timeout"
    assert (d.facts["joined"], d.facts["world_size"]) == (1, 2) and "1/2 clients joined" in d.summary


def test_loader_timeout_names_the_seconds():
    d = explain_fixture("fixtures/data/loader_timeout.py")
    assert d.rule == "data.loader_timeout" and d.facts["seconds"] == 1
    assert "timeout=1" in d.summary


def test_cpu_tensor_in_a_cuda_only_group_names_the_device_type():
    d = explain_fixture("fixtures/distributed/cpu_tensor_cuda_only_group.py")
    assert d.rule == "distributed.collective_tensor_device" and d.facts["device_type"] == "cpu"
    assert "device type cpu" in d.summary and "gloo for cpu" in d.summary
    assert any('init_process_group("cpu:gloo,cuda:nccl")' in fix for fix in d.fixes)


@pytest.mark.parametrize("message, rule, named", [
    (corpus_message("dist2.yaml#48"),
     "distributed.collective_mismatch", ("Rank 1", "ALLREDUCE", "[195812480]", "Rank 0", "[51123456]", "#3104")),
    (corpus_message("dist2.yaml#5"), "distributed.nccl_error", ("NCCL Error 1", "unhandled cuda error")),
    # https://github.com/NVIDIA/nvidia-resiliency-ext/issues/18 (its first line)
    (corpus_message("dist2.yaml#11").splitlines()[0], "distributed.elastic_sigterm", ("process 293866", "SIGTERM")),
    # https://github.com/lzhxmu/CPPO/issues/6
    (corpus_message("data_dist.yaml#118"), "distributed.child_failed", ("Signal 9 (SIGKILL)", "14750", "out-of-memory")),
    # https://github.com/CGCL-codes/pFedSD/issues/3
    (corpus_message("r5_b.yaml#69"), "distributed.gloo_connection",
     ("pair.cc:598", "Connection closed by peer", "172.28.0.12:43185")),
])
def test_new_distributed_wordings_name_their_values(message, rule, named):
    assert_names(explain_text(message), rule, named)


# --- distributed wordings added from the corpus ------------------------------------------------

@pytest.mark.parametrize("message, rule, named", [
    (corpus_message("dist2.yaml#27"),
     "distributed.nccl_error", ("unhandled system error", "OpType=ALLREDUCE", "ncclSystemError", "2.25.1")),
    ("[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=158046, "
     "OpType=GATHER, NumelIn=2867200, NumelOut=0, Timeout(ms)=600000) ran for 600027 milliseconds before timing out.",
     "distributed.nccl_timeout", ("OpType=GATHER", "Timeout(ms)=600000", "600027")),
    ("[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:25641 (errno: 98 - Address already in use).",
     "distributed.address_in_use", ("25641", "errno: 98 - Address already in use")),
    # a warning interleaved with nvtop's screen, as pasted
    (corpus_message("data_dist.yaml#199"),
     "distributed.ddp_find_unused_warning", ("find_unused_parameters=True",)),
    ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "distributed.rendezvous_closed",
     ("RendezvousClosedError", "--max-restarts")),
    ('    "message": "RendezvousTimeoutError: ",', "distributed.rendezvous_timeout", ("RendezvousTimeoutError", "join_timeout")),
    ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. "
     "See inner exception for details.", "distributed.rendezvous_timeout", ("RendezvousConnectionError", "C10d store")),
    ("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234",
     "distributed.rendezvous_timeout", ("60s", "192.0.0.1:1234")),
    # https://github.com/NVIDIA/nccl/issues/795
    (corpus_message("dist2.yaml#29"), "distributed.nccl_socket_warn", ("recv", "10.200.84.247<58355>", "Broken pipe")),
    ("[rank7]:[E626 05:14:36.393067540 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 7] ProcessGroupNCCL's "
     "watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
     "distributed.nccl_watchdog_stuck", ("480 seconds", "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "SIGABRT")),
    ("The `grad_fn` is needed to access the `AccumulateGrad` and register the post-backward hook",
     "distributed.fsdp_inference_mode", ("grad_fn", "AccumulateGrad", "torch.inference_mode()")),
])
def test_distributed_wordings_from_the_corpus_name_their_values(message, rule, named):
    assert_names(explain_text(message), rule, named)


def test_nccl_last_error_is_not_read_from_the_exception_trailer():
    # https://github.com/pytorch/pytorch/issues/149984: an empty "Last error:" followed by the C++ trailer
    message = corpus_message("dist2.yaml#27")
    assert "Last error:\n\nException raised from checkForNCCLErrorsInternal" in message
    d = explain_text(message)
    assert d.rule == "distributed.nccl_error" and "last_error" not in d.facts


# --- distributed wordings added from round 4 ---------------------------------------------------

def test_checkpoint_exception_names_ranks_step_and_the_rank_error():
    d = explain_fixture("fixtures/distributed/checkpoint_missing_key.py")
    assert d.rule == "distributed.checkpoint_exception", d.rule
    for value in ("dict_keys([0])", "create_local_plan", "Missing key in checkpoint state_dict: bias"):
        assert value in d.summary, (value, d.summary)


@pytest.mark.parametrize("message, rule, named", [
    (corpus_message("r4_b.yaml#30"),
     "distributed.ddp_unused_parameters", ("0 1 2 3", "rank 0")),
    ("RuntimeError: connect() timed out. Original timeout was 60000 ms.",
     "distributed.rendezvous_timeout", ("60000 ms", "TCPStore")),
    (corpus_message("r4_b.yaml#55"),
     "distributed.rendezvous_timeout", ("10.28.1.16", "29400", "RendezvousConnectionError")),
    (corpus_message("r4_b.yaml#56"),
     "distributed.rendezvous_timeout", ("60s", "(IP1, 2222)", "RendezvousConnectionError")),
    ("[rank1]:[W504 16:19:23.815092992 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=103, "
     "addr=[xukele]:38272, remote=[xukele]:39067): Failed to recv, got 0 bytes. Connection was likely closed.",
     "distributed.tcpstore_connection_lost", ("recvValueWithTimeout", "Failed to recv, got 0 bytes", "[xukele]:39067")),
    ('[rank3]:[W625 23:35:35.311127584 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID 0(default_pg) Rank 3] Failed to check '
     'the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: failed to recv, '
     'got 0 bytes', "distributed.tcpstore_connection_lost", ('"should dump" flag', "failed to recv, got 0 bytes")),
    ("RuntimeError: ``sharded_state_dict`` can only be used when parameters are flatten and sharded.",
     "distributed.fsdp_sharded_state_dict_no_shard", ("sharded_state_dict", "NO_SHARD", "world size is 1")),
    # a real rank0 list of implausible ids (https://github.com/Lightning-AI/pytorch-lightning/issues/19096)
    (corpus_message("r4_b.yaml#50"), "distributed.deepspeed_rank_disagreement", ("rank2", "garbled")),
    ('File ".../deepspeed/runtime/zero/stage3.py", line 525, in defragment\n'
     "    assert len(set(t.dtype for t in tensors)) == 1",
     "distributed.deepspeed_zero3_mixed_dtype", ("`defragment`", "same dtype")),
    ("RuntimeError: Process 1 exited with error code 10 and exception:\nTraceback (most recent call last):",
     "distributed.test_process_failed", ("Process 1", "error code 10")),
    (corpus_message("r4_b.yaml#6"),
     "distributed.child_failed", ("train.py", "rank 1", "exitcode  : 1", "Root Cause")),
    (corpus_message("data_dist.yaml#121"),
     "distributed.child_failed", ("exitcode: -9", "36071", "SIGKILL")),
    ("what(): NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: A "
     "call failed possibly due to a network error or a remote process exiting prematurely. Last error: NET/IB : Got "
     "completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129",
     "distributed.nccl_error", ("ncclRemoteError", "with error 12", "2.14.3")),
    ("RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809553 "
     "milliseconds before timing out.", "distributed.nccl_timeout", ("rank 1", "ALLREDUCE", "aborted")),
])
def test_round4_distributed_wordings_name_their_values(message, rule, named):
    assert_names(explain_text(message), rule, named)


def test_tcpstore_and_deepspeed_rules_leave_unrelated_messages_alone():
    assert explain_text(corpus_message("r15_b.yaml#30")).rule != \
        "distributed.tcpstore_connection_lost"
    # a project's own assert (https://github.com/jiangnanboy/t5-onnx-corrector/issues/2 as r10_b.yaml#27)
    assert explain_text(corpus_message("r10_b.yaml#27")).rule is None


# --- round 5: sampler, checkpoint writing, shared memory, store binding and backends -------------

def test_empty_dataset_under_shuffle_names_num_samples_and_the_data_path():
    d = explain_fixture("fixtures/data/sampler_empty_dataset.py")
    assert d.rule == "data.sampler_empty_dataset" and d.category == "data"
    assert "num_samples=0" in d.summary and "empty" in d.summary
    assert any("len(dataset)" in fix for fix in d.fixes)


def test_save_into_a_missing_folder_names_the_folder():
    d = explain_fixture("fixtures/data/save_missing_directory.py")
    assert d.rule == "data.checkpoint_save_failed"
    assert "/tmp/explainer-fixture-runs/no-such-run/checkpoints" in d.summary
    assert any("makedirs" in fix for fix in d.fixes)


def test_nccl_backend_in_a_build_without_nccl_points_to_gloo():
    d = explain_fixture("fixtures/distributed/nccl_not_built.py")
    assert d.rule == "distributed.backend_not_available"
    assert "NCCL" in d.summary and "gloo" in d.summary


@pytest.mark.parametrize("message, rule, named", [
    # raised live: a DataLoader with batch_size=0
    (_live(lambda: torch.utils.data.DataLoader(range(3), batch_size=0)), "data.sampler_empty_dataset",
     ("batch_size=0",)),
    ("RuntimeError: unable to write to file </torch_31911_952036340_6686>: No space left on device (28)",
     "data.shared_memory_full", ("torch_31911_952036340_6686", "No space left on device (28)", "/dev/shm")),
    ("RuntimeError: [enforce fail at inline_container.cc:445] . PytorchStreamWriter failed writing file data/176: "
     "file write failed", "data.checkpoint_save_failed", ("data/176", "file write failed")),
    (corpus_message("r24_a.yaml#13"),
     "data.checkpoint_save_failed", ("unexpected pos 128 vs 0",)),
    (corpus_message("r5_a.yaml#42"),
     "data.weights_only_load", ("unsupported persistent id", "weights_only=True")),
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
     "server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to "
     "bind to 0.0.0.0:98 (errno: 13 - Permission denied).",
     "distributed.store_bind_failed", ("[::]:98", "errno: 13 - Permission denied", "below 1024")),
    # https://github.com/pytorch/pytorch/pull/130797
    (corpus_message("r9_b.yaml#92"), "distributed.store_bind_failed", ("port 1", "EACCES", "code -13", "below 1024")),
    ("[W socket.cpp:436] [c10d] The server socket has failed to bind to activate.adobe.com:10086 (system error: 10048 - "
     "通常每个套接字地址(协议/网络地址/端口)只允许使用一次。).", "distributed.address_in_use", ("10086", "system error: 10048")),
    ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [WIN-57PDHSNQNT2]:28133 (system error: "
     "10049 - 在其上文中，该请求的地址无效。).", "distributed.store_connect_failed",
     ("[WIN-57PDHSNQNT2]:28133", "system error: 10049", "harmless")),
    (corpus_message("r8_b.yaml#93"),
     "distributed.rendezvous_timeout", ("worker_count=4", "world_size=2", "0:02:00", "More processes")),
    # raised live: torch's store-based barrier on rank 3 of 8, alone in its store, with a one-second timeout
    (_store_barrier_alone(), "distributed.rendezvous_timeout", ("num_workers_joined=1", "world_size=8", "Only 1 of 8")),
    ("RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
     "distributed.backend_not_available", ("libuv", "USE_LIBUV=0")),
    ("ValueError: LOCAL_RANK (default 0) and args.device inconsistent. This can only happens in inference mode. "
     "Please use CUDA_VISIBLE_DEVICES=x for single-GPU training.",
     "distributed.sat_local_rank_device", ("LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "'cpu'")),
])
def test_round5_data_and_distributed_wordings_name_their_values(message, rule, named):
    assert_names(explain_text(message), rule, named)


def test_wrapped_device_errors_under_weights_only_go_to_the_device_rules():
    # https://github.com/TJU-Aerial-Robotics/YOPO/issues/58 (its last line)
    message = ("_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` set to "
               "`False` will likely succeed, but it can result in arbitrary code execution.Do it only if you get the "
               "file from a trusted source. WeightsUnpickler error: Attempting to deserialize object on a CUDA device "
               "but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load "
               "with map_location=torch.device('cpu') to map your storages to the CPU.")
    assert explain_text(message).rule != "data.weights_only_load"


def test_nccl_last_error_behind_ray_log_prefixes():
    message = corpus_message("r21_b.yaml#36")  # vLLM on Ray: every line behind its Ray log prefix
    d = explain_text(message)
    assert_names(d, "distributed.nccl_error", ("Last error: Attribute busid of node nic not found", "2.18.6"))


def test_sigterm_cleanup_line_yields_to_the_error_in_the_same_block():
    message = ("RuntimeError: NCCL communicator was aborted on rank 0.  Original reason for failure was: [Rank 0] "
               "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=35582, OpType=ALLREDUCE, "
               "Timeout(ms)=1800000) ran for 1800366 milliseconds before timing out.\n"
               "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 886321 closing signal SIGTERM")
    assert_names(explain_text(message), "distributed.nccl_timeout", ("ALLREDUCE", "1800000"))


def test_env_rendezvous_without_rank_names_the_variable_and_torchrun():
    d = explain_fixture("fixtures/distributed/env_rendezvous_no_rank.py")
    assert d.rule == "distributed.env_rendezvous_missing_var"
    assert "RANK" in d.summary and "env://" in d.summary and "torchrun" in d.summary


def test_ddp_device_ids_for_a_cpu_module_names_both_devices():
    d = explain_fixture("fixtures/distributed/ddp_device_ids_cpu_module.py")
    assert d.rule == "distributed.ddp_device_ids_cpu_module"
    assert "[0]" in d.summary and "device(type='cpu')" in d.summary
    assert any("model.to(local_rank)" in fix for fix in d.fixes)


def test_ddp_around_a_frozen_model_says_nothing_requires_grad():
    d = explain_fixture("fixtures/distributed/ddp_frozen_model.py")
    assert d.rule == "distributed.ddp_no_trainable_params"
    assert "requires_grad=False" in d.summary


@pytest.mark.parametrize("message, rule, named", [
    ("B-nemo-ft3/0 [default1]:[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and "
     "retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait "
     "timeout after 600000ms, keys: /default_pg/0//cuda//0",
     "distributed.nccl_unique_id_store", ("Rank 1", "rank 0", "wait timeout after 600000ms", "'0'")),
    # https://github.com/pytorch/pytorch/issues/82091 (a comment's first two lines; torch's old spelling "retreiving")
    ("RuntimeError: [2] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store "
     "by key '0', but store->get('0') got error: Socket Timeout\nException raised from recvBytes at "
     "../torch/csrc/distributed/c10d/Utils.hpp:580 (most recent call first):",
     "distributed.nccl_unique_id_store", ("Rank 2", "Socket Timeout", "'0'")),
    # https://github.com/hiyouga/LlamaFactory/issues/2470 (an excerpt, verbatim: a node's last frame and its error, pdsh's
    # "gpu004: " before each line)
    ("gpu004:   File \"/data/vayu/miniconda3/envs/etuning2/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", "
     "line 3696, in barrier\ngpu004:     work = default_pg.barrier(opts=opts)\ngpu004: RuntimeError: [14] is setting up "
     "NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got "
     "error: Connection reset by peer. This may indicate a possible application crash on rank 0 or a network set up issue.",
     "distributed.nccl_unique_id_store", ("Rank 14", "Connection reset by peer", "crashed")),
    ("RuntimeError: DDP expects same model across all ranks, but Rank 5 has 128 params, while rank 0 has inconsistent "
     "1506656875 params.", "distributed.ddp_model_mismatch", ("128", "1506656875", "not at the same point")),
    (corpus_message("r23_b.yaml#46"), "distributed.ddp_model_mismatch", ("params[8]", "[27, 512]", "process 0")),
])
def test_round5_store_and_ddp_wordings_name_their_values(message, rule, named):
    assert_names(explain_text(message), rule, named)
