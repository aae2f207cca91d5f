"""A backward that walks into a graph an earlier backward freed, through a tensor computed before it (a GAN's
fake batch): the tensor is named from the live graph, without running anything."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import explainer
from probe_helpers import culprit, has_fix


def test_a_fake_batch_reused_after_the_discriminator_backward_is_named():
    generator, critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), nn.Linear(2, 1)
    fake = generator(torch.randn(6, 4))
    d_loss = F.softplus(critic(fake)).mean()
    d_loss.backward()
    g_loss = F.softplus(-critic(fake)).mean()
    with pytest.raises(RuntimeError) as caught:
        g_loss.backward()
    d = explainer.explain(caught.value)
    assert d.rule == "autograd.backward_twice"
    assert culprit(d, "fake")["shape"] == [6, 2]
    assert d.summary.startswith("fake (6, 2) was computed before an earlier backward freed its graph")
    assert has_fix(d, "`D(fake.detach())`")


def test_a_second_backward_on_the_same_loss_is_not_blamed_on_another_tensor():
    w = torch.ones(3, requires_grad=True)
    hidden = (w * 2).exp()
    loss = hidden.sum()
    loss.backward()
    with pytest.raises(RuntimeError) as caught:
        loss.backward()
    d = explainer.explain(caught.value)
    assert "backward_calls" in d.facts and "reused_name" not in d.facts
