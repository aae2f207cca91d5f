"""The text diagnosis in a terminal: rich layout and colour only where the terminal can show them, plain
text elsewhere, untrusted text (messages, logs, checkpoint keys) never sent as terminal escape sequences;
the runbook link of the local site, `explainer open` and `explainer rules show`."""

from __future__ import annotations

import json
import os
import pty
import re
import sys
import textwrap

from explainer._config import local_site_dir, runbook_url
from explainer.diagnose.explain import explain
from explainer.diagnose.render import render_text, runbook_note, use_colour

from conftest import raise_fixture, raised, run_explainer

OSC_LINK = "\x1b]8;;http://evil\x07"
RED = "\x1b[31m"
HOSTILE_KEY = f"{OSC_LINK}click me\x1b]8;;\x07{RED}layer.weight"
# A checkpoint whose keys carry escape sequences: load_state_dict quotes them raw in its message.
CHECKPOINT_SCRIPT = textwrap.dedent(f"""
    import torch
    from torch import nn

    model = nn.Linear(2, 2)
    state = model.state_dict()
    state[{HOSTILE_KEY!r}] = torch.zeros(1)
    model.load_state_dict(state)
""")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _hostile_diagnosis():
    from torch import nn

    model = nn.Linear(2, 2)
    state = {**model.state_dict(), HOSTILE_KEY: __import__("torch").zeros(1)}
    return explain(raised(lambda: model.load_state_dict(state)))


def _assert_inert(text: str) -> None:
    """No escape sequence of the hostile text, only its escaped form."""
    assert OSC_LINK not in text and RED not in text and "\x07" not in text, repr(text)
    assert "\\x1b]8;;http://evil\\x07" in text and "\\x1b[31m" in text, repr(text)


def test_a_real_message_with_escape_sequences_is_escaped_in_plain_and_rich_text():
    diagnosis = _hostile_diagnosis()
    assert diagnosis.rule == "data.state_dict_keys" and OSC_LINK in diagnosis.summary
    _assert_inert(render_text(diagnosis))
    coloured = render_text(diagnosis, colour=True, width=100)
    assert SGR.search(coloured), "the terminal rendering has no styles"
    _assert_inert(SGR.sub("", coloured).replace("\x1b]8;id=", ""))  # our own SGR codes and link aside
    assert "\x1b]8;;http://evil" not in coloured


def test_the_hook_never_sends_escape_sequences_from_the_message(tmp_path):
    script = tmp_path / "load.py"
    script.write_text(CHECKPOINT_SCRIPT)
    text = run_explainer(str(script))
    assert text.returncode == 1
    diagnosis = text.stderr[text.stderr.index("torch-explainer [data.state_dict_keys]"):]
    _assert_inert(diagnosis)
    as_json = run_explainer("--format", "json", str(script))
    line = as_json.stderr.splitlines()[-1]
    assert OSC_LINK not in line and RED not in line and "\x07" not in line
    assert HOSTILE_KEY in json.loads(line)["summary"]  # escaped by JSON, the value itself intact


def test_explain_never_sends_escape_sequences_from_a_log():
    log = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
           "    model.load_state_dict(state)\n"
           "RuntimeError: Error(s) in loading state_dict for Linear:\n"
           f"\tUnexpected key(s) in state_dict: \"{HOSTILE_KEY}\". \n")
    text = run_explainer("explain", "-", stdin=log)
    assert text.returncode == 0 and "[data.state_dict_keys]" in text.stdout, text.stdout + text.stderr
    assert OSC_LINK not in text.stdout and RED not in text.stdout and "\x07" not in text.stdout
    assert "\\x1b]8;;http://evil\\x07" in text.stdout
    as_json = run_explainer("explain", "--format", "json", "-", stdin=log)
    assert as_json.stdout.strip() and "\x1b" not in as_json.stdout and "\x07" not in as_json.stdout
    assert json.loads(as_json.stdout.splitlines()[0])["rule"] == "data.state_dict_keys"


def test_plain_text_off_a_capable_terminal(monkeypatch, tmp_path):
    master, slave = pty.openpty()
    try:
        with open(slave, "w", encoding="utf-8", closefd=False) as tty:
            monkeypatch.delenv("TERM", raising=False)
            assert use_colour(tty)
            monkeypatch.setenv("TERM", "dumb")
            assert not use_colour(tty)
            monkeypatch.setenv("TERM", "xterm-256color")
            monkeypatch.setenv("NO_COLOR", "1")
            assert not use_colour(tty)
            monkeypatch.delenv("NO_COLOR")
            assert use_colour(tty)
        with open(slave, "w", encoding="latin-1", closefd=False) as latin:
            assert not use_colour(latin)
        with open(tmp_path / "log.txt", "w", encoding="utf-8") as file:
            assert not use_colour(file)
    finally:
        os.close(master)
        os.close(slave)


