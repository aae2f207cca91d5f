"""The live scenario suites (fixtures/scenarios/ and the held-out fixtures/scenarios_holdout/): well formed,
each script fails where it says, and the diagnoses name the culprits at least as often as recorded in
benchmarks/culprits.json."""

from __future__ import annotations

import json
import sys
from collections import Counter

import pytest

from conftest import ROOT, benchmark_module
from explainer._diagnosis import CATEGORIES, Diagnosis, Location

culprits = benchmark_module("culprits")

SUITES = {"scenarios": culprits.load_scenarios(), "holdout": culprits.load_scenarios(culprits.HOLDOUT)}
SCENARIOS = SUITES["scenarios"]
MINIMUM = {"scenarios": 90, "holdout": 60}
FAMILIES = {"shape", "device", "dtype", "autograd", "data", "memory", "distributed", "numerics", "other"}


@pytest.mark.parametrize("suite", SUITES)
def test_suite_is_large_varied_and_well_formed(suite):
    scenarios = SUITES[suite]
    assert len(scenarios) >= MINIMUM[suite], f"{suite}: {len(scenarios)} scenarios"
    per_family = Counter(s.family for s in scenarios)
    assert set(per_family) == FAMILIES, f"{suite}: families on disk: {sorted(per_family)}"
    assert min(per_family.values()) >= 3, f"{suite}: a family with fewer than 3 scripts: {per_family}"
    for scenario in scenarios:
        assert set(scenario.categories) <= set(CATEGORIES), f"{scenario.name}: unknown category {scenario.categories}"
        assert scenario.culprits, f"{scenario.name}: no expected culprit"


def test_held_out_scenarios_are_new():
    shared = {s.name for s in SUITES["holdout"]} & {s.name for s in SCENARIOS}
    assert not shared, f"in both fixtures/scenarios/ and fixtures/scenarios_holdout/: {sorted(shared)}"


def test_names_are_whole_names():
    prose = "Strip the prefix `module.` from the keys (module.fc.weight); x of shape (2, 3); use model.module.k"
    assert culprits.name_named("module.", [], prose)
    assert not culprits.name_named("module.", [], "unexpected key module.fc.weight")  # a key, not the prefix
    assert culprits.name_named("model.module", [], prose)
    assert not culprits.name_named("x", [], prose)  # a one-letter name counts only as a culprit's name
    assert culprits.name_named("x", ["x"], "")
    assert not culprits.name_named("model.fc", ["model.fc2"], "model.fc2 got 512")


def test_a_diagnosis_is_judged_on_every_field():
    scenario = next(s for s in SCENARIOS if s.name == "shape/sequential_conv_channels")
    right = Diagnosis(rule="shape.conv_channels", category="shape", title="", summary="features.4 got 64 channels, "
                      "not 128, from model.features.2", location=Location(str(scenario.path), scenario.line),
                      culprits=[{"name": "model.features.4"}])
    assert culprits.missing_fields(scenario, right) == {}
    wrong = Diagnosis(rule="shape.matmul", category="dtype", title="", summary="channels differ",
                      location=Location(str(scenario.path), scenario.line + 1), culprits=[{"name": "x"}])
    assert set(culprits.missing_fields(scenario, wrong)) == {"category", "location", "culprits", "values"}


@pytest.fixture(scope="module", params=list(SUITES))
def suite_results(request):
    sys.path.insert(0, str(ROOT))
    return request.param, [culprits.judge(s) for s in SUITES[request.param]]


def test_each_script_fails_on_its_marked_line(suite_results):
    suite, results = suite_results
    broken = [f"{r.scenario.name}: {r.error}" for r in results if r.raised_at is None]
    assert not broken, f"{suite}: scenarios that no longer fail where they say:\n" + "\n".join(broken)


def test_figures_do_not_drop_below_the_recorded_ones(suite_results):
    suite, results = suite_results
    record = json.loads(culprits.RECORD.read_text())
    recorded = record["holdout"] if suite == "holdout" else record
    now = culprits.summarise(results)
    detail = f"\n{suite}:\n" + culprits.table(results) + "\n" + culprits.listing(results)
    assert now["scenarios"] >= recorded["scenarios"], "scenarios were removed" + detail
    assert now["culprits_named"] >= recorded["culprits_named"], \
        f"every culprit named fell below {recorded['culprits_named']}%" + detail
    assert now["all_fields"] >= recorded["all_fields"], \
        f"every field right fell below {recorded['all_fields']}%" + detail
