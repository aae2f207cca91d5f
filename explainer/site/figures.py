"""The site's figures: real training runs (runs.py) and the explainer's own signal analyses of real runs
(curve verdicts, vanishing and exploding gradients, a located NaN, the overfit-one-batch check), plotted
with matplotlib figures that never touch pyplot's global state."""

from __future__ import annotations

import math
from pathlib import Path

from torch import nn

from .runs import CLASSES, Curve, fixture_script, mlp, seeded_task


def plot_curves(curves: list[Curve], path: Path, title: str, *, reference: Curve | None = None) -> None:
    """One PNG: training (solid) and validation (dashed) loss per epoch, chance level dotted, a NaN marked
    where it began, and optionally a reference run's validation loss in grey."""
    from matplotlib.ticker import MaxNLocator

    fig, ax = _figure()
    if reference is not None:
        ax.plot(range(1, len(reference.val) + 1), reference.val, color="0.6", linestyle="--",
                label=f"for comparison, {reference.label} (validation)")
    for index, curve in enumerate(curves):
        colour = f"C{index}"
        epochs = range(1, len(curve.train) + 1)
        ax.plot(epochs, curve.train, color=colour, label=f"{curve.label} (train)")
        ax.plot(epochs, curve.val, color=colour, linestyle="--", label=f"{curve.label} (validation)")
        bad = curve.first_non_finite
        if bad is not None:
            ax.axvline(bad + 1, color="red", linestyle=":", label=f"loss is NaN from epoch {bad + 1}")
    ax.axhline(math.log(CLASSES), color="0.4", linestyle=":", linewidth=1, label=f"chance level (ln {CLASSES})")
    if any(curve.first_non_finite is not None for curve in curves):
        ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})


