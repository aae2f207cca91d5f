"""Round 15, the engine: rule examples answered as users paste them (a rank's message on untagged lines, the lines a
log printed before an error, a frozen application's standard library frames, a message its writer broke into lines),
dynamo's "Caused by:" after a blank line, torch's Python logs in glog's layout (one record per prefix, the place they
were logged at), torch's C++ places, Hydra's instantiate wrapper, summaries shown whole, the untagged lines a rank's
process printed before its error, coloured pytest reports and tqdm bars, and round 15's reading problems (frames a
paste left out, an inline code span over several lines, IPython 7's module frames, spawn's report of a child, exception
groups, vLLM's worker ranks, the statement a paste began with)."""

from __future__ import annotations

import io
import json

import pytest
from conftest import ROOT, benchmark_module, run_python, place as _place, ruled_diagnoses as _ruled
from explainer.cli.explain import explain_stream
from explainer.diagnose.explain import torch_source
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_json, render_text
from explainer.diagnose.textframes import looks_like_user_path

CORPUS = {e.where: e for e in benchmark_module("coverage").load_corpus() if not e.held_out}
# A healthy training log's lines, enough of them that explain_stream reads the input as a log, not as one paste.
HEALTHY = "".join(f"epoch 1 step {step} loss 0.{step:03d}\n" for step in range(240))


def _in_log(message: str) -> list:
    """The diagnoses with a rule for message printed at the end of a long log (the process died of it)."""
    return [d for d in explain_stream(io.StringIO(HEALTHY + message.rstrip("\n") + "\n")) if d.rule]


# --- rule examples, as users paste them -----------------------------------------------------------------------------

# https://github.com/2U1/Qwen-VL-Series-Finetune/issues/180: the rank prefix is on the first line of the message only
DEEPSPEED = """[rank0]: deepspeed.runtime.zero.utils.ZeRORuntimeException: 
The checkpoint being loaded used a DP world size of 4 but the current world size is 8. 
Automatic adjustment of ZeRO's optimizer state partitioning with a new world size is not currently supported."""


@pytest.mark.parametrize("read", [lambda m: [d for d in explain_stream(io.StringIO(m)) if d.rule], _in_log])
def test_a_ranks_message_goes_on_over_untagged_lines(read):
    [diagnosis] = read(DEEPSPEED)
    assert diagnosis.rule == "distributed.deepspeed_checkpoint_world_size"
    assert (diagnosis.facts["saved_world_size"], diagnosis.facts["current_world_size"]) == (4, 8)
    assert diagnosis.facts["ranks"] == [0]


def test_an_untagged_line_that_starts_a_record_of_its_own_is_not_the_ranks():
    # shape.yaml#188: torchrun's agent logs its SIGTERMs (glog prefix: a new record) right under rank 1's error
    [found] = [f for f in scan(CORPUS["shape.yaml#188"].message.splitlines()) if "normalized_shape" in f.text]
    assert "Sending process" not in found.text and found.ranks == [1]


# https://github.com/JIA-Lab-research/Seg-Zero/issues/63: the linker's line, then gcc's CalledProcessError
LIBCUDA = """/usr/bin/ld: cannot find -lcuda
collect2: error: ld returned 1 exit status

subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpe7nu9b0l/main.c', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', '/tmp/tmpe7nu9b0l/cuda_utils.cpython-312-x86_64-linux-gnu.so', '-lcuda', '-L/home/sim/anaconda3/envs/visionreasoner/lib/python3.12/site-packages/triton/backends/nvidia/lib', '-L/lib/x86_64-linux-gnu', '-L/lib/i386-linux-gnu', '-I/home/sim/anaconda3/envs/visionreasoner/lib/python3.12/site-packages/triton/backends/nvidia/include', '-I/tmp/tmpe7nu9b0l', '-I/home/sim/anaconda3/envs/visionreasoner/include/python3.12']' returned non-zero exit status 1."""  # noqa: E501
# https://github.com/pytorch/pytorch/issues/9344: Python 2's "DLL load failed" names no module; torch's import line does
DLL = """    from torch._C import *
ImportError: DLL load failed: The specified module could not be found."""


