"""`python -m explainer SCRIPT` end to end, in subprocesses, against plain `python SCRIPT`."""

from __future__ import annotations

import json
import signal
import sys

from conftest import ROOT, run_explainer, run_python

LINEAR = "fixtures/shape/linear_in_features.py"


def _json_lines(stderr: str) -> list[dict]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def test_traceback_is_byte_for_byte_pythons_and_diagnosis_follows():
    plain = run_python(LINEAR)
    hooked = run_explainer(LINEAR)
    assert plain.returncode == 1 and hooked.returncode == 1
    assert plain.stderr.startswith("Traceback (most recent call last):")
    assert hooked.stderr.startswith(plain.stderr), "the traceback under the hook differs from python's"
    diagnosis = hooked.stderr[len(plain.stderr):]
    assert "[shape.matmul]" in diagnosis
    assert "model.encoder.fc = Linear(in_features=256, out_features=10, bias=True) got x of shape (32, 512)" in diagnosis
    assert "nn.Linear(512, 10)" in diagnosis
    assert hooked.stdout == plain.stdout


def test_json_output_contract():
    hooked = run_explainer("--format", "json", LINEAR)
    assert hooked.returncode == 1
    (record,) = _json_lines(hooked.stderr)
    assert record["rule"] == "shape.matmul"
    assert record["category"] == "shape"
    assert set(record) >= {"rule", "category", "title", "summary", "location", "culprits", "fixes", "runbook", "facts"}
    assert record["location"] == {"file": str(ROOT / LINEAR), "line": 13, "function": "forward",
                                  "code": "return self.fc(x)"}
    names = [c["name"] for c in record["culprits"]]
    assert names == ["model.encoder.fc", "x"]
    assert record["culprits"][1]["shape"] == [32, 512]
    assert record["facts"]["m1_cols"] == 512 and record["facts"]["in_features"] == 256
    # The default link is the local site's page, opened from the file system (no server).
    assert record["runbook"].startswith("file://") and record["runbook"].endswith("/rules/shape.matmul.html")


def test_environment_variable_selects_json():
    hooked = run_explainer(LINEAR, env={"EXPLAINER_FORMAT": "json"})
    assert _json_lines(hooked.stderr)[0]["rule"] == "shape.matmul"


def test_argv_path_file_and_exit_status_match_python():
    script = "fixtures/core/argv_and_path.py"
    for args in ([], ["7", "--flag"], ["0"]):
        plain = run_python(script, *args)
        hooked = run_explainer(script, *args)
        assert hooked.stdout == plain.stdout
        assert hooked.returncode == plain.returncode
        assert hooked.stderr == plain.stderr == ""
    assert "name __main__" in plain.stdout


def test_relative_script_from_another_directory():
    plain = run_python("linear_in_features.py", cwd=ROOT / "fixtures" / "shape")
    hooked = run_explainer("linear_in_features.py", cwd=ROOT / "fixtures" / "shape")
    assert hooked.stderr.startswith(plain.stderr)
    assert hooked.returncode == plain.returncode == 1


def test_unrelated_error_gets_no_invented_diagnosis():
    plain = run_python("fixtures/core/config_keyerror.py")
    hooked = run_explainer("--format", "json", "fixtures/core/config_keyerror.py")
    assert hooked.returncode == 1
    assert hooked.stderr.startswith(plain.stderr)
    (record,) = _json_lines(hooked.stderr)
    assert record["rule"] is None and record["category"] == "other"
    assert record["fixes"] == [] and record["culprits"] == []
    assert record["location"]["line"] == 7


def test_chained_exception_explains_the_torch_error_and_prints_no_values():
    plain = run_python("fixtures/core/chained.py")
    hooked = run_explainer("fixtures/core/chained.py")
    assert hooked.stderr.startswith(plain.stderr)
    tail = hooked.stderr[len(plain.stderr):]
    assert "[shape.matmul]" in tail and "head = Linear(in_features=128" in tail
    assert "31337" not in tail


