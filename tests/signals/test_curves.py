"""Loss-curve diagnosis on curves from real training (fixtures/curves/generate.py) and synthetic edge cases."""

from __future__ import annotations

import json
import math
import random
import runpy

import pytest

from explainer.cli.main import main as cli_main
from explainer.signals.curves import History, analyze_history, classify, load_history

from conftest import ROOT

GENERATOR = ROOT / "fixtures" / "curves" / "generate.py"


@pytest.fixture(scope="module")
def generator():
    return runpy.run_path(str(GENERATOR), run_name="curves_generator")


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("regime, rule", [
    ("healthy", "signal.curve_healthy"),
    ("overfitting", "signal.overfitting"),
    ("underfitting", "signal.underfitting"),
    ("unstable", "signal.unstable"),
    ("non-finite", "signal.non_finite"),
])
def test_real_training_curves_are_classified(generator, regime, rule):
    rows = generator["train"](regime)
    diagnosis = analyze_history(History.from_rows(rows))
    assert diagnosis.facts["curve"] == regime, diagnosis.summary
    assert diagnosis.rule == rule
    assert diagnosis.runbook.endswith(f"rules/{rule}.html")  # the local site's page (no runbook_url set)
    json.loads(diagnosis.to_json())


def test_overfitting_evidence_names_the_step_where_validation_bottomed_out(generator):
    rows = generator["train"]("overfitting")
    val = [(step, v) for step, _, v in rows if v is not None]
    best_step = min(val, key=lambda item: item[1])[0]
    facts = analyze_history(History.from_rows(rows)).facts
    # The smoothed minimum lies within one validation interval of the raw one.
    assert abs(facts["best_val_step"] - best_step) <= 20
    assert facts["val_rise_pct"] > 20
    assert facts["train_drop_after_best_pct"] > 50
    assert f"step {facts['best_val_step']}" in analyze_history(History.from_rows(rows)).summary


def test_non_finite_evidence_is_the_first_bad_step(generator):
    rows = generator["train"]("non-finite")
    first = next(step for step, train, _ in rows if train is not None and not math.isfinite(train))
    diagnosis = analyze_history(History.from_rows(rows))
    assert diagnosis.facts["first_nonfinite_step"] == first
    assert diagnosis.facts["growth_before"] > 100  # it diverged before overflowing
    assert f"from step {first}" in diagnosis.summary


def test_unstable_and_underfitting_evidence(generator):
    unstable = analyze_history(History.from_rows(generator["train"]("unstable"))).facts
    assert unstable["spikes"] >= 3 and len(unstable["spike_steps"]) >= 3
    flat = analyze_history(History.from_rows(generator["train"]("underfitting")))
    assert flat.facts["relative_drop_pct"] < 10
    assert "cannot tell" in flat.summary
    assert any("overfit one batch" in fix for fix in flat.fixes)


