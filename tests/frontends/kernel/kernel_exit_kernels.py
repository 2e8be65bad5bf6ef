"""Kernels that leave their loops early (``break``, ``return`` from inside loops), for
``test_kernel_early_exit.py``."""

import loom
from loom.frontends.kernel import F32, I32, I64, Dim, Index, MemRef, parallel

N = Dim("N")


@loom.kernel
def count_until(x: MemRef[(N,), I64], y: MemRef[(16,), I64], n: Index, t: I64) -> Index:
    """Breaks at the first i with x[i % 16] >= t; stores in every iteration before it."""
    found = n
    for i in range(n):
        if x[i % 16] >= t:
            found = i
            break
        y[i % 16] = y[i % 16] + 1
    return found


@loom.kernel
def find_return(x: MemRef[(N,), I64], y: MemRef[(16,), I64], n: Index, t: I64) -> Index:
    for i in range(n):
        y[i % 16] = y[i % 16] + 1
        if x[i % 16] >= t:
            return i
    return n


@loom.kernel
def nested_find(a: MemRef[("M", "K"), I64], n: Index, t: I64) -> I64:
    s = 0
    for r in range(a.shape[0]):
        for i in range(n):
            v = a[r, i % a.shape[1]]
            if v >= t:
                break
            s += v
    return s


@loom.kernel
def find2(a: MemRef[("M", "K"), I32], t: I32) -> tuple[Index, Index]:
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] == t:
                return i, j
    return -1, -1


@loom.kernel
def down_break(x: MemRef[(N,), I32], t: I32) -> Index:
    last = -1
    for i in range(x.shape[0] - 1, -1, -1):
        if x[i] == t:
            last = i
            break
    return last


@loom.kernel
def stepped_break(x: MemRef[(N,), I32], lo: Index, hi: Index, s: Index, t: I32) -> I32:
    acc = 0
    for i in range(lo, hi, s):
        if x[i] > t:
            break
        acc += x[i]
    return acc


@loom.kernel(loops="affine")
def affine_break(x: MemRef[(N,), F32], y: MemRef[(N,), F32]):
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            break
        y[i] = x[i] * 2.0


@loom.kernel
def break_and_continue(x: MemRef[(N,), I32], y: MemRef[(N,), I32]) -> I32:
    """Skips odd values, stops at a zero, counts the even ones seen, writes a running sum."""
    s = 0
    evens = I32(0)
    for i in range(x.shape[0]):
        if x[i] % 2 != 0:
            continue
        if x[i] == 0:
            break
        evens += 1
        s += x[i]
        y[i] = s
    return s * 100 + evens


@loom.kernel
def once(x: MemRef[(N,), I32]) -> I32:
    s = 0
    for i in range(x.shape[0]):
        s += x[i]
        break
    return s


@loom.kernel
def until_zero(x: MemRef[(N,), I32]) -> Index:
    i = 0
    while True:
        if i >= x.shape[0] or x[i] == 0:
            break
        i += 1
    return i


@loom.kernel
def enumerate_break(x: MemRef[(N,), F32]) -> tuple[Index, F32]:
    k = -1
    s = F32(0.0)
    for j, v in enumerate(x):
        if v > 10.0:
            k = j
            break
        s += v
    return k, s


@loom.kernel
def first_negative_per_row(a: MemRef[("M", "K"), I32], out: MemRef[("M",), Index]):
    for i in parallel(a.shape[0]):
        k = a.shape[1]
        for j in range(a.shape[1]):
            if a[i, j] < 0:
                k = j
                break
        out[i] = k
