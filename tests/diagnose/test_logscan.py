"""Finding and explaining errors in whole logs: multi-rank torchrun output, a DataLoader worker
failure inside a timestamped log, a pasted GitHub issue, bare messages.

The logs under fixtures/logs/ embed the real stderr of fixture scripts (plus verbatim NCCL and
torchrun lines from public issues); test_logs_embed_current_fixture_output keeps them honest.
"""

from __future__ import annotations

import fnmatch
import io
import json
import locale
import logging
import traceback
import warnings

import pytest
import torch

from explainer.cli.explain import explain_stream, ranks_note
from explainer.diagnose.explain import exception_text
from explainer.diagnose.logpatterns import dedupe_key
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text

from conftest import ROOT, benchmark_module, corpus_message, logged_records, raise_fixture, run_explainer, run_python

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
    assert unrelated["error"] == "KeyError"  # its type only: the message is the program's own (as the text says it)
    assert unrelated["category"] == "other" and unrelated["fixes"] == [] and unrelated["culprits"] == []
    assert unrelated["location"] == {"file": "/home/me/project/train.py", "line": 5, "function": "build_scheduler",
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
    # two ranks' watchdog lines under "[rankN]:" (https://github.com/XPixelGroup/BasicSR/issues/737), and the older
    # wording with no rank prefix, its rank in "[Rank 3]" (https://github.com/NVIDIA/nccl/issues/1000 as r29_b.yaml#69)
    found = list(scan(_corpus_message("https://github.com/XPixelGroup/BasicSR/issues/737", "data_dist.yaml")
                      .splitlines()))
    older = next(x for x in corpus_message("r29_b.yaml#69").splitlines() if x.startswith("[E ProcessGroupNCCL"))
    found += list(scan([older]))
    assert [f.ranks for f in found] == [[1], [0], [3]]
    assert [f.text.split("] ", 1)[0] for f in found] == ["[Rank 1", "[Rank 0", "[Rank 3"]
    assert all(f.text.split("] ", 1)[1].startswith("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=")
               for f in found)
    assert dedupe_key(found[0].text) == dedupe_key(found[1].text)


def _live_errors() -> list[str]:
    """The error lines of three live failures, as Python prints them: a RuntimeError, a ValueError, an IndexError."""
    lines = []
    for call in (lambda: torch.zeros(2).sum().backward(), lambda: int("2x"), lambda: torch.zeros(2)[5]):
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - each call raises its own type
            lines.append(traceback.format_exception_only(exc)[-1].rstrip("\n"))
    return lines


def test_a_new_log_record_or_header_ends_a_message():
    # Python's logging writes the first error and an INFO record after it; then two error lines as Python prints them
    first, second, third = _live_errors()
    logged = logged_records((logging.ERROR, first), (logging.INFO, "epoch 3"))
    found = list(scan(logged.splitlines() + [second, third]))
    assert [f.text for f in found] == [first, second, third]
    assert first.startswith("RuntimeError: ") and second.startswith("ValueError: ") and third.startswith("IndexError: ")


def test_multi_line_messages_stay_whole():
    # a DataParallel model's state_dict loaded into the bare model, live
    try:
        torch.nn.Linear(2, 2).load_state_dict(torch.nn.DataParallel(torch.nn.Linear(2, 2)).state_dict())
    except RuntimeError as exc:
        text = "".join(traceback.format_exception_only(exc))
    assert text.count("\n") >= 3 and 'Unexpected key(s) in state_dict: "module.weight"' in text
    [found] = scan(text.splitlines())
    assert found.text == text.rstrip()


def test_inline_code_in_prose_is_found():
    # https://github.com/kanezaki/pytorch-unsupervised-segmentation-tip/issues/12 (its first paragraph and the line
    # under it, verbatim)
    text = ("When using scribble loss with the demo picture (cat) 2007_001774.jpg and 2007_001774_scribble.png in the "
            "loss function I get the error:\n\n`IndexError: Target 8 is out of bounds.`")
    found = list(scan(text.splitlines()))
    assert [f.text for f in found] == ["IndexError: Target 8 is out of bounds."]


def test_explain_stream_folds_ranks_in_process():
    # three ranks' heartbeat-monitor lines (https://github.com/Intellindust-AI-Lab/DEIM/issues/105)
    [d] = explain_stream(io.StringIO(corpus_message("r16_b.yaml#46")))
    assert d.rule == "distributed.nccl_watchdog_stuck"
    assert d.facts["ranks"] == [0, 1, 2]


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


def _corpus_message(source: str, file: str = "", family: str = "") -> str:
    """A message of the opened real-world corpus (fixtures/real/) by its source URL, and file and wording family
    where one thread gave several."""
    for entry in benchmark_module("coverage").load_corpus():
        if entry.held_out or (file and not fnmatch.fnmatch(entry.file, file)):
            continue
        if entry.source == source and family in ("", entry.family):
            return entry.message
    raise AssertionError(f"no {family or 'entry'} from {source} in {file or 'the corpus'}")


def test_kernel_assertion_lines_fold_into_one_error_that_names_the_kernel():
    text = _corpus_message("https://github.com/milesial/Pytorch-UNet/issues/375", "devmem.yaml", "nll_assert")
    diagnoses = explain_stream(io.StringIO(text))
    assert len(diagnoses) == 1
    assert diagnoses[0].rule == "device.device_assert"
    assert diagnoses[0].facts["occurrences"] >= 3
    assert "nll_loss2d_forward_kernel" in diagnoses[0].summary


def test_a_warning_printed_with_its_path_is_found_and_unknown_warnings_stay_silent():
    text = _corpus_message("https://github.com/petko-nikolov/pysemseg/issues/5", "dtype_autograd.yaml", "checkpoint_no_input_requires_grad")
    found = list(scan(text.splitlines()))
    assert found and found[0].warning and found[0].text.startswith("UserWarning: None of the inputs")
    # a warning of Python's own, issued live and printed as Python prints it: no rule's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        locale.getdefaultlocale()
    log = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in caught)
    assert "DeprecationWarning: 'locale.getdefaultlocale' is deprecated" in log
    assert explain_stream(io.StringIO(log)) == []


