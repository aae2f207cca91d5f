"""Sweep 27, the scanner and the paste reader on real pastes: a code fence with a language tag, pytest's short
summary of several failed tests of one rule, rich's traceback box with its error wrapped at the box's width, Colab's
frames as a web page rendered them, several warnings in one paste, lowercase and cut frame lines, a word a console
broke at its width."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import PYTEST_TERMINALS, benchmark_module
from explainer.cli.explain import explain_stream
from explainer.diagnose.logscan import Scanner, scan
from explainer.diagnose.render import render_text

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _explained(text: str):
    return [d for d in explain_stream(io.StringIO(text)) if d.rule is not None]


def _run(tmp_path, name: str, source: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / name
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **PYTEST_TERMINALS["250"]))


# --- 1. a code fence with a language tag -------------------------------------------------------------------------------

def test_a_fence_with_a_language_tag_is_read_like_a_plain_one():
    text = CORPUS["r26_b.yaml#52"].message  # rakhimovv/npbgpp#5: "```bash" around the shell's line
    [diagnosis] = _explained(text)
    assert diagnosis.rule == "other.native_segfault"
    assert diagnosis.error == "Segmentation fault (core dumped)"
    [tilde] = _explained("~~~python\nSegmentation fault (core dumped)\n~~~")
    assert tilde.error == "Segmentation fault (core dumped)"  # not the fence line


# --- 2. pytest's short summary: each failed test its own failure -------------------------------------------------------

TWO_TESTS = """
    import pytest
    import torch

    @pytest.mark.parametrize("n", [3, 5])
    def test_linear(n):
        torch.nn.Linear(4, 2)(torch.zeros(2, n))
"""


@pytest.mark.parametrize("args", [["--tb=no"], [], ["--tb=short"]])
def test_each_failed_test_of_pytest_s_summary_is_its_own_failure(tmp_path, args):
    run = _run(tmp_path, "test_two.py", TWO_TESTS, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, "test_two.py")
    assert "2 failed" in run.stdout
    diagnoses = _explained(run.stdout)
    assert [d.rule for d in diagnoses] == ["shape.matmul", "shape.matmul"]
    assert [d.facts["failed_test"]["file"] for d in diagnoses] == ["test_two.py::test_linear[3]",
                                                                    "test_two.py::test_linear[5]"]
    assert "(2x3 and 4x2)" in diagnoses[0].error and "(2x5 and 4x2)" in diagnoses[1].error


def test_a_summary_line_cut_at_the_terminal_s_width_names_the_test_of_its_report(tmp_path):
    run = _run(tmp_path, "test_two.py", TWO_TESTS, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_two.py")
    cut = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_two.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **PYTEST_TERMINALS["80"])).stdout
    assert "canno..." in cut or "..." in cut.split("short test summary", 1)[1]
    diagnoses = [d for d in explain_stream(io.StringIO(cut))]
    assert [d.rule for d in diagnoses] == ["shape.matmul", "shape.matmul"]
    assert [d.facts["failed_test"]["file"] for d in diagnoses] == ["test_two.py::test_linear[3]",
                                                                    "test_two.py::test_linear[5]"]
    assert run.returncode == 1


# --- 3. rich's traceback box, the error under it wrapped at its width ---------------------------------------------------

RICH = """
    import sys
    import torch
    from rich.console import Console
    from rich.traceback import install

    install(console=Console(width=int(sys.argv[1]), stderr=True, color_system=None))

    def train(x):
        weight = torch.zeros(3, 4, dtype=torch.float64)
        return torch.matmul(x, weight)

    train(torch.zeros(2, 3, dtype=torch.float32))
