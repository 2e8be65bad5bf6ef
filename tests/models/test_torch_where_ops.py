"""torch.where with comparisons (gt/lt/ge/le/eq/ne, tensor or scalar), 2 ** x (pow.Scalar) and arithmetic
on int64 tensors (positions + 1): each was refused at import. A comparison is computed inside the where
that uses it; any other use builds it as a bool tensor (tests/models/test_bool_masks.py)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

from tests.models.helpers import run_against_torch  # noqa: E402


class Selects(nn.Module):
    def forward(self, x, y):
        return (torch.where(x > 0, x, 0.1 * x),          # leaky relu, as researchers write it
                torch.where(x < y, x, y),                 # broadcast (2, 3, 4) against (3, 1)
                torch.where(x >= 0.5, 1.0, 0.0),          # scalar values (scalar_tensor)
                torch.where(x <= x.mean(), y, x * x),
                torch.where(x == y, x, -y),
                torch.where(x != 0.25, x, 7.0))


@pytest.mark.sanitize  # loops and indexed loads / broadcast copies in the generated C
def test_where_with_each_comparison_matches_torch_exactly():
    torch.manual_seed(0)
    x, y = torch.randn(2, 3, 4), torch.randn(3, 1)
    x[0, :, 0] = y[:, 0]          # equal elements for eq / ne
    x[1, 0, :2] = torch.tensor([0.25, 0.5])
    got, want = run_against_torch(Selects(), x, y)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w.numpy())


def test_comparisons_with_nan_follow_torch():
    class NanSelect(nn.Module):
        def forward(self, x):
            return torch.where(x > 0, 1.0, 2.0), torch.where(x != x, 0.0, x)  # NaN != NaN holds

    x = torch.tensor([[float("nan"), 1.0, -1.0, 0.0]])
    got, want = run_against_torch(NanSelect(), x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w.numpy())


def test_int64_arithmetic_and_where_are_exact():
    class Positions(nn.Module):
        def forward(self, i):
            shifted = (i + 1) * 3 - i
            return shifted, torch.where(i > 4, shifted, torch.zeros_like(i)), torch.maximum(i, 2 - i)

    i = torch.randint(-10, 10, (3, 5))
    got, want = run_against_torch(Positions(), i)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w.numpy())


def test_pow_with_a_scalar_base_or_exponent_matches_torch():
    class Powers(nn.Module):
        def forward(self, x):
            return 2 ** x, x ** 2, x.abs() ** 0.5, 0.5 ** x

    x = torch.randn(4, 5)
    got, want = run_against_torch(Powers(), x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-7)


def test_a_comparison_used_as_numbers_matches_torch():
    """(x > 0).float() and x * (x > 0) were refused (no bool tensors); the mask converts as PyTorch promotes it."""
    class MaskOut(nn.Module):
        def forward(self, x, i):
            return (x > 0).float() * x, x * (x < 0.5), (x > 0) * 0.5, (i > 2) + i, (i < 0).to(torch.int32)

    x, i = torch.randn(2, 3), torch.randint(-5, 5, (2, 3))
    got, want = run_against_torch(MaskOut(), x, i)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def test_arithmetic_of_two_masks_equals_torch_or_is_refused_naming_the_op():
    """bool * bool and bool + bool are and / or in PyTorch; other ops of two masks are refused, naming the op."""
    class TwoMasks(nn.Module):
        def forward(self, x):
            return (x > 0) * (x < 1), (x > 0) + (x < -1), ((x > 0) / (x < 1)).isinf()

    x = torch.randn(3, 4)
    got, want = run_against_torch(TwoMasks(), x)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, w.numpy())

    class Maximum(nn.Module):
        def forward(self, x):
            return torch.maximum(x > 0, x < 1).float()

    with pytest.raises(LoomError, match="max: gt has dtype bool; this op computes in float32, float64 or int32"):
        loom.models.import_model(Maximum(), (torch.randn(2, 3),))


def test_integer_arithmetic_promotes_as_torch():
    """i / 2 and i + 1.0 were refused (loom made no type promotion); they compute in float32 as PyTorch's,
    int32 with int64 in int64."""
    class Promote(nn.Module):
        def forward(self, i, j):
            return i / 2, i + 1.0, (i * 0.5 + 1) * i, j + i, i / j

    i, j = torch.arange(-6, 6).reshape(3, 4), torch.tensor([1, -3, 7, 2], dtype=torch.int32)
    got, want = run_against_torch(Promote(), i, j)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)


def test_int64_compared_with_a_fraction_is_refused():
    class Half(nn.Module):
        def forward(self, i):
            return torch.where(i >= 0.5, i, 0)

    with pytest.raises(LoomError, match="int64 tensors are compared with integer scalars only, got 0.5"):
        loom.models.import_model(Half(), (torch.arange(6),))


def test_where_on_a_bool_mask_buffer_matches_torch():
    class Causal(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", torch.tril(torch.ones(5, 5, dtype=torch.bool)))

        def forward(self, scores):
            return torch.where(self.mask, scores, float("-inf")).softmax(-1)

    scores = torch.randn(2, 5, 5)
    got, want = run_against_torch(Causal().eval(), scores)
    np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-6, atol=1e-7)
