"""Round-29 wordings for device and distributed (containers and clusters: NCCL over InfiniBand, torchrun's rendezvous
and the c10d store, ProcessGroupNCCL's dump signal; domestic accelerators: Ascend's HCCL, Moore Threads' MUSA, ROCm/DCU;
and THC's old busy-device check): each corpus message (verbatim from the opened rounds) is claimed, from its text alone,
by the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r29_a.yaml#7", "distributed.nccl_ibv_call_failed", ["ibv_modify_qp", "Invalid argument", "ibvwrap.cc:284"]),
    ("r29_a.yaml#21", "distributed.nccl_error", ["ProcessGroupNCCL.cpp:272", "system error"]),
    ("r29_a.yaml#22", "distributed.nccl_error", ["ProcessGroupNCCL.cpp:825", "ncclSystemError"]),
    ("r29_a.yaml#23", "distributed.rendezvous_timeout", ["RendezvousConnectionError"]),
    ("r29_a.yaml#27", "distributed.store_wait_timeout", ["600000 ms"]),
    ("r29_a.yaml#32", "device.cuda_busy_unavailable", ["error=46", "THCTensorRandom.cu line=25"]),
    ("r29_a.yaml#33", "device.cuda_busy_unavailable", ["error=46", "THCStream.cpp line=40"]),
    ("r29_a.yaml#34", "device.cuda_busy_unavailable", ["error=46", "THCStorage.cu line=66"]),
    ("r29_b.yaml#36", "device.cuda_busy_unavailable", ["unspecified launch failure", "destroyEvent"]),
    ("r29_b.yaml#50", "distributed.hccl_error", ["hcclCommInitRootInfoConfig", "error code is 7", "EJ0001"]),
    ("r29_b.yaml#72", "distributed.nccl_timeout", ["ProcessGroupNCCL.cpp:1870", "NCCL work: 23"]),
    ("r29_b.yaml#76", "device.no_cuda_device", ["no ROCm-capable device", "HIPException.cpp:45"]),
    ("r29_b.yaml#77", "device.no_cuda_device", ["no ROCm-capable device", "HIPException.cpp:45"]),
    ("r29_b.yaml#78", "device.musa_error", ["MUSA", "unknown error"]),
    ("r29_b.yaml#85", "distributed.nccl_unsupported_dtype", ["BFloat16", "NCCL 2.10"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # NCCL's verbs wrapper with other calls and errors (nccl-tests#185, #227, #206)
    ("misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable",
     "distributed.nccl_ibv_call_failed", ["ibv_modify_qp", "Network is unreachable", "ibvwrap.cc:187"]),
    ("ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out.",
     "distributed.nccl_ibv_call_failed", ["Connection timed out", "ibvwrap.c:160"]),
    ("misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory",
     "distributed.nccl_ibv_call_failed", ["ibv_reg_mr_iova2", "ulimit -l"]),
    # the dump signal from another rank (OpenRLHF#1126), and a terminal's wrap inside it (torchtune#2651)
    ("[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump "
     "signal due to a collective timeout from  rank 6 and we will try our best to dump the debug info. Last enqueued NCCL "
     "work: 460631, last completed NCCL work: 460630.This is most likely caused by incorrect usages of collectives",
     "distributed.nccl_timeout", ["rank 6", "460631", "460630", "ProcessGroupNCCL.cpp:1746"]),
    ("[rank7]:[E430 05:09:48.083703086 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 7] Received a dump "
     "signal due to a collective timeout from this local \nrank and we will try our best to dump the debug info. Last "
     "enqueued NCCL work: 9387, last completed NCCL work: 9386.", "distributed.nccl_timeout", ["9387", "9386"]),
    # the dtype table's other misses (pytorch#99518, accelerate#3295)
    ("RuntimeError: Input tensor data type is not supported for NCCL process group: ComplexFloat",
     "distributed.nccl_unsupported_dtype", ["ComplexFloat", "view_as_real"]),
    ("`Input tensor data type is not supported for NCCL process group: Short`", "distributed.nccl_unsupported_dtype",
     ["Short", "int32"]),
    # MUSA's other runtime errors (torch_musa#75, #105)
    ("    return self.orig_to(*args, **kwargs)\nRuntimeError: MUSA error: unknown error", "device.musa_error",
     ["unknown error", "Guilty Lockup"]),
    ("RuntimeError: MUSA error: an illegal memory access was encountered", "device.musa_error",
     ["an illegal memory access was encountered", "MUSA_LAUNCH_BLOCKING=1"]),
    # the HCCL failure of the older CANN layout keeps its EJ0001 reading (LlamaFactory#3839)
    ("RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n[ERROR] 2024-05-21-11:57:54 "
     "(PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.\nEJ0001: 2024-05-21-11:57:54.167.645 Failed to "
     "initialize the HCCP process. Reason: Maybe the last training process is running.", "distributed.hccl_error",
     ["EJ0001", "ProcessGroupHCCL.cpp:64"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # NCCL's socket layer is nccl_socket_warn's (nccl#795)
    ("a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from "
     "10.200.84.247<58355> failed : Broken pipe", "distributed.nccl_ibv_call_failed"),
    # torch's error with NCCL's IB warning under it stays nccl_error's, which names the warning (ms-swift#6107)
    ("> [rank10]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)\n> \n"
     "> [2025-10-13 10:12:54] iv-ydin754tmoxjd1twgixh:1458548:1480527 [0] misc/ibvwrap.cc:182 NCCL WARN Call to "
     "ibv_reg_mr_iova2 failed with error Invalid argument", "distributed.nccl_ibv_call_failed"),
    # Ascend's HCCL dtype table is not NCCL's (Ascend/pytorch#3)
    ("RuntimeError: Unsupported data type for HCCL process group", "distributed.nccl_unsupported_dtype"),
    # the dispatcher's missing MUSA kernel is not a MUSA runtime error (torch_musa#105)
    ("NotImplementedError: Could not run 'aten::_thnn_fused_gru_cell' with arguments from the 'musa' backend.",
     "device.musa_error"),
    # the ncclUniqueId exchange quoting the store's timeout stays nccl_unique_id_store's
    ("torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
     "c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, keys: "
     "/default_pg/0//cuda//0", "distributed.store_wait_timeout"),
    # the keep-alive warning naming the exception type stays with its own summary, not the bare-name one (an excerpt
    # of wespeaker#171, r10_b.yaml#39: its warning line)
    (next(line for line in corpus_message("r10_b.yaml#39").splitlines() if "failed to shutdown the rendezvous" in line),
     "device.no_cuda_device"),
    # ROCm's missing code object is hip_error's, not "no device"
    ("RuntimeError: HIP error: invalid device function", "device.no_cuda_device"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_nccl_error_still_leads_over_the_ib_warning_under_it():
    text = ("> [rank10]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)\n> \n"
            "> [2025-10-13 10:12:54] iv-ydin754tmoxjd1twgixh:1458548:1480527 [0] misc/ibvwrap.cc:182 NCCL WARN Call to "
            "ibv_reg_mr_iova2 failed with error Invalid argument")
    assert_names(explain_paste(text), "distributed.nccl_error", ["ibv_reg_mr_iova2"])


def test_watchdog_timeout_still_leads_over_the_dump_signal():
    # an excerpt of BasicSR#737 (data_dist.yaml#114): its first watchdog line, alone
    text = next(line for line in corpus_message("data_dist.yaml#114").splitlines() if "Watchdog caught" in line)
    assert_names(explain_paste(text), "distributed.nccl_timeout", ["ALLREDUCE", "600020"])