"""


@pytest.mark.parametrize("width", [50, 60, 100])
def test_rich_s_box_and_its_wrapped_error_line_read_as_python_s_traceback(tmp_path, width):
    stderr = _run(tmp_path, "rich_run.py", RICH, "rich_run.py", str(width)).stderr
    assert "╭" in stderr and "❱" in stderr
    [diagnosis] = _explained(stderr)
    assert diagnosis.rule == "dtype.matmul_mixed"
    assert diagnosis.error == "RuntimeError: expected m1 and m2 to have the same dtype, but got: float != double"
    assert (diagnosis.location.function, diagnosis.location.line, diagnosis.location.code) == \
        ("train", 11, "return torch.matmul(x, weight)")


def test_a_frame_line_rich_wrapped_after_in_keeps_its_function(tmp_path):
    # a box 50 wide holds 46 characters a line: a folder name padded so that the path's last piece and " in" fill a
    # line, and "train" goes to the next (how a longer temporary folder first showed it)
    pad = next(k for k in range(1, 47) if len(f"{tmp_path / ('d' * k)}/rich_run.py:11") % 46 == 40)
    folder = tmp_path / ("d" * pad)
    folder.mkdir()
    stderr = _run(folder, "rich_run.py", RICH, "rich_run.py", "50").stderr
    assert any(line.rstrip(" │").endswith(":11 in") for line in stderr.splitlines()), stderr
    [diagnosis] = _explained(stderr)
    assert (diagnosis.location.function, diagnosis.location.line) == ("train", 11)


def test_a_word_rich_folded_at_the_box_s_width_is_joined_without_a_space(tmp_path):
    source = """
        import sys
        import torch
        from rich.console import Console
        from rich.traceback import install

        install(console=Console(width=40, stderr=True, color_system=None))
        torch.load("/tmp/no_such_folder_for_the_explainer_tests/checkpoint_of_the_model.pth")
    """
    stderr = _run(tmp_path, "rich_load.py", source, "rich_load.py").stderr
    found = [f for f in scan(stderr.splitlines()) if f.text.startswith("FileNotFoundError")]
    assert found and "/tmp/no_such_folder_for_the_explainer_tests/checkpoint_of_the_model.pth" in found[0].text


# --- 4. Colab's frames ----------------------------------------------------------------------------------------------------

def test_colab_s_linked_frame_is_read_as_a_frame():
    [diagnosis] = _explained(CORPUS["r7_a.yaml#25"].message)  # "[/usr/.../linear.py](https://localhost:8080/#) in forward"
    assert diagnosis.rule == "dtype.matmul_mixed"
    assert diagnosis.facts["raised_in"]["function"] == "forward" and diagnosis.facts["raised_in"]["line"] == 114


def test_colab_s_frames_as_a_web_page_rendered_them_are_read():
    # facebookresearch/mmf#899: one space left of IPython's header's run, "→" and "—>" for its arrows
    text = ("RuntimeError Traceback (most recent call last)\nin ()\n7 “training.num_workers=0”\n8 ]\n----> 9 "
            "run(opts=opts)\n\n14 frames\n/usr/local/lib/python3.7/dist-packages/mmf_cli/run.py in run(opts, predict)\n"
            "131 else:\n132 config.device_id = 0\n→ 133 main(configuration, predict=predict)\n134\n135\n\n"
            "/usr/local/lib/python3.7/dist-packages/mmf_cli/run.py in main(configuration, init_distributed, predict)\n"
            "54 trainer.inference()\n55 else:\n—> 56 trainer.train()\n57\n58\n")
    scanner = Scanner()
    for number, line in enumerate(text.splitlines(), 1):
        list(scanner.feed(number, line))
    list(scanner.finish())
    # (the cell's own line first: its arrow under "in ()", a frame line the page cut to nothing)
    assert [(f.func, f.line, f.code) for f in scanner.dangling] == [
        ("", 9, "run(opts=opts)"), ("run", 133, "main(configuration, predict=predict)"), ("main", 56, "trainer.train()")]


# --- 5. several warnings ----------------------------------------------------------------------------------------------------

def test_each_warning_a_rule_explains_is_news(tmp_path):
    source = """
        import torch
        import torch.nn.functional as F
        p = F.softmax(torch.zeros(2, 3))
        loss = F.mse_loss(torch.zeros(4, 1), torch.zeros(4))
        opt = torch.optim.SGD(torch.nn.Linear(3, 3).parameters(), lr=0.1)
        torch.optim.lr_scheduler.StepLR(opt, 1).step()
    """
    stderr = _run(tmp_path, "warns.py", source, "-W", "always", "warns.py").stderr
    diagnoses = _explained(stderr)
    assert [d.rule for d in diagnoses] == ["other.softmax_implicit_dim", "shape.loss_broadcast_warning",
                                           "other.lr_scheduler_before_optimizer"]
    assert [d.location.line for d in diagnoses] == [4, 5, 7]


# --- 6. lowercase and cut frame lines ----------------------------------------------------------------------------------------

def test_a_paste_that_begins_at_line_n_in_f_is_placed_there():
    text = CORPUS["r20_b.yaml#31"].message  # alexis-jacq/Pytorch-ChatBot#1
    [diagnosis] = _explained(text)
    assert diagnosis.rule == "other.zero_dim_index"
    raised = diagnosis.facts["raised_in"]
    assert (raised["line"], raised["function"], raised["code"]) == (260, "train",
                                                                     "return loss.data[0] / float(hp.max_length)")
    assert "raised at line 260 in train   return loss.data[0]" in render_text(diagnosis)


def test_a_lowercase_file_frame_is_a_frame():
    text = ('Traceback (most recent call last):\n  file "train.py", line 12, in <module>\n    loss.backward()\n'
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n")
    [diagnosis] = _explained(text)
    assert (diagnosis.location.file, diagnosis.location.line, diagnosis.location.code) == ("train.py", 12, "loss.backward()")


# --- 7. a word a console broke at its width ----------------------------------------------------------------------------------

def test_a_torch_type_name_broken_at_the_console_s_width_is_joined():
    [diagnosis] = _explained(CORPUS["r22_a.yaml#18"].message)  # kevinzakka/recurrent-visual-attention#7
    assert diagnosis.rule == "device.mismatch"
    assert "Variable[torch.FloatTensor] for argument" in diagnosis.error


def test_a_line_break_between_two_words_is_kept():
    found = list(scan(["RuntimeError: " + "x" * 60 + " expected a tensor", "of type torch.float32 here"]))
    assert "\n" in found[0].text  # "tensorof" is no token of torch's: nothing joined
