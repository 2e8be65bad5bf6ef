"""``.to(dtype)`` / ``.float()`` in user models: torch.export (2.13) writes an ``_assert_tensor_metadata``
check before each, which loom refused as an unsupported op, so even a ``.to()`` that changes nothing
failed the import. Integers convert to float32 and to each other; float32 to an integer is refused naming both
dtypes (it raised a KeyError on int32 tensors). Tensors created in ``forward`` (torch.zeros / ones / full) are
constants."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402


class SameDtype(nn.Module):
    def forward(self, x, q):
        return x.float() * 2 + x.to(torch.float32), q.to(torch.int32) * 3


class Converts(nn.Module):
    def forward(self, q):
        return q.float(), q.long() * 3, q.to(torch.int32) - 1, torch.cumsum(q.int(), 0)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integers_convert_to_float32_and_to_each_other_as_torch(dtype):
    """int -> float32 and int32 <-> int64 were refused (loom converted no dtypes); int64 -> int32 wraps."""
    q = torch.tensor([[0, -7, 2**24 + 1], [123456789, -(2**31), 2**31 - 1]], dtype=dtype)
    if dtype == torch.int64:
        q[0, 0] = 2**40 + 5  # wraps to 5 in int32
    got = loom.models.compile(Converts(), (q,))(q.numpy())
    want = Converts()(q)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def test_float_to_integer_truncates_as_torch():
    """(It was refused: C leaves a float out of the integer's range undefined.) In range it truncates; NaN and values
    out of range give MIN for int32 / int64 (x86's answer, PyTorch's here)."""
    class Truncate(nn.Module):
        def forward(self, x):
            return x.long(), x.int()

    x = torch.tensor([300.7, -1e10, float("nan"), 1e10, -2.5, 2.9, 2**31, -2**31, 2**63, -129.5])
    got = loom.models.compile(Truncate(), (x,))(x.numpy())
    for g, w in zip(got, Truncate()(x), strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


class Filled(nn.Module):
    def forward(self, x, q):
        zeros = x.new_zeros(1)
        return (x + zeros).flatten(1) + torch.ones(x.shape[-1] * x.shape[-2]), q + torch.full((3,), 7, dtype=torch.int32)


def test_tensors_created_in_forward_are_constants():
    """torch.zeros / ones / full / new_zeros (aten.full) were refused as an unsupported op."""
    x, q = torch.randn(2, 3, 4), torch.randint(-9, 9, (2, 3), dtype=torch.int32)
    got = loom.models.compile(Filled(), (x, q))(x.numpy(), q.numpy())
    for g, w in zip(got, Filled()(x, q), strict=True):
        np.testing.assert_array_equal(g, w.numpy())


def test_integer_reductions_equal_torch():
    """sum / amax / amin of integers were refused (float32 only); sums run in int64 as PyTorch's, max and min
    keep the dtype (their identities are the type's extremes)."""
    class Reduce(nn.Module):
        def forward(self, i, q):
            return i.amax(-1), i.amin(0, keepdim=True), q.sum(1), q.amax((0, 1)), i.sum()

    torch.manual_seed(6)
    i = torch.randint(-2**40, 2**40, (3, 5))
    q = torch.randint(-2**31, 2**31 - 1, (3, 4), dtype=torch.int32)
    got = loom.models.compile(Reduce(), (i, q))(i.numpy(), q.numpy())
    for g, w in zip(got, Reduce()(i, q), strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())