def test_vs_code_exception_has_occurred_joins_type_and_message():
    text = _corpus_message("https://github.com/ashutosh1807/PixelFormer/issues/18", "shape.yaml", "view_invalid_shape")
    found = list(scan(text.splitlines()))
    assert found[0].text.startswith("RuntimeError: shape '[16, 34, 34, 512]' is invalid for input of size 8921088")
    # its frames, innermost first, may follow after a blank line
    text = _corpus_message("https://github.com/Guillem96/madgan-pytorch/issues/3", "shape.yaml")
    found = list(scan(text.splitlines()))
    assert found[0].text == "RuntimeError: input.size(-1) must be equal to input_size. Expected 32, got 4"
    assert found[0].location().code == "rnn_output, _ = self.lstm(x)"


def test_a_folded_log_line_is_not_folded_again_into_a_later_report():
    # Two real failures in one log: the agent's exit line and its summary, then another run's summary.
    first = _corpus_message("https://github.com/lmzpai/roboMamba/issues/10", "data_dist.yaml", "elastic_child_failed_sigkill")
    second = _corpus_message("https://github.com/lzhxmu/CPPO/issues/6", "data_dist.yaml", "elastic_child_failed_sigkill")
    diagnoses = explain_stream(io.StringIO(first + "\n\n" + second + "\n"))
    assert [d.rule for d in diagnoses].count("distributed.child_failed") >= 2


# --- where a pasted traceback failed: messages from the real-world corpus (fixtures/real/) --------

def _where(message: str) -> tuple[dict | None, dict | None]:
    diagnosis = next(d for d in explain_stream(io.StringIO(message)) if d.rule)
    location = diagnosis.location.to_dict() if diagnosis.location else None
    return location, diagnosis.facts.get("raised_in")


