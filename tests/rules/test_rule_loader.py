"""Rule files are validated on load, with errors naming the file, line, rule and field."""

from __future__ import annotations

import textwrap

import pytest

from explainer._errors import RuleError
from explainer.probes import load_builtin_probes
from explainer.rules.base import build_rulebase
from explainer.rules.rule import load_rule_file

PROBES = load_builtin_probes()

GOOD = """\
---
id: acme.loader_timeout
category: data
title: The in-house loader timed out
patterns:
  - 'AcmeLoaderTimeout: shard (?P<shard>\\d+) took (?P<seconds>\\d+)s'
summary:
  - "Shard {{ shard }} took {{ seconds }} s."
fixes:
  - "Raise the timeout above {{ seconds }} s."
examples:
  - message: "AcmeLoaderTimeout: shard 7 took 120s"
    source: https://example.invalid/acme/runbook
---
## What it means
The loader gave up.
"""


def _write(tmp_path, text, name="rule.md"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _error(tmp_path, text) -> RuleError:
    with pytest.raises(RuleError) as info:
        load_rule_file(_write(tmp_path, text), known_probes=PROBES)
    return info.value


def test_a_good_rule_loads(tmp_path):
    rule = load_rule_file(_write(tmp_path, GOOD), known_probes=PROBES)
    assert rule.id == "acme.loader_timeout" and rule.group_names == {"shard", "seconds"}
    assert rule.examples[0].line == 12


def test_bad_regex_names_file_line_rule_and_field(tmp_path):
    error = _error(tmp_path, GOOD.replace("(?P<seconds>\\d+)s'", "(?P<seconds>\\d+s'"))
    assert error.rule == "acme.loader_timeout" and error.field == "patterns[0]" and error.line == 6
    assert str(error).startswith(f"{tmp_path / 'rule.md'}:6: rule acme.loader_timeout: patterns[0]: pattern does not compile")


def test_template_field_not_in_any_group(tmp_path):
    error = _error(tmp_path, GOOD.replace("Raise the timeout above {{ seconds }}", "Raise {{ timeout }}"))
    assert error.field == "fixes[0]" and "timeout" in error.message and error.line == 10
    assert "available:" in error.hint


def test_unknown_probe(tmp_path):
    error = _error(tmp_path, GOOD.replace("summary:", "probes: [no_such_probe]\nsummary:"))
    assert error.field == "probes[0]" and "no_such_probe" in error.message


def test_missing_examples_and_body(tmp_path):
    without_examples = GOOD.split("examples:")[0] + "---\nbody\n"
    assert _error(tmp_path, without_examples).field == "examples"
    without_body = GOOD.split("## What")[0]
    assert "runbook text" in _error(tmp_path, without_body).message


def test_bad_category_unknown_field_and_bad_id(tmp_path):
    assert _error(tmp_path, GOOD.replace("category: data", "category: misc")).field == "category"
    assert _error(tmp_path, GOOD.replace("title:", "colour: red\ntitle:")).field == "colour"
    assert _error(tmp_path, GOOD.replace("acme.loader_timeout", "Loader Timeout")).field == "id"


def test_yaml_is_loaded_safely(tmp_path):
    error = _error(tmp_path, GOOD.replace("title: The in-house loader timed out",
                                          "title: !!python/object/apply:os.system ['echo pwned']"))
    assert "invalid YAML" in error.message


def test_summary_must_work_from_the_message_alone(tmp_path):
    text = GOOD.replace("summary:", "probes: [linear_operands]\nsummary:").replace(
        '"Shard {{ shard }} took {{ seconds }} s."', '"{{ module }} is slow"')
    assert _error(tmp_path, text).field == "summary"


def test_duplicate_ids_name_both_files(tmp_path):
    one = tmp_path / "a"
    two = tmp_path / "b"
    one.mkdir()
    two.mkdir()
    _write(one, GOOD)
    _write(two, GOOD)
    base = build_rulebase([("team1", one), ("team2", two)], PROBES)
    assert len(base.rules) == 1
    (problem,) = base.problems
    assert "duplicate id" in problem.message and str(one / "rule.md") in problem.message


def test_priority_then_pack_order_decides(tmp_path):
    low = tmp_path / "low"
    high = tmp_path / "high"
    low.mkdir()
    high.mkdir()
    _write(low, GOOD)
    _write(high, GOOD.replace("acme.loader_timeout", "acme.loader_slow").replace("category: data", "priority: 3\ncategory: data"))
    base = build_rulebase([("a", low), ("b", high)], PROBES)
    assert base.match("AcmeLoaderTimeout: shard 7 took 120s").rule.id == "acme.loader_slow"
    assert [r.id for r in base.rules] == ["acme.loader_slow", "acme.loader_timeout"]


def test_fast_template_field_reading_agrees_with_jinja2_on_every_builtin_template():
    from jinja2 import meta

    from explainer.rules.base import default_rulebase
    from explainer.rules.templates import _environment
    from explainer.rules.templates import template_fields as _template_fields

    for rule in default_rulebase().rules:
        for source in rule.templates:
            assert _template_fields(source) == meta.find_undeclared_variables(_environment().parse(source)), (
                f"{rule.file}: {source!r}")


def test_fast_template_field_reading_agrees_with_jinja2_on_generated_templates():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from jinja2 import TemplateSyntaxError, meta

    from explainer.rules.templates import _environment
    from explainer.rules.templates import template_fields as _template_fields

    pieces = st.sampled_from(["{{ a }}", "{{b|plural('x')}}", "{{ c | plural(d) }}", "{% if e %}", "{% endif %}",
                              "{{ f.g }}", "{{", "}}", "text ", "{#", "#}", "{{ h | upper }}", "'", '"', "(", ")"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(pieces, max_size=8).map("".join))
    def check(source):
        try:
            expected = meta.find_undeclared_variables(_environment().parse(source))
        except TemplateSyntaxError:
            return
        assert _template_fields(source) == expected

    check()


def test_required_runs_are_what_every_match_must_contain():
    from explainer.rules.rule import required_runs

    assert required_runs(r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\d+)x") == \
        [["mat1 and mat2 shapes cannot be multiplied ("]]  # one character ('x') is not worth a check
    assert required_runs(r"mat1\s+and\s+mat2 shapes") == [["and", "mat1", "mat2 shapes"]]
    assert required_runs(r"Expected all tensors to be on the same device|found at least (?:two|2)") == \
        [["Expected all tensors to be on the same device"], ["found at least "]]
    assert required_runs(r"(?:CUDA|HIP) out of memory") == [[" out of memory", "CUDA"], [" out of memory", "HIP"]]
    # a pattern that ignores case: its ASCII runs, looked for in the case-folded text
    from explainer.rules.rule import IGNORE_CASE, text_may_match

    assert required_runs(r"(?i)CUDA out of memory") == [[IGNORE_CASE, "cuda out of memory"]]
    assert text_may_match(required_runs(r"(?i)CUDA out of memory"), "Cuda Out Of Memory")
    assert not text_may_match(required_runs(r"(?i)CUDA out of memory"), "Cuda Out Of Mem")
    assert required_runs(r"(?i)größe passt nicht") is None  # not ASCII: no shortcut
    # too many alternatives: what the start requires on its own
    reasons = "|".join(f"{chr(97 + n)} reason {n:02d}" for n in range(20))
    assert required_runs(rf"(?:CUDA error: |cuda runtime error )(?:{reasons})") == [["CUDA error: "], ["cuda runtime error "]]
    assert required_runs(r"cuda (?i:OUT) of memory") == [[IGNORE_CASE, " of memory", "cuda ", "out"]]
    assert required_runs(r"(?i:größe) passt") == [[" passt"]]  # not ASCII: that part requires nothing
    assert required_runs(r"colou?r of the tensor") == [["colo", "r of the tensor"]]
    assert required_runs(r"ab[cd]efgh") == [["ab", "efgh"]]
    assert required_runs(r"(?:optional )?needed") == [["needed"]]
    assert required_runs(r"(?:once)+ more") == [[" more", "once"]]
    assert required_runs(r"(?s)Error\(s\) in loading state_dict for (?P<m>\w+):.*Missing") == \
        [["Error(s) in loading state_dict for ", "Missing"]]
    # a backreference requires nothing of its own, and ends the run before it
    assert required_runs(r"expected (?P<k>cpu|cuda) but got (?P=k) (?P<x>\w+)") == \
        [[" but got ", "expected c", "pu"], [" but got ", "expected c", "uda"]]
    assert required_runs(r"a|") is None  # one alternative needs nothing
    assert required_runs(r"(unbalanced") is None


def test_literal_prefilter_never_rejects_a_real_match():
    """Neither a rule's own required text nor the rule base's look-up of every rule's gate at once."""
    from explainer.rules.base import default_rulebase
    from explainer.rules.rule import text_may_match

    rulebase = default_rulebase()
    for rule in rulebase.rules:
        for example in rule.examples + rule.counter_examples:
            for pattern, required in zip(rule.patterns, rule.literals):
                if pattern.search(example.message):
                    assert text_may_match(required, example.message), \
                        f"{rule.file}: {required!r} is not required by {pattern.pattern!r}"
                    assert rule in rulebase.candidates(example.message), f"{rule.file}: gates {rule.gates!r}"


def test_gates_are_whole_words_only_where_the_pattern_holds_them_whole():
    from explainer.rules.prefilter import gated_rules, gates, open_gates, required_runs

    assert gates(required_runs(r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\d+)x")) == ["wmultiplied"]
    assert gates(required_runs(r"\w+Error: bad")) == ["sError: bad"]  # neither word is whole in the run
    assert gates(required_runs(r"(?i)CUDA out of memory")) == ["Wout"]
    assert gates(required_runs(r"foo|bar baz qux")) == ["wbaz", "sfoo"]
    assert gates(None) is None
    rules = [gates(required_runs(p)) for p in (r"mat1 and mat2 shapes", r"(?i)CUDA out of memory", r"\w+Error: bad")]
    table = gated_rules([[g] for g in rules])
    assert open_gates("RuntimeError: mat1 and mat2 shapes cannot be multiplied", *table) == [0]
    assert open_gates("Cuda Out Of Memory. ValueError: bad input", *table) == [1, 2]
    assert open_gates("mat1 and mat2x", *table) == []  # the gate, "mat2", only inside another word
    assert open_gates("anything", *gated_rules([[None]])) == [0]  # no shortcut: always tried


def test_every_builtin_pattern_has_a_literal_shortcut():
    """A pattern without one is compiled and run at every crash (regex conditionals, non-ASCII text under
    (?i) and patterns that need no text have none): write it without, or as two patterns."""
    from explainer.rules.base import default_rulebase

    missing = [f"{rule.file}: patterns[{index}]" for rule in default_rulebase().rules
               for index, required in enumerate(rule.literals) if required is None]
    assert not missing, "patterns without a literal shortcut:\n" + "\n".join(missing)


def test_cache_skips_compiling_unchanged_files_and_notices_edits(tmp_path, monkeypatch):
    from explainer._cache import RuleCache

    cache_file = tmp_path / "cache" / "rules.json"
    path = _write(tmp_path, GOOD)
    first = RuleCache(cache_file)
    rule = load_rule_file(path, known_probes=PROBES, cache=first)
    assert rule._compiled is not None
    first.save()
    again = load_rule_file(path, known_probes=PROBES, cache=RuleCache(cache_file))
    assert again._compiled is None, "an unchanged file must not be compiled again"
    assert again.groups == {"shard", "seconds"}
    assert again.patterns[0].search("AcmeLoaderTimeout: shard 7 took 120s")
    path.write_text(GOOD.replace("(?P<seconds>\\d+)s'", "(?P<seconds>\\d+s'"))
    with pytest.raises(RuleError, match="does not compile"):
        load_rule_file(path, known_probes=PROBES, cache=RuleCache(cache_file))


def test_a_folder_loads_from_its_index_until_a_file_changes(tmp_path, monkeypatch):
    from explainer.rules import base as _rulebase
    from explainer.rules.rule import DATA_FIELDS, Rule

    monkeypatch.setenv("EXPLAINER_CACHE_DIR", str(tmp_path / "cache"))
    path = _write(tmp_path, GOOD)
    first, problems = _rulebase.load_folder(path.parent, pack="acme", known_probes=PROBES, cached=True)
    assert not problems and list((tmp_path / "cache").glob("index-*.marshal"))
    built = []
    monkeypatch.setattr(_rulebase, "load_rule_file", lambda *a, **k: built.append(a) or Rule(*[None] * 11))
    again, _ = _rulebase.load_folder(path.parent, pack="acme", known_probes=PROBES, cached=True)
    assert not built, "an unchanged folder is read from its index, no file parsed"
    fields_of = lambda rules: [[getattr(r, name) for name in DATA_FIELDS] for r in rules]  # noqa: E731
    assert fields_of(again) == fields_of(first)  # every field the index keeps
    assert again[0].pattern(0).search("AcmeLoaderTimeout: shard 7 took 120s")
    monkeypatch.undo()
    monkeypatch.setenv("EXPLAINER_CACHE_DIR", str(tmp_path / "cache"))
    path.write_text(GOOD.replace("(?P<seconds>\\d+)s'", "(?P<seconds>\\d+s'"))
    rules, problems = _rulebase.load_folder(path.parent, pack="acme", known_probes=PROBES, cached=True)
    assert not rules and "does not compile" in str(problems[0])



def test_an_installed_wheels_rules_are_keyed_by_their_folders_not_a_stat_per_file(tmp_path, monkeypatch):
    from explainer._config import SOURCE_ROOT
    from explainer.rules import base as _rulebase
    from explainer.rules import files

    assert files.installed_folder_stats(SOURCE_ROOT / "runbooks") is None  # a checkout's files are edited in place
    package = tmp_path / "site-packages" / "explainer"
    folder = package / "runbooks" / "acme"
    folder.mkdir(parents=True)
    (folder / "loader_timeout.md").write_text(GOOD)
    monkeypatch.setattr(files, "PACKAGE_DIR", str(package))
    monkeypatch.setenv("EXPLAINER_CACHE_DIR", str(tmp_path / "cache"))
    first, problems = _rulebase.load_folder(package / "runbooks", pack="builtin", known_probes=PROBES, cached=True)
    assert not problems and [r.id for r in first] == ["acme.loader_timeout"]
    listed, real_stats = [], _rulebase.rule_file_stats
    monkeypatch.setattr(_rulebase, "rule_file_stats", lambda where: listed.append(where) or real_stats(where))
    again, _ = _rulebase.load_folder(package / "runbooks", pack="builtin", known_probes=PROBES, cached=True)
    assert [r.id for r in again] == ["acme.loader_timeout"] and not listed, "read from the index, no file stat'd"
    # pip writing a file (an upgrade, a reinstall) changes its folder: the index is rebuilt from the files
    (folder / "loader_stall.md").write_text(GOOD.replace("acme.loader_timeout", "acme.loader_stall"))
    rebuilt, _ = _rulebase.load_folder(package / "runbooks", pack="builtin", known_probes=PROBES, cached=True)
    assert sorted(r.id for r in rebuilt) == ["acme.loader_stall", "acme.loader_timeout"] and listed


def test_an_index_rebuilt_after_one_edit_parses_and_gates_only_that_files_patterns(tmp_path, monkeypatch):
    from explainer.rules import base as _rulebase
    from explainer.rules import engine

    monkeypatch.setenv("EXPLAINER_CACHE_DIR", str(tmp_path / "cache"))
    _write(tmp_path, GOOD)
    other = _write(tmp_path, GOOD.replace("acme.loader_timeout", "acme.loader_stall").replace("took", "stalled for"),
                   "stall.md")
    first, _ = _rulebase.load_folder(tmp_path, pack="acme", known_probes=PROBES, cached=True)
    parsed, gated = [], []
    real_codes_of, real_gates = engine.codes_of, _rulebase.gates
    monkeypatch.setattr(engine, "codes_of", lambda sources: parsed.extend(sources) or real_codes_of(sources))
    monkeypatch.setattr(_rulebase, "gates", lambda required, sample: gated.append(required) or real_gates(required, sample))
    other.write_text(other.read_text().replace("stalled for", "hung for"))
    rebuilt, problems = _rulebase.load_folder(tmp_path, pack="acme", known_probes=PROBES, cached=True)
    assert not problems and [r.id for r in rebuilt] == [r.id for r in first]
    # the edited rule's pattern was compiled to validate it, and its code kept from that compile: nothing parsed again
    assert parsed == []
    assert gated == [rebuilt[1].literals[0]] and "hung" in str(gated)  # the unchanged rule keeps its gates
    assert rebuilt[0].gates == first[0].gates and rebuilt[0].pattern_codes == first[0].pattern_codes
    assert set(rebuilt[1].pattern_codes) == set(rebuilt[1].pattern_sources)
    assert _rulebase.RuleBase(rebuilt).match("AcmeLoaderTimeout: shard 7 hung for 120s").rule.id == "acme.loader_stall"

def test_a_folder_index_reads_a_rules_details_only_when_the_rule_is_used(tmp_path, monkeypatch):
    from explainer.rules import base as _rulebase

    monkeypatch.setenv("EXPLAINER_CACHE_DIR", str(tmp_path / "cache"))
    path = _write(tmp_path, GOOD)
    [built], _ = _rulebase.load_folder(path.parent, pack="acme", known_probes=PROBES, cached=True)
    [again], _ = _rulebase.load_folder(path.parent, pack="acme", known_probes=PROBES, cached=True)
    assert "summary" not in vars(again) and "pattern_sources" not in vars(again)
    assert _rulebase.RuleBase([again]).match("RuntimeError: CUDA error: out of memory") is None
    assert "pattern_sources" not in vars(again), "a message without the rule's gate reads nothing more"
    assert _rulebase.match_rule(again, "AcmeLoaderTimeout: shard 7 took 120s").groups == {"shard": 7, "seconds": 120}
    assert again.summary == built.summary and again.examples == built.examples and again.body == built.body
    with pytest.raises(AttributeError):
        again.not_a_field  # noqa: B018
    from explainer import _cache
    from explainer.rules.rule import MATCH_FIELDS

    [index] = (tmp_path / "cache").glob("index-*.marshal")
    assert _cache.load_index(index, len(MATCH_FIELDS)) and _cache.load_index(index, len(MATCH_FIELDS) + 2) is None


def test_cache_files_of_older_versions_go_and_folder_indexes_are_capped(tmp_path, monkeypatch):
    from explainer import _cache

    monkeypatch.setenv("EXPLAINER_CACHE_DIR", str(tmp_path))
    old = tmp_path / f"index-v{_cache.VERSION - 1}-0123.marshal"
    old.write_bytes(b"old")
    other_kind = tmp_path / f"probes-v{_cache.VERSION}-0123.marshal"
    other_kind.write_bytes(b"kept")
    for n in range(_cache.KEEP["index"] + 3):
        _cache.save_index(_cache.cache_file("index", f"folder {n}"), [("id", b"details")])
    indexes = list(tmp_path.glob("index-*.marshal"))
    assert not old.exists() and other_kind.exists()
    assert len(indexes) == _cache.KEEP["index"] and len(list(tmp_path.glob("details-*.bin"))) == _cache.KEEP["index"]


def test_unwritable_cache_is_ignored(tmp_path):
    from explainer._cache import RuleCache

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cache = RuleCache(blocker / "rules.json")
    load_rule_file(_write(tmp_path, GOOD), known_probes=PROBES, cache=cache)
    cache.save()  # must not raise


def test_an_unwritable_user_cache_falls_back_to_a_private_temporary_folder(tmp_path, monkeypatch):
    """XDG_CACHE_HOME=/proc/nonexistent_cache made every crash build the rule index again (9 s of CPU each, the
    review of 2026-12-07); the link pointed into a folder that can never exist."""
    import os
    import stat
    import tempfile

    from explainer import _cache, _config
    from explainer.rules import base as _rulebase

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))  # cannot be made, even by root
    monkeypatch.delenv("EXPLAINER_CACHE_DIR", raising=False)
    monkeypatch.delenv("EXPLAINER_CACHE", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(_cache, "_ROOTS", {})
    private = tmp_path / "tmp" / f"torch-explainer-{os.getuid()}"
    assert _cache.cache_dir() == private and stat.S_IMODE(private.stat().st_mode) == 0o700
    rules = tmp_path / "rules"
    rules.mkdir()
    _write(rules, GOOD)
    _rulebase.load_folder(rules, pack="acme", known_probes=PROBES, cached=True)
    assert list(private.glob("index-*.marshal")), "the folder index is kept for the next crash"
    assert _config.local_site_dir().is_relative_to(private.resolve())
    assert "no folder to build it in" not in (_config.local_build_blocker() or "")
    private.chmod(0o777)  # a folder others can write in (made by someone else in a shared /tmp) is not used
    monkeypatch.setattr(_cache, "_ROOTS", {})
    assert _cache.cache_dir() is None
    note = _config.unbuildable_note("shape.matmul")
    assert f"neither {blocker / 'cache' / 'torch-explainer'} nor the temporary folder can be written" in note


def test_plain_templates_render_exactly_as_jinja2_does():
    from explainer.rules.templates import _environment, render

    facts = {"a": 3, "b": "x (32, 512)", "c": None, "d": [1, 2], "e": 0.5, "f": True}
    for source in ["{{ a }} and {{b}}", "{{ c }}/{{ d }}/{{ e }}/{{ f }}", "  {{ a }}  \n", "no fields"]:
        assert render(source, facts) == _environment().from_string(source).render(facts).strip()
    assert render("{{ missing }}", facts) is None
    assert render("{{ a | plural('row') }}", facts) == "3 rows"


def test_a_group_of_digits_reads_as_text_where_a_template_treats_it_as_text(tmp_path):
    """The engine reads a group of digits as a number (a count compares as one); a template that reads the same group
    as text (a str method, an `in` test) still renders for a message whose value happened to be all digits."""
    from explainer.rules.base import match_rule
    from explainer.rules.templates import render_failure, render_first

    text = GOOD.replace("(?P<shard>\\d+)", "(?P<shard>\\w+)").replace(
        '"Shard {{ shard }} took {{ seconds }} s."',
        '"Shard {{ shard }}{% if shard.startswith(\'s3\') %} (a bucket){% endif %} took {{ seconds // 60 }} min."')
    rule = load_rule_file(_write(tmp_path, text), known_probes=PROBES)
    facts = match_rule(rule, "AcmeLoaderTimeout: shard 7 took 120s").groups
    assert facts == {"shard": 7, "seconds": 120}
    assert render_first(rule.summary, facts) == "Shard 7 took 2 min."
    assert render_failure(rule.summary[0], facts) is None  # nothing for `rules check` to report
    bucket = match_rule(rule, "AcmeLoaderTimeout: shard s3west took 120s").groups
    assert render_first(rule.summary, bucket) == "Shard s3west (a bucket) took 2 min."


def test_a_fix_with_alternatives_shows_only_the_first_that_can_be_filled(tmp_path):
    from explainer.diagnose.explain import render_fixes

    text = GOOD.replace('''fixes:
  - "Raise the timeout above {{ seconds }} s."''', '''fixes:
  - - "Give shard {{ shard }} to {{ spare_worker }}."
    - "Raise the timeout above {{ seconds }} s."
  - - "{{ nowhere }}"''').replace("summary:", "facts: [spare_worker, nowhere]\nsummary:")
    rule = load_rule_file(_write(tmp_path, text), known_probes=PROBES)
    assert rule.fixes[0] == ("Give shard {{ shard }} to {{ spare_worker }}.", "Raise the timeout above {{ seconds }} s.")
    assert render_fixes(rule.fixes, {"shard": 7, "seconds": 120}) == ["Raise the timeout above 120 s."]
    assert render_fixes(rule.fixes, {"shard": 7, "seconds": 120, "spare_worker": "w3"}) == ["Give shard 7 to w3."]
    broken = GOOD.replace('  - "Raise the timeout above {{ seconds }} s."', "  - []")
    with pytest.raises(RuleError, match="alternative templates"):
        load_rule_file(_write(tmp_path, broken, "broken.md"), known_probes=PROBES)


LAZY_PROBES_SCRIPT = """
import json, sys
import torch
from explainer.diagnose.explain import explain
from explainer.rules.base import default_rulebase

default_rulebase()
families = lambda: sorted(m for m in sys.modules if m.startswith("explainer.probes.")
                          and not m.rsplit(".", 1)[1].startswith("_"))
loaded_at_load = families()
try:
    torch.nn.Linear(256, 10)(torch.zeros(32, 512))
except RuntimeError as exc:
    diagnosis = explain(exc).to_dict()
print(json.dumps({"at_load": loaded_at_load, "after": families(), "diagnosis": diagnosis}))
"""


def test_a_crash_imports_only_the_probe_modules_its_rule_uses(tmp_path):
    """With the folder index built, loading the rules imports no probe module; the matched rule's own
    are imported when it matches, and the diagnosis is the one every probe module loaded gives."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "EXPLAINER_CACHE_DIR": str(tmp_path)}
    runs = []
    for _ in range(2):  # the first builds the index (validating imports every probe module)
        done = subprocess.run([sys.executable, "-c", LAZY_PROBES_SCRIPT], capture_output=True, text=True, env=env,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert "explainer.probes.layers.rnn" in first["at_load"]
    assert second["at_load"] == []
    assert "explainer.probes.ops.matmul" in second["after"] and "explainer.probes.layers.rnn" not in second["after"]
    assert second["diagnosis"]["rule"] == "shape.matmul" and second["diagnosis"]["culprits"]
    assert second["diagnosis"] == first["diagnosis"]


CONTEXT = GOOD.replace("""summary:
  - "Shard""", """context:
  - 'acme-loader: reading (?P<path>\\S+) from shard'
summary:
  - "Shard {{ shard }} ({{ path }}) took {{ seconds }} s."
  - "Shard""")


def test_context_patterns_provide_facts_from_the_lines_before_the_error(tmp_path):
    from explainer.rules.base import context_facts

    rule = load_rule_file(_write(tmp_path, CONTEXT), known_probes=PROBES)
    before = "epoch 3\nacme-loader: reading s3://bucket/part-7 from shard 7"
    assert context_facts(rule, before) == {"path": "s3://bucket/part-7"}
    assert context_facts(rule, "epoch 3") == {} and context_facts(rule, "") == {}
    error = _error(tmp_path, CONTEXT.replace("(?P<path>\\S+)", "(?P<path>\\S+"))
    assert error.field == "context[0]" and "does not compile" in error.message


def test_a_code_line_no_sign_of_the_rule_can_match_costs_no_pattern(monkeypatch):
    """A bare KeyError (fixtures/core/config_keyerror.py raises this one) on a line that reads no checkpoint: the
    checkpoint rule's code signs cannot match it by their literal runs, so its pattern is never compiled (a crash
    pays no `regex` import for it); on a line that reads a checkpoint it still answers."""
    from explainer.rules.base import default_rulebase, match_rule

    rule = next(r for r in default_rulebase().rules if r.id == "data.checkpoint_entry_missing")
    text = "KeyError: 'learning_rate'"
    monkeypatch.setattr(rule, "pattern", lambda index: pytest.fail("the pattern was compiled"))
    assert match_rule(rule, text, code='optimizer = torch.optim.SGD(model.parameters(), lr=config["learning_rate"])') \
        is None
    monkeypatch.undo()
    found = match_rule(rule, text, code='lr = checkpoint["learning_rate"]')
    assert found is not None and found.groups["key"] == "learning_rate" and found.groups["holder"] == "checkpoint"
