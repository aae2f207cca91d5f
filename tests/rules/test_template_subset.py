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
    try:
        return parse(source).render(facts).strip()
    except RENDER_ERRORS:
        return None


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
         "pair": (2, 3), "word": "Linear", "nothing": []}
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
]


@pytest.mark.parametrize("source", EDGES)
def test_edge_cases_render_as_jinja2_does(source):
    assert parse(source) is not None, f"{source!r} should be in the subset"
    assert _subset(source, FACTS) == _jinja2(source, FACTS), source


@pytest.mark.parametrize("source", [
    "{{ word.lower() }}", "{{ word.__class__ }}", "{{ items[0] }}", "{{ word[:2] }}", "{{ {'a': 1}[word] }}",
    "{% set x = 1 %}{{ x }}", "{% for i in items %}{{ i }}{% endfor %}", "{{ range(3) }}", "{{ namespace }}",
    "{{ loop }}", "{{ x | tojson }}", "{{ x | reverse }}", "{{ x | join(', ', 'a') }}", "{{ x | round(1, 'floor') }}",
    "{{ x | default(d=1) }}", "{{ x is divisibleby 3 }}", "{{ x is sameas y }}", "{{- x }}", "{{ x -}}",
    "{%- if x %}{% endif %}", "{# note #}", "{{ 'a\\nb' }}", "{{ 1e3 }}", "{{ 1_000 }}", "{{ 01 }}", "{{ 2 ** 3 }}",
    "{{ x(1) }}", "{{ (x | int)(1) }}", "{{ 'a' if z }}", "{% if x %}", "{% endif %}",
    "{% if x %}{% else %}{% elif y %}{% endif %}",
    "{% raw %}{{ x }}{% endraw %}", "{{ x }", "{{ (x }}", "{% if x: %}a{% endif %}", "a\r\n{{ x }}",
])
def test_what_the_subset_leaves_to_jinja2(source):
    assert parse(source) is None, source


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
