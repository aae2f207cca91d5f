"""Finding and explaining errors in whole logs: multi-rank torchrun output, a DataLoader worker
failure inside a timestamped log, a pasted GitHub issue, bare messages.

The logs under fixtures/logs/ embed the real stderr of fixture scripts (plus verbatim NCCL and
torchrun lines from public issues); test_logs_embed_current_fixture_output keeps them honest.
"""

from __future__ import annotations

import io
import json

import pytest

from explainer._cli_explain import explain_stream
from explainer._explain import exception_text
from explainer._logscan import dedupe_key, scan

from conftest import ROOT, raise_fixture, run_explainer

LOGS = ROOT / "fixtures" / "logs"


LOG_NAMES = ["fixtures/logs/torchrun_two_ranks.log", "fixtures/logs/dataloader_worker.log",
             "fixtures/logs/issue_paste.md"]
BARE_MESSAGES = [
    ("Expected more than 1 value per channel when training, got input size torch.Size([1, 10])",
     "shape.batchnorm_batch_one"),
    ("`optimizer got an empty parameter list`", "other.empty_optimizer"),
    ("[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, "
     "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802211 milliseconds before timing out.", "distributed.nccl_timeout"),
]


@pytest.fixture(scope="module")
def cli_output(tmp_path_factory) -> dict[str, list[dict]]:
    """One `explainer explain --format json` run over every log and pasted message (one interpreter start)."""
    folder = tmp_path_factory.mktemp("pasted")
    bare = []
    for number, (message, _) in enumerate(BARE_MESSAGES):
        path = folder / f"message{number}.txt"
        path.write_text(message + "\n", encoding="utf-8")
        bare.append(str(path))
    result = run_explainer("explain", "--format", "json", *LOG_NAMES, *bare)
    assert result.returncode == 0, result.stderr
    by_input: dict[str, list[dict]] = {}
    for line in result.stdout.splitlines():
        data = json.loads(line)
        by_input.setdefault(data["input"], []).append(data)
    by_input["bare"] = [by_input.get(path, [None])[0] for path in bare]
    return by_input


def _by_rule(diagnoses: list[dict]) -> dict:
    rules = [d["rule"] for d in diagnoses]
    assert len(rules) == len(set(rules)), f"an error was explained more than once: {rules}"
    return {d["rule"]: d for d in diagnoses}


# --- whole logs through the command line --------------------------------------------------------

def test_torchrun_log_one_explanation_per_distinct_error(cli_output):
    name = "fixtures/logs/torchrun_two_ranks.log"
    found = _by_rule(cli_output[name])
    assert set(found) == {"distributed.ddp_unused_parameters", "distributed.nccl_timeout",
                          "distributed.child_failed"}
    assert all(d["input"] == name for d in found.values())
    ddp = found["distributed.ddp_unused_parameters"]
    assert ddp["facts"]["ranks"] == [0, 1] and ddp["facts"]["occurrences"] == 2
    assert ddp["facts"]["unused_indices"] == "2 3"
    assert ddp["location"]["file"].endswith("fixtures/distributed/ddp_unused_parameters.py")
    assert ddp["location"]["line"] == 28
    nccl = found["distributed.nccl_timeout"]
    assert nccl["facts"]["ranks"] == [0, 1] and nccl["facts"]["seq_num"] == 1580
    child = found["distributed.child_failed"]
    assert (child["facts"]["root_rank"], child["facts"]["exitcode"]) == (0, 1)
    assert child["location"] is None  # the torchrun console script is not the user's code


def test_dataloader_worker_log_gives_the_dataset_line(cli_output):
    name = "fixtures/logs/dataloader_worker.log"
    [d] = cli_output[name]
    assert d["rule"] == "data.worker_error" and d["input"] == name
    assert d["location"]["file"].endswith("fixtures/data/worker_keyerror.py")
    assert d["location"]["line"] == 18 and "self.vocab[word]" in d["location"]["code"]
    assert d["facts"]["original_error"] == "KeyError: 'sat'"
    assert "wrote crash report" not in d["error"]  # the next log record is not part of the message


