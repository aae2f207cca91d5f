"""Round 19, the engine: the places a traceback gives beyond its location (the user's outer caller in a second
traceback of the same error, or past nn.Module's `__call__`; Lightning's call into torch_xla; the child's side of a
Windows spawn; multiprocessing's way in; a DataLoader worker's own frame in torch 0.4's re-raise), xla_dist's line
prefix, a ComfyUI node named with parentheses in a paste that lost its line breaks, a rich frame line whose left edge
was cut off, glog places outside torch's C++, and templates jinja2 cannot compile."""

from __future__ import annotations

import pytest

from conftest import corpus_message, place, ruled_diagnoses
from explainer.cli.main import main
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.render import render_text
from explainer.diagnose.sourceplaces import logged_source
from explainer.rules.base import reset_default_rulebase
from explainer.rules.templates import compile_problem, render

# --- where: the frames around the location ------------------------------------------------------------------------


def test_the_same_error_raised_again_while_handling_it_names_the_users_outer_call():
    # https://github.com/yzyouzhang/AIR-ASVspoof/issues/31: pickle.load failed in __getitem__, was caught, failed again;
    # the second traceback holds the line that called __getitem__
    [diagnosis] = ruled_diagnoses("r18_a.yaml#40")
    assert place(diagnosis.location)[:2] == ("dataset.py", 53)
    assert place(diagnosis.facts["called_from"])[:3] == ("train.py", 126, "train")
    assert diagnosis.facts["occurrences"] == 2


def test_the_outer_caller_is_not_nn_modules_call_cut_to_a_relative_path():
    # https://github.com/manila95/monolayout/issues/6: anomaly mode's forward trace, "../module.py" in __call__ between
    # the script's line and the model's forward
    diagnosis = ruled_diagnoses("r19_a.yaml#40")[0]
    assert place(diagnosis.facts["called_from"])[:2] == ("train_mono.py", 209)


def test_a_torch_backends_frames_are_torchs_and_the_library_that_called_it_is_the_location():
    # https://github.com/Lightning-AI/pytorch-lightning/issues/6849: torch_xla's Python passes Lightning's call on to C++
    diagnosis = ruled_diagnoses("r18_b.yaml#53")[0]
    assert place(diagnosis.location)[:3] == ("xla_device.py", 70, "_is_device_tpu")
    assert place(diagnosis.facts["raised_in"])[:2] == ("xla_model.py", 18)


def test_the_childs_side_of_a_windows_spawn_is_shown_under_the_parents_pickling_error():
    # https://github.com/liznerski/fcdd/issues/2: "Can't pickle local object", then the child's "EOFError: Ran out of input"
    [diagnosis] = ruled_diagnoses("r18_b.yaml#55")
    assert diagnosis.rule == "other.pickle_local_object"
    [child] = diagnosis.facts["printed_with"]
    assert child["rule"] == "data.pickle_ran_out_of_input"
    assert place(child["location"])[:2] == ("spawn.py", 115)


def test_the_standard_librarys_module_that_called_the_raising_one_is_the_way_in():
    # https://github.com/yanx27/EverybodyDanceNow_reproduce_pytorch/issues/6: popen_spawn_win32 into reduction.dump
    diagnosis = ruled_diagnoses("r18_b.yaml#56")[0]
    assert place(diagnosis.facts["raised_in"])[:2] == ("reduction.py", 60)
    assert place(diagnosis.facts["called_via"])[:2] == ("popen_spawn_win32.py", 65)
    assert place(diagnosis.location)[:2] == ("train_pose2vid.py", 49)


def test_torch_04s_worker_reraise_is_raised_where_the_workers_traceback_ends():
    # https://github.com/zijundeng/pytorch-semantic-segmentation/issues/10: "TypeError: Traceback (most recent call
    # last):", the worker's frames, then the worker's error
    diagnosis = ruled_diagnoses("r19_a.yaml#83")[0]
    assert diagnosis.rule == "data.default_collate_type"
    assert place(diagnosis.facts["raised_in"])[:3] == ("dataloader.py", 112, "default_collate")
    assert place(diagnosis.location)[:2] == ("eval_cs.py", 42)


def test_the_frame_a_library_was_entered_by_is_not_repeated_as_where_it_was_called_from():
    # https://github.com/harvardnlp/namedtensor/issues/93: IPython's frames, all of the namedtensor package
    diagnosis = ruled_diagnoses("r19_b.yaml#20")[0]
    assert place(diagnosis.facts["entered_via"])[:2] == ("core.py", 197)
    assert "called_from" not in diagnosis.facts


# --- reading: prefixes, boxes, one-line pastes ----------------------------------------------------------------------

def test_xla_dists_worker_prefix_is_taken_off_every_line():
    # https://github.com/Lightning-AI/pytorch-lightning/issues/7197
    line = corpus_message("r18_b.yaml#51").splitlines()[4]
    cleaned, rank, new_record, _, _ = clean_line_record(line)
    assert cleaned.startswith('  File "/home/kaushikbokka/') and rank is None and not new_record
    diagnosis = ruled_diagnoses("r18_b.yaml#51")[0]
    assert place(diagnosis.location)[:3] == ("device_parser.py", 104, "parse_tpu_cores")
    # a timestamped log line with no address after the time keeps its own reading
    # (https://github.com/facebookresearch/mmf/issues/185: "2019-10-12T20:02:49 ERROR: CUDA out of memory. ...")
    line = next(x for x in corpus_message("r27_a.yaml#85").splitlines() if " ERROR: " in x)
    assert line.startswith("2019-10-12T20:02:49 ERROR: ")
    assert clean_line_record(line)[0] == line.split("ERROR: ", 1)[1]