def test_the_lines_printed_just_before_an_error_are_read_with_it():
    [diagnosis] = _in_log(LIBCUDA)
    assert diagnosis.rule == "compile.libcuda_missing" and diagnosis.facts["flag"] == "-lcuda"
    [diagnosis] = _in_log(DLL)
    assert diagnosis.rule == "other.dll_load_failed" and diagnosis.facts["module"] == "torch._C"


def test_lines_before_an_error_that_a_rule_explains_alone_do_not_take_it_over():
    # r14_a#89: tensorboardX's "NaN or Inf found in input tensor." lines, then a ValueError of .item() of their own
    [diagnosis] = _ruled("r14_a.yaml#89")
    assert diagnosis.rule == "shape.scalar_conversion"


def test_a_frozen_applications_standard_library_frames_are_not_the_users():
    # https://github.com/cbh123/charl-e-original/issues/11: PyInstaller prints frames relative to the bundle
    assert not looks_like_user_path("urllib/request.py")
    assert looks_like_user_path("code/train.py")  # a folder of one's own named like a standard module
    message = ("`[2960] Failed to execute script 'txt2img' due to unhandled exception!\n"
               'File "kornia/feature/integrated.py", line 65, in LAFDescriptor File "kornia/feature/hardnet.py", line 66, '
               'in __init__ File "torch/hub.py", line 727, in load_state_dict_from_url File "torch/hub.py", line 593, in '
               'download_url_to_file File "urllib/request.py", line 216, in urlopen File "urllib/request.py", line 519, '
               'in open File "urllib/request.py", line 536, in _open File "urllib/request.py", line 496, in _call_chain '
               'File "urllib/request.py", line 1391, in https_open File "urllib/request.py", line 1351, in do_open '
               "urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable "
               "to get local issuer certificate (_ssl.c:997)>")
    [diagnosis] = [d for d in explain_stream(io.StringIO(message)) if d.rule]
    assert diagnosis.rule == "other.hub_download_network_error"
    assert diagnosis.facts["function"] == "load_state_dict_from_url"


def test_a_paste_whose_records_no_rule_explains_is_read_whole():
    # https://github.com/pytorch/pytorch/issues/180278: the writer broke the message into lines, each read as a record
    message = ("torch._inductor.exc.InductorError: RuntimeError: No valid triton configs.\n"
               "OutOfMemoryError: out of resource: triton_tem_fused_flex_attention_0\n"
               "Required: 139776  Hardware limit: 101376\n"
               "Reducing block sizes or num_stages may help.")
    [diagnosis] = explain_stream(io.StringIO(message))
    assert diagnosis.rule == "compile.inductor_no_valid_triton_configs"
    assert (diagnosis.facts["kernel"], diagnosis.facts["required"], diagnosis.facts["limit"]) == (
        "triton_tem_fused_flex_attention_0", 139776, 101376)


# --- torch's Python logs, dynamo's "Caused by:" ----------------------------------------------------------------------

def test_caused_by_after_a_blank_line_is_part_of_the_record_in_a_log():
    [diagnosis] = _in_log(CORPUS["r14_b.yaml#38"].message)
    assert diagnosis.rule == "compile.data_dependent" and "observer.py:1266" in diagnosis.summary
    [diagnosis] = _in_log(CORPUS["modern.yaml#43"].message)  # "...statically_known_trueCaused by: (...)"
    assert "pick_memory_format" in diagnosis.summary