@pytest.mark.parametrize("source, file_end, line, function, code", [
    # a Windows path wrapped at 80 columns inside the File line, and a function name cut after "b"
    ("https://github.com/microsoft/human-pose-estimation.pytorch/issues/112", "core\\function.py", 56, "train",
     "loss.backward( )"),
    # frame lines that lost their 'File "' beginning in the paste
    ("https://github.com/cv516Buaa/tph-yolov5/issues/45", "utils/loss.py", 243, "build_targets", "indices.append"),
    ("https://github.com/facebookresearch/sam2/issues/48", "sam\\transformer.py", 255, "forward",
     "F.scaled_dot_product_attention"),
    # IPython 7: "<ipython-input-4-...> in <module>()" with "----> 1 c(x)", and a library frame wrapped mid-line
    ("https://github.com/pytorch/pytorch/issues/11065", "497ccf32130c>", 1, "<module>", "c(x)"),
    ("https://github.com/pytorch/pytorch/issues/36608", "c912e1d6e469>", 1, "<module>", "v1[0].mul_(2)"),
    # VS Code lists the frames under the message, innermost first
    ("https://github.com/TexasInstruments/edgeai-yolov5/issues/60", "utils\\loss.py", 236, "build_targets",
     "indices.append"),
    # kernel assertions logged before the traceback: the folded diagnosis keeps the traceback's line
    ("https://github.com/layumi/Person_reID_baseline_pytorch/issues/372", "train.py", 379, "train_model",
     "loss.item()"),
    # the error line in markdown bold
    ("https://github.com/lppllppl920/EndoscopyDepthEstimation-Pytorch/issues/13", "models.py", 541,
     "_depth_warping", "u_2.view(-1)"),
    # IPython 7 leaving frames out ("...") and an arrow of a frame it did not show
    ("https://github.com/adrinta/MAGNET/issues/6", "MAGNET/models.py", 76, "forward", "self.embedding(token)"),
    ("https://github.com/MisaOgura/flashtorch/issues/42", "utils\\__init__.py", 119, "denormalize",
     "channel.mul_(std).add_(mean)"),
    # JupyterLab's copy: "File [path:64](link), in Class.method(args)" frames, all of them a library's
    ("https://github.com/QwenLM/Qwen3/issues/458", "vllm/worker/cache_engine.py", 64,
     "CacheEngine._allocate_kv_cache", "torch.empty(kv_cache_shape,"),
    # a statement typed at the Python prompt (">>> ") is the code of its "<stdin>" frame
    ("https://github.com/thu-ml/tianshou/pull/1237", "<stdin>", 1, "<module>", "b = a.to('mps')"),
    # no frame of the user's code in the paste: the library that called torch (gradcam), not torch
    ("https://github.com/1Konny/gradcam_plus_plus-pytorch/issues/7", "gradcam/gradcam.py", 70, "forward",
     "score.backward"),
])
def test_pasted_tracebacks_are_located_despite_how_they_were_pasted(source, file_end, line, function, code):
    location, _ = _where(_corpus_message(source))
    assert location is not None and location["file"].endswith(file_end)
    assert (location["line"], location["function"]) == (line, function) and code in location["code"]


@pytest.mark.parametrize("source, code", [
    ("https://github.com/sczhou/CodeFormer/issues/303", "return F.conv2d(input, weight, bias, self.stride,"),
    ("https://github.com/xiezhy6/GP-VTON/issues/48", "cloth_parse_for_d = data['flat_clothes_label'].cuda()"),
])
def test_a_statement_pasted_alone_above_the_error_is_shown_as_where_it_was_raised(source, code):
    location, raised_in = _where(_corpus_message(source))
    assert location is None and raised_in == {"file": "", "line": 0, "function": "", "code": code}


def test_a_traceback_cut_before_its_error_line_is_read_from_the_raise_statement():
    found = list(scan(_corpus_message("https://github.com/xxlong0/SparseNeuS/issues/42").splitlines()))
    assert [f.text for f in found] == ["RuntimeError: grad can be implicitly created only for scalar outputs"]
    location, raised_in = _where(_corpus_message("https://github.com/xxlong0/SparseNeuS/issues/42"))
    assert location["code"] == "loss.backward()" and raised_in["function"] == "_make_grads"


def test_curly_quotes_and_a_code_line_without_its_indent_still_make_a_frame():
    _, raised_in = _where(_corpus_message("https://github.com/pytorch/pytorch/issues/17041"))
    assert raised_in["function"] == "_tcp_rendezvous_handler"
    assert raised_in["code"] == "store = TCPStore(result.hostname, result.port, start_daemon)"