def test_the_terminal_rendering_wraps_under_its_label_and_keeps_the_link_whole():
    diagnosis = explain(raise_fixture("fixtures/shape/linear_in_features.py"))
    plain = render_text(diagnosis)
    lines = SGR.sub("", re.sub(r"\x1b\]8;[^\x1b]*\x1b\\", "", render_text(diagnosis, colour=True, width=60)))
    lines = lines.splitlines()
    assert all(len(line) <= 60 for line in lines if "runbook:" not in line), lines
    assert any(line.startswith("  runbook: ") and line.endswith(diagnosis.runbook) for line in lines)
    fix_lines = lines[next(i for i, line in enumerate(lines) if line.strip() == "fix:") + 1:]
    assert fix_lines[0].startswith("    - ") and fix_lines[1].startswith("      ") and fix_lines[1][6] != " "
    assert " ".join(" ".join(lines).split()) == " ".join(plain.split()), "wrapping changed the words"


def test_a_torchrun_workers_rank_is_one_line_under_the_location():
    diagnosis = explain(raise_fixture("fixtures/shape/linear_in_features.py"))
    diagnosis.facts["process"] = {"rank": 3, "world_size": 8, "local_rank": 1, "host": "node7"}
    lines = render_text(diagnosis).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  at "))
    assert lines[at + 1] == "  rank 3/8, local rank 1, host node7"
    del diagnosis.facts["process"]
    assert "rank" not in render_text(diagnosis).replace("runbook", "")


def test_the_default_link_is_the_local_sites_file_and_a_missing_site_says_what_to_run(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("EXPLAINER_BUILD_SITE", "0")
    diagnosis = explain(raise_fixture("fixtures/shape/linear_in_features.py"))
    page = local_site_dir() / "rules" / "shape.matmul.html"
    assert diagnosis.runbook == page.as_uri() and str(tmp_path) in diagnosis.runbook
    note = runbook_note(diagnosis, start_build=True)
    assert "not built yet" in note and "`explainer open shape.matmul`" in note
    assert note in render_text(diagnosis, note=note)
    page.parent.mkdir(parents=True)
    page.write_text("<h1>page</h1>")
    assert runbook_note(diagnosis, start_build=True) is None
    monkeypatch.setenv("EXPLAINER_RUNBOOK_URL", "https://runbooks.example.test/t/")
    assert runbook_url("shape.matmul") == "https://runbooks.example.test/t/rules/shape.matmul/"
    assert runbook_note(explain(raise_fixture("fixtures/shape/linear_in_features.py")), start_build=True) is None



def test_runbook_url_of_the_scripts_project_is_used_when_run_from_elsewhere(monkeypatch, tmp_path):
    from explainer._config import set_script_folder

    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.explainer]\nrunbook_url = "https://runbooks.example.test/team"\n')
    elsewhere = tmp_path / "jobs"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no pyproject.toml above it: only the script's project names the site
    monkeypatch.setattr("explainer._config._script_folder", None)
    assert runbook_url("shape.matmul") == local_site_dir().joinpath("rules", "shape.matmul.html").as_uri()
    set_script_folder(project / "src")
    assert runbook_url("shape.matmul") == "https://runbooks.example.test/team/rules/shape.matmul/"
    (elsewhere / "pyproject.toml").write_text('[tool.explainer]\nrunbook_url = "https://ops.example.test/rb"\n')
    assert runbook_url("shape.matmul") == "https://runbooks.example.test/team/rules/shape.matmul/"  # the script's first

def test_explainer_open_hands_the_page_to_the_browser(tmp_path):
    record = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(record)!r}, 'w').write(sys.argv[1])\n")
    env = {"EXPLAINER_RUNBOOK_URL": "https://runbooks.example.test/t/", "BROWSER": f"{sys.executable} {browser} %s"}
    result = run_explainer("open", "shape.matmul", env=env)
    assert result.returncode == 0, result.stderr
    assert record.read_text() == "https://runbooks.example.test/t/rules/shape.matmul/"
    unknown = run_explainer("open", "shape.no_such_rule", env=env)
    assert unknown.returncode == 2 and "no rule 'shape.no_such_rule'" in unknown.stderr


def test_rules_show_prints_the_page_as_text_without_markdown_noise():
    result = run_explainer("rules", "show", "shape.matmul")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("shape.matmul  [shape")
    page = out[out.index("\n\n"):]
    for heading in ("Messages it matches", "What it means", "Fix", "Reproduction"):
        assert re.search(rf"^\s*{heading}\s*$", page, re.M), f"no heading {heading!r} in:\n{page}"
    assert "```" not in page and not re.search(r"^\s*#+ ", page, re.M), page
    assert "self.fc = nn.Linear(256, 10)" in page and "python -m explainer fixtures/shape/linear_in_features.py" in page
    assert not any(line != line.rstrip() for line in page.splitlines()), "lines padded with spaces"