def test_pasted_issue_explains_each_error_and_invents_nothing_for_the_config_error(cli_output):
    diagnoses = cli_output["fixtures/logs/issue_paste.md"]
    found = _by_rule(diagnoses)
    assert set(found) == {"data.state_dict_keys", "data.target_out_of_bounds", None}
    assert found["data.state_dict_keys"]["facts"]["key_prefix"] == "module."
    assert found["data.target_out_of_bounds"]["facts"]["target_value"] == 5
    unrelated = found[None]
    assert unrelated["error"] == "KeyError: 'scheduler'"
    assert unrelated["category"] == "other" and unrelated["fixes"] == [] and unrelated["culprits"] == []
    assert unrelated["location"] == {"file": "/home/me/project/train.py", "line": 5,
                                     "code": 'return cfg["scheduler"]["warmup_steps"]'}


@pytest.mark.parametrize("index", range(len(BARE_MESSAGES)))
def test_bare_pasted_message_without_a_type(cli_output, index):
    d = cli_output["bare"][index]
    assert d is not None, f"nothing found in {BARE_MESSAGES[index][0]!r}"
    assert d["rule"] == BARE_MESSAGES[index][1] and d["input"].endswith(f"message{index}.txt")


def test_stdin_is_read_as_a_pasted_message():
    result = run_explainer("explain", "--format", "json", "-", stdin="IndexError: Target 7 is out of bounds.\n")
    [d] = [json.loads(line) for line in result.stdout.splitlines()]
    assert d["rule"] == "data.target_out_of_bounds" and d["input"] == "-" and d["facts"]["target_value"] == 7


# --- the scanner in-process ---------------------------------------------------------------------

def test_interleaved_rank_tracebacks_are_read_whole():
    found = list(scan(open(LOGS / "torchrun_two_ranks.log", encoding="utf-8")))
    ddp = [f for f in found if "Expected to have finished reduction" in f.text]
    assert [f.ranks for f in ddp] == [[0], [1]]
    for f in ddp:
        assert f.text.count("\n") == 4, f.text  # the five lines of torch's message, nothing of the other rank
        assert f.location().line == 28
    assert dedupe_key(ddp[0].text) == dedupe_key(ddp[1].text)


def test_watchdog_lines_without_an_error_header_are_found():
    lines = [
        "[rank0]:[E501 10:10:05.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=BROADCAST, NumelIn=5056, NumelOut=5056, Timeout(ms)=600000) ran for "
        "600026 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:915] [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=BROADCAST, NumelIn=5056, NumelOut=5056, "
        "Timeout(ms)=600000) ran for 600822 milliseconds before timing out.",
    ]
    found = list(scan(lines))
    assert [f.ranks for f in found] == [[0], [2]]
    assert [f.text.split("] ", 1)[0] for f in found] == ["[Rank 0", "[Rank 2"]
    assert all(f.text.split("] ", 1)[1].startswith("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7")
               for f in found)
    assert dedupe_key(found[0].text) == dedupe_key(found[1].text)


def test_a_new_log_record_or_header_ends_a_message():
    found = list(scan([
        "2024-05-01 10:00:00,001 - train - ERROR - RuntimeError: first problem",
        "2024-05-01 10:00:00,002 - train - INFO - step 3",
        "ValueError: second problem",
        "IndexError: third problem",
    ]))
    assert [f.text for f in found] == ["RuntimeError: first problem", "ValueError: second problem",
                                       "IndexError: third problem"]


def test_multi_line_messages_stay_whole():
    text = ('RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight". \n'
            '\tUnexpected key(s) in state_dict: "module.fc.weight". ')
    [found] = scan(text.splitlines())
    assert found.text == text.rstrip()


def test_inline_code_in_prose_is_found():
    found = list(scan(["It then fails with `IndexError: Target 5 is out of bounds.` on the first batch."]))
    assert [f.text for f in found] == ["IndexError: Target 5 is out of bounds."]


