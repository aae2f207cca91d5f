"""Round 31's readings and the shared changes its writers asked for: the out-of-memory probe finds this process
anywhere in the message's list of processes (not only first or last), code torch.hub cached from a repository is not
torch's own, JAX's XLA log of its own NCCL communicator stays unclaimed, and Ray's report of a dead actor is a
distributed failure. Corpus messages verbatim from the opened rounds."""

from __future__ import annotations

from conftest import corpus_message, explain_paste, place, rules_of


def test_this_process_is_found_in_the_middle_of_the_oom_process_list():
    diagnosis = explain_paste(corpus_message("r31_c.yaml#17"))
    assert diagnosis.rule == "memory.cuda_oom"
    assert (diagnosis.facts["own_pid"], diagnosis.facts["own_used"]) == (62200, "21.98 GiB")
    assert "Process 62200, with 21.98 GiB in use, is this process itself" in diagnosis.summary


def test_xlas_own_nccl_log_is_not_torchs_nccl_error():
    assert set(rules_of(corpus_message("r31_a.yaml#37"))) <= {None}


def test_torchs_nccl_error_after_the_same_words_is_still_claimed():
    # torch's wording of the same NCCL result (DeepEP#106), after the XLA log's test above
    assert "distributed.nccl_error" in rules_of(corpus_message("dist2.yaml#32"))


def test_a_dead_ray_actor_under_vllm_is_a_distributed_failure():
    assert explain_paste(corpus_message("r31_c.yaml#32")).rule == "distributed.ray_worker_died"


def test_a_torch_hub_repositorys_cached_code_is_not_torchs_own():
    diagnosis = explain_paste(corpus_message("r31_b.yaml#11"))
    assert place(diagnosis.location)[:2] == ("silero.py", 87)
    assert "package.PackageImporter(model_path)" in diagnosis.location.code
