"""The `explainer` command line: a subcommand about to run imports its own module, not the others'."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

OTHER_COMMANDS = ("explainer.cli.site", "explainer.cli.rules", "explainer.cli.curves", "explainer.cli.overfit",
                  "explainer.cli.open", "explainer.cli.run")


def test_explain_imports_only_its_own_subcommand(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)\n")
    code = ("import sys\nfrom explainer.cli.main import main\nstatus = main(['explain', sys.argv[1]])\n"
            f"print(status, sorted(m for m in {OTHER_COMMANDS!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(log)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "shape.matmul" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout


def test_every_subcommand_is_still_listed_and_its_help_works():
    done = subprocess.run([sys.executable, "-m", "explainer", "rules", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "list" in done.stdout, done.stderr
    done = subprocess.run([sys.executable, "-m", "explainer", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert all(name in done.stdout for name in ("explain", "curves", "overfit", "site", "open", "rules"))
