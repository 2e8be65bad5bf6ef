"""Kernels a new user wrote against the kernel path (the findings of a user's pass); the lines that must be
reported carry a unique ``# U:<tag>`` marker."""

import math

import loom
from loom.frontends.kernel import F32, F64, I8, I32, Dim, Index, MemRef

N = Dim("N")


@loom.kernel
def i8_above(X: MemRef[(N,), I8], Y: MemRef[(N,), I32]):
    for i in range(X.shape[0]):
        if X[i] > 200:  # U:i8cmp
            Y[i] = 1


@loom.kernel
def i32_floordiv_wide(X: MemRef[(N,), I32]):
    for i in range(X.shape[0]):
        X[i] = X[i] // 3000000000  # U:i32div


@loom.kernel
def i8_max_wide(X: MemRef[(N,), I8]):
    for i in range(X.shape[0]):
        X[i] = max(X[i], 255)  # U:i8max


@loom.kernel
def i8_mask(X: MemRef[(N,), I8]):
    """Bitwise ops read no sign: 0xF0 keeps its bit pattern (-16 as i8)."""
    for i in range(X.shape[0]):
        X[i] = X[i] & 0xF0


@loom.kernel
def f32_huge(X: MemRef[(N,), F32]):
    for i in range(X.shape[0]):
        X[i] = X[i] * 1e40  # U:f32huge


@loom.kernel
def f32_inf_floor(X: MemRef[(N,), F32]) -> F32:
    m = F32(-math.inf)
    for i in range(X.shape[0]):
        m = max(m, X[i])
    return m


@loom.kernel
def f64_huge_int(x: F64) -> F64:
    return x * 10**400  # U:f64hugeint
