"""Round-33 wordings for device, distributed and memory (detection frameworks' compiled ops, speech and NLP toolkits
of 2017-2023, learners' notebooks): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited) are claimed too, and near misses stay unclaimed. None of these can be raised by the CPU torch the tests run
on (CUDA kernels, cuDNN, NCCL sockets), so there are no live fixtures."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r33_a.yaml#7", "device.no_kernel_image", ["modulated_deformable_im2col_cuda", "DCNv2"]),
    ("r33_a.yaml#75", "memory.cuda_oom", ["24.92 GiB", "23.70 GiB", "864.09 MiB", "22.18 GiB", "900.00 MiB"]),
    ("r33_a.yaml#76", "memory.cuda_oom", ["21.53 GiB", "11.99 GiB", "1.23 GiB", "7.74 GiB", "1.98 GiB"]),
    ("r33_a.yaml#92", "distributed.nccl_error",
     ["ProcessGroupNCCL.cpp:957", "unhandled system error", "barrier", "distributed_c10d.py:2709"]),
    ("r33_b.yaml#3", "device.device_assert", ["error (59)", "THCStorage.cpp:36"]),
    ("r33_b.yaml#31", "device.cudnn_status", ["CUDNN_STATUS_EXECUTION_FAILED", "launch.py:231"]),
    ("r33_b.yaml#38", "distributed.nccl_connect_retry", ["Connection refused", "pytorch-fairseq-worker-0", "docker0"]),
    ("r33_b.yaml#72", "memory.cuda_oom",
     ["318.00 MiB", "6.00 GiB", "17179869184.00 GiB", "5.00 GiB", "271.88 MiB", "WDDM"]),
    ("r33_c.yaml#1", "memory.cuda_error_oom", ["cuda runtime error (2)", "THCStorage.cu:58"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # Deformable-DETR's multi-scale deformable attention, as built by mmcv (mmsegmentation#3548), and a DCN op of
    # another build (vedadet#38), its backward too (DentexSegAndDet#4)
    ("error in ms_deformable_im2col_cuda: no kernel image is available for execution on the device",
     "device.no_kernel_image", ["ms_deformable_im2col_cuda", "multi-scale deformable attention"]),
    ("error in deformable_im2col: no kernel image is available for execution on the device",
     "device.no_kernel_image", ["deformable_im2col", "deformable convolution"]),
    ("error in ms_deformable_col2im_cuda: no kernel image is available for execution on the device",
     "device.no_kernel_image", ["ms_deformable_col2im_cuda"]),
    # NCCL's retry line quoted alone (wenet#959), and NCCL 2.24's counted retries (LlamaFactory#8045)
    ('"NCCL INFO Call to connect returned Connection refused, retrying "', "distributed.nccl_connect_retry",
     ["Connection refused"]),
    ("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) after "
     "sleep for 2600 msec", "distributed.nccl_connect_retry", ["No route to host", "26 of 34", "2600 ms", "zgiot"]),
    ("host-a:1450:1502 [1] NCCL INFO Call to connect returned Connection timed out, retrying",
     "distributed.nccl_connect_retry", ["Connection timed out", "firewall"]),
    # the old THC wording with its space kept still names the place
    ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58",
     "memory.cuda_error_oom", ["THCStorage.cu:58"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # NCCL's final warning once it gave up is not a retry (nccl-tests#15, nccl-tests#166)
    ("gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out",
     "distributed.nccl_connect_retry"),
    ("ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
     "Software caused connection abort", "distributed.nccl_connect_retry"),
    # torch's own store client is store_connect_failed's
    ("[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 111 - Connection "
     "refused).", "distributed.nccl_connect_retry"),
    # another extension's own error line, not a missing kernel image
    ("error in modulated_deformable_im2col_cuda: an illegal memory access was encountered", "device.no_kernel_image"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_the_nccl_error_still_leads_over_its_retry_lines():
    text = ("node1:16:63 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:957, unhandled system "
            "error, NCCL version 21.0.3")
    assert explain_paste(text).rule == "distributed.nccl_error"
