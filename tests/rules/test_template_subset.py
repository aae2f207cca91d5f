"""The template subset (explainer/rules/template_subset.py) renders exactly what the jinja2 sandbox renders.

jinja2 stays the reference: every built-in template in the subset is rendered both ways, with the facts its
rule's own patterns capture from each of its examples, and with variations of them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from explainer.rules.base import default_rulebase, match_rule
from explainer.rules.template_subset import RENDER_ERRORS, parse
from explainer.rules.template_values import LeftToJinja
from explainer.rules.templates import _compile, _plain_fields

ROOT = Path(__file__).resolve().parents[2]
MIN_SHARE = 0.85  # of the templates that are more than {{ name }} fields; 88% when this was written


def _jinja2(source: str, facts: dict) -> str | None:
    from jinja2 import UndefinedError
    from jinja2.sandbox import SecurityError

    try:
        return _compile(source).render(facts).strip()
    except (UndefinedError, SecurityError, TypeError, ValueError, ArithmeticError):
        return None


def _subset(source: str, facts: dict) -> str | None:
    """What render() gives: the subset's text, or jinja2's where the subset hands the rendering over."""
    try:
        return parse(source).render(facts).strip()
    except RENDER_ERRORS:
        return None
    except LeftToJinja:
        return _jinja2(source, facts)


def _handed_over(source: str, facts: dict) -> bool:
    try:
        parse(source).render(facts)
    except LeftToJinja:
        return True
    except RENDER_ERRORS:
        pass
    return False


def _example_facts(rule) -> list[dict]:
    """What rendering gets from each example message: its error type, the message, the patterns' groups."""
    found = []
    for example in rule.examples:
        match = match_rule(rule, example.message)
        if match is not None:
            first_line = example.message.split("\n", 1)[0]
            error_type = example.message.split(":", 1)[0] if ":" in first_line else ""
            found.append({"error_type": error_type, "message": example.message, **match.groups})
    return found or [{}]


def _variations(facts: dict, declared: list[str]):
    """facts; without each fact in turn; each number as int and as str; the rule's probe facts added."""
    yield facts
    for name in facts:
        yield {k: v for k, v in facts.items() if k != name}
    for name, value in facts.items():
        if isinstance(value, int) and not isinstance(value, bool):
            yield {**facts, name: str(value)}
        elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
            yield {**facts, name: int(value)}
    for sample in (3, "3", "x", 0.5, None, True):
        yield {**{name: sample for name in declared}, **facts}


def test_every_builtin_template_in_the_subset_renders_as_jinja2_does():
    total = in_subset = cases = 0
    mismatches = []
    for rule in default_rulebase().rules:
        factsets = _example_facts(rule)
        for source in rule.templates:
            if _plain_fields(source) is not None:
                continue
            total += 1
            if parse(source) is None:
                continue
            in_subset += 1
            for facts in factsets:
                for varied in _variations(facts, rule.facts):
                    cases += 1
                    expected, got = _jinja2(source, varied), _subset(source, varied)
                    if expected != got:
                        mismatches.append(f"{rule.id} ({rule.file}): {source!r} with {varied!r}: "
                                          f"jinja2 {expected!r}, subset {got!r}")
    share = in_subset / total
    print(f"templates beyond {{{{ name }}}} fields: {total}; in the subset: {in_subset} ({share:.1%}); "
          f"renderings compared: {cases}")
    assert not mismatches, f"{len(mismatches)} renderings differ, first:\n" + "\n".join(mismatches[:5])
    assert share >= MIN_SHARE, f"only {share:.1%} of the templates are in the subset"


FACTS = {"n": 3, "s": "512", "f": 0.5, "z": 0, "empty": "", "none": None, "yes": True, "items": [1, "a", None],
         "pair": (2, 3), "word": "Linear", "nothing": [], "path": "a/b/c.py", "dotted": " x.y.z ",
         "lines": "one\ntwo\n", "mapping": {"a": 1, "upper": 2}}
