"""Every rule against its own data, semgrep style: examples match, counter-examples do not,
no example is claimed first by another rule, and every fixture still reproduces its message."""

from __future__ import annotations

import io

import pytest

from explainer._inspect import walk_traceback
from explainer.diagnose.explain import _match_with_raising_frames, exception_text, explain_text
from explainer.rules.base import default_rulebase, match_rule
from explainer.rules.check import title_only

from conftest import ROOT, raise_fixture

RULEBASE = default_rulebase()
RULES = RULEBASE.rules


def _where(rule, example) -> str:
    return f"{rule.file}:{example.line}" if example.line else rule.file


def test_builtin_rules_load_without_problems():
    assert not RULEBASE.problems, "\n".join(str(p) for p in RULEBASE.problems)
    assert len(RULES) >= 1


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_examples_are_claimed_by_their_own_rule(rule):
    for number, example in enumerate(rule.examples, start=1):
        # Foreign rules are tried first: they must claim their own examples and no PyTorch rule's.
        claimed = RULEBASE.claim(example.message)
        assert claimed is not None, f"example {number} of {rule.id} ({_where(rule, example)}) matches no rule"
        assert claimed.rule.id == rule.id, (
            f"example {number} of {rule.id} ({_where(rule, example)}) was claimed first by {claimed.rule.id} "
            f"({claimed.rule.file})")


def test_examples_claimed_by_their_own_rule_are_answered_by_it_when_pasted():
    # A pasted message goes through the scanner (explainer explain -), which cuts it into records: an example its rule
    # claims as a whole must still be answered by that rule, or the rule's page shows a message it does not explain.
    # (one test for all, not one per rule: about 2,500 pastes, a few seconds)
    from explainer.cli.explain import explain_stream

    missed = []
    for rule in RULES:
        for number, example in enumerate(rule.examples, start=1):
            claimed = RULEBASE.claim(example.message)
            if claimed is None or claimed.rule.id != rule.id:
                continue  # reported by test_examples_are_claimed_by_their_own_rule
            answers = explain_stream(io.StringIO(example.message))
            if not any(d.rule == rule.id or (d.rule is None and rule.kind == "foreign" and d.title == rule.title)
                       for d in answers):
                missed.append(f"example {number} of {rule.id} ({_where(rule, example)}) pasted is answered by "
                              f"{[d.rule for d in answers]}")
    assert not missed, "\n".join(missed)


@pytest.mark.parametrize("rule", [r for r in RULES if r.kind == "error"], ids=lambda r: r.id)
def test_every_example_renders_a_summary_beyond_the_title(rule):
    # A template that needs a fact the message lacks is skipped; when all are, only the title is left.
    for number, example in enumerate(rule.examples, start=1):
        findings = title_only(rule, number, example, explain_text(example.message, rulebase=RULEBASE))
        assert not findings, f"{_where(rule, example)}: {findings[0].message}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.counter_examples], ids=lambda r: r.id)
def test_counter_examples_do_not_match_their_rule(rule):
    for number, example in enumerate(rule.counter_examples, start=1):
        assert match_rule(rule, example.message) is None, (
            f"counter-example {number} of {rule.id} ({_where(rule, example)}) matches the rule")


@pytest.mark.parametrize("rule", [r for r in RULES if r.fixture], ids=lambda r: r.id)
def test_fixture_reproduces_a_message_the_rule_claims(rule):
    assert (ROOT / rule.fixture).is_file(), f"{rule.file}: fixture {rule.fixture} does not exist"
    exc = raise_fixture(rule.fixture)
    text = exception_text(exc)
    # read as explain() reads it: the message, or the message under the torch frames that raised it (a rule may
    # need them: pickle's "invalid load key" is torch.load's only where torch/serialization.py raised it)
    claimed = _match_with_raising_frames(RULEBASE, text, walk_traceback(exc.__traceback__))
    assert claimed is not None and claimed.rule.id == rule.id, (
        f"{rule.fixture} raised {text[:300]!r}, claimed by {claimed.rule.id if claimed else 'no rule'}, "
        f"not {rule.id}: torch's wording may have changed")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_examples_sourced_from_fixtures_name_real_files(rule):
    for example in rule.examples + rule.counter_examples:
        if not example.source.startswith(("http://", "https://")):
            assert (ROOT / example.source).is_file(), f"{_where(rule, example)}: source {example.source} is missing"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_related_rules_exist(rule):
    for other in rule.related:
        assert other in RULEBASE.by_id, f"{rule.file}: related rule {other} does not exist"
