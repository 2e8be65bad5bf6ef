"""int ** int in a kernel (math.ipowi) runs in the C backend with wrap-around like numpy."""

import numpy as np
import pytest

from loom import I32, Dim, MemRef, kernel

N = Dim("N")


@kernel
def powers(x: MemRef[(N,), I32], e: MemRef[(N,), I32], y: MemRef[(N,), I32]):
    for i in range(N):
        y[i] = x[i] ** e[i]


def _reference(base: int, exp: int) -> int:
    if exp < 0:  # integer semantics of math.ipowi
        return 1 if base == 1 else (-1 if exp % 2 else 1) if base == -1 else 0
    value = pow(base, exp, 2**32)
    return value - 2**32 if value >= 2**31 else value


@pytest.mark.sanitize
def test_integer_power_wraps_and_handles_negative_exponents():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.integers(-50, 50, 200), [1, -1, -1, 0, 10]]).astype(np.int32)
    e = np.concatenate([rng.integers(-3, 20, 200), [-3, -3, -4, 3, 12]]).astype(np.int32)
    y = np.zeros_like(x)
    powers(x, e, y)
    expected = np.array([_reference(int(a), int(b)) for a, b in zip(x, e)], np.int32)
    np.testing.assert_array_equal(y, expected)
