"""torch.sort / argsort, kthvalue, median, var / std, prod, cdist and bucketize were refused as unsupported ops. Sorting
is a top-k of the whole axis (equal values keep their order: a stable sort; NaN last ascending, first descending, as
torch), kthvalue and median (the lower middle value) the last of a top-k of the smallest, var / std the mean squared
deviation over n - correction. Checked against torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import loom.models  # noqa: E402


class SortAndStatistics(torch.nn.Module):
    def forward(self, x):
        return (x.var(1), x.std(-1, unbiased=False), torch.median(x, -1).values, torch.median(x),
                *torch.sort(x, stable=True, dim=-1, descending=True), torch.argsort(x, stable=True, dim=-1),
                *torch.kthvalue(x, 2, 0, keepdim=True), x.var(), torch.var(x, 0, correction=0, keepdim=True),
                x.prod(-1), (x > 0).to(torch.int32).add(2).prod(0, keepdim=True))


def test_sort_and_statistics_equal_torch():
    x = torch.randn(4, 6)
    x[0, 1] = x[0, 3] = x[0, 5]  # ties keep their order
    x[2, 2] = float("nan")
    got = loom.models.compile(SortAndStatistics(), (x,))(x.numpy())
    with torch.no_grad():
        want = SortAndStatistics()(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-7)


class Distances(torch.nn.Module):
    def forward(self, a, b, x):
        bounds = torch.tensor([-1.0, 0.0, 1.0])
        return (torch.cdist(a, b), torch.cdist(a, b, p=1), torch.cdist(a[None], b[None], p=float("inf")),
                torch.bucketize(x, bounds), torch.bucketize(x, bounds, right=True))


def test_cdist_and_bucketize_equal_torch():
    """(Both were unsupported ops.) cdist is the p-norm of the row differences, bucketize a count of comparisons."""
    a, b, x = torch.randn(3, 4), torch.randn(5, 4), torch.tensor([-2, -1, -0.5, 0, 0.5, 1, 3.0])
    got = loom.models.compile(Distances(), (a, b, x))(a.numpy(), b.numpy(), x.numpy())
    for g, w in zip(got, Distances()(a, b, x)):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)
