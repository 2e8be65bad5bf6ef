"""``a if c else b`` of two Python literals under a traced condition, for ``test_kernel_literal_choice.py``."""

import math

import loom
from loom.frontends.kernel import F32, I32, U8, Dim, Index, MemRef

N = Dim("N")


@loom.kernel
def threshold(img: MemRef[(N,), U8], t: U8, out: MemRef[(N,), U8]):
    for i in range(img.shape[0]):
        out[i] = 255 if img[i] > t else 0


@loom.kernel
def abs_and_pow2_flag(x: MemRef[(N,), I32], y: MemRef[(N,), I32]):
    for i in range(x.shape[0]):
        v = x[i]
        sgn = v >> 31
        a = (v ^ sgn) - sgn
        y[i] = a * 2 + (1 if a != 0 and (a & (a - 1)) == 0 else 0)


@loom.kernel
def sign_of(x: I32) -> I32:
    return 1 if x > 0 else -1


@loom.kernel
def merged_in_an_if(x: MemRef[(N,), I32]) -> I32:
    s = I32(0)
    for i in range(x.shape[0]):
        if x[i] > 0:
            d = 1 if x[i] > 5 else 0
        else:
            d = x[i]
        s += d
    return s


@loom.kernel
def carried_from_a_choice(x: MemRef[(N,), I32]) -> I32:
    c = 1 if x[0] > 0 else 0
    for i in range(x.shape[0]):
        c += x[i]
    return c


@loom.kernel
def scale_by_sign(x: MemRef[(N,), F32]):
    for i in range(x.shape[0]):
        x[i] = x[i] * (0.5 if x[i] > 0.0 else 2)


@loom.kernel
def count_positive_index(x: MemRef[(N,), I32]) -> Index:
    c = 0
    for i in range(x.shape[0]):
        c += 1 if x[i] > 0 else 0
    return c


@loom.kernel
def too_big_for_u8(x: MemRef[(N,), U8]):
    for i in range(x.shape[0]):
        x[i] = 300 if x[i] > 3 else 0  # C:u8big


@loom.kernel
def math_of_a_choice(x: MemRef[(N,), F32]) -> F32:
    s = F32(0.0)
    for i in range(x.shape[0]):
        s += math.sqrt(4.0 if x[i] > 0.5 else 9.0) * x[i]
    return s


@loom.kernel
def sqrt_of_minus_one(x: F32) -> F32:
    return x * math.sqrt(-1.0)  # C:sqrtneg