def test_thread_exception_is_explained_after_pythons_thread_report():
    plain = run_python("fixtures/core/thread_error.py")
    hooked = run_explainer("fixtures/core/thread_error.py")
    assert plain.returncode == hooked.returncode == 0
    assert hooked.stderr.startswith(plain.stderr)
    assert "Exception in thread trainer" in plain.stderr
    assert "layer = Linear(in_features=16, out_features=2, bias=True) got" in hooked.stderr
    assert hooked.stdout == plain.stdout == "main thread done\n"


def test_keyboard_interrupt_passes_straight_through():
    plain = run_python("fixtures/core/keyboard_interrupt.py")
    hooked = run_explainer("fixtures/core/keyboard_interrupt.py")
    assert plain.returncode == hooked.returncode == -signal.SIGINT
    assert hooked.stderr == plain.stderr
    assert "torch-explainer" not in hooked.stderr


def test_missing_script_behaves_like_python():
    plain = run_python("fixtures/does_not_exist.py")
    hooked = run_explainer("fixtures/does_not_exist.py")
    assert hooked.returncode == plain.returncode == 2
    assert "can't open file" in hooked.stderr


def test_install_in_script_works_without_the_runner(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import explainer\nexplainer.install()\n" + (ROOT / LINEAR).read_text())
    plain = run_python(str(script), env={"PYTHONPATH": str(ROOT)})
    assert plain.returncode == 1
    assert "torch-explainer [shape.matmul]" in plain.stderr
    assert plain.stderr.index("Traceback") < plain.stderr.index("torch-explainer")


def test_colour_only_on_a_terminal_and_never_with_no_color():
    import os
    import pty
    import subprocess

    def run_on_tty(extra_env):
        master, slave = pty.openpty()
        env = {k: v for k, v in os.environ.items() if not k.startswith("EXPLAINER_")}
        env.pop("NO_COLOR", None)
        env["EXPLAINER_BUILD_SITE"] = "0"  # a terminal would start the local site's background build
        env.update(extra_env)
        proc = subprocess.Popen([sys.executable, "-m", "explainer", LINEAR], cwd=ROOT, stdout=slave,
                                stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=120)
        os.close(master)
        return b"".join(chunks).decode()

    coloured = run_on_tty({})
    assert "\x1b[" in coloured and "shape.matmul" in coloured
    plain = run_on_tty({"NO_COLOR": "1"})
    assert "\x1b[" not in plain and "shape.matmul" in plain
    piped = run_explainer(LINEAR)
    assert "\x1b[" not in piped.stderr


def test_a_module_runs_as_python_dash_m_runs_it(tmp_path):
    """`python -m explainer -m pkg.mod`: sys.argv, sys.path[0], __spec__, the traceback (runpy's frames included), the
    recursion depth and the exit status are `python -m pkg.mod`'s; the diagnosis follows."""
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(
        "import sys\nprint(sys.argv, sys.path[0], __name__, __spec__.name)\n"
        "def depth(n):\n    try:\n        return depth(n + 1)\n    except RecursionError:\n        return n\n"
        "print(depth(0))\nimport torch\ntorch.nn.Linear(8, 4)(torch.ones(2, 6))\n")
    plain = run_python("-m", "mypkg.train", "7", "--flag", cwd=tmp_path)
    hooked = run_explainer("-m", "mypkg.train", "7", "--flag", cwd=tmp_path)
    assert hooked.stdout == plain.stdout and f"'7', '--flag'] {tmp_path} __main__ mypkg.train" in plain.stdout
    assert hooked.returncode == plain.returncode == 1
    assert plain.stderr.startswith('Traceback (most recent call last):\n  File "<frozen runpy>"')
    assert hooked.stderr.startswith(plain.stderr)
    assert "torch-explainer [shape.matmul]" in hooked.stderr[len(plain.stderr):]
    missing = run_explainer("-m", "mypkg.nope", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (1, f"{sys.executable}: No module named mypkg.nope\n")
    (package / "bad.py").write_text("def (:\n")  # Python cannot compile it: its own report, nothing after it
    plain, hooked = run_python("-m", "mypkg.bad", cwd=tmp_path), run_explainer("-m", "mypkg.bad", cwd=tmp_path)
    assert plain.stderr.endswith("SyntaxError: invalid syntax\n")
    assert (hooked.returncode, hooked.stderr) == (plain.returncode, plain.stderr) == (1, plain.stderr)
