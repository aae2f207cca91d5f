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
        for step, loss, norm in zip(steps, losses, norms):
            self._row(step, loss, None, norm)
        for step, value in vals:
            self._row(step, None, value, None)
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
