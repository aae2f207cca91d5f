"""Ranks given to torch.distributed calls: a send to the process itself, groups with ranks the job lacks. Each
fixture raises the real torch error in a one-process gloo group."""

from __future__ import annotations

from conftest import explain_fixture
from probe_helpers import culprit, has_fix


def test_send_to_own_rank_names_the_rank_variable():
    d = explain_fixture("fixtures/distributed/send_to_self.py")
    assert d.rule == "distributed.p2p_self_rank"
    assert (d.facts["rank_arg"], d.facts["rank_value"], d.facts["rank_type"]) == ("next_rank", "0", "destination")
    assert culprit(d, "next_rank")["repr"] == "0"
    assert has_fix(d, "`if next_rank != dist.get_rank(): dist.send(...)`")


def test_new_group_larger_than_the_world_names_the_ranks_and_both_sizes():
    d = explain_fixture("fixtures/distributed/new_group_too_large.py")
    assert d.rule == "distributed.group_ranks"
    assert (d.facts["group_size"], d.facts["world_size"]) == (2, 1)
    assert culprit(d, "tp_ranks")["repr"] == "[0, 1]"
    assert "but this job has only 1 process (world size 1)" in d.summary


def test_new_group_rank_past_the_world():
    d = explain_fixture("fixtures/distributed/new_group_rank_out_of_range.py")
    assert d.rule == "distributed.group_ranks"
    assert (d.facts["bad_rank"], d.facts["last_rank"]) == (1, 0)
    assert "`new_group` got dp_ranks = [1], which lists rank 1" in d.summary


def test_all_gather_into_tensor_names_the_output_and_the_input():
    d = explain_fixture("fixtures/distributed/all_gather_into_tensor_size.py")
    assert d.rule == "distributed.collective_buffer_size"
    assert culprit(d, "all_emb")["shape"] == [8, 8]
    assert culprit(d, "emb")["shape"] == [4, 8]
    assert "fills `all_emb` (8, 8) with one copy of `emb` (4, 8) per rank" in d.summary
    assert has_fix(d, "`all_emb = emb.new_empty((dist.get_world_size() * emb.shape[0], *emb.shape[1:]))`")


def test_ddp_of_a_frozen_module_names_the_module():
    d = explain_fixture("fixtures/distributed/ddp_frozen_model.py")
    assert d.rule == "distributed.ddp_no_trainable_params"
    assert (d.facts["wrapped_name"], d.facts["trainable_count"]) == ("teacher", 0)
    culprit(d, "teacher")
    assert "DDP was given teacher, whose 2 parameters all have requires_grad=False" in d.summary