def test_a_comfyui_node_named_with_parentheses_in_a_paste_without_line_breaks():
    # https://github.com/Comfy-Org/ComfyUI/issues/2420: "Error occurred when executing KSampler (Efficient):  Placeholder..."
    diagnosis = ruled_diagnoses("r19_a.yaml#54")[0]
    assert diagnosis.facts["comfyui_node"] == "KSampler (Efficient)"
    assert "in ComfyUI node KSampler (Efficient)" in render_text(diagnosis)


def test_a_rich_frame_line_whose_left_edge_the_paste_cut_off():
    # https://github.com/AutoGPTQ/AutoGPTQ/issues/138: "  /home/.../gptq.py:96 in          │" opens the paste
    diagnosis = ruled_diagnoses("r19_b.yaml#60")[0]
    assert place(diagnosis.location)[:2] == ("gptq.py", 96)
    assert diagnosis.location.code == "H = torch.linalg.cholesky(H, upper=True)"


# --- glog places outside torch's C++ -------------------------------------------------------------------------------

@pytest.mark.parametrize(("place_text", "key", "file"), [
    ("model_repository_manager.cc:810", "logged_from", "model_repository_manager.cc"),  # Triton Inference Server
    ("tensorflow/compiler/xla/xla_client/computation_client.cc:12", "logged_from",
     "tensorflow/compiler/xla/xla_client/computation_client.cc"),
    ("ProcessGroupNCCL.cpp:4561", "torch_source", "ProcessGroupNCCL.cpp"),  # torch's c10 logger names the file alone
    (r"..\torch\csrc\autograd\python_anomaly_mode.cpp:104", "torch_source", "torch/csrc/autograd/python_anomaly_mode.cpp"),
    ("torch/_inductor/utils.py:1137", "logged_from", "torch/_inductor/utils.py"),
])
def test_only_torchs_own_cpp_places_are_torch_source(place_text, key, file):
    found_key, fact = logged_source(place_text)
    assert (found_key, fact["file"]) == (key, file)


def test_triton_servers_glog_place_is_where_it_logged_not_torchs_cpp():
    # https://github.com/triton-inference-server/server/issues/1808 (r18_a#14): "E0720 ... model_repository_manager.cc:810]"
    diagnosis = ruled_diagnoses("r18_a.yaml#14")[0]
    assert "torch_source" not in diagnosis.facts
    assert place(diagnosis.facts["logged_from"])[:2] == ("model_repository_manager.cc", 810)


# --- templates jinja2 cannot compile ---------------------------------------------------------------------------------

def test_a_template_that_parses_but_does_not_compile_is_a_problem():
    # jinja2 writes the template's name (here its source) into the code for an inline if without else: a quote breaks it
    assert "else" in compile_problem("{{ n }} item{{ 's' if n > 1 }}")
    assert compile_problem("{{ n | no_such_filter }}") == "No filter named 'no_such_filter'."
    assert compile_problem("{{ n }} item{{ 's' if n > 1 else '' }}") is None
    assert compile_problem("{{ n | plural('item') }}") is None


RUNBOOK = "## What it means\n\nA.\n\n## Likely causes\n\n1. B.\n\n## How to confirm\n\nC.\n\n## Fix\n\nD.\n"


def test_rules_check_reports_a_template_jinja2_cannot_compile(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.yaml").write_text("prefix: acme\n")
    (pack / "items.md").write_text(
        "---\nid: acme.items\ncategory: other\ntitle: Too many items\n"
        "patterns:\n  - 'ItemError: (?P<n>\\d+) items'\n"
        "summary:\n  - \"{{ n }} item{{ 's' if n | int > 1 }} were given.\"\n"
        "examples:\n  - message: 'ItemError: 3 items'\n    source: https://example.org/items\n---\n" + RUNBOOK)
    reset_default_rulebase()
    try:
        status = main(["rules", "check", str(pack)])
    finally:
        reset_default_rulebase()
    out = capsys.readouterr()
    assert status == 1
    assert "items.md:8: rule acme.items: summary[0]: template does not compile: jinja2 cannot compile it" in out.out + out.err


def test_an_unknown_filter_or_test_under_a_condition_is_a_problem_and_never_raises_when_rendered():
    # jinja2 compiles these and fails only when the condition holds (a round-21 summary used `regex_replace`)
    guarded = "{% if x is defined %}{{ x | regex_replace('a', 'b') }}{% endif %}"
    assert compile_problem(guarded) == "no filter named 'regex_replace'"
    assert compile_problem("{% if x is even_length %}{{ x }}{% endif %}") == "no test named 'even_length'"
    assert render(guarded, {"x": "a"}) is None  # a team rule that slipped past `rules check` gives no summary, no crash
