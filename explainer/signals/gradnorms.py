"""TrainingMonitor's per-step figures: the loss and each layer's squared gradient norm, read cheaply.

Every step runs one fused `torch._foreach_norm` over the gradients; the rest is chosen by device:

- On CPU, where reading a value costs no device sync, the norms come back to Python at once (one
  stack, one tolist) and are summed by layer there. Inside a training step each extra tensor
  operation costs tens of microseconds (its dispatch code is no longer in cache after the backward),
  so the fewer the better. Reading them every step is also the finiteness check: a NaN or Inf
  gradient makes its norm non-finite, so no separate check runs.
- On an accelerator the norms are folded into per-layer squared norms with one matrix-vector product
  and written into a device buffer, read back every `check_every` steps: no host sync per step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

SPARSE_TYPES = {"Embedding", "EmbeddingBag"}  # a gradient on the rows used only: not comparable per element
_RNN_LAYER = re.compile(r"_l(\d+)(?:_reverse)?$")


def layer_key(name: str, modules: dict[str, Any]) -> tuple[str, str]:
    """(owning module path, layer name) of a parameter; each layer of a multi-layer RNN is a layer of its own."""
    from torch import nn

    owner = name.rsplit(".", 1)[0] if "." in name else ""
    found = _RNN_LAYER.search(name)
    if found and isinstance(modules.get(owner), nn.RNNBase) and getattr(modules[owner], "num_layers", 1) > 1:
        return owner, f"{owner}.l{found.group(1)}" if owner else f"l{found.group(1)}"
    return owner, owner


@dataclass
class LayerGroups:
    """The trainable parameters grouped by the layer that owns them, in model order."""

    names: list[str] = field(default_factory=list)          # layer names (module paths)
    types: list[str] = field(default_factory=list)          # their module class names
    params: list[list[str]] = field(default_factory=list)   # each layer's parameter names
    numel: list[int] = field(default_factory=list)          # each layer's element count
    group_of: list[int] = field(default_factory=list)       # the layer of each parameter
    weight_groups: list[int] = field(default_factory=list)  # layers with a matrix or kernel: the ones compared

    @classmethod
    def of(cls, named: list[tuple[str, torch.Tensor]], modules: dict[str, Any]) -> "LayerGroups":
        groups = cls()
        index_of: dict[str, int] = {}
        weights: set[int] = set()
        for name, param in named:
            owner, key = layer_key(name, modules)
            if key not in index_of:
                index_of[key] = len(groups.names)
                groups.names.append(key)
                groups.types.append(type(modules[owner]).__name__ if owner in modules else "?")
                groups.params.append([])
                groups.numel.append(0)
            index = index_of[key]
            groups.group_of.append(index)
            groups.params[index].append(name)
            groups.numel[index] += param.numel()
            if param.dim() >= 2 and groups.types[index] not in SPARSE_TYPES:
                weights.add(index)
        groups.weight_groups = sorted(weights)
        return groups


class StepFigures:
    """Rows of (loss, squared gradient norm of each layer), one per `record`, handed over by `take`."""

    def __init__(self, params: list[torch.Tensor], group_of: list[int], groups: int, capacity: int,
                 device: torch.device):
        import torch

        self.params = params
        self.group_of = group_of
        self.groups = groups
        self.eager = device.type == "cpu"  # read every step (tests turn this off to act as an accelerator)
        onehot = torch.zeros(groups, len(params), dtype=torch.float64)
        if params:
            onehot[group_of, list(range(len(params)))] = 1.0
        self._onehot = onehot.to(device)
        self._subset_onehots: dict[tuple[bool, ...], torch.Tensor] = {}
        self._device = device
        self._buffer = torch.zeros(capacity, 1 + groups, dtype=torch.float64, device=device)
        self._rows: list[list[float]] = []
        self.pending = 0

    def record(self, loss: torch.Tensor | float) -> list[float] | None:
        """This step's figures: the row itself when read at once (CPU), None when left on the device."""
        import torch

        self.pending += 1
        grads = [p.grad for p in self.params]
        if not self.eager:
            self._write(loss, grads)
            return None
        row = [loss.item() if isinstance(loss, torch.Tensor) else float(loss)] + [0.0] * self.groups
        present = [g for g in grads if g is not None]  # `None in grads` would call Tensor.__eq__ per item
        if present:
            norms = torch.stack(torch._foreach_norm(present)).tolist()
            if len(present) == len(grads):
                for group, norm in zip(self.group_of, norms):
                    row[group + 1] += norm * norm
            else:
                groups = [g for g, grad in zip(self.group_of, grads) if grad is not None]
                for group, norm in zip(groups, norms):
                    row[group + 1] += norm * norm
        self._rows.append(row)
        return row

    def _write(self, loss: torch.Tensor | float, grads: list[torch.Tensor | None]) -> None:
        import torch

        present = [g for g in grads if g is not None]
        onehot = self._onehot if len(present) == len(grads) else self._subset(grads)
        row = self._buffer[self.pending - 1]
        value = loss.detach() if isinstance(loss, torch.Tensor) else torch.tensor(float(loss))
        row[0].copy_(value.reshape(()))
        if present:
            squares = torch.stack(torch._foreach_norm(present)).to(torch.float64).square()
            torch.mv(onehot, squares, out=row[1:])
        else:
            row[1:].zero_()

    def _subset(self, grads: list[torch.Tensor | None]) -> torch.Tensor:
        """Some parameters got no gradient this step (unused branch): fold only the others."""
        import torch

        mask = tuple(g is not None for g in grads)
        onehot = self._subset_onehots.get(mask)
        if onehot is None:
            onehot = self._onehot[:, torch.tensor(mask, device=self._device)].contiguous()
            self._subset_onehots[mask] = onehot
        return onehot

    def take(self) -> list[list[float]]:
        """The rows recorded since the last call, oldest first."""
        if self.eager:
            rows, self._rows = self._rows, []
        else:
            rows = self._buffer[:self.pending].tolist() if self.pending else []
        self.pending = 0
        return rows

    def fold(self, values: torch.Tensor) -> torch.Tensor:
        """Per-parameter values (float64, in parameter order) summed by layer, left on the device."""
        return self._onehot @ values
