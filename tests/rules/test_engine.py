"""Patterns built from the code kept in the folder index (explainer/rules/engine.py): they match every example and
counter-example of every built-in rule exactly as `regex.compile`'s patterns do, and a crash explained with a warm
index never imports regex's parser."""

from __future__ import annotations

import textwrap

import regex

from explainer.rules import engine
from explainer.rules.base import MATCH_TIMEOUT_S, default_rulebase, regex_sources

from conftest import run_python


def _found(pattern, text: str):
    try:
        found = pattern.search(text, timeout=MATCH_TIMEOUT_S)
    except TimeoutError:
        return "timeout"
    return None if found is None else (found.span(), found.groupdict(), found.captures(0))


def test_every_built_in_pattern_built_from_its_code_matches_as_regex_compiles_it():
    rules = default_rulebase().rules
    sources = [s for rule in rules for s in regex_sources(rule)]
    codes = engine.codes_of(sources)
    assert len(codes) >= 0.99 * len(set(sources))  # the code of (nearly) every pattern is kept
    compared = 0
    for rule in rules:
        texts = [e.message for e in (*rule.examples, *rule.counter_examples)]
        for source in regex_sources(rule):
            if source not in codes:
                continue
            built, compiled = engine._from_code(codes[source]), regex.compile(source)
            assert built is not None and built.pattern == source and built.groupindex == compiled.groupindex
            for text in texts:
                assert _found(built, text) == _found(compiled, text), (rule.id, source, text)
                compared += 1
    assert compared > 5000


def test_the_rules_of_the_default_rule_base_carry_their_patterns_code():
    rule = next(r for r in default_rulebase().rules if r.id == "shape.matmul")
    assert set(rule.pattern_sources) <= set(rule.pattern_codes)
    assert rule.pattern_codes[rule.pattern_sources[0]][0] == rule.pattern_sources[0]


def test_code_that_does_not_compile_is_left_out_and_a_pattern_without_code_goes_through_regex():
    assert engine.codes_of(["(?P<open", "a+b"]).keys() == {"a+b"}
    pattern = engine.compile_pattern("unseen (?P<word>\\w+) pattern")
    assert pattern.search("an unseen odd pattern").group("word") == "odd"


def test_a_crash_explained_with_a_warm_index_imports_regexs_engine_only(tmp_path):
    script = textwrap.dedent("""
        import runpy, sys
        try:
            runpy.run_path("fixtures/shape/linear_in_features.py", run_name="__main__")
        except Exception as exc:
            error = exc
        import explainer
        diagnosis = explainer.explain(error)
        print(diagnosis.rule, diagnosis.summary)
        print(sorted(name for name in sys.modules if name.split(".")[0] == "regex"))
    """)
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    first = run_python("-c", script, env=env)
    warm = run_python("-c", script, env=env)
    assert first.returncode == warm.returncode == 0, first.stderr + warm.stderr
    assert first.stdout.splitlines()[0] == warm.stdout.splitlines()[0]
    assert warm.stdout.splitlines()[0].startswith("shape.matmul model.encoder.fc = Linear(in_features=256")
    assert warm.stdout.splitlines()[1] == "['regex._regex']"
