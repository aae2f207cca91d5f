"""Team rule packs: discovery, precedence, validation, `explainer rules ...`, and run-time safety."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from explainer.cli.main import main
from explainer.diagnose.explain import exception_text, explain, explain_text
from explainer.probes import PROBES, load_builtin_probes
from explainer.rules.packs import discover_packs
from explainer.rules.base import build_rulebase, default_rulebase, reset_default_rulebase

from conftest import ROOT, raise_fixture, run_explainer

TEAM_PACK = ROOT / "fixtures" / "team_pack"


@pytest.fixture(autouse=True)
def _fresh_rulebase(tmp_path_factory, monkeypatch):
    """Each test discovers packs anew; pack probes and modules do not leak into other tests.

    Tests work outside the checkout, whose pyproject.toml names the example pack: each test
    chooses its own packs.
    """
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    probes, modules = dict(load_builtin_probes()), set(sys.modules)
    reset_default_rulebase()
    yield
    reset_default_rulebase()
    PROBES.clear()
    PROBES.update(probes)
    for name in set(sys.modules) - modules:
        if name.startswith(("explainer_pack_probes_", "acme_rules")):
            del sys.modules[name]


RUNBOOK = ("## What it means\n\nA team rule.\n\n## Likely causes\n\n1. A cause.\n\n"
           "## How to confirm\n\nA check.\n\n## Fix\n\nA fix.\n")


def rule_md(rule_id: str, pattern: str, example: str, *, priority: int = 0, extra: str = "",
            body: str = RUNBOOK) -> str:
    """A valid rule file; extra is inserted as front-matter lines before the examples."""
    return (f"---\nid: {rule_id}\ncategory: other\ntitle: Team rule {rule_id}\npriority: {priority}\n"
            f"patterns:\n  - '{pattern}'\nsummary:\n  - \"Matched {rule_id}.\"\n{extra}"
            f"examples:\n  - message: \"{example}\"\n    source: https://example.org/{rule_id}\n---\n{body}")


def write_pack(folder: Path, prefix: str, rules: dict[str, str], probes: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text(f"prefix: {prefix}\n" + ("probes: probes.py\n" if probes else ""))
    if probes:
        (folder / "probes.py").write_text(textwrap.dedent(probes))
    for name, text in rules.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def rules_cli(capsys, *argv: str) -> tuple[int, str]:
    status = main(["rules", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


# --- discovery ------------------------------------------------------------------------------------

def test_packs_from_the_environment_variable(tmp_path, monkeypatch):
    other = write_pack(tmp_path / "ops", "ops", {"disk.md": rule_md("ops.disk", "OSError: disk full", "OSError: disk full")})
    monkeypatch.setenv("EXPLAINER_RULES", f"{TEAM_PACK}{os.pathsep}{other}")
    rulebase = default_rulebase()
    assert not rulebase.team_problems, [str(p) for p in rulebase.team_problems]
    assert [p.prefix for p in rulebase.packs] == ["example", "ops"]
    assert rulebase.by_id["example.loader.shard_timeout"].pack == "example"
    assert rulebase.by_id["ops.disk"].pack == "ops"
    assert rulebase.by_id["shape.matmul"].pack == "builtin"
    assert "example_loader_state" in PROBES  # pack.yaml's probes.py was imported


def test_packs_from_pyproject_relative_to_it(tmp_path, monkeypatch):
    write_pack(tmp_path / "ci" / "rules", "acme", {"x.md": rule_md("acme.x", "XError: x", "XError: x")})
    (tmp_path / "pyproject.toml").write_text('[tool.explainer]\nrules = ["ci/rules"]\n')
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")  # the nearest pyproject above the working directory
    rulebase = default_rulebase()
    assert rulebase.by_id["acme.x"].pack == "acme"
    assert rulebase.packs[0].origin.endswith("pyproject.toml")


def test_packs_from_an_installed_entry_point_that_registers_probes(tmp_path, monkeypatch):
    package = write_pack(tmp_path / "acme_rules", "acme", {"job.md": rule_md(
        "acme.job", r"JobError: job (?P<job>\d+) failed", "JobError: job 7 failed",
        extra="probes: [acme_rules_probe]\n")})
    (package / "__init__.py").write_text(textwrap.dedent("""
        from explainer.probes import Evidence, probe

        @probe("acme_rules_probe", provides=("queue",))
        def acme_rules_probe(ctx):
            return Evidence(facts={"queue": "gpu-long"})
    """))
    dist = tmp_path / "acme_rules-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rules\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[explainer.rules]\nacme = acme_rules\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rulebase = default_rulebase()
    assert not rulebase.team_problems, [str(p) for p in rulebase.team_problems]
    assert rulebase.by_id["acme.job"].probes == ["acme_rules_probe"]
    assert rulebase.packs[0].origin == "entry point acme (acme-rules 1.0)"
    assert rulebase.packs[0].folder.resolve() == package.resolve()


def project_with_pack(root: Path, prefix: str, rule_id: str, message: str) -> Path:
    """A project folder as `rules new` leaves one: pyproject.toml naming ci/rules, a rule, a script that raises."""
    error, text = message.split(": ", 1)
    write_pack(root / "ci" / "rules", prefix, {"stall.md": rule_md(rule_id, f"{error}: ", message)})
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.explainer]\nrules = ["ci/rules"]\n')
    (root / "train.py").write_text(f"class {error}(RuntimeError):\n    pass\n\n\nraise {error}({text!r})\n")
    return root


def test_a_script_run_from_another_folder_finds_its_projects_pack(tmp_path):
    project = project_with_pack(tmp_path / "proj", "acme", "acme.stall", "StallError: worker 3 stalled")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_explainer(str(project / "train.py"), cwd=elsewhere)
    assert result.returncode == 1
    assert "torch-explainer [acme.stall]" in result.stderr, result.stderr
    # `explainer explain` has no script: it looks from the working directory only.
    result = run_explainer("explain", "-", cwd=elsewhere, stdin="StallError: worker 3 stalled\n")
    assert "acme.stall" not in result.stdout + result.stderr


def test_install_finds_the_team_packs_of_the_scripts_project_from_another_folder(tmp_path, monkeypatch):
    """explainer.install() in proj/train.py, run from another folder: the review of 2026-12-07 got no diagnosis (the
    packs were looked for above the working directory only) where `python -m explainer proj/train.py` found the pack."""
    import types

    import explainer
    from explainer._config import rule_projects
    from explainer.diagnose.explain import explain_text
    from explainer.hook.install import is_installed

    project = project_with_pack(tmp_path / "proj", "acme", "acme.stall", "StallError: worker 3 stalled")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr("explainer._config._script_folder", None)
    main_module = types.ModuleType("__main__")
    main_module.__file__ = str(project / "train.py")  # as Python sets it for `python proj/train.py`
    monkeypatch.setitem(sys.modules, "__main__", main_module)
    installed = is_installed()
    explainer.install()
    if not installed:
        explainer.uninstall()
    assert [path for _, path in rule_projects()] == [project / "pyproject.toml"]
    reset_default_rulebase()
    assert explain_text("StallError: worker 3 stalled").rule == "acme.stall"
    # a session with no script file (python -c, a notebook) sets nothing: the working directory's packs only
    monkeypatch.setattr("explainer._config._script_folder", None)
    del main_module.__file__
    explainer.install()
    if not installed:
        explainer.uninstall()
    assert rule_projects() == []


def test_the_background_site_build_looks_from_the_scripts_folder_too(tmp_path, monkeypatch):
    from explainer._config import set_script_folder, start_local_build

    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **options: started.append(argv))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EXPLAINER_BUILD_SITE", raising=False)
    monkeypatch.setattr("explainer._config._script_folder", None)
    set_script_folder(tmp_path / "proj")
    assert start_local_build()
    assert started == [[sys.executable, "-m", "explainer.site.build", str(tmp_path / "proj")]]


def test_the_scripts_project_comes_first_and_a_shared_prefix_names_both_folders(tmp_path, monkeypatch, capsys):
    from explainer._config import set_script_folder

    project = project_with_pack(tmp_path / "proj", "acme", "acme.stall", "StallError: worker 3 stalled")
    here = project_with_pack(tmp_path / "here", "ops", "ops.stall", "OpsError: disk full")
    monkeypatch.chdir(here)
    monkeypatch.setattr("explainer._config._script_folder", None)
    set_script_folder(project)
    assert [p.prefix for p in default_rulebase().packs] == ["acme", "ops"]
    write_pack(here / "ci" / "rules", "acme", {})
    reset_default_rulebase()
    status, out = rules_cli(capsys, "list")
    assert status == 0
    assert (f"explainer: skipped ci/rules/pack.yaml: prefix 'acme' is already claimed by "
            f"{project / 'ci' / 'rules' / 'pack.yaml'} (named by {project / 'pyproject.toml'}): this pack in "
            "ci/rules (named by pyproject.toml) is skipped") in out, out
    assert "acme.stall" in out


def test_rules_test_runs_each_team_rules_fixture_and_compares_its_message(tmp_path, monkeypatch, capsys):
    fixtures = {
        "good": "raise OSError('good 1')\n",
        "stale": "raise OSError('stale 2')\n",  # the example says 'stale 1'
        "other": "raise KeyError('x')\n",
        "silent": "print('no error')\n",
        "slow": "import time\ntime.sleep(30)\n",
    }
    rules = {}
    for name, script in fixtures.items():
        rules[f"{name}.md"] = rule_md(f"acme.{name}", f"OSError: {name} ", f"OSError: {name} 1",
                                      extra=f"fixture: repro/{name}.py\n").replace(
            f"https://example.org/acme.{name}", f"repro/{name}.py")
        rules[f"repro/{name}.py"] = script
    pack = write_pack(tmp_path / "pack", "acme", rules)
    monkeypatch.setattr("explainer.rules.check.FIXTURE_TIMEOUT_S", 3)
    status, out = rules_cli(capsys, "test", pack)
    assert status == 1
    assert "acme.good" not in out
    assert (f"{pack / 'stale.md'}:12: rule acme.stale: example 1 (source repro/stale.py) is not the message its "
            "fixture raises: 'OSError: stale 2'") in out
    # (each at its `fixture:` line)
    assert f"{pack / 'other.md'}:10: rule acme.other: fixture repro/other.py raised \"KeyError: 'x'\", which no rule" in out
    assert f"{pack / 'silent.md'}:10: rule acme.silent: fixture repro/silent.py raised no error" in out
    assert f"{pack / 'slow.md'}:10: rule acme.slow: fixture repro/slow.py ran over 3s and was stopped" in out
    assert "explainer rules test: 5 rules, 4 problems; 5 team rule fixtures run, one process each" in out


# --- precedence and prefixes ----------------------------------------------------------------------

def test_team_rule_wins_over_a_builtin_rule_at_equal_priority(tmp_path, monkeypatch, capsys):
    exc = raise_fixture("fixtures/shape/linear_in_features.py")
    assert explain(exc).rule == "shape.matmul"
    builtin_priority = default_rulebase().by_id["shape.matmul"].priority
    pack = write_pack(tmp_path / "team", "acme", {"head.md": rule_md(
        "acme.head_features", r"mat1 and mat2 shapes cannot be multiplied \((?P<rows>\d+)x(?P<cols>\d+)",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)",
        priority=builtin_priority)})
    monkeypatch.setenv("EXPLAINER_RULES", str(pack))
    reset_default_rulebase()
    diagnosis = explain(exc)
    assert diagnosis.rule == "acme.head_features"
    assert diagnosis.facts["cols"] == 512
    # The built-in example now claimed by the team rule is a note on the built-in side; the team rule, which answers
    # every such error with no `requires` to say when it applies, is a problem (the new user's review, defect 14).
    status, out = rules_cli(capsys, "test", ROOT / "runbooks" / "shape" / "matmul.md", pack)
    assert status == 1, out
    assert "rule shape.matmul: note: example 1 is claimed first by team rule acme.head_features" in out
    assert f"{pack / 'head.md'}:6: rule acme.head_features: answers " in out
    assert "before their own rule (shape.matmul example 1, " in out and "add `requires: [FACT]`" in out
    assert "explainer rules test: 2 rules, 1 problem" in out


HEAD_PROBE = '''
    from explainer.probes import Evidence, probe, safe_getattr

    @probe("acme_head", provides=("head_embed_dim",))
    def acme_head(ctx):
        for record in reversed(ctx.records):
            obj = dict.get(record.locals, "self") if isinstance(record.locals, dict) else None
            if obj is not None and type(obj).__name__ == "ProjectionHead":
                return Evidence(facts={"head_embed_dim": safe_getattr(obj, "embed_dim")})
        return None
'''


def test_a_team_rule_with_requires_answers_only_where_its_probe_found_the_teams_object(tmp_path, monkeypatch, capsys):
    # The new user's review, defect 14: a team rule for its ProjectionHead's matmul error claimed a plain nn.Linear's.
    pack = write_pack(tmp_path / "team", "acme", {"head.md": rule_md(
        "acme.head", r"mat1 and mat2 shapes cannot be multiplied \((?P<rows>\d+)x(?P<got>\d+)",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x768 and 512x10)", priority=10,
        extra="probes: [acme_head]\nrequires: [head_embed_dim]\n").replace(
            '"Matched acme.head."', '"ProjectionHead has embed_dim={{ head_embed_dim }}, the backbone gives {{ got }}."\n'
                                    '  - "A matrix multiply got {{ got }} features."')},
        probes=HEAD_PROBE)
    monkeypatch.setenv("EXPLAINER_RULES", str(pack))
    script = tmp_path / "head.py"
    script.write_text("import torch\n\n\nclass ProjectionHead(torch.nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.embed_dim = 512\n        self.proj = torch.nn.Linear(512, 10)\n\n"
                      "    def forward(self, x):\n        return self.proj(x)\n\n\nProjectionHead()(torch.randn(4, 768))\n")
    diagnosis = explain(raise_fixture(str(script)))
    assert diagnosis.rule == "acme.head" and diagnosis.summary.startswith("ProjectionHead has embed_dim=512"), diagnosis
    plain = raise_fixture("fixtures/shape/linear_in_features.py")  # a plain Linear: no ProjectionHead in its frames
    assert explain(plain).rule == "shape.matmul"
    assert explain_text(exception_text(plain)).rule == "shape.matmul"  # pasted: no live probe ran
    status, out = rules_cli(capsys, "test", pack)
    assert status == 0 and "answers" not in out, out
    # a required fact nothing provides is a check problem at its own line
    (pack / "head.md").write_text((pack / "head.md").read_text().replace("[head_embed_dim]", "[head_dim]"))
    status, out = rules_cli(capsys, "check", pack)
    assert status == 1
    assert (f"{pack / 'head.md'}:12: rule acme.head: requires[0]: requires 'head_dim', which no pattern group or "
            "probe provides") in out


def test_template_errors_are_reported_at_their_field_and_a_failing_text_steps_aside(tmp_path, monkeypatch, capsys):
    # The new user's review, defect 15 (their broken_pack): an unknown filter was reported at the id line, a template
    # that raises when rendered as "a template renders only when every fact it names is known", and at run time the
    # diagnosis repeated the rule's title.
    import io

    from explainer.hook.install import report

    example = "widgetlib.ShardIndexError: shard 12 out of range: the index has 10 shards"
    pattern = r"ShardIndexError: shard (?P<shard>\d+) out"
    filtered = write_pack(tmp_path / "filtered", "bq", {"bad_filter.md": rule_md("bq.bad_filter", pattern, example)
                                                          .replace('"Matched bq.bad_filter."', '"Shard {{ shard | shout }}."')})
    status, out = rules_cli(capsys, "check", filtered)
    assert status == 1
    assert (f"{filtered / 'bad_filter.md'}:9: rule bq.bad_filter: summary[0]: template does not compile: No filter "
            "named 'shout'.") in out
    pack = write_pack(tmp_path / "broken", "bp", {"runtime_err.md": rule_md("bp.runtime_err", pattern, example).replace(
        '"Matched bp.runtime_err."', '"Shard {{ shard / 0 }}."\n  - "Shard {{ shard.foo.bar }}."')})
    status, out = rules_cli(capsys, "test", pack)
    assert status == 1
    rule_file = pack / "runtime_err.md"
    assert (f"{rule_file}:9: rule bp.runtime_err: summary[0]: ZeroDivisionError rendering it with example 1's facts: "
            "division by zero") in out
    assert (f"{rule_file}:10: rule bp.runtime_err: summary[1]: UndefinedError rendering it with example 1's facts: "
            "'int object' has no attribute 'foo'") in out
    assert "a template renders only when every fact it names is known" not in out
    monkeypatch.setenv("EXPLAINER_RULES", str(pack))
    script = tmp_path / "shards.py"
    script.write_text("class ShardIndexError(Exception):\n    __module__ = 'widgetlib'\n\n\n"
                      "raise ShardIndexError('shard 12 out of range: the index has 10 shards')\n")
    stream = io.StringIO()
    exc = raise_fixture(str(script))
    report(exc, exc.__traceback__, stream)
    out = stream.getvalue()
    assert "Team rule bp.runtime_err" not in out and "internal error" not in out, out
    assert "torch-explainer: no known pytorch failure matches this error" in out
    assert out.count("text failed to render") == 1
    assert ("torch-explainer: rule bp.runtime_err's text failed to render (ZeroDivisionError in summary 1: division by "
            "zero) and it was skipped; run 'explainer rules test'\n") in out


def test_prefix_violations_collisions_and_reserved_prefixes_name_their_files(tmp_path, monkeypatch, capsys):
    first = write_pack(tmp_path / "one", "acme", {
        "a.md": rule_md("acme.same", "AError: a", "AError: a"),
        "b.md": rule_md("acme.same", "BError: b", "BError: b"),
        "c.md": rule_md("team.wrong", "CError: c", "CError: c"),
    })
    second = write_pack(tmp_path / "two", "acme", {"d.md": rule_md("acme.d", "DError: d", "DError: d")})
    reserved = write_pack(tmp_path / "three", "shape", {"e.md": rule_md("shape.e", "EError: e", "EError: e")})
    monkeypatch.setenv("EXPLAINER_RULES", os.pathsep.join(map(str, (first, second, reserved))))
    status, out = rules_cli(capsys, "check")
    assert status == 1
    assert f"{first / 'b.md'}:2: rule acme.same: id: duplicate id: also defined in {first / 'a.md'}" in out
    assert (f"{first / 'c.md'}:2: rule team.wrong: id: id does not start with the pack's prefix 'acme.' "
            f"(declared in {first / 'pack.yaml'})") in out
    assert (f"{second / 'pack.yaml'}: prefix 'acme' is already claimed by {first / 'pack.yaml'} (named by "
            f"$EXPLAINER_RULES): this pack in {second} (named by $EXPLAINER_RULES) is skipped") in out
    assert f"{reserved / 'pack.yaml'}:1: prefix 'shape' is reserved for the built-in rules" in out
    rulebase = default_rulebase()
    assert "acme.same" in rulebase.by_id and "team.wrong" not in rulebase.by_id and "acme.d" not in rulebase.by_id


def test_a_prefix_used_by_any_builtin_id_is_refused(tmp_path):
    builtin = tmp_path / "runbooks"
    builtin.mkdir()
    (builtin / "watch.md").write_text(rule_md("zeta.watch", "ZError: z", "ZError: z"))
    pack = write_pack(tmp_path / "team", "zeta", {"mine.md": rule_md("zeta.mine", "MError: m", "MError: m")})
    [found], problems = discover_packs(extra=[(pack, "test")], environ={})
    rulebase = build_rulebase([("builtin", builtin)], load_builtin_probes(), packs=[found], pack_problems=problems)
    assert [r.id for r in rulebase.rules] == ["zeta.watch"] and rulebase.packs == []
    assert [str(p) for p in rulebase.team_problems] == [
        f"{pack / 'pack.yaml'}: prefix 'zeta' is used by the built-in rules ({builtin / 'watch.md'}) "
        "(hint: use your team's or company's name)"]


# --- explainer rules check / test / new -----------------------------------------------------------

def test_check_reports_every_problem_in_every_file_with_its_line(tmp_path, capsys):
    two_bad_patterns = rule_md("acme.p", "PError: (?P<x", "PError: p").replace(
        "patterns:\n  - 'PError: (?P<x'\n", "patterns:\n  - 'PError: (?P<x'\n  - 'QError: ['\n")
    pack = write_pack(tmp_path / "pack", "acme", {
        "patterns.md": two_bad_patterns,
        "probe.md": rule_md("acme.probe", "RError: r", "RError: r", extra="probes: [no_such_probe]\n"),
        "template.md": rule_md("acme.template", "SError: (?P<size>\\d+)", "SError: 3").replace(
            '"Matched acme.template."', '"Size {{ size }} of {{ missing_fact }}."\n  - "Size {{ size }}."'),
        "body.md": rule_md("acme.body", "TError: t", "TError: t", body="\n"),
        "good.md": rule_md("acme.good", "UError: u", "UError: u"),
    })
    status, out = rules_cli(capsys, "check", pack)
    assert status == 1
    expected = [
        f"{pack / 'patterns.md'}:7: rule acme.p: patterns[0]: pattern does not compile",
        f"{pack / 'patterns.md'}:8: rule acme.p: patterns[1]: pattern does not compile",
        f"{pack / 'probe.md'}:10: rule acme.probe: probes[0]: unknown probe 'no_such_probe'",
        f"{pack / 'template.md'}:9: rule acme.template: summary[0]: template uses missing_fact",
        f"{pack / 'body.md'}:2: rule acme.body: id: the runbook text (the Markdown after the front matter) is empty",
    ]
    for line in expected:
        assert line in out, f"missing {line!r} in:\n{out}"
    assert "hint:" in out
    assert "acme.good" not in out
    assert "explainer rules check: 1 rule, 5 problems" in out


def test_rules_test_reports_failing_examples_matched_counter_examples_and_ambiguity(tmp_path, capsys):
    pack = write_pack(tmp_path / "pack", "acme", {
        "wrong.md": rule_md("acme.wrong", "WError: expected", "WError: something else"),
        "loose.md": rule_md("acme.loose", "\\bLError: ", "LError: near", extra=(
            "counter_examples:\n  - message: \"LError: far\"\n    source: https://example.org/far\n")),
        "broad.md": rule_md("acme.broad", "\\bVError: .*", "VError: anything", priority=1),
        "narrow.md": rule_md("acme.narrow", "VError: exact", "VError: exact"),
    })
    status, out = rules_cli(capsys, "test", pack)
    assert status == 1
    assert f"{pack / 'wrong.md'}:11: rule acme.wrong: example 1 does not match the rule's patterns" in out
    assert f"{pack / 'loose.md'}:11: rule acme.loose: counter-example 1 matches the rule" in out
    assert (f"{pack / 'narrow.md'}:11: rule acme.narrow: example 1 is claimed first by acme.broad "
            f"({pack / 'broad.md'}:2)") in out
    assert "set this rule's priority above 1" in out
    assert "explainer rules test: 4 rules, 3 problems" in out


def test_rules_test_reports_an_example_whose_summary_is_only_the_title(tmp_path, capsys):
    # The template names an optional group this example leaves out: it cannot render, so only the title shows.
    pack = write_pack(tmp_path / "pack", "acme", {
        "size.md": rule_md("acme.size", "\\bSError: (?:size (?P<size>\\d+))?", "SError: ").replace(
            '"Matched acme.size."', '"Size {{ size }}."'),
    })
    status, out = rules_cli(capsys, "test", pack)
    assert status == 1
    assert (f"{pack / 'size.md'}:11: rule acme.size: example 1: no summary template renders for it, so its "
            "diagnosis says only the title") in out
    assert "explainer rules check" not in out and "explainer rules test: 1 rule, 1 problem" in out


def test_the_example_pack_passes_check_and_test(capsys):
    for action in ("check", "test"):
        status, out = rules_cli(capsys, action, TEAM_PACK)
        assert status == 0, out
        assert "3 rules, ok" in out


def test_rules_new_writes_a_rule_that_passes_check_and_test(tmp_path, capsys):
    pack = tmp_path / "pack"
    example = "acme_loader.LoaderStallError: worker 3 stalled for 120s"
    status, out = rules_cli(capsys, "new", "acme.loader.stall", "--match",
                            r"LoaderStallError: worker (?P<worker>\d+) stalled for (?P<seconds>\d+)s",
                            "--example", example, "--category", "data", "--dir", pack)
    assert status == 0, out
    rule_file, script = pack / "loader" / "stall.md", pack / "repro" / "loader_stall.py"
    assert (pack / "pack.yaml").read_text() == "prefix: acme\n"
    assert "check and test: 1 rule, ok" in out
    assert "summary:\n- Loader stall (worker {{ worker }}, seconds {{ seconds }})." in rule_file.read_text()
    assert exception_text(raise_fixture(str(script))) == example  # the source reproduces it verbatim
    for action in ("check", "test"):
        assert rules_cli(capsys, action, pack)[0] == 0

    # A literal pattern that is a whole message is its own verbatim example.
    assert rules_cli(capsys, "new", "acme.index_empty", "--match", r"ValueError: shard index is empty \(0 entries\)",
                     "--dir", pack)[0] == 0
    assert exception_text(raise_fixture(str(pack / "repro" / "index_empty.py"))) == \
        "ValueError: shard index is empty (0 entries)"
    # No message can be made up: an anchored pattern without an exception type, regex-only syntax.
    for pattern in (r"^worker \d+ died", r"worker \p{Lu} died"):
        status, out = rules_cli(capsys, "new", "acme.vague", "--match", pattern, "--dir", pack)
        assert status == 2 and "pass --example" in out, out
    assert not (pack / "vague.md").exists()
    status, out = rules_cli(capsys, "new", "acme.loader.stall", "--match", "X", "--example", "XError: X", "--dir", pack)
    assert status == 2 and "already exists" in out
    assert rules_cli(capsys, "test", pack)[0] == 0


def test_rules_new_makes_up_the_example_from_a_pattern_with_named_groups(tmp_path, capsys):
    pack = tmp_path / "pack"
    status, out = rules_cli(capsys, "new", "acme.disk_full", "--match",
                            r"DiskFull: (?P<path>\S+) has (?P<free>\d+) bytes left", "--dir", pack)
    assert status == 0, out
    assert "check and test: 1 rule, ok" in out
    text = (pack / "disk_full.md").read_text()
    assert "- message: 'DiskFull: x has 0 bytes left'\n  source: repro/disk_full.py" in text
    assert "summary:\n- Disk full (path {{ path }}, free {{ free }})." in text
    assert exception_text(raise_fixture(str(pack / "repro" / "disk_full.py"))) == "DiskFull: x has 0 bytes left"

    # A pattern without an exception type: its message is raised as a RuntimeError. Classes, alternation,
    # optional parts and a dotted type name each get a member.
    status, out = rules_cli(capsys, "new", "acme.worker_died", "--match",
                            r"worker (?P<rank>\d+) (?:died|exited)(?: with code (?P<code>-?\d+))? on [^\s:]+", "--dir", pack)
    assert status == 0, out
    assert exception_text(raise_fixture(str(pack / "repro" / "worker_died.py"))) == \
        "RuntimeError: worker 0 died with code -0 on x"
    status, out = rules_cli(capsys, "new", "acme.loader.stall", "--match",
                            r"(?:\w+\.)*LoaderStallError: worker (?P<worker>\d+) stalled", "--dir", pack)
    assert status == 0, out
    assert exception_text(raise_fixture(str(pack / "repro" / "loader_stall.py"))) == \
        "a.LoaderStallError: worker 0 stalled"
    for action in ("check", "test"):
        status, out = rules_cli(capsys, action, pack)
        assert status == 0 and "3 rules, ok" in out, out


def test_check_reports_every_kind_of_problem_in_one_run(tmp_path, capsys):
    """The loader stops at a file's first problem; check must not make the user fix and rerun."""
    no_fix = RUNBOOK.split("## Fix")[0]
    pack = write_pack(tmp_path / "pack", "acme", {
        "a.md": rule_md("acme.same", "AError: a", "AError: a"),
        # A bad category (the loader's first problem), a duplicate id, a missing runbook section.
        "b.md": rule_md("acme.same", "BError: b", "BError: b", body=no_fix).replace("category: other", "category: misc"),
        # The bad file loads first: the valid one after it is the duplicate, as it is once b is fixed.
        "c.md": rule_md("acme.twice", "CError: c", "CError: c", priority="high"),  # type: ignore[arg-type]
        "d.md": rule_md("acme.twice", "DError: d", "DError: d"),
        # Outside the pack's prefix, a missing fixture and an unknown probe, beside an empty title.
        "e.md": rule_md("team.wrong", "EError: e", "EError: e", extra="probes: [nope]\nfixture: repro/e.py\n")
        .replace("title: Team rule team.wrong", "title: ''"),
    })
    status, out = rules_cli(capsys, "check", pack)
    assert status == 1
    expected = [
        f"{pack / 'b.md'}:3: rule acme.same: category: category 'misc' is not one of",
        f"{pack / 'b.md'}:2: rule acme.same: id: duplicate id: also defined in {pack / 'a.md'}",
        f"{pack / 'b.md'}:14: rule acme.same: runbook text: section '## Fix' is missing",
        f"{pack / 'c.md'}:5: rule acme.twice: priority: priority must be an integer, not 'high'",
        f"{pack / 'd.md'}:2: rule acme.twice: id: duplicate id: also defined in {pack / 'c.md'}",
        f"{pack / 'e.md'}:4: rule team.wrong: title: a rule needs a one-line title",
        (f"{pack / 'e.md'}:2: rule team.wrong: id: id does not start with the pack's prefix 'acme.' "
         f"(declared in {pack / 'pack.yaml'})"),
        f"{pack / 'e.md'}:10: rule team.wrong: probes[0]: unknown probe 'nope'",
        f"{pack / 'e.md'}:11: rule team.wrong: fixture repro/e.py is not a file of the pack",
    ]
    for line in expected:
        assert line in out, f"missing {line!r} in:\n{out}"
    assert out.count("section '## ") == 1, out
    assert "explainer rules check: 2 rules, 9 problems" in out


