"""`explainer explain` on real torchrun logs of two gloo ranks on CPU (the new user's review of 2026-12-07).

fixtures/logs/torchrun_team_rule_quote.log and torchrun_rank_exit.log are verbatim output of
`python -m torch.distributed.run --nproc_per_node=2 -m explainer SCRIPT ARGS 2>&1 | tee LOG`, run by the reviewer
on this machine (torch 2.13.0+cpu, Python 3.11): in the first, rank 1 of a team's script raises its own
`widgetlib.QuotaError` (`c.put(...)` over a 0.0001 GB quota) while rank 0 waits in a barrier; in the second
(their ddp_fail.py, mode `exit`), rank 1 prints "giving up" and raises SystemExit(3) at step 1, and rank 0's DDP
forward then loses its Gloo connection.
"""

import io

import pytest

from conftest import ROOT
from explainer.cli.explain import explain_stream, ranks_note
from explainer.rules.base import reset_default_rulebase

LOGS = ROOT / "fixtures" / "logs"
QUOTA_RULE = """---
id: widget.store.quota
category: memory
title: A WidgetCo checkpoint bucket is over its quota
patterns:
  - '(?:\\w+\\.)*QuotaError: quota exceeded for bucket (?P<bucket>[\\w-]+): (?P<need>[\\d.]+) GB > (?P<limit>[\\d.]+) GB'
summary:
  - "Bucket {{ bucket }} would need {{ need }} GB, over its {{ limit }} GB quota."
examples:
  - message: "widgetlib.QuotaError: quota exceeded for bucket ckpt-prod: 5.00 GB > 4 GB"
    source: https://example.org/widget.store.quota
---
## What it means

A quota.
"""


def _explained(name: str) -> list:
    return explain_stream(io.StringIO((LOGS / name).read_text(encoding="utf-8")))


@pytest.fixture
def quota_pack(tmp_path, monkeypatch):
    pack = tmp_path / "rules"
    pack.mkdir()
    (pack / "pack.yaml").write_text("prefix: widget\n")
    (pack / "quota.md").write_text(QUOTA_RULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXPLAINER_RULES", str(pack))
    reset_default_rulebase()
    yield pack
    reset_default_rulebase()


def test_a_team_rule_matching_the_error_torchruns_summary_quotes_leaves_the_summary_a_consequence(quota_pack):
    quota, summary = _explained("torchrun_team_rule_quote.log")  # not a third: the summary again, as the team's
    assert quota.rule == "widget.store.quota" and quota.facts["ranks"] == [1] and quota.facts["root_cause_rank"] == 1
    assert summary.rule == "distributed.child_failed" and summary.facts["root_rank"] == 1
    assert summary.facts["consequence_of"] == {"rank": 1, "rule": "widget.store.quota", "input_line": 11}
    assert "consequence of rank 1's failure (widget.store.quota at line 11)" in ranks_note(summary)


def test_without_the_team_rule_the_summary_is_the_same_consequence():
    worker, summary = _explained("torchrun_team_rule_quote.log")
    assert worker.rule is None and summary.rule == "distributed.child_failed"
    assert summary.facts["consequence_of"]["rank"] == 1


def test_torchruns_summary_naming_a_rank_that_exited_silently_is_that_ranks_not_the_first_printers():
    gloo, summary = _explained("torchrun_rank_exit.log")
    assert gloo.rule == "distributed.gloo_connection" and gloo.facts["ranks"] == [0]
    assert summary.rule == "distributed.child_failed" and summary.facts["root_rank"] == 1
    assert summary.facts["consequence_of"] == {"rank": 1, "rule": None, "input_line": None, "exitcode": 3}
    note = ranks_note(summary)
    assert "consequence of rank 1's failure (exit code 3; it printed no error of its own)" in note
    assert "rank 0's failure" not in note
    assert "torchrun's summary (line 38) names rank 1 as the first to fail, exit code 3" in ranks_note(gloo)
    assert "launcher_report" not in gloo.facts  # the summary is not rank 0's report


def test_the_summarys_explainer_failed_is_said_to_be_the_runners_name_with_the_script_it_ran():
    (summary,) = [d for d in _explained("torchrun_team_rule_quote.log") if d.rule == "distributed.child_failed"]
    assert summary.summary.startswith("torchrun reports /tmp/newuser57/proj/scripts/ddp_quota.py (the summary's "
                                      "`explainer` is the module torchrun started, `-m explainer`, which ran the script: "
                                      "the script failed, not the explainer) failed: rank 1 "), summary.summary
    (summary,) = [d for d in _explained("torchrun_rank_exit.log") if d.rule == "distributed.child_failed"]
    assert summary.summary.startswith("torchrun reports your script (the summary's `explainer` is"), summary.summary
    assert "torchrun reports explainer failed" not in summary.summary


def test_a_gloo_connection_closed_on_one_host_sends_the_user_to_the_other_ranks_output_not_to_interfaces():
    (gloo,) = [d for d in _explained("torchrun_rank_exit.log") if d.rule == "distributed.gloo_connection"]
    assert gloo.facts["peer"] == "127.0.0.1"
    assert gloo.fixes[0].startswith("Look at the other rank's output first (the process at 127.0.0.1:25224)")
    assert not any("GLOO_SOCKET_IFNAME" in fix or "ports" in fix for fix in gloo.fixes), gloo.fixes


def test_a_gloo_connection_closed_by_a_peer_on_another_host_still_names_the_interface_after_the_peers_output():
    # verbatim, https://github.com/pytorch/pytorch/issues/75512
    [gloo] = explain_stream(io.StringIO("    pg.recv([tensor], src, tag).wait()\nRuntimeError: [../third_party/gloo/gloo/"
                                        "transport/tcp/pair.cc:598] Connection closed by peer [18.25.6.30]:28048\n"))
    assert gloo.rule == "distributed.gloo_connection"
    assert gloo.fixes[0].startswith("Look at the other rank's output first (the process at 18.25.6.30:28048)")
    assert gloo.fixes[1].startswith("Only where the ranks run on several machines: pick the interface the ranks share")


def test_gloo_failing_to_build_its_mesh_names_the_interface_first():
    # verbatim, https://github.com/sehoffmann/dmlcloud/issues/47
    [gloo] = explain_stream(io.StringIO(
        "    backend_class = ProcessGroupGloo(\nRuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/"
        "transport/tcp/pair.h:301] Connect timeout [none]\n"))
    assert gloo.rule == "distributed.gloo_connection"
    assert gloo.fixes[0].startswith("Pick the interface the ranks share: `GLOO_SOCKET_IFNAME=eth0`")
    assert gloo.fixes[1].startswith("Look at the other rank's output first: ")