def test_lines_with_the_same_glog_prefix_are_one_record():
    # modern#42: torch's log formatter puts "E1213 17:31:51.629000 3722811 .../recording.py:299] [0/0] " on every line
    # of the traceback it logs, the compile id after the place
    [diagnosis] = _in_log(CORPUS["modern.yaml#42"].message)
    assert diagnosis.rule == "compile.data_dependent"
    assert diagnosis.facts["caused_in"] == "squeeze"
    assert clean_line_record("E1213 17:31:51.629000 3722811 pytorch/torch/fx/experimental/recording.py:299] [0/0] ")[0] == ""


def test_the_python_place_a_glog_prefix_names_is_where_it_was_logged():
    # r14_b#89: "[rank0]:E0410 07:53:02.558000 255947 torch/_inductor/select_algorithm.py:1905] [15/4] Exception No
    # valid triton configs.", and the autotuner's untagged "precompiling for 18 choices" line before it
    [diagnosis] = _in_log(CORPUS["r14_b.yaml#89"].message)
    assert _place(diagnosis.facts["logged_from"])[:2] == ("select_algorithm.py", 1905)
    assert diagnosis.facts["logged_from"]["file"] == "torch/_inductor/select_algorithm.py"
    assert "torch_source" not in diagnosis.facts  # not torch's C++
    assert "logged from torch/_inductor/select_algorithm.py:1905" in render_text(diagnosis)
    assert diagnosis.facts["choices"] == 18  # the untagged line is in rank 0's context


# --- torch's C++ places ---------------------------------------------------------------------------------------------

def test_torchs_cpp_place_in_the_wordings_the_readers_missed():
    # dtype_autograd#36: torch 1.x's "(print_stack at ..\torch\csrc\autograd\python_anomaly_mode.cpp:42)" on Windows
    [diagnosis] = [d for d in explain_stream(io.StringIO(CORPUS["dtype_autograd.yaml#36"].message))
                   if d.facts.get("torch_source", {}).get("line") == 42]
    assert diagnosis.facts["torch_source"]["function"] == "print_stack"
    # r11_b#61 (https://github.com/NVIDIA/vid2vid/issues/17): THC's check of a path from torch/ on
    found = torch_source(CORPUS["r11_b.yaml#61"].message)
    assert (found["file"], found["line"]) == ("torch/csrc/cuda/Module.cpp", 32)
    # r17_b#34: the Python error's wording of the same check
    found = torch_source(CORPUS["r17_b.yaml#34"].message)
    assert (found["file"], found["line"]) == ("torch/csrc/cuda/Module.cpp", 32)


# --- Hydra's wrapper, summaries shown whole -------------------------------------------------------------------------

# https://github.com/txie-93/cdvae/issues/2 (VS Code's copy of the exception, then the frames: an excerpt, the
# beginning of a comment's code block verbatim, up to the chained exception that follows it)
HYDRA = """Exception has occurred: InstantiationException       (note: full exception trace is shown but execution is paused at: _run_module_as_main)
Error in call to target 'cdvae.pl_modules.model.CDVAE':
InstantiationException("Error in call to target 'cdvae.pl_modules.gnn.DimeNetPlusPlusWrap':\\nRuntimeError('a leaf Variable that requires grad is being used in an in-place operation.')\\nfull_key: encoder")
full_key: model
  File "/home/sgbaird/miniconda3/envs/cdvae/lib/python3.9/site-packages/hydra/_internal/instantiate/_instantiate2.py", line 92, in _call_target
    return _target_(*args, **kwargs)
  File "/home/sgbaird/cdvae/cdvae/pl_modules/gnn.py", line 327, in __init__
    super(DimeNetPlusPlusWrap, self).__init__(
  File "/home/sgbaird/cdvae/cdvae/pl_modules/gnn.py", line 223, in __init__
    self.rbf = BesselBasisLayer(num_radial, cutoff, envelope_exponent)
  File "/home/sgbaird/miniconda3/envs/cdvae/lib/python3.9/site-packages/torch_geometric/nn/models/dimenet.py", line 59, in __init__
    self.reset_parameters()
  File "/home/sgbaird/miniconda3/envs/cdvae/lib/python3.9/site-packages/torch_geometric/nn/models/dimenet.py", line 62, in reset_parameters
    torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)"""  # noqa: E501