def test_explain_stream_folds_ranks_in_process():
    log = "".join(f"[rank{r}]: RuntimeError: DataLoader worker (pid(s) {4000 + r}) exited unexpectedly\n"
                  for r in range(4))
    [d] = explain_stream(io.StringIO(log))
    assert d.rule == "data.worker_killed"
    assert d.facts["ranks"] == [0, 1, 2, 3] and d.facts["occurrences"] == 4 and d.facts["input_line"] == 1


def test_explain_stream_does_not_guess_for_unknown_text():
    assert explain_stream(io.StringIO("everything is fine, loss 0.01\n")) == []


# --- the logs still match what torch prints -----------------------------------------------------

@pytest.mark.parametrize("log, fixture", [
    ("torchrun_two_ranks.log", "fixtures/distributed/ddp_unused_parameters.py"),
    ("dataloader_worker.log", "fixtures/data/worker_keyerror.py"),
    ("issue_paste.md", "fixtures/data/state_dict_module_prefix.py"),
    ("issue_paste.md", "fixtures/data/target_out_of_bounds.py"),
])
def test_logs_embed_current_fixture_output(log, fixture):
    message = exception_text(raise_fixture(fixture)).splitlines()
    texts = [f.text for f in scan(open(LOGS / log, encoding="utf-8"))]
    # The first and last lines of the live message appear, in one found error, as the log has them.
    assert any(t.startswith(message[0].rstrip()) and t.endswith(message[-1].rstrip()) for t in texts), \
        f"{log} no longer holds {fixture}'s message: regenerate it from the fixture's stderr"


def _corpus_message(file: str, family: str, source: str) -> str:
    import yaml

    for entry in yaml.safe_load((ROOT / "fixtures" / "real" / file).read_text(encoding="utf-8")):
        if entry["family"] == family and entry["source"] == source:
            return entry["message"]
    raise AssertionError(f"{file}: no {family} entry from {source}")


def test_kernel_assertion_lines_fold_into_one_error_that_names_the_kernel():
    text = _corpus_message("devmem.yaml", "nll_assert", "https://github.com/milesial/Pytorch-UNet/issues/375")
    diagnoses = explain_stream(io.StringIO(text))
    assert len(diagnoses) == 1
    assert diagnoses[0].rule == "device.device_assert"
    assert diagnoses[0].facts["occurrences"] >= 3
    assert "nll_loss2d_forward_kernel" in diagnoses[0].summary


def test_a_warning_printed_with_its_path_is_found_and_unknown_warnings_stay_silent():
    text = _corpus_message("dtype_autograd.yaml", "checkpoint_no_input_requires_grad",
                           "https://github.com/petko-nikolov/pysemseg/issues/5")
    found = list(scan(text.splitlines()))
    assert found and found[0].warning and found[0].text.startswith("UserWarning: None of the inputs")
    log = "epoch 1\n/x/site-packages/foo.py:12: UserWarning: this flag is deprecated\n  warnings.warn(\nepoch 2\n"
    assert explain_stream(io.StringIO(log)) == []


def test_vs_code_exception_has_occurred_joins_type_and_message():
    text = _corpus_message("shape.yaml", "view_invalid_shape", "https://github.com/ashutosh1807/PixelFormer/issues/18")
    found = list(scan(text.splitlines()))
    assert found[0].text.startswith("RuntimeError: shape '[16, 34, 34, 512]' is invalid for input of size 8921088")


def test_a_folded_log_line_is_not_folded_again_into_a_later_report():
    # Two real failures in one log: the agent's exit line and its summary, then another run's summary.
    first = _corpus_message("data_dist.yaml", "elastic_child_failed_sigkill", "https://github.com/lmzpai/roboMamba/issues/10")
    second = _corpus_message("data_dist.yaml", "elastic_child_failed_sigkill", "https://github.com/lzhxmu/CPPO/issues/6")
    diagnoses = explain_stream(io.StringIO(first + "\n\n" + second + "\n"))
    assert [d.rule for d in diagnoses].count("distributed.child_failed") >= 2