def _figure():
    """A figure that is not registered with pyplot: no global backend or figure state is touched."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), dpi=100)
    return fig, fig.subplots()


def plot_gradient_norms(norms: dict[str, list[float]], path: Path) -> None:
    fig, ax = _figure()
    for label, values in norms.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("layer (1 = nearest the input)")
    ax.set_ylabel("weight gradient norm")
    ax.set_title("Per-layer gradient norms after one backward pass")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})


# --- one figure per curve verdict, for the signal rules' pages ---

# figure file -> (the run of fixtures/curves/generate.py it shows, logged rows kept (None: all), title)
SIGNAL_FIGURES = {
    "signal-curve_healthy.png": ("healthy", None, "signal.curve_healthy: a real run"),
    "signal-overfitting.png": ("overfitting", None, "signal.overfitting: a real run"),
    "signal-underfitting.png": ("underfitting", None, "signal.underfitting: a real run"),
    "signal-lr_too_low.png": ("underfitting", None, "signal.lr_too_low: SGD at lr=1e-5, a real run"),
    "signal-unstable.png": ("unstable", None, "signal.unstable: a real run"),
    "signal-non_finite.png": ("non-finite", None, "signal.non_finite: a real run"),
    "signal-not_enough_data.png": ("healthy", 8, "signal.not_enough_data: the first 8 logged steps of a run"),
}


def _curve_generator() -> dict:
    """fixtures/curves/generate.py: the same real runs the curve tests and the benchmark classify."""
    return fixture_script("curves", "generate.py", run_name="curves_generator")


def write_signal_figures(folder: Path) -> dict[str, str | None]:
    """Train each verdict's run now, classify it with the explainer's own curve analysis, and plot it with
    the diagnosis marked; return figure file -> the verdict the analysis gave."""
    from explainer.signals.curves import History, classify, plot

    train = _curve_generator()["train"]
    runs: dict[str, list] = {}
    verdicts: dict[str, str | None] = {}
    for file_name, (regime, keep, title) in SIGNAL_FIGURES.items():
        rows = runs.setdefault(regime, train(regime))
        if keep is not None:
            rows = [row for row in rows if row[1] is not None][:keep]
        history = History.from_rows(rows)
        report = classify(history)
        plot(history, report, folder / file_name, title=f"{title} (verdict: {report.curve or 'none'})")
        verdicts[file_name] = report.curve
    return verdicts


# --- one figure per gradient / NaN verdict, for the signal rules' pages ---

GRADIENT_FIGURES = {
    "vanishing_gradients": "signal-vanishing_gradients.png",
    "exploding_gradients": "signal-exploding_gradients.png",
    "nan_located": "signal-nan_located.png",
}


def _pick(scenarios: list, what: str, **wanted):
    """The first scenario of the generator's tuning split with these settings (the page's alt text names them)."""
    for scenario in scenarios:
        if all(getattr(scenario, key) == value for key, value in wanted.items()):
            return scenario
    raise LookupError(f"fixtures/gradients/generate.py has no {what} scenario with {wanted}")


def _said(diagnoses: list, rule: str):
    return next((d for d in diagnoses if d.rule == rule), None)


def _what_it_said(diagnoses: list) -> str:
    """What the monitor actually said, for a title when it did not give the verdict the figure is for."""
    if not diagnoses:
        return "the monitor raised nothing"
    said = ", ".join(f"{d.rule} at step {d.facts.get('step')}" for d in diagnoses[:3])
    return f"the monitor said {said}"


def _watched(train, scenario):
    """Train one scenario of fixtures/gradients/generate.py with a TrainingMonitor watching, as a user runs it."""
    from explainer.signals.monitor import TrainingMonitor

    monitors: list[TrainingMonitor] = []

    def watch(model, optimizer):
        monitors.append(TrainingMonitor(model, optimizer=optimizer, quiet=True))
        return monitors[-1]

    measured = train(scenario, watch=watch)
    return measured, monitors[0].diagnoses


def _save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})


def plot_vanishing(runs: list[tuple], diagnosis, layers: list[str], path: Path, title: str, step: int) -> None:
    """Per-layer gradient RMS per element at `step` (layer 1 nearest the input) of each (run, label) in `runs`,
    the first being the one diagnosed: the two layers the monitor compared are named on it."""
    fig, ax = _figure()
    for (run, label), colour in zip(runs, ("C3", "C0")):
        at = min(step, len(run.layer_rms) - 1)
        values = [v if v > 0 and math.isfinite(v) else math.nan for v in run.layer_rms[at]]
        ax.plot(range(1, len(values) + 1), values, marker="o", color=colour, label=f"{label}, step {at}")
    if diagnosis is not None:
        facts = diagnosis.facts
        rms = runs[0][0].layer_rms[min(step, len(runs[0][0].layer_rms) - 1)]
        for key in ("early_group", "late_group"):
            if facts.get(key) in layers:
                index = layers.index(facts[key])
                ax.annotate(facts[key], (index + 1, rms[index]), textcoords="offset points",
                            xytext=(7, -3) if key == "early_group" else (-8, -14), ha="left" if key == "early_group"
                            else "right", fontsize=7, color="C3")
        ax.text(0.03, 0.6, f"monitor at step {facts.get('step')}: {facts.get('vanishing_count')} of "
                f"{facts.get('weight_layers')} weight layers vanish;\n{facts.get('early_group')} gets "
                f"{facts.get('orders')} orders of magnitude less than {facts.get('late_group')}",
                transform=ax.transAxes, fontsize=7, color="C3")
    _finish(fig, ax, path, title, xlabel="weight layer (1 = nearest the input, last = the output head)", ylabel="gradient RMS per element", legend_at="lower right")


def _finish(fig, ax, path: Path, title: str, *, xlabel: str, ylabel: str, legend_at: str) -> None:
    """The signal figures' shared frame: log y axis, whole steps or layers on x, grid, legend, saved PNG."""
    from matplotlib.ticker import MaxNLocator

    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc=legend_at)
    _save(fig, path)


def plot_exploding(measured, explode, nan_rule: str | None, path: Path, title: str) -> None:
    """Total gradient norm per step (log scale), the monitor's exploding step and the non-finite step marked."""
    fig, ax = _figure()
    norms = [v if math.isfinite(v) else math.nan for v in measured.grad_norms]
    ax.plot(range(len(norms)), norms, marker="o", markersize=3, color="C0", label="total gradient norm")
    bad = measured.scenario.bad_batch_step
    if bad is not None and bad < len(norms) and math.isfinite(norms[bad]):
        ax.annotate(f"step {bad}: one batch\nwith labels +1e4", (bad, norms[bad]), textcoords="offset points",
                    xytext=(-60, 40), ha="right", fontsize=7, color="0.3",
                    arrowprops={"arrowstyle": "->", "color": "0.3"})
    if explode is not None:
        facts = explode.facts
        median = facts.get("median_grad_norm")
        if isinstance(median, (int, float)) and median > 0:
            ax.axhline(median, color="0.4", linestyle=":", linewidth=1, label=f"healthy median {median:g} (monitor)")
        ax.axvline(facts["step"], color="C1", linewidth=2, alpha=0.6,
                   label=f"monitor: signal.exploding_gradients at step {facts['step']}"
                         + (f", {facts['jump_orders']} orders above the median" if "jump_orders" in facts else ""))
    nan_step = measured.nonfinite_step
    if nan_step is not None:
        ax.axvline(nan_step, color="red", linestyle=":",
                   label=f"gradient not finite at step {nan_step}" + (f" (monitor: {nan_rule})" if nan_rule else ""))
    ax.set_xlim(-0.5, len(norms) - 0.5)
    _finish(fig, ax, path, title, xlabel="step", ylabel="total gradient norm", legend_at="upper left")