def test_a_kernel_assertion_printed_after_the_python_error_is_folded_into_it():
    diagnoses = explain_stream(io.StringIO(_corpus_message("https://github.com/milesial/Pytorch-UNet/issues/258")))
    assert [d.rule for d in diagnoses] == ["device.device_assert"]
    assert "SpatialClassNLLCriterion.cu" in diagnoses[0].summary


def test_dynamo_message_goes_on_after_its_blank_line_to_the_users_code():
    found = list(scan(_corpus_message("https://github.com/pytorch/pytorch/issues/100109").splitlines()))
    assert len(found) == 1 and "from user code:" in found[0].text
    assert "scores += position_bias_masked" in found[0].text


@pytest.mark.parametrize("source, rule", [
    ("https://github.com/snowflakedb/ArcticTraining/issues/219", "distributed.nccl_watchdog_stuck"),
    ("https://github.com/pytorch/pytorch/issues/107021", "distributed.rendezvous_timeout"),
])
def test_log_lines_without_an_error_header_are_found(source, rule):
    diagnoses = explain_stream(io.StringIO(_corpus_message(source)))
    assert diagnoses[0].rule == rule


def test_a_timestamp_alone_on_a_line_is_part_of_the_elastic_report():
    found = list(scan(_corpus_message("https://github.com/ZhehengJiangLancaster/AMVUR/issues/2").splitlines()))
    assert len(found) == 1 and found[0].text.endswith("signal 9 (SIGKILL) received by PID 36071")


@pytest.mark.parametrize("source, first_line", [
    # the worker's re-raise pasted without its "IndexError: " prefix
    ("https://github.com/gzaraunitn/autolabel/issues/4", "Caught IndexError in DataLoader worker process 0."),
    # torch 0.4's re-raise: "IndexError: Traceback ...", the worker's frames, then its error line
    ("https://github.com/jakeoung/Unet_pytorch/issues/4", "IndexError: Traceback (most recent call last):"),
])
def test_a_dataloader_workers_re_raise_is_one_error_with_the_workers_own_error_in_it(source, first_line):
    found = list(scan(_corpus_message(source).splitlines()))
    assert len(found) == 1 and found[0].text.startswith(first_line)
    assert found[0].text.endswith("IndexError: list index out of range")
    diagnosis = explain_stream(io.StringIO(_corpus_message(source)))[0]
    assert diagnosis.rule == "data.worker_error" and "IndexError: list index out of range" in diagnosis.summary


def test_a_message_split_over_two_code_blocks_mid_sentence_is_joined():
    found = list(scan(_corpus_message("https://github.com/NVlabs/FUNIT/issues/23").splitlines()))
    assert found[0].text.endswith("is at version 2; expected version 1 instead.")
    assert "modified by an inplace operation:\n[torch.FloatTensor [5, 6]]" in found[0].text


def test_an_error_line_in_markdown_emphasis_is_read_without_it():
    found = list(scan(_corpus_message("https://github.com/innnky/so-vits-svc/issues/169").splitlines()))
    assert any(f.text.startswith("RuntimeError: PytorchStreamReader failed reading zip archive") for f in found)


def test_torchscripts_whitespace_only_lines_inside_its_variant_list_keep_the_message_whole():
    found = list(scan(_corpus_message("https://github.com/pytorch/pytorch/issues/37200").splitlines()))
    assert "Expected a value of type 'List[int]' for argument 'dim' but instead found type 'Tensor'." in found[0].text
    assert found[0].text.count("aten::sum") == 3


def test_the_onnx_exporters_exception_summary_after_blank_lines_stays_in_the_message():
    found = list(scan(_corpus_message("https://github.com/pasteurlabs/tesseract-core/issues/425").splitlines()))
    assert found[0].text.startswith("TorchExportError: Failed to export the model with torch.export.")
    assert found[0].text.endswith("<class 'KeyError'>: 'getpwuid(): uid not found: 501'")


def test_a_kernel_assertion_pasted_as_inline_code_without_its_backticks_is_still_found():
    text = _corpus_message("https://github.com/LiyuanLucasLiu/LM-LSTM-CRF/issues/27")
    diagnoses = explain_stream(io.StringIO(text))
    assert [d.rule for d in diagnoses] == ["device.device_assert"]
    assert "ClassNLLCriterion" in diagnoses[0].summary and diagnoses[0].location.code == "loss.backward()"


