"""Round 14, the engine: which frames a pasted traceback's diagnosis names (code generated at run time, the standard
library under Windows and conda, the compiled graph torch.compile generated, the caller of a raising frame that is the
location), a copy of an error that comes with frames, torchrun's report of the rank that failed first, a tqdm bar the
next output was printed after, Ray's prefix, pytest's report in its three layouts, torch's C++ warnings and relative
C++ places, and a log's lone line that only a rule can tell is an error."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import PYTEST_TERMINALS, ROOT, benchmark_module, run_python, place as _place, ruled_diagnoses as _ruled
from explainer.cli.explain import explain_found, explain_stream, ranks_note
from explainer.diagnose.explain import torch_source
from explainer.diagnose.logblocks import scan_blocks
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.logscan import scan
from explainer.diagnose.render import render_text
from explainer.diagnose.textframes import is_compiled_graph, looks_like_user_path

CORPUS = {e.where: e for e in benchmark_module("coverage").load_corpus() if not e.held_out}


# --- which frames a diagnosis names ------------------------------------------------------------------------------

def test_frames_of_code_generated_at_run_time_and_the_windows_standard_library_are_not_the_users():
    # r14_a#65: a spawned child's '"<string>", line 1, in <module>' over conda's Windows multiprocessing/spawn.py
    assert not looks_like_user_path("<string>")
    assert not looks_like_user_path(r"C:\Users\34903\anaconda3\envs\TPG\lib\multiprocessing\spawn.py")
    assert not looks_like_user_path("/tmp/torchinductor_root/iq/ciqrfu3ucgsquenkxp6d3hnf3br5rzxifpxeazprcynhjvbnl2na.py")
    assert looks_like_user_path("<stdin>") and looks_like_user_path("<ipython-input-11-6588fcd71ffa>")
    assert looks_like_user_path("/home/u/project/lib/models/unet.py")  # a lib/ folder of one's own


def test_a_spawned_child_that_received_nothing_names_spawn_main_as_the_way_in():
    [diagnosis] = _ruled("r14_a.yaml#65")
    assert diagnosis.location is None
    assert _place(diagnosis.facts["raised_in"]) == ("spawn.py", 126, "_main", "self = reduction.pickle.load(from_parent)")
    assert _place(diagnosis.facts["called_via"]) == ("spawn.py", 116, "spawn_main",
                                                     "exitcode = _main(fd, parent_sentinel)")


def test_triton_launchers_string_frame_is_not_the_raising_frame_and_the_compiled_graph_names_the_kernel():
    # r14_b#53: ... compiled graph's `triton_poi_fused__to_copy_0.run(...)` -> triton_heuristics.py:670 -> <string>
    [diagnosis] = _ruled("r14_b.yaml#53")
    assert is_compiled_graph(diagnosis.location.file)
    assert diagnosis.location.code.startswith("triton_poi_fused__to_copy_0.run(")
    assert _place(diagnosis.facts["raised_in"]) == ("triton_heuristics.py", 670, "run", "return launcher(")
    assert "entered_via" not in diagnosis.facts  # the compiled graph stands for the user's code: no torch entry


def test_where_the_raising_frame_is_the_location_the_frame_that_called_it_is_named():
    # r14_b#54: torchinductor's autotune.py (a checkout, read as the user's) raised under the compiled graph's call
    [diagnosis] = _ruled("r14_b.yaml#54")
    assert _place(diagnosis.location)[:3] == ("autotune.py", 157, "run")
    assert diagnosis.facts["called_via"]["code"].startswith("kernel76.run(")
    # r14_b#74: transformers' `to` raised, called by accelerate's dispatch_model
    [diagnosis] = _ruled("r14_b.yaml#74")
    assert _place(diagnosis.location)[:3] == ("modeling_utils.py", 2861, "to")
    assert _place(diagnosis.facts["called_via"]) == ("big_modeling.py", 501, "dispatch_model", "model.to(device)")
    assert "via /home/falali/.local/lib/python3.10/site-packages/accelerate/big_modeling.py:501 in dispatch_model" \
        in render_text(diagnosis)


def test_the_caller_is_not_named_where_it_is_the_users_own_code_or_a_wrapper():
    # r14_a#24: the user's `v *= d` raised; its caller is the user's too (r14_b#1: c10d_logger's `wrapper`)
    [diagnosis] = _ruled("r14_a.yaml#24")
    assert _place(diagnosis.location)[:2] == ("yolo_training.py", 397)
    assert "called_via" not in diagnosis.facts
    diagnosis = _ruled("r14_b.yaml#1")[0]
    assert "called_via" not in diagnosis.facts and "entered_via" not in diagnosis.facts


def test_a_copy_of_an_error_that_comes_with_frames_places_the_one_explained():
    # r14_b#79: four workers' "Unexpected bus error" lines, then the main process's traceback with no error line
    [diagnosis] = _ruled("r14_b.yaml#79")
    assert diagnosis.facts["occurrences"] == 4
    assert _place(diagnosis.location) == ("train_pre.py", 52, "<module>",
                                          "for i, (images, labels) in enumerate(train_loader):")


def test_torchruns_report_goes_to_the_rank_that_failed_first():
    # r14_b#1: rank 0's NCCL error, then torchrun's "failed (exitcode: 1) local_rank: 1"
    nccl, launcher = _ruled("r14_b.yaml#1")
    assert nccl.rule == "distributed.nccl_error" and launcher.rule == "distributed.child_failed"
    assert nccl.facts["launcher_report"].startswith("failed (exitcode: 1) local_rank: 1 (pid: 6833)")
    assert "torchrun then reported: failed (exitcode: 1)" in ranks_note(nccl)
    assert launcher.facts["consequence_of"]["rank"] == 0


# --- what was printed around the record ---------------------------------------------------------------------------

def test_what_was_printed_where_a_progress_bar_ended_is_read_as_a_line_of_its_own():
    # r14_a#24: THC's check printed right after tqdm's bar, then the traceback of the same failure
    line = CORPUS["r14_a.yaml#24"].message.splitlines()[0]
    assert clean_line_record(line)[0].startswith("THCudaCheck FAIL file=..\\aten\\src\\THC\\THCCachingHostAllocator.cpp")
    bar = "Epoch 12/200:  29%|██████▉                 | 116/404 [01:34<03:54,  1.23it/s, loss=0.27, lr=0.000299]"
    assert clean_line_record(bar)[0] == bar  # a bar alone stays as it is
    [diagnosis] = _ruled("r14_a.yaml#24")
    assert diagnosis.rule == "device.cuda_runtime_error"
    assert diagnosis.facts["torch_source"] == {"file": "aten/src/THC/THCCachingHostAllocator.cpp", "line": 296,
                                               "function": "", "code": "THCudaCheck FAIL error=30"}


def test_rays_prefix_is_taken_off_every_line_of_a_workers_traceback():
    # r14_b#92: "(pid=1522026) " before each line
    [found] = scan(CORPUS["r14_b.yaml#92"].message.splitlines())
    assert found.text.startswith("pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested")
    assert [(f.file.rsplit("/", 1)[-1], f.line) for f in found.frames][1] == ("train.py", 122)
    assert clean_line_record("(RayTrainWorker pid=3181, ip=10.0.0.5) RuntimeError: x")[0] == "RuntimeError: x"


def test_a_relative_torch_path_after_at_is_torchs_cpp_place():
    # r14_a#56: "cuda runtime error (10) : invalid device ordinal at torch/csrc/cuda/Module.cpp:32"
    [diagnosis] = _ruled("r14_a.yaml#56")
    assert diagnosis.facts["torch_source"] == {"file": "torch/csrc/cuda/Module.cpp", "line": 32, "function": "",
                                               "code": ""}
    assert torch_source("a leaf at torch_geometric.py:3") is None


def test_a_warning_torchs_cpp_issued_names_that_place_as_torchs_source():
    # r14_a#83: "`/build/python-pytorch/src/pytorch-1.3.1-opt-cuda/torch/csrc/autograd/python_function.cpp:620:
    # UserWarning: Legacy autograd function with non-static forward method is deprecated ..."
    [found] = scan(CORPUS["r14_a.yaml#83"].message.splitlines())
    assert found.warning and found.frames == []
    assert found.text.startswith("UserWarning: Legacy autograd function with non-static forward method")
    [diagnosis] = _ruled("r14_a.yaml#83")
    assert diagnosis.rule == "autograd.legacy_function"
    assert _place(diagnosis.facts["torch_source"])[:2] == ("python_function.cpp", 620)
    # dtype_autograd#36: TensorFactories.cpp's deprecation warning is a record of its own, before anomaly mode's
    first, second = scan(CORPUS["dtype_autograd.yaml#36"].message.splitlines())
    assert first.logged_at == r"..\aten\src\ATen\native\TensorFactories.cpp:361"
    assert second.text.startswith("Warning: Error detected in MkldnnConvolutionBackward")


# --- pytest's report ------------------------------------------------------------------------------------------------

# pytest cuts its short summary's lines to the terminal's width: at 80 columns "FAILED path::test - RuntimeError: ..."
# loses its message, at 250 it keeps it whole (a second record of the same error), and so does CI's at any width
WIDTHS = tuple(PYTEST_TERMINALS)


@pytest.fixture(scope="module")
def pytest_reports() -> dict[tuple[str, str], str]:
    def report(layout: str, width: str) -> str:
        result = run_python("-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tb={layout}",
                            "fixtures/shape/pytest_model_forward.py", cwd=ROOT, env=PYTEST_TERMINALS[width])
        assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)" in result.stdout
        return result.stdout

    # nine pytest processes that each import torch: run side by side (most of each is waiting on imports)
    cases = [(layout, width) for layout in ("long", "short", "auto") for width in WIDTHS]
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(cases, pool.map(lambda case: report(*case), cases)))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("layout", ["long", "short", "auto"])
def test_pytests_report_in_each_layout_is_read_as_the_traceback_it_stands_for(pytest_reports, layout, width):
    report = pytest_reports[layout, width]
    found, *summary = scan(report.splitlines())
    assert found.text == "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)"
    frames = [(f.file.rsplit("/", 1)[-1], f.func, f.code) for f in found.frames]
    assert frames[0] == ("pytest_model_forward.py", "test_encoder_gets_inputs_of_the_wrong_width",
                         "encoder(torch.randn(32, 512))")
    assert ("pytest_model_forward.py", "forward", "return self.fc(x)") in frames
    assert frames[-1][:2] == ("linear.py", "forward") and frames[-1][2].startswith("return F.linear(")
    test_id = "fixtures/shape/pytest_model_forward.py::test_encoder_gets_inputs_of_the_wrong_width"
    assert [(s.text, s.logged_at) for s in summary] == ([] if width == "80" else [(found.text, test_id)])
    [diagnosis] = explain_stream(io.StringIO(report))  # the summary's repeat is the same failure, not a second
    assert diagnosis.rule == "shape.matmul" and "occurrences" not in diagnosis.facts
    assert _place(diagnosis.location) == ("pytest_model_forward.py", 17, "forward", "return self.fc(x)")
    assert _place(diagnosis.facts["raised_in"])[:3] == ("linear.py", found.frames[-1].line, "forward")
    assert (diagnosis.facts.get("failed_test") or {}).get("file") == (None if width == "80" else test_id)


@pytest.mark.parametrize("width", WIDTHS)
def test_pytests_summary_is_not_read_as_part_of_the_error(pytest_reports, width):
    # --tb=short: "E   RuntimeError: ..." then "=== short test summary info ===" and "FAILED ..." at once, and
    # -q's closing tally ("1 failed in 1.79s") right under the summary's last line
    for found in scan(pytest_reports["short", width].splitlines()):
        assert found.text == "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)"


# --- a lone line in a log -----------------------------------------------------------------------------------------

# https://github.com/NVlabs/instant-ngp/issues/60 (the code block, verbatim): tiny-cuda-nn's CUTLASS check
# printed its status and the process exited, with no Python error at all
NGP_LOG = """Warning: FullyFusedMLP is not supported for the selected architecture 61. Falling back to CutlassMLP. For maximum performance, raise the target GPU architecture to 75+.
Warning: FullyFusedMLP is not supported for the selected architecture 61. Falling back to CutlassMLP. For maximum performance, raise the target GPU architecture to 75+.
15:28:12 INFO     Density model: 3--[HashGrid]-->32--[FullyFusedMLP(neurons=64,layers=3)]-->1
15:28:12 INFO     Color model:   3--[SphericalHarmonics]-->16+16--[FullyFusedMLP(neurons=64,layers=4)]-->3
15:28:12 INFO       total_encoding_params=13074912 total_network_params=9728
Training:   0%|                                                                                                                                                  | 0/100000 [00:00<?, ?step/s]
Got cutlass error: Error Internal at: 394
"""


def test_in_a_log_with_no_record_a_line_a_rule_explains_is_found():
    assert list(scan(NGP_LOG.splitlines())) == []  # no 'Error:' line, no traceback, no marker
    [diagnosis] = explain_found(scan_blocks([NGP_LOG], lone_lines=True))
    assert diagnosis.rule == "device.cutlass_status"
    assert diagnosis.facts["input_line"] == 7 and diagnosis.facts["status"] == "Error Internal"
    # a log longer than a paste is read as a log: the same line found, 300 lines further down
    [diagnosis] = explain_stream(io.StringIO("\n" * 300 + NGP_LOG))
    assert diagnosis.rule == "device.cutlass_status" and diagnosis.facts["input_line"] == 307


def test_lone_lines_are_tried_only_where_no_record_is_found():
    log = NGP_LOG + "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    [diagnosis] = explain_found(scan_blocks([log], lone_lines=True))
    assert diagnosis.rule == "device.illegal_memory_access"
    # lines that only hold an error word explain nothing, and pastes are still read whole, not line by line
    assert explain_found(scan_blocks(["step 1 val Error 0.31\nstep 2 val Error 0.29\n" * 100], lone_lines=True)) == []
    assert list(scan_blocks([NGP_LOG])) == []
