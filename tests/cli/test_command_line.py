"""The `explainer` command line: a subcommand about to run imports its own module, not the others'; what it says
on stderr."""

from __future__ import annotations

import os
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


def test_explain_says_on_stderr_that_it_skipped_broken_team_rules_as_the_hook_does(tmp_path):
    pack = tmp_path / "team"
    (pack / "loader").mkdir(parents=True)
    (pack / "pack.yaml").write_text("prefix: acme\n")
    (pack / "loader" / "bad.md").write_text(
        "---\nid: acme.loader.bad\ncategory: data\ntitle: A broken team rule\npatterns:\n  - 'LoaderError: (unclosed'\n"
        "summary:\n  - \"Broken.\"\nexamples:\n  - message: \"LoaderError: x\"\n    source: https://example.org/x\n---\n")
    script = tmp_path / "train.py"
    script.write_text("import torch\ntorch.nn.Linear(256, 10)(torch.randn(32, 512))\n")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("EXPLAINER_")}, "EXPLAINER_RULES": str(pack)}
    hooked = subprocess.run([sys.executable, "-m", "explainer", str(script)], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    [note] = [line for line in hooked.stderr.splitlines() if "broken team rule" in line]
    assert note.startswith("torch-explainer: skipped 1 broken team rule (team/loader/bad.md:6: "), hooked.stderr
    log = tmp_path / "train.log"
    log.write_text(hooked.stderr)
    for fmt in ("text", "json"):
        done = subprocess.run([sys.executable, "-m", "explainer", "explain", "--format", fmt, str(log)], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "shape.matmul" in done.stdout
        assert done.stderr == note + "\n", done.stderr


def test_version_and_the_runners_help(capsys):
    from explainer._version import __version__
    from explainer.cli.main import main

    assert main(["--version"]) == 0 and capsys.readouterr().out == f"torch-explainer {__version__}\n"
    assert main(["--version"], module_mode=True) == 0 and capsys.readouterr().out == f"torch-explainer {__version__}\n"
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: explainer run [--format text|json] SCRIPT [ARGS...]\n") and "-m MODULE" in out
    assert main(["--help"], module_mode=True) == 0  # `python -m explainer --help`: the runner's own help
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m explainer [--format text|json] SCRIPT [ARGS...]\n")
    assert "--format text|json" in out and "(explain, curves, overfit, site, open, rules; COMMAND --help" in out


def test_a_format_with_no_script_or_module_is_said_plainly(capsys):
    from explainer.cli.main import main

    assert main(["--format", "json"], module_mode=True) == 2
    assert capsys.readouterr().err.endswith("python -m explainer: error: no script to run after --format json "
                                            "(--help for more)\n")
    assert main(["-m"], module_mode=True) == 2
    assert "-m needs a module name" in capsys.readouterr().err
