"""Probe for a torchmetrics metric that refused its inputs: the metric the user's line called (`self.val_acc(logits,
y)`, `metric.update(preds, target)`), the num_classes it was built with and the class scores its preds hold.

Nothing of the user's runs: the metric is read through its instance `__dict__` (safe_getattr), its class through
type's own descriptors, and torchmetrics' validation function through its frame's locals (`num_classes`, `preds`)."""

from __future__ import annotations

from typing import Any

from explainer._inspect import (MISSING, class_text, failing_expression, format_shape, innermost_user_frame,
                                is_module, is_tensor, resolve_text, safe_getattr)
from explainer.probes import Evidence, ProbeContext, probe
from explainer.probes.readers.library_names import has_base

_UPDATE_METHODS = (".update", ".forward")


def _is_metric(value: Any) -> bool:
    """A torchmetrics Metric (an nn.Module whose classes include torchmetrics' `Metric`), read from its MRO's names."""
    return is_module(value) and has_base(value, "Metric", ("torchmetrics",))


def _called_metric(ctx: ProbeContext) -> tuple[str, Any] | None:
    """(how the user's line reaches it, the metric) for the metric the failing line calls, or updates."""
    record = innermost_user_frame(ctx.records)
    expr = failing_expression(record) if record is not None else None
    if expr is None or expr.kind != "call" or expr.callee is None:
        return None
    text, value = expr.callee.text, expr.callee.value
    for method in _UPDATE_METHODS:
        if text.endswith(method):
            text = text[: -len(method)]
            value = resolve_text(text, record.namespace())
    return (text, value) if _is_metric(value) else None


def _checked_preds(ctx: ProbeContext) -> Any:
    """The preds tensor torchmetrics' innermost validation frame checked (its own local `preds`)."""
    for record in reversed(ctx.records):
        local_vars = record.locals
        value = dict.get(local_vars, "preds", MISSING) if isinstance(local_vars, dict) else MISSING
        if is_tensor(value):
            return value
    return MISSING


@probe("metric_settings", provides=("metric_name", "metric_class", "metric_num_classes", "preds_classes",
                                     "preds_shape_live"))
def metric_settings(ctx: ProbeContext) -> Evidence | None:
    """The torchmetrics metric the user's line called: its class, its num_classes and what preds.shape[1] holds."""
    found = _called_metric(ctx)
    if found is None:
        return None
    name, metric = found
    facts: dict[str, Any] = {"metric_name": name, "metric_class": class_text(type(metric), "__name__") or "Metric"}
    num_classes = safe_getattr(metric, "num_classes")
    if type(num_classes) is int:
        facts["metric_num_classes"] = num_classes
    preds = _checked_preds(ctx)
    if preds is not MISSING and len(preds.shape) >= 2:
        facts["preds_classes"] = int(preds.shape[1])
        facts["preds_shape_live"] = format_shape(preds.shape)
    return Evidence(facts)