def test_hydras_target_and_config_key_follow_any_rules_summary():
    [diagnosis] = [d for d in explain_stream(io.StringIO(HYDRA)) if d.rule]
    assert diagnosis.rule == "autograd.leaf_inplace"
    # (and the target instantiated inside it, with its own key: round 43)
    assert diagnosis.summary.endswith("Hydra's instantiate raised it from the call to the config's target "
                                      "cdvae.pl_modules.model.CDVAE. The config key that names that target: model. "
                                      "Inside it, instantiating the nested target cdvae.pl_modules.gnn.DimeNetPlusPlusWrap "
                                      "(config key encoder) raised the error.")
    # r14_b#91: a rule that names them itself gets no note
    [diagnosis] = _ruled("r14_b.yaml#91")
    assert diagnosis.summary.count("pytorch_lightning.trainer.trainer.Trainer") == 1


def test_a_long_summary_is_shown_whole_and_the_json_keeps_it():
    [diagnosis] = _in_log(CORPUS["r14_b.yaml#89"].message)
    assert len(diagnosis.summary) > 500
    assert diagnosis.summary in render_text(diagnosis)
    assert json.loads(render_json(diagnosis))["summary"] == diagnosis.summary


# --- coloured output ------------------------------------------------------------------------------------------------

def test_pytests_coloured_report_is_read_like_its_plain_one():
    result = run_python("-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=yes", "--tb=long",
                        "fixtures/shape/pytest_model_forward.py", cwd=ROOT)
    assert "\x1b[" in result.stdout
    found, *summary = scan(result.stdout.splitlines())
    # the short summary's "FAILED path::test - RuntimeError: ..." line is its own record (the same error, the test named)
    assert all(s.text.startswith(found.text) for s in summary) and len(summary) <= 1
    frames = [(f.file.rsplit("/", 1)[-1], f.func, f.code) for f in found.frames]
    assert frames[0] == ("pytest_model_forward.py", "test_encoder_gets_inputs_of_the_wrong_width",
                         "encoder(torch.randn(32, 512))")
    assert ("pytest_model_forward.py", "forward", "return self.fc(x)") in frames
    # pytest's report as a web page shows it, the escape characters lost: the same live report's error line without them
    [error_line] = [line for line in result.stdout.splitlines()
                    if "\x1b" in line and "E       RuntimeError: mat1 and mat2 shapes" in line][:1]
    assert clean_line_record(error_line.replace("\x1b", ""))[0] == found.text


def test_a_tqdm_bar_before_an_error_is_taken_off():
    # r14_a#24 (https://github.com/bubbliiiing/yolov5-pytorch/issues/125): tqdm's bar, THC's line printed where it ended
    # (the paste's first line; a coloured bar's escape codes are taken off first, see the pytest report above)
    first_line = CORPUS["r14_a.yaml#24"].message.splitlines()[0]
    assert clean_line_record(first_line)[0].rstrip() == \
        "THCudaCheck FAIL file=..\\aten\\src\\THC\\THCCachingHostAllocator.cpp line=296 error=30 : unknown error"


# --- round 15's reading problems ------------------------------------------------------------------------------------

def test_frames_a_paste_left_out_and_the_code_line_under_them():
    # r15_a#69: util.py's frame, "……", then the code of the frame whose line was left out
    [diagnosis] = _ruled("r15_a.yaml#69")
    assert _place(diagnosis.location)[:3] == ("util.py", 205, "initialize")
    assert diagnosis.facts["raised_in"]["code"] == "next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)"


def test_an_inline_code_span_over_several_lines_and_the_statement_it_begins_with():
    # r15_a#96: "` C = C.reshape(num_queries, -1).cpu()" ... "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.`"
    [diagnosis] = _ruled("r15_a.yaml#96")
    assert diagnosis.facts["raised_in"]["code"] == "C = C.reshape(num_queries, -1).cpu()"
    assert not diagnosis.error.endswith("`")


