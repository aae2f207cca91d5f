"""Shape probes for layout errors of grid_sample, PixelShuffle and the norms' weight and bias: each test raises the
real torch error (a fixture script, or a call in this file's own frame) and checks the names and sizes given."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import explainer
from conftest import assert_names, explain_paste, raised
from probe_helpers import culprit, explain_fixture, has_fix


def explained(exc: BaseException):
    diagnosis = explainer.explain(exc)
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


# --- weight and bias of a normalization ------------------------------------------------------------------

def test_layer_norm_weight_names_the_parameter_and_the_input_it_normalizes():
    d = explain_fixture("layer_norm_weight_shape")
    assert_names(d, "shape.norm_affine_shape", ["self.gamma", "[32]", "[20, 32]", "(4, 20, 32)"])
    assert culprit(d, "self.gamma")["shape"] == [32] and culprit(d, "self.gamma")["role"] == "weight"
    assert culprit(d, "h")["shape"] == [4, 20, 32]
    assert has_fix(d, "`F.layer_norm(h, self.gamma.shape, ...)`")
    assert has_fix(d, "`self.gamma = nn.Parameter(torch.ones(20, 32))`")


def test_group_norm_weight_counts_the_input_channels():
    d = explain_fixture("group_norm_weight")
    assert_names(d, "shape.norm_affine_shape", ["self.scale", "[16]", "32 channels", "shape [32]"])
    assert culprit(d, "x")["shape"] == [2, 32, 8, 8]
    assert has_fix(d, "`self.scale = nn.Parameter(torch.ones(32))`")


def test_batch_norm_weight_names_the_functional_argument():
    d = explain_fixture("batch_norm_weight")
    assert_names(d, "shape.norm_affine_shape", ["gamma", "16 elements", "32 channels"])
    assert culprit(d, "gamma")["shape"] == [16] and culprit(d, "features")["shape"] == [8, 32]
    assert has_fix(d, "`gamma = nn.Parameter(torch.ones(32))`")


def test_layer_norm_module_with_a_replaced_bias_names_the_layer_attribute():
    norm = nn.LayerNorm(8)
    norm.bias = nn.Parameter(torch.zeros(4))
    tokens = torch.randn(2, 8)
    d = explained(raised(lambda: norm(tokens)))
    assert_names(d, "shape.norm_affine_shape", ["norm.bias", "[4]", "[8]"])
    assert culprit(d, "norm.bias")["role"] == "bias"
    assert culprit(d, "norm")["type"] == "LayerNorm"


def test_instance_norm_weight_is_claimed_without_a_per_channel_fix():
    weight, volumes = torch.ones(4), torch.randn(2, 8, 5)
    d = explained(raised(lambda: F.instance_norm(volumes, weight=weight)))
    assert d.rule == "shape.norm_affine_shape"
    assert culprit(d, "weight")["shape"] == [4]
    assert "samples x channels" in d.summary or "per sample and channel" in d.summary
    assert not has_fix(d, "torch.ones(16)") and has_fix(d, "one value per channel of volumes, 8")


def test_norm_affine_messages_alone_still_give_the_shape_that_fits():
    d = explain_paste("RuntimeError: Expected bias to be a vector of size equal to the number of channels in input, "
                      "but got bias of shape [8] and input of shape [2, 16, 4]")
    assert_names(d, "shape.norm_affine_shape", ["[8]", "[2, 16, 4]", "shape [16]"])
    d = explain_paste("RuntimeError: Expected weight to be of same shape as normalized_shape, but got weight of "
                      "shape [5120] and normalized_shape = [2200]")
    assert_names(d, "shape.norm_affine_shape", ["[5120]", "[2200]"])


@pytest.mark.parametrize("message", [
    "RuntimeError: running_mean should contain 16 elements not 3",
    "RuntimeError: Given normalized_shape=[64], expected input with shape [*, 64], but got input of size[8, 32]",
])
def test_norm_affine_rule_leaves_the_input_shape_messages_to_their_rules(message):
    assert explain_paste(message).rule != "shape.norm_affine_shape"


# --- grid_sample -----------------------------------------------------------------------------------------

def test_grid_sample_channels_first_flow_gets_the_permute():
    frames, grid = torch.randn(2, 3, 8, 8), torch.randn(2, 2, 8, 8)
    d = explained(raised(lambda: F.grid_sample(frames, grid, align_corners=True)))
    assert_names(d, "shape.grid_sample_grid", ["grid", "(2, 2, 8, 8)", "(2, 8, 8, 2)", "frames"])
    assert culprit(d, "grid")["role"] == "grid" and culprit(d, "frames")["role"] == "input"
    assert has_fix(d, "`grid.permute(0, 2, 3, 1)` gives (2, 8, 8, 2)")


def test_grid_sample_volume_with_a_2d_grid_needs_three_coordinates():
    d = explain_fixture("grid_sample_volume_grid")
    assert_names(d, "shape.grid_sample_grid", ["coords", "(1, 8, 16, 16, 2)", "3 coordinates", "volume"])
    assert not has_fix(d, "permute")


def test_grid_sample_batch_mismatch_expands_a_single_grid():
    d = explain_fixture("grid_sample_batch")
    assert_names(d, "shape.grid_sample_grid", ["images", "batch size 4", "grid", "batch size 1"])
    assert has_fix(d, "`grid.expand(4, *grid.shape[1:])`")


def test_grid_sample_rank_mismatch_names_both_operands():
    image, grid = torch.randn(1, 3, 8, 8), torch.randn(1, 4, 8, 8, 2)
    d = explained(raised(lambda: F.grid_sample(image, grid, align_corners=False)))
    assert_names(d, "shape.grid_sample_grid", ["image is (1, 3, 8, 8)", "grid is (1, 4, 8, 8, 2)"])


def test_near_misses_of_the_same_ops_are_not_claimed():
    text = ("RuntimeError: grid_sampler(): expected input and grid to be on same device, but input is on cuda:0 "
            "and grid is on cpu")
    assert explainer.explain_text(text).rule != "shape.grid_sample_grid"
    shuffle = "RuntimeError: pixel_shuffle expects a positive upscale_factor, but got 0"
    assert explainer.explain_text(shuffle).rule != "shape.pixel_shuffle"


# --- PixelShuffle / PixelUnshuffle ----------------------------------------------------------------------

def test_pixel_shuffle_names_the_conv_before_it_in_a_forward():
    d = explain_fixture("pixel_shuffle_channels")
    assert_names(d, "shape.pixel_shuffle", ["model.shuffle", "model.expand", "12", "16"])
    assert culprit(d, "model.expand")["type"] == "Conv2d" and culprit(d, "h")["shape"] == [2, 12, 12, 12]
    assert has_fix(d, "Make model.expand output 48 channels")


def test_pixel_shuffle_in_sequential_names_the_previous_conv():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 6, 3, padding=1), nn.PixelShuffle(2))
    images = torch.randn(1, 3, 6, 6)
    d = explained(raised(lambda: model(images)))
    assert_names(d, "shape.pixel_shuffle", ["model.3", "model.2", "6", "4"])
    assert has_fix(d, "Make model.2 output 12 channels")


def test_functional_pixel_shuffle_names_its_input():
    features = torch.randn(1, 10, 4, 4)
    d = explained(raised(lambda: F.pixel_shuffle(features, 2)))
    assert_names(d, "shape.pixel_shuffle", ["features", "(1, 10, 4, 4)", "10"])


def test_pixel_unshuffle_odd_side_rounds_up_to_the_factor():
    d = explain_fixture("pixel_unshuffle_size")
    assert_names(d, "shape.pixel_shuffle", ["height", "15", "image"])
    assert has_fix(d, "here 16")


def test_pixel_shuffle_rank_message_alone():
    d = explain_paste("RuntimeError: pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                      "2 dimension(s)")
    assert_names(d, "shape.pixel_shuffle", ["at least 3 dimensions", "got 2"])
