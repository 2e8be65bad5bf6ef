"""leaky_relu, hardswish and hardsigmoid in user models (MobileNetV3, YOLO-style CNNs): torch.export keeps
leaky_relu as one op (it was refused at import); all three build on max/min/clamp layers and match torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from tests.models.helpers import run_against_torch  # noqa: E402


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x):
        y = self.act(self.conv(x))
        return F.leaky_relu(x), y, F.hardswish(y), F.hardsigmoid(x * 4), nn.Hardswish()(x * 4)


def test_leaky_relu_hardswish_hardsigmoid_match_torch():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 5)
    x[0, 0, 0, :3] = torch.tensor([0.0, -3.0, 3.0])  # the kinks of each
    got, want = run_against_torch(Activations().eval(), x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)


def test_leaky_relu_is_exact_on_both_sides():
    class Leaky(nn.Module):
        def forward(self, x):
            return F.leaky_relu(x, 0.1)

    x = torch.randn(7, 9)
    got, want = run_against_torch(Leaky(), x)
    np.testing.assert_array_equal(got[0], want[0].numpy())


class Smooth(nn.Module):
    def forward(self, x):
        return F.elu(x), F.elu(x, alpha=0.5), F.selu(x), F.celu(x, 2.0), F.softplus(x), F.mish(x), torch.expm1(x)


def test_elu_family_softplus_and_mish_match_torch():
    torch.manual_seed(1)
    x = torch.randn(3, 50) * 4
    x[0, :3] = torch.tensor([0.0, 25.0, -25.0])  # the kink, and softplus's linear region (x > 20)
    got, want = run_against_torch(Smooth(), x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)


def test_masked_fill_with_a_comparison_before_softmax_matches_torch():
    class Masked(nn.Module):
        def forward(self, scores, mask):
            return scores.masked_fill(mask == 0, float("-inf")).softmax(-1)

    scores, mask = torch.randn(2, 3, 4), torch.tensor([[1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 1, 1]])
    got, want = run_against_torch(Masked(), scores, mask)
    np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-6, atol=1e-7)