def _readme_rule() -> str:
    """The team rule the README shows (ci/rules/loader/stall.md), as a user copies it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("```markdown\n", 1)[1].split("```\n", 1)[0]


def test_check_points_at_each_fields_own_line_and_test_counts_the_problems_check_reports(tmp_path, capsys):
    text = _readme_rule()
    lines = text.splitlines()
    source_line = 1 + next(i for i, line in enumerate(lines) if line.strip().startswith("source: repro/"))
    fixture_line = 1 + next(i for i, line in enumerate(lines) if line.startswith("fixture: repro/"))
    pack = write_pack(tmp_path / "ci" / "rules", "acme", {"loader/stall.md": text})
    rule_file = pack / "loader" / "stall.md"
    status, checked = rules_cli(capsys, "check", pack)
    assert status == 1
    assert (f"{rule_file}:{source_line}: rule acme.loader.stall: example 1: source repro/loader_stall.py is not a "
            "file of the pack") in checked
    assert f"{rule_file}:{fixture_line}: rule acme.loader.stall: fixture repro/loader_stall.py is not a file" in checked
    count = int(checked.rsplit("explainer rules check: 0 rules, ", 1)[1].split(" problems")[0])
    assert count > 5  # load problems (the README's probe is not in this pack), sources and runbook sections
    status, tested = rules_cli(capsys, "test", pack)
    assert status == 1
    assert (f"explainer rules test: {count} problems that 'explainer rules check' reports; 1 rule file did not load, "
            "so its rule was not tested") in tested
    assert f"explainer rules test: 0 rules, {count} problems" in tested
    # a rule that loads, with only its sources missing: tested, and the same count as check's
    (pack / "probes.py").write_text(textwrap.dedent('''
        from explainer.probes import Evidence, probe

        @probe("acme_loader_state", provides=("loader_name", "dead_workers", "healthy_workers"))
        def acme_loader_state(ctx):
            return None
    '''))
    (pack / "pack.yaml").write_text("prefix: acme\nprobes: probes.py\n")
    rule_file.write_text(text.replace("...the same four sections as a built-in runbook page.\n", RUNBOOK))
    assert rules_cli(capsys, "check", pack)[1].endswith("explainer rules check: 1 rule, 2 problems\n")
    status, tested = rules_cli(capsys, "test", pack)
    assert "explainer rules test: 2 problems that 'explainer rules check' reports\n" in tested
    assert "did not load" not in tested and "explainer rules test: 1 rule, 2 problems" in tested


def test_a_team_probe_that_raises_is_named_as_the_teams_not_as_an_internal_error(tmp_path, monkeypatch):
    import io

    from explainer.hook.install import report

    pack = write_pack(tmp_path / "team", "acme", {"stall.md": rule_md(
        "acme.stall", r"StallError: worker (?P<worker>\d+)", "StallError: worker 3",
        extra="probes: [acme_loader_state]\n")}, probes='''
        from explainer.probes import probe

        @probe("acme_loader_state", provides=("dead",))
        def acme_loader_state(ctx):
            workers = []
            return len(workers) / len(workers)
    ''')
    monkeypatch.setenv("EXPLAINER_RULES", str(pack))
    script = tmp_path / "train.py"
    script.write_text("class StallError(RuntimeError):\n    pass\n\n\nraise StallError('worker 3 stalled')\n")
    exc = raise_fixture(str(script))
    stream = io.StringIO()
    report(exc, exc.__traceback__, stream)
    out = stream.getvalue()
    assert "torch-explainer [acme.stall]" in out and "internal error" not in out
    assert (f"torch-explainer: the team probe 'acme_loader_state' ({pack / 'probes.py'}:7) raised ZeroDivisionError: "
            "division by zero; the diagnosis above is partial (fix the probe in its pack)\n") in out


def test_rules_show_finds_a_team_rule_of_another_project_with_project(tmp_path, monkeypatch, capsys):
    project = project_with_pack(tmp_path / "proj", "acme", "acme.stall", "StallError: worker 3 stalled")
    monkeypatch.setattr("explainer._config._script_folder", None)
    assert main(["rules", "show", "acme.stall"]) == 2  # from a folder of no project
    assert "no rule 'acme.stall'" in capsys.readouterr().err
    reset_default_rulebase()
    assert main(["rules", "show", "acme.stall", "--project", str(project)]) == 0
    assert capsys.readouterr().out.startswith("acme.stall  [other, pack acme, priority 0]  Team rule acme.stall\n")
    monkeypatch.setattr("explainer._config._script_folder", None)


def test_a_closed_stdout_ends_every_subcommand_quietly(tmp_path):
    """`explainer rules list | head -1`: the reader is gone before the output is written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXPLAINER_")}
    for argv in (["rules", "list"], ["rules", "show", "shape.matmul"], ["--help"]):
        read_end, write_end = os.pipe()
        child = subprocess.Popen([sys.executable, "-m", "explainer", *argv], stdout=write_end,
                                 stderr=subprocess.PIPE, cwd=tmp_path, env=env)
        os.close(write_end)
        os.close(read_end)
        _, err = child.communicate(timeout=120)
        assert err.decode() == "", (argv, err.decode())
        assert child.returncode in (0, 141), argv
    # The whole output of a finished command, once read, is not affected.
    result = run_explainer("rules", "show", "shape.matmul", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("shape.matmul  [shape"), result.stderr


# --- the example pack, live ------------------------------------------------------------------------

def test_example_pack_probes_name_the_in_house_objects(monkeypatch):
    monkeypatch.setenv("EXPLAINER_RULES", str(TEAM_PACK))
    diagnosis = explain(raise_fixture("fixtures/team_pack/repro/loader_timeout.py"))
    assert diagnosis.rule == "example.loader.shard_timeout"
    assert diagnosis.facts["dead_workers"] == "2" and diagnosis.facts["num_workers"] == 4
    assert [c["name"] for c in diagnosis.culprits] == ["loader"]
    assert diagnosis.location.file.endswith("loader_timeout.py") and diagnosis.location.line == 5
    assert '`ShardLoader("imagenet-train", workers=3, ...)`' in diagnosis.fixes[0]

    diagnosis = explain(raise_fixture("fixtures/team_pack/repro/nccl_ifname.py"))
    assert diagnosis.rule == "example.cluster.nccl_ifname"
    assert diagnosis.culprits[0]["name"] == "job_env"
    assert "set `NCCL_SOCKET_IFNAME=ib0` in job_env" in diagnosis.fixes[0]

    assert explain(raise_fixture("fixtures/team_pack/repro/shard_corrupt.py")).rule == "example.loader.shard_corrupt"


# --- run time: broken and catastrophic team rules ----------------------------------------------------

def test_broken_team_rule_is_skipped_in_one_line_and_builtin_rules_still_work(tmp_path):
    pack = write_pack(tmp_path / "team", "acme", {"x.md": rule_md("acme.x", "XError: (unclosed", "XError: x"),
                                                  "y.md": rule_md("acme.y", "YError: y", "YError: y")})
    result = run_explainer(str(ROOT / "fixtures/shape/linear_in_features.py"), env={"EXPLAINER_RULES": str(pack)},
                           cwd=Path.cwd())
    assert result.returncode == 1
    assert "torch-explainer [shape.matmul]" in result.stderr
    notices = [line for line in result.stderr.splitlines() if "broken team rule" in line]
    assert notices == [f"torch-explainer: skipped 1 broken team rule ({pack / 'x.md'}:7: rule acme.x: pattern "
                       f"does not compile: missing ) at position 17); "
                       "run 'explainer rules check'"], result.stderr


def test_catastrophic_team_pattern_cannot_hang_the_hook(tmp_path):
    pack = write_pack(tmp_path / "team", "acme", {
        "nested.md": rule_md("acme.nested", "(a+)+$", "ValueError: aaa"),
        "alternation.md": rule_md("acme.alternation", "(a|aa)+$", "ValueError: aaa"),
    })
    script = tmp_path / "long_message.py"
    script.write_text('raise ValueError("a" * 5000 + "b")\n')
    started = time.monotonic()
    result = run_explainer(str(script), env={"EXPLAINER_RULES": str(pack)}, cwd=Path.cwd(), timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert "ValueError: aaaa" in result.stderr  # Python's own traceback is intact
    assert "torch-explainer: no known pytorch failure matches this error" in result.stderr
    assert "torch-explainer: rule acme.alternation took over 0.1s to match and was skipped" in result.stderr
    assert elapsed < 30, f"the hook took {elapsed:.1f}s"


def test_installed_entry_points_are_read_once_and_an_install_or_an_edit_is_seen(tmp_path, monkeypatch):
    import importlib.metadata

    from explainer.rules.packs import installed_entry_points

    site = tmp_path / "site"
    site.mkdir()

    def install(name: str, entries: str) -> None:
        dist = site / f"{name}-1.0.dist-info"
        dist.mkdir(exist_ok=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(entries)
        # a later install within the file system's clock tick: time has passed for the folder
        later = site.stat().st_mtime_ns + 10**9
        os.utime(site, ns=(later, later))

    install("acme_one", "[explainer.rules]\nacme = acme_one\n")
    monkeypatch.syspath_prepend(str(site))
    assert installed_entry_points() == [("acme", "acme_one", "acme_one 1.0")]
    reads = []
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: reads.append(kw) or real(**kw))
    assert installed_entry_points() == [("acme", "acme_one", "acme_one 1.0")]
    assert reads == [], "the second crash read every distribution's metadata again"
    install("acme_two", "[explainer.rules]\nbeta = acme_two:PACK\n")
    assert sorted(installed_entry_points()) == [("acme", "acme_one", "acme_one 1.0"),
                                                ("beta", "acme_two:PACK", "acme_two 1.0")]
    assert len(reads) == 1
    (site / "acme_one-1.0.dist-info" / "entry_points.txt").write_text("[explainer.rules]\nacme = acme_one.rules\n")
    assert ("acme", "acme_one.rules", "acme_one 1.0") in installed_entry_points()
    assert len(reads) == 2



@pytest.mark.parametrize("broken_rule", [False, True])
def test_the_crash_notice_says_a_skipped_pack_is_a_packs_problem_not_a_broken_rule(tmp_path, monkeypatch, broken_rule):
    from explainer.rules.base import problems_notice

    rules = {"a.md": rule_md("acme.a", "AError: a", "AError: a")}
    if broken_rule:
        rules["b.md"] = rule_md("acme.a", "BError: b", "BError: b")  # a duplicate id: the rule is skipped
    first = write_pack(tmp_path / "one", "acme", rules)
    second = write_pack(tmp_path / "two", "acme", {"d.md": rule_md("acme.d", "DError: d", "DError: d")})
    monkeypatch.setenv("EXPLAINER_RULES", os.pathsep.join(map(str, (first, second))))
    default_rulebase()
    counts = "skipped 1 broken team rule and 1 problem" if broken_rule else "1 problem"
    assert problems_notice() == (
        f"torch-explainer: {counts} with a team rule pack ({second / 'pack.yaml'}: prefix 'acme' is already claimed "
        f"by {first / 'pack.yaml'} (named by $EXPLAINER_RULES): this pack in {second} (named by $EXPLAINER_RULES) is "
        "skipped); run 'explainer rules check'\n")



def test_explainer_open_finds_a_team_rule_of_the_scripts_project_from_elsewhere(tmp_path, monkeypatch, capsys):
    from explainer._config import open_command, set_script_folder

    project = project_with_pack(tmp_path / "proj", "acme", "acme.stall", "StallError: worker 3 stalled")
    monkeypatch.setenv("EXPLAINER_RUNBOOK_URL", "https://runbooks.example.test/t/")
    monkeypatch.setattr("explainer._config._script_folder", None)
    # run from a folder of no project (the fixture's cwd): the pack is not discovered without the script's folder
    assert main(["open", "acme.stall", "--print"]) == 2
    assert "no rule 'acme.stall'" in capsys.readouterr().err
    set_script_folder(project)  # what `python -m explainer proj/train.py` does at the crash
    assert open_command("acme.stall") == f"explainer open acme.stall --project {project}"
    assert open_command("shape.matmul") == "explainer open shape.matmul"  # a built-in rule is found anywhere
    monkeypatch.setattr("explainer._config._script_folder", None)
    reset_default_rulebase()
    assert main(["open", "acme.stall", "--project", str(project), "--print"]) == 0
    assert capsys.readouterr().out == "https://runbooks.example.test/t/rules/acme.stall/\n"