def test_ipython_7s_frame_of_a_module_has_no_arguments():
    # r15_b#16: "~\.conda\envs\py3\lib\site-packages\torch\__init__.py in <module>"
    [diagnosis] = _ruled("r15_b.yaml#16")
    assert diagnosis.rule == "other.dll_load_failed"
    assert _place(diagnosis.location)[:2] == ("<ipython-input-3-eb42ca6e4af3>", 1)
    assert diagnosis.facts["raised_in"]["code"] == "from torch._C import *"


def test_spawns_report_of_a_childs_error_is_shown_with_it():
    # r15_b#60: "-- Process 1 terminated with the following error:" without the ProcessRaisedException line above it
    [diagnosis] = _ruled("r15_b.yaml#60")
    assert diagnosis.rule == "numerics.loss_nan_stop"
    [part] = diagnosis.facts["printed_with"]
    assert part["rule"] == "distributed.spawn_process_raised" and "Process 1" in part["summary"]
    # data_dist#78: with the line above it, one record as before
    first = next(scan(CORPUS["data_dist.yaml#78"].message.splitlines()))
    assert first.text.startswith("torch.multiprocessing.spawn.ProcessRaisedException:") and "Process 0" in first.text


def test_an_exception_groups_member_traceback_is_read_through_its_column():
    # r15_b#82: Python 3.11's "    |   File ..." column and its "+----" border
    [diagnosis] = _ruled("r15_b.yaml#82")
    assert _place(diagnosis.location)[:3] == ("linear.py", 351, "forward")
    assert diagnosis.error == "RuntimeError: shape '[21, 64]' is invalid for input of size 21"


def test_the_rank_in_vllms_worker_prefix_and_a_rank_after_a_quote():
    # r15_b#90: "(VllmWorker rank=6 pid=409) ERROR 07-23 19:34:51 [multiproc_executor.py:487] "
    [diagnosis] = _ruled("r15_b.yaml#90")
    assert diagnosis.facts["ranks"] == [6]
    # r15_b#83: "> [rank1]:     hidden_states, ..." (a quoted rank's traceback)
    [diagnosis] = _ruled("r15_b.yaml#83")
    assert diagnosis.facts["ranks"] == [1]
    assert _place(diagnosis.location)[:2] == ("llama_xformers_attn_monkey_patch.py", 42)


def test_the_statement_a_traceback_was_pasted_under_is_named():
    # r15_b#95: "loss_D.backward()", then torch's frames: the user's line, its frame line cut off
    [diagnosis] = _ruled("r15_b.yaml#95")
    assert diagnosis.facts["statement"]["code"] == "loss_D.backward()"
    assert "\n  at   loss_D.backward()\n" in render_text(diagnosis)


def test_ipythons_header_names_the_error_of_a_traceback_cut_before_its_error_line():
    # r15_b#43: a Databricks cell ("<command-1357939202606131> in <module>"), the paste cut inside Lightning's frames
    [found] = scan(CORPUS["r15_b.yaml#43"].message.splitlines())
    assert found.text == "ProcessExitedException"
    assert _place(found.location())[:3] == ("<command-1357939202606131>", 1, "<module>")
    assert looks_like_user_path("<command-1357939202606131>")


def test_ipythons_header_names_an_error_type_no_other_reading_knows():
    # r15_b#67: queue's "Empty: " under DataLoader's _try_get_data, then the RuntimeError raised from it, cut
    [diagnosis] = explain_stream(io.StringIO(CORPUS["r15_b.yaml#67"].message))
    assert diagnosis.error == "Empty:"
    assert _place(diagnosis.facts["raised_in"])[:3] == ("queue.py", 179, "Queue.get")
    assert _place(diagnosis.location)[:2] == ("Cell In[14]", 1)  # the cell of the traceback the paste ends with
