"""Round-26 wordings for distributed: Gloo's and NCCL's own sockets failing to bind (Address already in use, not the
TCPStore's MASTER_PORT), the TensorPipe RPC agent's pipe errors, NCCL's topology detection missing a PCI path in /sys,
DTensor's Shard assertion on a dim smaller than the mesh (as distributed checkpoint reports it per rank), and a Gloo
exception that aborted the process. Each corpus message (verbatim from the opened rounds) or cited wording is claimed
by the right rule with its values named; near misses stay with their own rules. None of these can be raised on this
machine's CPU torch (2.13 no longer asserts on small shards; the others need several hosts or an RPC group)."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_paste

CORPUS_CASES = [
    ("r26_a.yaml#36", "distributed.transport_bind_in_use", ["pair.cc:176", "bind: Address already in use",
                                                             "ProcessGroupGloo"]),
    ("r26_b.yaml#27", "distributed.transport_bind_in_use", ["include/socket.h:333", "bootstrap.cc:91 returned 2",
                                                             "NCCL's bootstrap"]),
    ("r26_a.yaml#14", "distributed.tensorpipe_agent_error", ["worker0", "accepting incoming pipe", "eof",
                                                              "tensorpipe/transport/ibv/connection_impl.cc:302",
                                                              "tensorpipe_agent.cpp:530"]),
    ("r26_a.yaml#7", "distributed.nccl_topo_real_path", ["NCCL 2.4.2+cuda9.0", "include/topo.h:27",
                                                          "/sys/class/pci_bus/0000:02/../../0000:02:00.0"]),
    ("r26_a.yaml#44", "distributed.dtensor_shard_smaller_than_mesh", ["RANK 31", "in reduce_scatter", "dim 0",
                                                                       "over 32 devices"]),
    ("r26_a.yaml#15", "distributed.gloo_connection", ["gloo::IoException", "pair.cc:563", "[172.31.78.254]:13001"]),
]

CITED_CASES = [
    # Gloo's listen socket (pytorch/pytorch#59256), and NCCL's newer socket.cc spelling (NVIDIA/nccl#1882)
    ("RuntimeError: [gloo/transport/tcp/pair.cc:185] listen: Address already in use",
     "distributed.transport_bind_in_use", ["pair.cc:185", "listen: Address already in use"]),
    ("misc/socket.cc:409 NCCL WARN Call to bind failed: Address already in use",
     "distributed.transport_bind_in_use", ["misc/socket.cc:409", "ephemeral ports"]),
    # TensorPipe: a response read by worker3 (pytorch/pytorch#50965), a request from 27 (pytorch/pytorch#85607),
    # a response sent by the parameter server (pytorch/tensorpipe#411)
    ("Jan 22 16:30:40 [W tensorpipe_agent.cpp:838] RPC agent for worker3 encountered error when reading incoming "
     "response from worker0: EOF: end of file",
     "distributed.tensorpipe_agent_error", ["worker3", "reading incoming response from worker0", "EOF: end of file"]),
    ("[W tensorpipe_agent.cpp:726] RPC agent for 0 encountered error when reading incoming request from 27: sendmsg: "
     "Broken pipe (this error originated at tensorpipe/common/socket.h:105)",
     "distributed.tensorpipe_agent_error", ["sendmsg: Broken pipe", "tensorpipe/common/socket.h:105"]),
    ("RPC agent for parameter_server encountered error when sending response to request #4 to trainer_1: eof (this "
     "error originated at tensorpipe/transport/shm/connection_impl.cc:259)",
     "distributed.tensorpipe_agent_error", ["parameter_server", "request #4 to trainer_1", "shm/connection_impl.cc:259"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def _rules(message: str) -> list[str]:
    return [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]


def test_near_misses_stay_with_their_own_rules():
    # the TCPStore on MASTER_PORT keeps distributed.address_in_use (pytorch/pytorch#85604)
    store = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
             "port: 35733, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use")
    assert _rules(store)[:1] == ["distributed.address_in_use"]
    # Gloo's connect to a peer keeps distributed.gloo_connection (pytorch/pytorch#108732)
    connect = ("RuntimeError: [/opt/conda/conda-bld/pytorch_1682343967769/work/third_party/gloo/gloo/transport/tcp/"
               "pair.cc:799] connect [172.31.71.170]:13195: Connection refused")
    assert _rules(connect)[:1] == ["distributed.gloo_connection"]
    # NCCL's broken socket to a peer keeps distributed.nccl_socket_warn (NVIDIA/nccl#795)
    assert _rules("a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from "
                  "10.200.84.247<58355> failed : Broken pipe")[:1] == ["distributed.nccl_socket_warn"]