def test_the_library_call_that_led_into_torch_is_named_between_the_users_line_and_torchs():
    diagnosis = explain_stream(io.StringIO(_corpus_message("https://github.com/huggingface/blog/issues/143")))[0]
    assert diagnosis.location.code == "trainer.train()"
    assert diagnosis.facts["raised_in"]["file"].endswith("torch/cuda/amp/grad_scaler.py")
    via = diagnosis.facts["called_via"]
    assert via["file"].endswith("transformers/trainer.py") and via["code"] == "self.scaler.step(self.optimizer)"
    text = render_text(diagnosis)
    assert text.index("at /media/") < text.index("via ") < text.index("raised in ")


def test_where_torchs_cpp_raised_is_named_from_the_exception_raised_from_line():
    text = _corpus_message("https://github.com/huggingface/transformers/issues/7160")
    diagnosis = explain_stream(io.StringIO(text))[0]
    assert diagnosis.facts["torch_source"] == {"file": "torch/csrc/distributed/c10d/reducer.cpp", "line": 453,
                                               "function": "mark_variable_ready", "code": ""}
    assert "in torch's C++ at torch/csrc/distributed/c10d/reducer.cpp:453 in mark_variable_ready" in \
        render_text(diagnosis)


@pytest.mark.parametrize("source, node", [
    ("https://github.com/kijai/ComfyUI-SUPIR/issues/47", "SUPIR_Upscale"),  # "Error occurred when executing X:"
    ("https://github.com/Comfy-Org/ComfyUI/issues/4996", "ExpressionEditor"),  # its error report's "Node Type"
    # "X (segment anything):": the parentheses are a part of the node's class_type (its NODE_CLASS_MAPPINGS key)
    ("https://github.com/storyicon/comfyui_segment_anything/issues/37", "GroundingDinoSAMSegment (segment anything)"),
    # the newer frontend's dialog: the node's name on the first line, then the error, with or without its type
    ("https://github.com/kijai/ComfyUI-WanVideoWrapper/issues/92", "WanVideoSampler"),
    ("https://github.com/ROCm/legacy-rocm-build/issues/5264", "VAEEncode"),
])
def test_the_comfyui_node_that_failed_is_named(source, node):
    diagnosis = explain_stream(io.StringIO(_corpus_message(source)))[0]
    assert diagnosis.rule and diagnosis.facts["comfyui_node"] == node
    assert f"in ComfyUI node {node}" in render_text(diagnosis)


def test_an_uncaught_cpp_exception_keeps_the_type_terminate_named_with_its_what():
    log = _corpus_message("https://github.com/ultralytics/yolov5/issues/9087", "r6_b.yaml")
    assert "terminate called after throwing an instance of 'c10::CUDAError'\n  what():  CUDA error: the launch" in log
    found = [d for d in explain_stream(io.StringIO(log)) if d.rule is not None]
    assert [d.rule for d in found] == ["device.cuda_runtime_error"]
    assert "c10::CUDAError" in found[0].summary and "cudaErrorLaunchTimeout" in found[0].summary


def test_a_code_block_opened_and_closed_on_one_line_keeps_its_inline_code():
    text = _corpus_message("https://github.com/deepspeedai/DeepSpeed/issues/6723", "devmem.yaml")
    found = [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]
    assert found[0].rule == "device.cublas_status"
    said = found[0].title + found[0].summary
    assert "cublasGemmStridedBatchedEx" in said and "CUDA_R_16BF" in said


def test_cudnn_repro_script_and_parameters_after_blank_lines_stay_in_the_message():
    text = _corpus_message("https://github.com/SuhyeonHa/CDTNet-PyTorch/issues/6", "devmem.yaml")
    found = [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]
    assert [d.rule for d in found] == ["device.cudnn_status"]
    assert "[1, 39, 1024, 1024]" in found[0].summary and "CUDNN_DATA_FLOAT" in found[0].summary


def test_a_bare_assertion_error_carries_the_assert_statement_that_failed():
    text = _corpus_message("https://github.com/pytorch/torchdynamo/issues/1798", "modern.yaml")
    found = list(scan(io.StringIO(text)))
    assert found[-1].text == "AssertionError\nassert not any(isinstance(x, TensorBox) for x in kwargs.values())"


