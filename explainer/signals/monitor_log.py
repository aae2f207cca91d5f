"""TrainingMonitor's log file: the figures as CSV or JSON lines, in the format `explainer curves` reads."""

from __future__ import annotations

import csv
import json
from pathlib import Path


class FigureLog:
    """The figures as CSV (step,train_loss,val_loss,grad_norm) or JSON lines (.jsonl/.json): `explainer curves` reads both."""

    def __init__(self, path: Path):
        self.json = path.suffix in (".jsonl", ".json", ".ndjson")
        self.handle = open(path, "w", encoding="utf-8", newline="")
        if not self.json:
            self.writer = csv.writer(self.handle)
            self.writer.writerow(["step", "train_loss", "val_loss", "grad_norm"])

    def write(self, steps: list[int], losses: list[float], norms: list[float], vals: list[tuple[int, float]]) -> None:
        """Training rows and validation rows merged by step (a validation after its step's training row), so
        steps never go backwards; after close, nothing."""
        if self.handle.closed:
            return
        rows = [(step, 0, loss, None, norm) for step, loss, norm in zip(steps, losses, norms)]
        rows += [(step, 1, None, value, None) for step, value in vals]
        for step, _, train, val, norm in sorted(rows, key=lambda row: row[:2]):
            self._row(step, train, val, norm)
        self.handle.flush()

    def _row(self, step: int, train: float | None, val: float | None, norm: float | None) -> None:
        if self.json:
            record = {"step": step, "train_loss": train, "val_loss": val, "grad_norm": norm}
            self.handle.write(json.dumps({k: v for k, v in record.items() if v is not None}) + "\n")
        else:
            self.writer.writerow([step] + ["" if v is None else repr(v) for v in (train, val, norm)])

    def close(self) -> None:
        if not self.handle.closed:
            self.handle.close()
