"""Kernels exercising intrinsics, name resolution and source-reading corner cases."""
from __future__ import annotations  # annotations become strings: the frontend reads them from the AST anyway

import math

import numpy as np

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F32, F64, I32, Index, MemRef, linalg

N_CONST = 4
HALF = np.float32(0.5)
DEBUG = False


@loom.kernel
def mm_linalg(A: MemRef[(4, 3), F32], B: MemRef[(3, 5), F32], C: MemRef[(4, 5), F32]):
    linalg.matmul(A, B, C)  # LINALG-MATMUL


@loom.kernel
def generic_lambda(A: MemRef[(4, 4), F32], B: MemRef[(4, 4), F32]):
    linalg.generic([A], [B], ["(i, j) -> (i, j)", "(i, j) -> (i, j)"], ["parallel", "parallel"],
                   lambda a, b: a * HALF + 1.0)


@loom.kernel
def generic_def(A: MemRef[(4, 4), F32], B: MemRef[(4,), F32], s: F32):
    def body(a, acc):
        t = a * s
        return acc + t

    linalg.generic([A], [B], ["(i, j) -> (i, j)", "(i, j) -> (i)"], ["parallel", "reduction"], body)


@loom.kernel
def folded_if(A: MemRef[(4,), F32]):
    """Python-constant conditions are folded at trace time."""
    if DEBUG:
        A[0] = 99.0
    else:
        A[0] = 1.0
    for i in range(1, N_CONST):
        A[i] = F32(i) * HALF


@loom.kernel
def chained(x: F32, lo: F32, hi: F32) -> I32:
    r = I32(0)
    if lo <= x < hi:
        r = I32(1)
    return r


@loom.kernel
def casts(x: F32, n: I32, i: Index) -> (F64, I32, Index, F32, I32):
    return F64(x), loom.cast(x, I32), Index(n) + i, F32(i), I32(x > 0.0)


class Holder:
    @loom.kernel(name="method_kernel")
    def scale(A: MemRef[(4,), F32]):
        for i in range(4):
            A[i] = A[i] * 3.0


def make_closure(k: int):
    @loom.kernel
    def add_k(A: MemRef[(4,), I32]):
        for i in range(4):
            A[i] = A[i] + k

    return add_k


def make_bad_closure():
    table = [1, 2]

    @loom.kernel
    def uses_table(A: MemRef[(2,), I32]):
        A[0] = table[0]  # BAD-CLOSURE

    return uses_table


@loom.kernel
def bad_intrinsic_args(A: MemRef[(4, 3), F32], C: MemRef[(4, 5), F32]):
    linalg.matmul(A, A, C)  # BAD-INTRINSIC


@loom.kernel
def recursive(x: F32) -> F32:
    return recursive(x)  # RECURSION


@loom.kernel
def iv_after_loop(A: MemRef[(4,), F32]):
    i = 0
    for i in range(4):
        A[i] = 0.0
    A[i] = 1.0  # IV-AFTER


@loom.kernel
def count_positive(A: MemRef[("N",), F32]) -> Index:
    n = 0
    for i in range(A.shape[0]):
        if A[i] > 0.0:
            n = n + 1
    return n


@loom.kernel
def while_local(x: F64) -> F64:
    while x > 1.0:
        x = x / 2.0
        t = x
    return t  # WHILE-LOCAL


@loom.kernel
def loop_type_change(A: MemRef[(4,), F32]) -> F32:
    s = F32(0.0)
    for i in range(4):
        s = F64(A[i])  # TYPE-CHANGE
    return F32(s)


@loom.kernel
def float_ops(x: F64, y: F64, n: I32) -> (F64, F64, F64, F64, I32, I32):
    flag = not (x < y)
    return x % y, x // y, x ** 5, -x + F64(flag), ~n, -n % 3


@loom.kernel
def sign(x: F32) -> F32:
    if x > 0.0:
        return 1.0
    elif x < 0.0:
        return -1.0
    else:
        return x


@loom.kernel
def row_sum_unannotated(A: MemRef[(3, "N"), F64], r: Index):
    s = 0.0
    for j in range(len(A) * 0 + A.shape[1]):
        s += A[r, j]
    return s


@loom.kernel
def loom_math_extras(x: F64, y: F64) -> (F64, F64, F64, F64):
    return loom.math.rsqrt(x), loom.math.fma(x, y, 0.5), loom.math.fabs(y), loom.math.abs(y)