EDGES = [
    "{{ missing }}", "{% if missing %}a{% endif %}", "{% if missing is defined %}a{% else %}b{% endif %}",
    "{{ missing is none }}", "{{ none is none }}", "{{ missing is not undefined }}", "{{ missing | default('d') }}",
    "{{ n | default(missing) }}", "{{ missing | default(n) | int + 1 }}", "{{ [missing] }}", "{{ [missing] | length }}",
    "{{ missing in [] }}", "{{ missing in [1] }}", "{{ n in [1, 3] }}", "{{ 'x' in missing }}", "{{ not missing }}",
    "{{ missing or 1 }}", "{{ z or 'zero' }}", "{{ n and s }}", "{{ empty and missing }}", "{{ 1 < n < 5 }}",
    "{{ 1 < z < missing }}", "{{ n == '3' }}", "{{ s | int == 512 }}", "{{ '42.5' | int }}", "{{ 'x' | int(7) }}",
    "{{ '0x1f' | int(0, 16) }}", "{{ 'ff' | int(0, 16) }}", "{{ s | float / 3 }}", "{{ f | round }}",
    "{{ 2.675 | round(2) }}", "{{ n / z }}", "{{ n // 2 }} {{ n % 2 }} {{ -n }} {{ +f }}", "{{ 'a' ~ n ~ none }}",
    "{{ 'a' ~ missing }}", "{{ s + n }}", "{{ s * 2 }}", "{{ items }} {{ pair }} {{ yes }} {{ none }} {{ f }}",
    "{{ items | join(', ') }}", "{{ nothing | first }}", "{{ items | first }}", "{{ word | first }}",
    "{{ word | lower }}{{ word | upper }}{{ '  t ' | trim }}{{ 'xxtxx' | trim('x') }}", "{{ n | string | length }}",
    "{{ word | replace('i', 'I') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ n | replace(3, 4) }}",
    "{{ '%.1f GiB' | format(f * 3) }}", "{{ n | plural('row') }}", "{{ 1 | plural('row') }}",
    "{{ 'a' if yes else 'b' }}", "{{ 'a' if missing else 'b' }}",
    "{{ ('a', n) }} {{ () }} {{ (n,) }} {{ (n) }} {{ [] }} {{ [1, 2,] }}", "{{ 'ab' 'cd' }}", "{{ true }}{{ False }}",
    "{% if n > 2 %}big{% elif n > 1 %}mid{% else %}small{% endif %}",
    "{% if z %}a{% elif missing %}b{% endif %}", "{% if yes %}  spaced  {% endif %}\n\nline\n",
    "{% if n is defined and n >= 3 and s not in ['1', '2'] %}{{ s }}{% endif %}",
    "{{ not n is defined }} {{ -n | string if true else 0 }}", "{{ n is defined or missing }}",
    "{{ n | int | string ~ 'px' }}", "{{ 0.1 + 0.2 }}", "{{ 10 / 4 }}", "{{ 7 // 0 }}", "{{ 'a' < 1 }}",
    "{% if n %}{% if s %}nested {{ s }}{% endif %}{% endif %}", "{{ pair | join('x') }}", "{{ none | int }}",
    "{{ s | int (1) }}",
    "{{ 'café → ü' ~ word }} naïve", "{{ '}}' }}{% if '%}' in word %}x{% else %}y{% endif %}", "{ {word} }",
    "{{ yes | int }}", "{{ items | length }}", "{{ none | default('d') }}", "{{ empty | default('d', true) }}",
    # subscripts and slices: negative indexes, slices past the end, an index out of range (undefined)
    "{{ word[0] }}{{ word[-1] }}{{ word[:3] }}{{ word[1:] }}{{ word[::2] }}{{ word[-3:-1] }}{{ word[::-1] }}",
    "{{ word[1:100] }}|{{ word[10:] }}|{{ items[5:] }}|{{ items[-2:] }}|{{ pair[:1] }}", "{{ word[10] }}",
    "{{ word[10] is defined }}", "{{ items[-4] | default('d') }}", "{{ items[3] is none }}", "{{ items[2] is none }}",
    "{{ n[0] is defined }}", "{{ none[0] is defined }}", "{{ missing[0] }}", "{{ missing[0] is defined }}",
    "{{ missing[1:] }}", "{{ word[missing] is defined }}", "{{ word[:missing] }}", "{{ n[1:] }}", "{{ word[1.0] }}",
    "{{ word[yes] }}", "{{ pair[0] + pair[1] }}", "{{ items[n - 2] }}", "{{ -pair[0] }}", "{{ word[0] | upper }}",
    "{{ (word | lower)[0] }}", "{{ [1, 2, 3][1:] }}", "{{ 'abc'[5] is defined }}", "{{ word[s | int - 510] }}",
    "{{ mapping['a'] }}", "{{ word[1:3] ~ 'x' if word[0] == 'L' else 'no' }}", "{{ word[ 0 : 2 ] }}",
    # the str methods, chained, with their edge cases
    "{{ path.split('/') }} {{ path.split('/')[-1] }} {{ path.rsplit('/', 1)[0] }} {{ path.count('/') }}",
    "{{ dotted.split() }} {{ dotted.strip().split('.')[1].upper() }} {{ dotted.split(none) }}",
    "{{ word.replace('i', 'I') }} {{ word.replace('e', '', 1) }} {{ word.count('n') }} {{ word.partition('n') }}",
    "{{ word.endswith('ar') }} {{ word.startswith(('L', 'x')) }} {{ word.lower() ~ word.upper() }}",
    "{{ lines.splitlines() }} {{ lines.splitlines()[-1] }} {{ s.isdigit() }} {{ word.isidentifier() }}",
    "{% if path.endswith('.py') and not word.startswith('x') %}{{ path.rpartition('/')[2] }}{% endif %}",
    "{{ word.split('i',) }} {{ word . lower ( ) }} {{ word.split('n')[0][1:] }}", "{{ (word ~ s).lower() }}",
    "{{ n.split() }}", "{{ f.upper() }}", "{{ yes.lower() }}", "{{ none.lower() }}", "{{ missing.split() }}",
    "{{ missing.split() is defined }}", "{{ missing.split() | default('d') }}", "{{ word.split(missing) }}",
    "{{ word.startswith(n) }}", "{{ word.split('i', missing) }}", "{{ word.split('') }}", "{{ word.strip(1) }}",
    "{{ word.upper('x') }}", "{{ 'a-b'.split('-') }}", "{{ word.lower()[0] is defined }}",
    # {% set %}: read after it, inside and after an if, a missing value set, a tuple
    "{% set x = word.lower() %}{{ x }} {{ x[0] }}", "{% set n = n + 1 %}{{ n }}", "{{ x }}{% set x = 1 %}{{ x }}",
    "{% if yes %}{% set x = 1 %}{% endif %}{{ x }}", "{% if z %}{% set x = 1 %}{% endif %}{{ x is defined }}",
    "{% set x = missing %}{{ x is defined }}", "{% set x = 1, 2 %}{{ x }}", "{% set x = 'a' if yes else 'b' %}{{ x }}",
    "{% set word = word[:3] %}{% if word == 'Lin' %}{{ word }}{% endif %}", "{% set x = missing %}{{ x }}",
    # dict literals, string escapes, names jinja2 reads specially only in macros and loops
    "{{ {'a': 1, 'b': n}[word[0] | lower] if false else {'L': word}['L'] }}", "{{ {} }} {{ {'a': 1,} }} {{ {n: s}[3] }}",
    "{{ {'a': missing} }}", "{{ {missing: 1} }}", "{{ {'a': 1}[missing] }}", "{{ {'x': {'y': 2}}['x']['y'] }}",
    "{{ {'a':1}}}", "{{ {'a': 1, 'a': 2} }} {{ 'a' in {'a': 1} }}", "{% set m = {'Lin': 'ear'} %}{{ m[word[:3]] }}",
    "{{ 'a\\nb' }} {{ 'tab\\there' }} {{ \"q\\\"q\" }} {{ 'back\\\\slash' }} {{ 'caf\\u00e9' }} {{ 'é\\t' }}",
    "{{ path | replace('/', '\\\\') }}", "{{ 'it\\'s' }}",
    "{{ caller is defined }}{% if caller is defined %}{{ caller }}{% endif %}", "{{ kwargs | default('k') }}",
    "{{ loop }}", "{{ varargs is defined }}",
]


