"""``parallel``, ``alloc``, ``alloca`` and ``cast`` run in plain Python (they raised "can only be used inside a
@loom.kernel function"), so a kernel that uses them is its own reference: ``kernel.__wrapped__`` on numpy."""

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F32, I32, Dim, Index, MemRef, alloc, alloca, cast, parallel

N = Dim("N")
RNG = np.random.default_rng(3)


@loom.kernel
def blur_rows(a: MemRef[("M", "K"), F32], out: MemRef[("M", "K"), F32]):
    for i in parallel(a.shape[0]):
        tmp = alloc((a.shape[1],), F32)
        for j in range(a.shape[1]):
            tmp[j] = a[i, j]
        for j in range(a.shape[1]):
            left = tmp[j - 1] if j > 0 else tmp[j]
            right = tmp[j + 1] if j + 1 < a.shape[1] else tmp[j]
            out[i, j] = (left + tmp[j] + right) / 3.0


@loom.kernel
def tile_sums(a: MemRef[(8, 8), I32], out: MemRef[(4, 4), I32]):
    for ti, tj in parallel((0, 0), (8, 8), (2, 2)):
        acc = alloca((1,), I32)
        acc[0] = 0
        for di in range(2):
            for dj in range(2):
                acc[0] += a[ti + di, tj + dj]
        out[ti // 2, tj // 2] = acc[0]


@loom.kernel
def mean_as_int(x: MemRef[(N,), F32]) -> I32:
    s = F32(0.0)
    for v in x:
        s += v
    return cast(s / F32(cast(x.shape[0], I32)), I32)


def test_kernels_using_intrinsics_match_their_own_python():
    a = RNG.random((5, 7)).astype(np.float32)
    got, want = np.zeros_like(a), np.zeros_like(a)
    blur_rows(a, got)
    blur_rows.__wrapped__(a, want)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    b = RNG.integers(-9, 9, (8, 8)).astype(np.int32)
    got, want = np.zeros((4, 4), np.int32), np.zeros((4, 4), np.int32)
    tile_sums(b, got)
    tile_sums.__wrapped__(b, want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, b.reshape(4, 2, 4, 2).sum(axis=(1, 3)))
    x = (RNG.random(9) * 10).astype(np.float32)
    assert mean_as_int(x) == mean_as_int.__wrapped__(x)


def test_python_forms_of_the_intrinsics():
    assert list(parallel(3)) == [0, 1, 2]
    assert list(parallel(2, 2)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert list(parallel((1,), (4,))) == [1, 2, 3]
    assert list(parallel((0, 1), (4, 3), (2, 1))) == [(0, 1), (0, 2), (2, 1), (2, 2)]
    buf = alloc((2, 3), F32)
    assert buf.shape == (2, 3) and buf.dtype == np.float32 and not buf.any()
    assert alloca(4, Index).dtype == np.int64
    assert cast(2.7, I32) == 2 and type(cast(2.7, I32)) is np.int32
    with pytest.raises(LoomError, match="loom scalar type"):
        alloc((2,), np.float32)
    with pytest.raises(LoomError, match="same length"):
        parallel((0, 0), (4,))