def plot_nan_located(losses: list[float], nan_step: int | None, located, path: Path, title: str, label: str,
                     event: str = "") -> None:
    """Loss per step up to the non-finite step, with the module the monitor named."""
    from matplotlib.ticker import MaxNLocator

    fig, ax = _figure()
    finite = [(step, value) for step, value in enumerate(losses) if math.isfinite(value)]
    ax.plot([s for s, _ in finite], [v for _, v in finite], marker="o", markersize=3, color="C0",
            label=f"training loss, {label}")
    ax.axhline(math.log(4), color="0.4", linestyle=":", linewidth=1, label="chance level (ln 4)")
    if nan_step is not None:
        what = "loss" if nan_step < len(losses) and not math.isfinite(losses[nan_step]) else "a gradient"
        ax.axvline(nan_step, color="red", linestyle=":", label=f"{what} not finite at step {nan_step}"
                   + (f" ({event})" if event else ""))
    values = [v for _, v in finite] or [math.log(4)]
    low, high = min(values + [math.log(4)]), max(values + [math.log(4)])
    span = (high - low) or 0.1
    ax.set_ylim(low - 0.8 * span, high + 0.5 * span)  # room for the legend above and the verdict below
    if located is not None:
        facts = located.facts
        made = "made inside it" if facts.get("source") == "module" else f"source: {facts.get('source')}"
        ax.annotate(f"monitor: `{facts.get('op')}` in {facts.get('module')} ({facts.get('module_type')}), {made}",
                    xy=(facts.get("step", nan_step or 0), low - 0.4 * span), xytext=(0.96, 0.08),
                    textcoords="axes fraction", ha="right", fontsize=8, color="red",
                    arrowprops={"arrowstyle": "->", "color": "red"})
    ax.set_xlim(-0.5, max(len(losses), (nan_step or 0) + 1) - 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    _save(fig, path)


def write_gradient_figures(folder: Path) -> dict[str, str | None]:
    """Train the gradient and NaN scenarios of the fixtures now with a TrainingMonitor watching, and plot each
    run with the monitor's own verdict marked; return figure file -> the rule the monitor gave (the figure's
    rule when it gave it, else the first it gave, None when it said nothing)."""
    grads = fixture_script("gradients", "generate.py", run_name="gradients_generator")
    train, tuning = grads["train"], grads["scenarios"]("tuning")
    verdicts: dict[str, str | None] = {}

    # Vanishing: a 12-layer sigmoid MLP at default init, against the 12-layer ReLU run of the same split.
    scenario = _pick(tuning, "vanishing", family="mlp", act="sigmoid", init="default", depth=12, intent="vanishing")
    reference = _pick(tuning, "healthy", family="mlp", act="relu", depth=12, intent="healthy")
    measured, diagnoses = _watched(train, scenario)
    healthy, _ = _watched(train, reference)
    runs = [(measured, f"sigmoid MLP, {scenario.depth} layers, default init"),
            (healthy, f"ReLU MLP, {reference.depth} layers, {reference.init} init"
                      + (", LayerNorm" if reference.norm else "") + (", residual" if reference.residual else ""))]
    vanish = _said(diagnoses, "signal.vanishing_gradients")
    if vanish is not None:
        step = vanish.facts["step"]
        title = f"signal.vanishing_gradients at step {step}: a real run"
    else:
        step = min(19, len(measured.layer_rms) - 1)
        title = f"No vanishing verdict ({_what_it_said(diagnoses)}); step {step}"
    file_name = GRADIENT_FIGURES["vanishing_gradients"]
    plot_vanishing(runs, vanish, measured.layers, folder / file_name, title, step)
    verdicts[file_name] = vanish.rule if vanish else (diagnoses[0].rule if diagnoses else None)

    # Exploding: the MLP whose one bad batch comes latest, so the healthy steps before it show.
    bad_batch = [s for s in tuning if s.family == "mlp" and s.intent == "exploding" and s.bad_batch_step is not None]
    if not bad_batch:
        raise LookupError("fixtures/gradients/generate.py has no exploding MLP scenario with a bad batch")
    scenario = max(bad_batch, key=lambda s: s.bad_batch_step)
    measured, diagnoses = _watched(train, scenario)
    explode = _said(diagnoses, "signal.exploding_gradients")
    nan = next((d for d in diagnoses if d.rule in ("signal.nan_located", "signal.non_finite")), None)
    if explode is not None:
        title = f"signal.exploding_gradients at step {explode.facts['step']}: a real run"
    else:
        title = f"No exploding verdict: {_what_it_said(diagnoses)}"
    file_name = GRADIENT_FIGURES["exploding_gradients"]
    plot_exploding(measured, explode, nan.rule if nan else None, folder / file_name, title)
    verdicts[file_name] = explode.rule if explode else (diagnoses[0].rule if diagnoses else None)

    # NaN located: a log of per-sample counts in a child module; one batch carries a negative count.
    nans = fixture_script("nan_injections", "scenarios.py", run_name="nan_injections")
    scenario = nans["Scenario"](kind="log", arch="mlp", depth=3, position=1, placement="child", optimizer="sgd",
                                lr=0.01, seed=0, bad_step=20, steps=30)
    box: dict = {"losses": []}

    def attach(model, optimizer):
        from explainer.signals.monitor import TrainingMonitor

        box["monitor"] = TrainingMonitor(model, optimizer=optimizer, quiet=True)

    def on_step(step, loss):
        box["losses"].append(float(loss.detach()))
        box["monitor"].step(loss)

    _, nan_step = nans["train"](scenario, on_step=on_step, model_hook=attach)
    box["monitor"].close()
    diagnoses = box["monitor"].diagnoses
    located = _said(diagnoses, "signal.nan_located")
    if located is not None:
        facts = located.facts
        title = f"signal.nan_located at step {facts.get('step')}: {facts.get('module')} ({facts.get('module_type')})"
    else:
        title = f"No NaN located: {_what_it_said(diagnoses)}"
    file_name = GRADIENT_FIGURES["nan_located"]
    plot_nan_located(box["losses"], nan_step, located, folder / file_name, title,
                     f"{scenario.depth}-block MLP, a log of per-sample counts in blocks.{scenario.position}",
                     event=f"the batch of step {scenario.bad_step} holds a count of -1" if nan_step == scenario.bad_step
                     else "")
    verdicts[file_name] = located.rule if located else (diagnoses[0].rule if diagnoses else None)
    return verdicts


# --- the overfit-one-batch verdicts, for signal.overfit_passed and signal.overfit_failed ---

def write_overfit_figures(folder: Path) -> dict[str, str | None]:
    """Run explainer.overfit_one_batch on a small MLP, as built and with softmax before CrossEntropyLoss
    (probabilities where logits belong), and plot each loss curve with the rule the check returned."""
    from explainer.signals.overfit import overfit_one_batch

    _, batch, _ = seeded_task(5, 16)
    model = mlp(64)
    runs = {
        "signal-overfit_passed.png": ("MLP, logits into CrossEntropyLoss", model),
        "signal-overfit_failed.png": ("the same MLP with softmax before CrossEntropyLoss",
                                      nn.Sequential(model, nn.Softmax(dim=1))),
    }
    results = {name: (label, overfit_one_batch(module, batch, nn.CrossEntropyLoss(), steps=150))
               for name, (label, module) in runs.items()}
    passed_label, passed = results["signal-overfit_passed.png"]
    for name, (label, diagnosis) in results.items():
        reference = (passed_label, passed) if name == "signal-overfit_failed.png" else None
        plot_overfit(label, diagnosis, folder / name, reference=reference)
    return {name: diagnosis.rule for name, (_, diagnosis) in results.items()}


def _overfit_steps(facts: dict) -> list[float]:
    """The steps of overfit_one_batch's sampled curve (it keeps 20 evenly spaced points of a longer run)."""
    points, taken = len(facts["curve"]), facts["steps_taken"]
    if points >= taken or points < 2:
        return list(range(points))
    return [round(i * (taken - 1) / (points - 1)) for i in range(points)]


def plot_overfit(label: str, diagnosis, path: Path, *, reference: tuple | None = None) -> None:
    fig, ax = _figure()
    if reference is not None:
        ref_label, ref = reference
        ax.plot(_overfit_steps(ref.facts), ref.facts["curve"], color="0.6", linestyle="--",
                label=f"for comparison, {ref_label} ({ref.rule})")
    facts = diagnosis.facts
    ax.plot(_overfit_steps(facts), facts["curve"], marker="o", markersize=3, color="C0", label=label)
    ax.axhline(facts["tolerance"], color="C2", linestyle=":", linewidth=1,
               label=f"pass line: loss <= {facts['tolerance']}")
    causes = ", ".join(facts.get("causes", [])) or "none named"
    verdict = diagnosis.rule if facts.get("passed") else f"{diagnosis.rule}\ncauses: {causes}"
    _finish(fig, ax, path, f"overfit_one_batch on one batch of 16: {verdict}", xlabel="step on the one batch",
            ylabel="cross-entropy loss", legend_at="center right")