def test_torchruns_report_of_a_dead_worker_is_linked_to_the_error_before_it():
    text = _corpus_message("https://github.com/NVIDIA/nccl/issues/1438", "r5_b.yaml")
    timeout, launcher = explain_stream(io.StringIO(text))
    assert (timeout.rule, launcher.rule) == ("distributed.nccl_timeout", "distributed.child_failed")
    assert "torchrun then reported: failed (exitcode: -6) local_rank: 1" in ranks_note(timeout)
    assert "consequence of the failure (distributed.nccl_timeout" in ranks_note(launcher)


def test_a_torchscript_error_whose_message_starts_after_a_blank_line_is_one_record():
    exc = raise_fixture("fixtures/compile/torchscript_argument_missing.py")
    printed = "".join(traceback.format_exception(exc))
    assert exception_text(exc).startswith("RuntimeError: \n\n")
    found = list(scan(printed.splitlines()))
    assert len(found) == 1 and "Argument factor not provided." in found[0].text
    [diagnosis] = [d for d in explain_stream(io.StringIO(printed)) if d.rule]
    assert diagnosis.rule == "compile.torchscript_call_arguments" and "`factor`" in diagnosis.summary


def test_a_file_name_that_markdown_turned_into_a_link_is_read_back_as_the_name():
    # Verbatim from https://github.com/Thinklab-SJTU/Bench2Drive/issues/58
    pasted = ("ImportError: /home/user/Bench2DriveZoo/mmcv/_[ext.cpython-38-x86_64-linux-gnu.so]"
              "(http://ext.cpython-38-x86_64-linux-gnu.so/): undefined symbol: "
              "_ZNSt15__exception_ptr13exception_ptr9_M_addrefEv")
    [found] = list(scan([pasted]))
    assert "mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol" in found.text
    [diagnosis] = [d for d in explain_stream(io.StringIO(pasted)) if d.rule]
    assert diagnosis.rule == "other.undefined_symbol"


def test_a_pasted_traceback_lends_its_library_frames_to_the_rules_that_read_them():
    import traceback

    exc = raise_fixture("fixtures/other/nn_module_no_attribute.py")
    printed = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert "in __getattr__" in printed
    [diagnosis] = [d for d in explain_stream(io.StringIO(printed)) if d.rule]
    assert diagnosis.rule == "other.nn_module_no_attribute"
    bare = exception_text(exc)
    # alone, the message could be any object's: only the generic reading of Python's AttributeError answers it
    assert [d.rule for d in explain_stream(io.StringIO(bare))] == ["other.object_has_no_attribute"]


def test_anomaly_warning_keeps_the_forward_frames_as_its_location():
    """detect_anomaly prints the forward call that made the NaN below its warning: that is where to look."""
    stderr = run_python(str(ROOT / "fixtures" / "autograd" / "anomaly_nan_log.py")).stderr
    found = list(scan(stderr.splitlines()))
    warning = next(f for f in found if "Error detected in LogBackward0" in f.text)
    assert warning.warning and "File " not in warning.text
    assert warning.location().file.endswith("anomaly_nan_log.py")
    assert warning.location().code == "log_probs = torch.log(probs)"
    assert any(f.text.startswith("RuntimeError: Function 'LogBackward0' returned nan") for f in found)
    glog = _corpus_message("https://github.com/Dmmm1997/DenseUAV/issues/7", "dtype_autograd.yaml")
    pasted = next(f for f in scan(glog.splitlines()) if "SoftmaxBackward0" in f.text)
    assert pasted.location().code == "softmax_output2 = F.softmax(outputs2 - max_output2, dim=1)"


def test_docker_compose_service_column_is_read_as_a_prefix():
    text = _corpus_message("https://github.com/simonmcnair/stable-diffusion-webui-docker/issues/7", "r8_b.yaml")
    found = list(scan(text.splitlines()))
    assert found[-1].text.startswith("RuntimeError: CUDA error: no kernel image is available")
    assert found[-1].frames[-1].func == "embedding"
    # a real message printed through the same column
    message = exception_text(raise_fixture("fixtures/shape/linear_in_features.py"))
    found = list(scan(f"app-1  | {line}" for line in ["epoch 3", *message.splitlines(), ""]))
    assert [f.text for f in found] == [message.strip()]