@pytest.mark.parametrize("source", EDGES)
def test_edge_cases_render_as_jinja2_does(source):
    assert parse(source) is not None, f"{source!r} should be in the subset"
    assert _subset(source, FACTS) == _jinja2(source, FACTS), source


@pytest.mark.parametrize("source", [
    "{{ word.lower }}", "{{ word.__class__ }}", "{{ word.format(1) }}", "{{ word.encode() }}", "{{ x.items() }}",
    "{{ word.split(sep='.') }}", "{{ word.split(*items) }}", "{{ word.lower()() }}", "{{ word[0](1) }}",
    "{{ word[1, 2] }}", "{{ word[] }}", "{{ word.0 }}", "{{ word.1.5 }}", "{{ word | lower.split() }}",
    "{{ '\\x' }}", "{% set caller = 1 %}", "{% set namespace = 1 %}", "{{ namespace() }}", "{{ {'a' 1} }}",
    "{{ {'a'} }}", "{{ {**d} }}", "{% set x, y = 1, 2 %}", "{% set ns.x = 1 %}", "{% set x %}a{% endset %}",
    "{% set none = 1 %}", "{% set range = 1 %}", "{% set x == 1 %}", "{% set x = %}", "{% set x = 1 2 %}",
    "{% for i in items %}{{ i }}{% endfor %}", "{{ range(3) }}",
    "{{ x | tojson }}", "{{ x | reverse }}", "{{ x | join(', ', 'a') }}", "{{ x | round(1, 'floor') }}",
    "{{ x | default(d=1) }}", "{{ x is divisibleby 3 }}", "{{ x is sameas y }}", "{{- x }}", "{{ x -}}",
    "{%- if x %}{% endif %}", "{# note #}", "{{ 1e3 }}", "{{ 1_000 }}", "{{ 01 }}", "{{ 2 ** 3 }}",
    "{{ x(1) }}", "{{ (x | int)(1) }}", "{{ 'a' if z }}", "{% if x %}", "{% endif %}",
    "{% if x %}{% else %}{% elif y %}{% endif %}",
    "{% raw %}{{ x }}{% endraw %}", "{{ x }", "{{ (x }}", "{% if x: %}a{% endif %}", "a\r\n{{ x }}",
])
def test_what_the_subset_leaves_to_jinja2(source):
    assert parse(source) is None, source


