"""Where the wrong input came from: the layer before the failing one, in containers and in a user's forward.
Each test builds a real model and raises the real torch error."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import explainer
from probe_helpers import culprit, has_fix


def explain_call(model, x):
    with pytest.raises(RuntimeError) as caught:
        model(x)
    diagnosis = explainer.explain(caught.value)
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def test_sequential_conv_names_the_conv_before_the_activation():
    model = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.Dropout(), nn.Conv2d(64, 8, 3))
    d = explain_call(model, torch.randn(2, 3, 12, 12))
    assert d.rule == "shape.conv_channels"
    assert d.summary.startswith("model.3 (Conv2d, in_channels=64) got 32 channels from model.0 (Conv2d, "
                                "out_channels=32)")
    assert culprit(d, "model.0")["role"] == "made the input"


def test_nested_sequential_looks_into_the_previous_block():
    model = nn.Sequential(nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2)),
                          nn.Sequential(nn.Conv2d(32, 8, 3), nn.ReLU()))
    d = explain_call(model, torch.randn(2, 3, 16, 16))
    assert d.facts["producer_name"] == "model.0.0" and d.facts["module"] == "model.1.0"
    assert d.facts["producer_desc"] == "Conv2d, out_channels=16"


def test_batchnorm1d_after_linear_names_the_linear():
    model = nn.Sequential(nn.Linear(10, 20), nn.BatchNorm1d(30))
    d = explain_call(model, torch.randn(4, 10))
    assert d.rule == "shape.batchnorm_features"
    assert "model.1 (BatchNorm1d, num_features=30) got 20 channels from model.0 (Linear, out_features=20)" in d.summary
    assert has_fix(d, "make model.0 output 30 channels")


class Straight(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(32, 8, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        h = torch.relu(x)
        return self.conv2(h)


def test_custom_forward_reads_the_assignments_back_through_elementwise_calls():
    model = Straight()
    d = explain_call(model, torch.randn(2, 3, 16, 16))
    assert d.facts["producer_name"] == "model.conv1"
    assert "model.conv2 (Conv2d, in_channels=32) got 16 channels from model.conv1" in d.summary


class Branchy(Straight):
    def forward(self, x, flip=True):
        x = self.conv1(x)
        if flip:
            x = x.flip(1)
        return self.conv2(x)


def test_custom_forward_with_a_branch_says_nothing_about_the_producer():
    d = explain_call(Branchy(), torch.randn(2, 3, 16, 16))
    assert d.rule == "shape.conv_channels"
    assert "producer_name" not in d.facts
    assert "model.conv1" not in d.summary


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 12), nn.GELU(), nn.Linear(24, 4)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_modulelist_loop_names_the_element_before():
    d = explain_call(Stack(), torch.randn(5, 8))
    assert d.rule == "shape.matmul"
    assert "model.layers.2 (Linear, in_features=24) got 12 features from model.layers.0 (Linear, out_features=12)" \
        in d.summary


def test_linear_after_flatten_gives_the_maps_and_the_pool_that_fits():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 10))
    d = explain_call(model, torch.randn(2, 3, 8, 8))
    assert "model.3 (Linear, in_features=128) got 512 features from model.2 (Flatten of 8 channels x 8x8)" in d.summary
    assert has_fix(d, "insert `nn.AdaptiveAvgPool2d(4)` in front of it")


class Opaque(nn.Module):
    def forward(self, x):
        return torch.cat([x, x], dim=1)


def test_a_user_block_of_unknown_size_is_not_blamed():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), Opaque(), nn.Conv2d(4, 2, 3))
    d = explain_call(model, torch.randn(1, 3, 9, 9))
    assert d.rule == "shape.conv_channels" and "producer_name" not in d.facts


class Recovering(Straight):
    def __init__(self):
        super().__init__()
        self.refine = nn.Conv2d(16, 16, 1)

    def forward(self, x):
        x = self.conv1(x)
        try:
            x = self.refine(x)
            raise ValueError
        except ValueError:
            return self.conv2(x)


def test_a_layer_called_in_an_except_handler_is_not_traced_back():
    # Statements before the try would name model.conv1 (also 16 channels), but model.refine made the input.
    d = explain_call(Recovering(), torch.randn(2, 3, 16, 16))
    assert d.rule == "shape.conv_channels" and "producer_name" not in d.facts


def test_linear_after_a_pool_without_flatten_names_the_pool_and_the_flatten_to_insert():
    model = nn.Sequential(nn.Conv2d(3, 256, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Linear(256, 10))
    d = explain_call(model, torch.randn(2, 3, 8, 8))
    assert d.rule == "shape.matmul"
    assert d.summary.startswith("model.2 (Linear, in_features=256) got 1 features from model.1 "
                                "(AdaptiveAvgPool2d, output_size=1)")
    assert culprit(d, "model.1")["role"] == "made the input"
    assert has_fix(d, "Insert nn.Flatten(1) after model.1")


def test_unflatten_names_the_layer_that_made_the_size_it_splits():
    model = nn.Sequential(nn.Linear(16, 256), nn.Unflatten(1, (32, 4, 4)))
    d = explain_call(model, torch.randn(5, 16))
    assert d.rule == "shape.unflatten_sizes"
    assert d.summary.startswith("model.1 (Unflatten(dim=1, unflattened_size=(32, 4, 4))) splits dimension 1, of size "
                                "256 as model.0 (Linear, out_features=256) made it")
    assert culprit(d, "model.0")["role"] == "made the input"