RICH_RUN = ("import runpy, sys; from rich.traceback import install; install(width={width}); "
            "runpy.run_path(sys.argv[1], run_name='__main__')")


@pytest.mark.parametrize("width", [80, 140])
def test_a_rich_traceback_box_is_read_like_python_s_own(width):
    """rich.traceback's box, as kohya_ss or typer print it: frames (paths cut at the box's edge), the
    marked source line, the error below the box."""
    script = ROOT / "fixtures" / "shape" / "linear_in_features.py"
    stderr = run_python("-c", RICH_RUN.format(width=width), str(script)).stderr
    assert "╭" in stderr and "❱" in stderr
    [diagnosis] = explain_stream(io.StringIO(stderr))
    assert diagnosis.rule == "shape.matmul"
    assert diagnosis.location.file == str(script) and diagnosis.location.code == "return self.fc(x)"
    found = list(scan(stderr.splitlines()))
    assert [f.frames[-1].func for f in found] == ["forward"]  # torch's Linear.forward, the innermost


def test_a_message_rich_wrapped_in_a_panel_is_read_whole():
    text = _corpus_message("https://github.com/Bing-su/adetailer/issues/777", "modern.yaml")
    found = [f for f in scan(text.splitlines()) if "Weights only load failed" in f.text]
    assert "GLOBAL ultralytics.nn.tasks.DetectionModel" in found[0].text and "│" not in found[0].text.split("\n", 1)[1]


def test_a_rule_reads_its_context_from_the_lines_printed_before_the_error():
    """vLLM names the GPU on the line before `RuntimeError: GPUs with compute capability below 7.0 ...`."""
    text = _corpus_message("https://github.com/vllm-project/vllm/issues/1284", "r4_b.yaml")
    [found] = scan(text.splitlines())
    assert found.text.startswith("RuntimeError: GPUs with compute capability below 7.0")
    assert "Your Tesla P100-PCIE-16GB GPU has compute capability 6.0." in found.before[-1]
    [diagnosis] = explain_stream(io.StringIO(text))
    assert diagnosis.rule == "device.bf16_gpu_capability" and diagnosis.facts["gpu"] == "Tesla P100-PCIE-16GB"
    assert "Tesla P100-PCIE-16GB has compute capability 6.0" in diagnosis.summary
    # the same message alone: the rule still answers, from what the message says
    [alone] = explain_stream(io.StringIO(found.text))
    assert alone.rule == "device.bf16_gpu_capability" and "gpu" not in alone.facts


def test_dynamo_s_warnings_before_a_fullgraph_recompile_error_name_the_function_and_guard():
    text = _corpus_message("https://github.com/microsoft/dion/issues/23", "modern.yaml")
    [diagnosis] = explain_stream(io.StringIO(text))  # read in blocks: the warnings hold no trigger word
    assert diagnosis.rule == "compile.recompile_limit"
    assert diagnosis.facts["function"] == "dion2_post_orthogonalize" and diagnosis.facts["limit"] == 8
    assert "expected 640, actual 8" in diagnosis.summary and "fullgraph=True" in diagnosis.summary


def test_torchrun_s_sigterm_to_the_other_workers_is_told_apart_from_the_failure():
    text = _corpus_message("https://github.com/fidelity/stoke/issues/31", "r6_b.yaml")
    [diagnosis] = explain_stream(io.StringIO(text))
    assert diagnosis.rule == "distributed.child_failed" and diagnosis.facts["exitcode"] == -9
    assert "the agent sent SIGTERM to the other workers (pid 10401)" in diagnosis.summary


def test_a_worker_re_raise_of_an_error_type_without_a_trigger_word_still_opens_a_record():
    """could_open's one exception: the DataLoader's re-raise of StopIteration holds no trigger literal."""
    import torch.utils.data

    from explainer.diagnose.logpatterns import could_open, opener_match

    class Stops(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, index: int):
            raise StopIteration

    with pytest.raises(StopIteration) as caught:
        next(iter(torch.utils.data.DataLoader(Stops(), num_workers=1)))
    line = str(caught.value).splitlines()[0]
    assert line == "Caught StopIteration in DataLoader worker process 0."
    assert could_open(line) and opener_match(line) is not None