@pytest.mark.parametrize("source", [
    "{{ items.count(1) }}", "{{ pair.count(2) }}", "{{ word['upper'] is defined }}", "{{ word['nope'] is defined }}",
    "{{ mapping['zz'] is defined }}", "{{ mapping.split() }}", "{{ items['x'] | default('d') }}",
    "{{ {'a': 1}['b'] is defined }}", "{{ namespace is defined }}", "{{ range is defined }}", "{{ dict }}",
])
def test_what_only_jinja2_knows_is_handed_over_when_rendering(source):
    """A method of a list, a str key not found (the sandbox then looks for an attribute): jinja2 renders it."""
    assert parse(source) is not None and _handed_over(source, FACTS), source
    assert _subset(source, FACTS) == _jinja2(source, FACTS), source


def test_numbers_and_none_have_none_of_the_str_methods():
    """method_call fails on them as jinja2 does (no attribute, so an undefined is called) without asking jinja2."""
    from explainer.rules.template_values import STR_METHODS

    have = [(kind.__name__, name) for kind in (int, float, bool, type(None)) for name in STR_METHODS
            if hasattr(kind, name)]
    assert not have, have


def test_render_hands_over_to_jinja2():
    from explainer.rules.templates import render

    assert render("{{ items.count(1) }} {{ word.lower() }}", FACTS) == "1 linear"
    assert render("{{ f.lower() }}", FACTS) is None
    assert render("{{ n.lower() }}", FACTS) == "3"  # a number the engine read from digits also reads as its digits


HOOK_RUN = """
import atexit, runpy, sys
import explainer.rules.rule as rule_module
import explainer.rules.template_subset as subset
checked = []
def fields(source):
    checked.append(source)
    return original(source)
original, rule_module.template_fields = rule_module.template_fields, fields
if sys.argv[1] == "jinja2-only":
    subset.parse = lambda source: None
atexit.register(lambda: sys.stderr.write(f"\\njinja2 imported: {'jinja2' in sys.modules}; "
                                         f"templates validated: {len(checked)}\\n"))
sys.argv = ["explainer", sys.argv[2]]
runpy.run_module("explainer", run_name="__main__", alter_sys=True)
"""


def _hook(mode: str, script: str) -> tuple[str, str]:
    """The explanation `python -m explainer script` prints, and the line saying what it imported."""
    done = subprocess.run([sys.executable, "-c", HOOK_RUN, mode, script], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    explanation, _, imported = done.stderr.rstrip("\n").rpartition("\n")
    return explanation, imported


def test_a_crash_whose_rule_is_in_the_subset_does_not_import_jinja2():
    script = "fixtures/shape/linear_in_features.py"
    _hook("subset", script)  # builds the rule index, which validates every template
    explanation, imported = _hook("subset", script)
    assert "torch-explainer [shape.matmul]" in explanation, explanation[-2000:]
    assert imported == "jinja2 imported: False; templates validated: 0", imported
    reference, imported = _hook("jinja2-only", script)
    assert imported.startswith("jinja2 imported: True"), imported
    assert explanation == reference