@pytest.mark.parametrize("name", ["healthy", "overfitting", "underfitting", "unstable", "non-finite"])
def test_cli_reads_the_committed_fixture_csvs(name, capsys):
    path = GENERATOR.parent / f"{name}.csv"
    assert cli_main(["curves", "--format", "json", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["facts"]["curve"] == name
    assert data["input"] == str(path)


def _decay(step: float) -> float:
    return 0.2 + 2.0 * math.exp(-step / 300)


def test_noisy_minibatch_losses_with_occasional_outliers_are_healthy():
    rng = random.Random(1)
    steps = list(range(0, 2000, 2))
    losses = [_decay(s) * math.exp(rng.gauss(0, 0.35)) for s in steps]
    for i in (300, 700):  # two hard batches are not instability
        losses[i] *= 4
    report = classify(History(steps, losses))
    assert report.curve == "healthy", report.facts
    assert report.facts["spikes"] <= 3


def test_spikes_throughout_are_unstable():
    rng = random.Random(2)
    steps = list(range(1000))
    losses = [_decay(s) * math.exp(rng.gauss(0, 0.1)) * (6 if rng.random() < 0.03 else 1) for s in steps]
    report = classify(History(steps, losses))
    assert report.curve == "unstable"
    assert report.facts["spikes"] >= 10


def test_a_curve_that_climbs_back_is_unstable():
    steps = list(range(400))
    losses = [_decay(s) if s < 200 else _decay(200) * (1 + (s - 200) / 50) for s in steps]
    facts = classify(History(steps, losses)).facts
    assert facts["curve"] == "unstable"
    assert facts["rise_from_best_pct"] > 100


def test_short_history_is_not_enough_data():
    diagnosis = analyze_history(History([0, 10, 20, 30, 40], [2.3, 2.1, 1.9, 1.8, 1.7]))
    assert diagnosis.rule == "signal.not_enough_data"
    assert diagnosis.facts["curve"] is None
    assert "5 training loss values" in diagnosis.summary


def test_irregular_logging_and_sparse_validation_report_steps_not_indices():
    rng = random.Random(3)
    steps, step = [], 0
    while step < 5000:
        steps.append(step)
        step += rng.choice((1, 5, 25, 60))
    train = [_decay(s / 5) * math.exp(rng.gauss(0, 0.05)) for s in steps]
    val_steps = list(range(250, 5001, 250))  # logged at steps training never logged at
    val = [0.9 + ((s - 2000) / 3000) ** 2 for s in val_steps]
    report = classify(History(steps, train, val_steps, val))
    assert report.curve == "overfitting"
    assert report.facts["best_val_step"] == 2000


def test_validation_rise_within_its_noise_is_not_overfitting():
    rng = random.Random(4)
    steps = list(range(1000))
    train = [_decay(s) for s in steps]
    val_steps = list(range(0, 1000, 50))
    val = [0.5 + 0.05 * rng.random() for _ in val_steps]
    assert classify(History(steps, train, val_steps, val)).curve == "healthy"


def test_too_few_validation_points_are_not_judged():
    steps = list(range(300))
    report = classify(History(steps, [_decay(s) for s in steps], [100, 200, 299], [0.5, 0.4, 0.9]))
    assert report.curve == "healthy"


def test_csv_with_empty_cells_and_json_lines_load_alike(tmp_path):
    csv_path = tmp_path / "log.csv"
    csv_path.write_text("step,train_loss,val_loss\n0,2.0,\n10,1.5,\n20,1.2,1.4\n30,nan,\n")
    jsonl_path = tmp_path / "log.jsonl"
    jsonl_path.write_text('{"step": 0, "train_loss": 2.0}\n{"step": 10, "train_loss": 1.5}\n'
                          '{"step": 20, "train_loss": 1.2, "val_loss": 1.4}\n{"step": 30, "train_loss": NaN}\n')
    for path in (csv_path, jsonl_path):
        history = load_history(path)
        assert history.train_steps == [0, 10, 20, 30]
        assert history.val_steps == [20] and history.val == [1.4]
        facts = classify(history).facts
        assert facts["curve"] == "non-finite" and facts["first_nonfinite_step"] == 30


def test_cli_rejects_a_file_without_the_columns(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("epoch,loss\n1,2.0\n")
    assert cli_main(["curves", str(path)]) == 2
    assert "step,train_loss" in capsys.readouterr().err


def test_plot_marks_the_diagnosis(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "curve.png"
    source = GENERATOR.parent / "overfitting.csv"
    assert cli_main(["curves", "--plot", str(out), str(source)]) == 0
    text = capsys.readouterr().out
    assert "[signal.overfitting]" in text and f"plot: {out}" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


def test_committed_unstable_csv_spikes_are_sharp_departures_and_best_step_is_logged():
    history = load_history(GENERATOR.parent / "unstable.csv")
    facts = classify(history).facts
    assert facts["curve"] == "unstable"
    # The early climb is a trend, and step 0 (the lowest value logged) is no spike.
    assert facts["spike_steps"][0] > 50, facts["spike_steps"]
    lookup = dict(zip(history.train_steps, history.train))
    assert all(lookup[s] > 10 * facts["final_loss"] for s in facts["spike_steps"])
    assert facts["best_step"] in history.train_steps


def test_best_step_is_a_logged_step_for_even_blocks():
    steps = list(range(0, 1200, 2))
    facts = classify(History(steps, [_decay(s) for s in steps])).facts
    assert facts["best_step"] in steps and isinstance(facts["best_step"], int)


@pytest.mark.parametrize("seed", range(5))
def test_additive_noise_near_a_low_floor_is_healthy(seed):
    rng = random.Random(seed)
    steps = list(range(600))
    losses = [0.3 + 2.0 * math.exp(-s / 100) + rng.gauss(0, 0.25) for s in steps]
    report = classify(History(steps, losses))
    assert report.curve == "healthy", report.facts
    assert report.facts["spikes"] <= 1


# --- the scenario sweep (fixtures/curves/generate.py): a small sample of the benchmark's real runs ---

# (split, index) -> the label measured from the run's clean probes when this test was written: short runs
# in each regime, so the sample takes seconds. The benchmark (benchmarks/curve_verdicts.py) runs hundreds.
SWEEP_SAMPLE = {("tuning", 1): "overfitting", ("tuning", 3): "unstable", ("tuning", 4): "non-finite",
                ("tuning", 7): "underfitting", ("tuning", 10): "healthy"}


@pytest.mark.parametrize("split, index", list(SWEEP_SAMPLE))
def test_sweep_runs_are_labelled_from_measurements_and_classified_alike(generator, split, index):
    record = generator["run_scenario"](generator["scenario"](index, split))
    assert record["label"] == SWEEP_SAMPLE[(split, index)], record["measured"]
    report = classify(History.from_rows(record["rows"]))
    assert report.curve == record["label"], (record["config"], record["measured"], report.facts)


def test_sweep_configurations_vary_and_splits_do_not_share_seeds(generator):
    tuning = [generator["scenario"](i, "tuning") for i in range(60)]
    heldout = [generator["scenario"](i, "heldout") for i in range(60)]
    assert not {c["seed"] for c in tuning} & {c["seed"] for c in heldout}
    for configs in (tuning, heldout):
        steps = [c["steps"] for c in configs]
        assert min(steps) >= 50 and max(steps) <= 5000 and max(steps) > 10 * min(steps)
        assert len({c["batch"] for c in configs}) >= 4 and len({c["val_every"] for c in configs}) >= 10
        assert any(c["val_every"] is None for c in configs)
    assert {c["batch"] for c in tuning} != {c["batch"] for c in heldout}


def test_labels_read_the_clean_probes(generator):
    label = generator["label_from_probes"]
    falling = [1.4 * 0.97 ** i for i in range(40)]
    assert label(falling, falling, False)[0] == "healthy"
    assert label(falling, falling, True)[0] == "non-finite"
    assert label([1.4] * 40, [1.4] * 40, False)[0] == "underfitting"
    held = [max(0.5, 1.4 - 0.05 * i) if i < 20 else 0.5 + 0.03 * (i - 20) for i in range(40)]
    assert label([1.4 * 0.9 ** i for i in range(40)], held, False)[0] == "overfitting"
    jumpy = [v * (2.5 if i in (15, 30) else 1) for i, v in enumerate(falling)]
    assert label(jumpy, falling, False)[0] == "unstable"
    inside_margin = [falling[min(i, 30)] * (1.06 if i > 35 else 1) for i in range(40)]
    assert label(falling, inside_margin, False)[0] == "ambiguous"  # a 6% held-out rise: no label either way


def _sweep_run(generator, index: int, label: str) -> tuple[dict, dict]:
    record = generator["run_scenario"](generator["scenario"](index, "tuning"))
    assert record["label"] == label, record["measured"]
    return record, classify(History.from_rows(record["rows"])).facts


def test_a_loss_thrown_far_above_its_first_value_is_unstable(generator):
    # Adam at lr 0.24: the loss leaps above its starting value within the first logged stretch, then falls
    # back, so the first block's median, every later block and the spikes all look like a falling curve.
    record, facts = _sweep_run(generator, 98, "unstable")
    assert facts["curve"] == "unstable", facts
    assert facts["first_loss"] == pytest.approx(record["rows"][0][1], rel=1e-3)
    assert facts["rise_over_first"] >= 2 and facts["peak_step"] < record["config"]["steps"] / 2, facts
    assert "Unstable: the training loss climbed to" in analyze_history(History.from_rows(record["rows"])).summary


@pytest.mark.parametrize("index", [18, 113])
def test_a_validation_loss_that_jumps_and_comes_back_is_unstable(generator, index):
    # Short SGD runs at lr 3-4 whose mini-batch loss looks merely noisy: only the evaluations show it.
    record, facts = _sweep_run(generator, index, "unstable")
    assert facts["curve"] == "unstable", facts
    val = dict((step, v) for step, _, v in record["rows"] if v is not None)
    for step in facts["val_jump_steps"]:
        steps = sorted(val)
        i = steps.index(step)
        assert val[step] > 1.25 * max(val[steps[i - 1]], val[steps[i + 1]]), (step, val)


def test_a_loss_thrown_up_and_back_to_where_it_began_is_underfitting(generator):
    # Adam at lr 0.12: the second logged loss is about 17x the first, then the loss settles back where it
    # began. The median of the first three logged losses (the start before) made that a 70% drop: healthy.
    cfg = generator["scenario"](153, "tuning")
    cfg.update(steps=900, val_every=75)
    record = generator["run_scenario"](cfg)
    assert record["label"] == "underfitting", record["measured"]
    facts = classify(History.from_rows(record["rows"])).facts
    assert facts["curve"] == "underfitting", facts
    assert facts["start_loss"] == pytest.approx(record["rows"][0][1], rel=1e-3), facts


def test_a_small_set_memorised_between_two_evaluations_is_overfitting(generator):
    # A kept sweep run (generate.py KEPT_SWEEP_RUNS): validation is best at its first evaluation and the
    # logged training loss is exactly 0 from the next logged step on, so training's level at validation's
    # best must come from the losses logged up to it, not from those around it.
    record = json.loads((GENERATOR.parent / "sweep-tuning-0216.json").read_text(encoding="utf-8"))
    assert record["config"] == generator["scenario"](216, "tuning")
    assert record["label"] == "overfitting", record["measured"]
    facts = classify(History.from_rows(record["rows"])).facts
    assert facts["curve"] == "overfitting", facts
    assert facts["best_val_step"] == 0 and facts["final_loss"] == 0.0, facts


@pytest.mark.parametrize("index", [35, 130])
def test_healthy_validation_curves_never_jump(generator, index):
    # The healthy sweep runs with the most evaluations and the most jitter between them.
    _, facts = _sweep_run(generator, index, "healthy")
    assert facts["curve"] == "healthy", facts
    assert "val_jump_steps" not in facts and "rise_over_first" not in facts, facts


def test_a_loss_that_climbs_back_for_whole_blocks_twice_is_unstable():
    rng = random.Random(5)
    steps = list(range(600))
    base = [_decay(s) * math.exp(rng.gauss(0, 0.1)) for s in steps]
    losses = [v * (2.5 if 150 <= s < 200 or 400 <= s < 450 else 1) for s, v in zip(steps, base)]
    report = classify(History(steps, losses))
    assert report.curve == "unstable", report.facts
    assert report.facts["bump_steps"][0] >= 150


def test_one_low_block_among_noisy_losses_is_no_climb_back():
    rng = random.Random(6)
    steps = list(range(300))
    losses = [_decay(s * 3) * math.exp(rng.gauss(0, 0.4)) for s in steps]
    for i in range(180, 192):  # a run of easy batches
        losses[i] *= 0.4
    report = classify(History(steps, losses))
    assert report.curve == "healthy", report.facts


def test_a_loss_that_blows_up_within_the_first_block_and_stays_up_is_unstable():
    rng = random.Random(7)
    steps = list(range(500))
    losses = [1.4 if s < 3 else 3.5 * math.exp(rng.gauss(0, 0.4)) for s in steps]
    assert classify(History(steps, losses)).curve == "unstable"


def test_signal_pages_show_a_figure_of_a_real_run_with_the_verdict(tmp_path):
    pytest.importorskip("matplotlib")
    from explainer.site import figures as _site_curves

    verdicts = _site_curves.write_signal_figures(tmp_path)
    expected = {"curve_healthy": "healthy", "overfitting": "overfitting", "underfitting": "underfitting",
                "lr_too_low": "underfitting", "unstable": "unstable", "non_finite": "non-finite",
                "not_enough_data": None}
    for name, verdict in expected.items():
        figure = f"signal-{name}.png"
        assert verdicts[figure] == verdict, figure
        assert (tmp_path / figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        page = (ROOT / "runbooks" / "signals" / f"{name}.md").read_text(encoding="utf-8")
        assert f"](../assets/figures/{figure})" in page, f"runbooks/signals/{name}.md does not show {figure}"


def test_rolling_median_is_the_median_of_each_window():
    """The monitor's fast sliding window gives exactly statistics.median of each (shrunk or cut) window."""
    import random
    import statistics

    from explainer.signals.curves import _rolling_median

    rng = random.Random(7)
    for _ in range(300):
        n, half = rng.randint(0, 90), rng.randint(0, 25)
        values = [rng.choice([rng.random(), float(rng.randint(0, 3)), -5 * rng.random()]) for _ in range(n)]
        for shrink in (False, True):
            expected = []
            for i in range(n):
                h = min(half, i, n - 1 - i) if shrink else half
                expected.append(statistics.median(values[max(0, i - h): i + h + 1]))
            assert _rolling_median(values, half, shrink=shrink) == expected
