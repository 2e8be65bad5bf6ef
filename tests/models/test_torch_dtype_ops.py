"""``.to(dtype)`` / ``.float()`` in user models: torch.export (2.13) writes an ``_assert_tensor_metadata``
check before each, which loom refused as an unsupported op, so even a ``.to()`` that changes nothing
failed the import; a conversion loom cannot do is refused naming both dtypes (it raised a KeyError on
int32 tensors). Tensors created in ``forward`` (torch.zeros / ones / full) are constants."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


class SameDtype(nn.Module):
    def forward(self, x, q):
        return x.float() * 2 + x.to(torch.float32), q.to(torch.int32) * 3


class Converts(nn.Module):
    def forward(self, q):
        return q.float()


def test_a_conversion_to_the_same_dtype_is_free():
    x, q = torch.randn(2, 3), torch.randint(-9, 9, (2, 3), dtype=torch.int32)
    got = loom.models.compile(SameDtype(), (x, q))(x.numpy(), q.numpy())
    want = SameDtype()(x, q)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)
        assert g.dtype == w.numpy().dtype


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_a_conversion_loom_cannot_do_is_refused_naming_both_dtypes(dtype):
    q = torch.ones(2, 3, dtype=dtype)
    with pytest.raises(LoomError, match=rf"_to_copy: conversion of {str(dtype)[6:]} to torch.float32 is not supported"):
        loom.models.import_model(Converts(), (q,))


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
