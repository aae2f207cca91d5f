"""Real training runs for the loss-curve guide: each function trains a small seeded model into one
regime (healthy, overfitting, underfitting, learning rate too low or too high, NaN) and returns the
measured curve. The site build plots them, so every picture on the guide is a run that happened."""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from explainer._config import SOURCE_ROOT

FEATURES = 10
CLASSES = 4
EPOCHS = 20
BATCH = 128


@dataclass
class Curve:
    """Per-epoch mean training loss and validation loss of one run (NaN/inf kept as measured)."""

    name: str
    label: str
    train: list[float] = field(default_factory=list)
    val: list[float] = field(default_factory=list)

    @property
    def first_non_finite(self) -> int | None:
        """The first epoch whose training loss is NaN or infinite."""
        for epoch, value in enumerate(self.train):
            if not math.isfinite(value):
                return epoch
        return None


def _task_data(samples: int, generator: torch.Generator, *, label_noise: float = 0.0):
    """Four classes from two informative features (which side of an axis, inside or outside a circle)
    plus noise features: a small network can learn it, a linear model only half of it."""
    x = torch.randn(samples, FEATURES, generator=generator)
    radius = x[:, :2].norm(dim=1)
    y = 2 * (radius > 1.18).long() + (x[:, 0] > 0).long()
    if label_noise:
        flip = torch.rand(samples, generator=generator) < label_noise
        y = torch.where(flip, torch.randint(0, CLASSES, (samples,), generator=generator), y)
    return x, y


def mlp(hidden: int, depth: int = 1, *, features: int = FEATURES, classes: int = CLASSES) -> nn.Module:
    """depth hidden ReLU layers of width hidden; fixtures/curves/generate.py builds its runs' models with it too."""
    layers: list[nn.Module] = []
    width = features
    for _ in range(depth):
        layers += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    return nn.Sequential(*layers, nn.Linear(width, classes))


def _train(curve: Curve, model: nn.Module, optimizer: torch.optim.Optimizer, train, val, *,
           epochs: int, batch: int, generator: torch.Generator) -> Curve:
    loss_fn = nn.CrossEntropyLoss()
    x, y = train
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(x), generator=generator)
        total, count = 0.0, 0
        for start in range(0, len(x), batch):
            index = order[start:start + batch]
            loss = loss_fn(model(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(index)
            count += len(index)
        curve.train.append(total / count)
        model.eval()
        with torch.no_grad():
            curve.val.append(loss_fn(model(val[0]), val[1]).item())
        if not math.isfinite(curve.train[-1]):
            break
    return curve


def seeded_task(seed: int, train_samples: int, *, label_noise: float = 0.0):
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    train = _task_data(train_samples, generator, label_noise=label_noise)
    val = _task_data(1024, generator)
    return generator, train, val


def train_healthy() -> Curve:
    """Enough data, a fitting model, a sensible learning rate: both losses fall and level off together."""
    generator, train, val = seeded_task(0, 2048)
    model = mlp(64)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    return _train(Curve("healthy", "MLP, Adam lr=1e-2, 2048 samples"), model, optimizer, train, val,
                  epochs=EPOCHS, batch=BATCH, generator=generator)


def train_overfitting() -> Curve:
    """A large model memorising 96 noisy samples: training loss goes to zero, validation loss turns up."""
    generator, train, val = seeded_task(1, 96, label_noise=0.2)
    model = mlp(256, depth=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return _train(Curve("overfitting", "2x256 MLP, 96 samples, 20% wrong labels"), model, optimizer, train,
                  val, epochs=2 * EPOCHS, batch=32, generator=generator)


def train_underfitting() -> Curve:
    """A linear model on a task that is not linear: both losses level off high, close together."""
    generator, train, val = seeded_task(0, 2048)
    model = nn.Linear(FEATURES, CLASSES)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-2)
    return _train(Curve("underfitting", "linear model (too little capacity)"), model, optimizer, train, val,
                  epochs=EPOCHS, batch=BATCH, generator=generator)


def train_lr_too_low() -> Curve:
    """The healthy model with SGD at lr=1e-4: the loss hardly moves from chance level."""
    generator, train, val = seeded_task(0, 2048)
    model = mlp(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    return _train(Curve("lr_too_low", "MLP, SGD lr=1e-4 (learning rate too low)"), model, optimizer, train, val,
                  epochs=EPOCHS, batch=BATCH, generator=generator)


def train_lr_too_high() -> Curve:
    """The healthy model with SGD at lr=1.5 and momentum: the loss jumps up and down from epoch to epoch."""
    generator, train, val = seeded_task(0, 2048)
    model = mlp(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.5, momentum=0.9)
    return _train(Curve("lr_too_high", "MLP, SGD lr=1.5, momentum 0.9"), model, optimizer, train, val,
                  epochs=EPOCHS, batch=BATCH, generator=generator)


def train_until_nan() -> Curve:
    """A schedule that multiplies the learning rate by 1.5 every epoch (a warm-up that never stops):
    training goes well, then the loss spikes, explodes and becomes NaN."""
    generator, train, val = seeded_task(0, 2048)
    model = mlp(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    schedule = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=1.5)
    curve = Curve("nan", "MLP, SGD lr=0.01 x 1.5 per epoch")
    for _ in range(3 * EPOCHS):
        _train(curve, model, optimizer, train, val, epochs=1, batch=BATCH, generator=generator)
        if curve.first_non_finite is not None:
            break
        schedule.step()
    return curve


@contextmanager
def one_thread():
    """These models are tiny: several threads only wait on each other (and on a busy machine,
    for seconds), and one thread makes every run deterministic."""
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def layer_gradient_norms(activation: type[nn.Module], *, kaiming: bool = False, depth: int = 12,
                         width: int = 32) -> list[float]:
    """Gradient norm of each Linear layer's weight after one backward pass through a deep plain MLP."""
    _, train, _ = seeded_task(3, 256)
    layers: list[nn.Module] = []
    for index in range(depth):
        linear = nn.Linear(FEATURES if index == 0 else width, width)
        if kaiming:
            nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")
            nn.init.zeros_(linear.bias)
        layers += [linear, activation()]
    model = nn.Sequential(*layers, nn.Linear(width, CLASSES))
    nn.CrossEntropyLoss()(model(train[0]), train[1]).backward()
    return [m.weight.grad.norm().item() for m in model if isinstance(m, nn.Linear)]


def fixture_script(*parts: str, run_name: str) -> dict[str, Any]:
    """Run a script of the checkout's fixtures/ (a generator of real runs) and return its globals."""
    import runpy

    return runpy.run_path(str(SOURCE_ROOT.joinpath("fixtures", *parts)), run_name=run_name)
