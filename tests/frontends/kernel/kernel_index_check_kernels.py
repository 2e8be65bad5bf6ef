"""Kernels whose indices move with loops over dims and parameters but are not ``x[i + c]`` directly in the loop's
body: under an ``if``, through a multiplication, over another array's dim, a scratch buffer sized by a parameter.
Used by ``test_kernel_index_checks``."""

import loom
from loom.frontends.kernel import F64, I64, Dim, Index, MemRef, alloc

N, M = Dim("N"), Dim("M")


@loom.kernel
def copy_positive(x: MemRef[(N,), F64], y: MemRef[(M,), F64], n: Index):
    """y[i] = x[i] where x[i] > 0, for i < n: the store runs under an if."""
    for i in range(n):
        if x[i] > 0.0:
            y[i] = x[i]  # the store under an if


@loom.kernel
def every_other(x: MemRef[(N,), F64], y: MemRef[(M,), F64]):
    """y[2 * i + 1] = x[i] over x's dim: an index through a multiplication, over another array's dim."""
    for i in range(x.shape[0]):
        y[2 * i + 1] = x[i]  # tag: strided store


@loom.kernel
def copy_over_dim(x: MemRef[(N,), F64], y: MemRef[(M,), F64]):
    """y[i] = x[i] over x's dim (y may be shorter)."""
    for i in range(x.shape[0]):
        y[i] = x[i]  # tag: dim copy


@loom.kernel
def smooth_rows(a: MemRef[(N, "W"), F64], out: MemRef[(M, "W2"), F64]):
    """Three-point smoothing along rows with boundary ifs, written to out (its own dims)."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s = a[i, j]
            c = 1.0
            if j > 0:
                s += a[i, j - 1]
                c += 1.0
            if j + 1 < a.shape[1]:
                s += a[i, j + 1]
                c += 1.0
            out[i, j] = s / c


@loom.kernel
def clipped_copy(x: MemRef[(N,), F64], y: MemRef[(M,), F64], n: Index):
    """y[i] = x[i] for i < n, only where i < len(y): the guard keeps every access in range."""
    for i in range(n):
        if i < y.shape[0]:
            y[i] = x[i]


@loom.kernel
def doubled_sum(x: MemRef[(N,), F64], n: Index) -> F64:
    """A scratch buffer of n elements (n from the caller: a huge n must fail to allocate, not kill Python)."""
    buf = alloc((n,), F64)
    for i in range(x.shape[0]):
        buf[i] = 2.0 * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += buf[i]
    return s


@loom.kernel
def row_sums_scratch(a: MemRef[(N, "W"), F64], out: MemRef[(N,), F64], n: Index):
    """A scratch row per parallel iteration: its allocation failing inside the OpenMP region is reported."""
    for i in loom.parallel(a.shape[0]):
        tmp = alloc((n,), F64)
        for j in range(a.shape[1]):
            tmp[j] = a[i, j]
        s = 0.0
        for j in range(a.shape[1]):
            s += tmp[j]
        out[i] = s


@loom.kernel
def parallel_halo(x: MemRef[(N,), F64], y: MemRef[(M,), F64], k: Index):
    """A parallel loop reading x[i * k] under an if: checked inside the OpenMP region."""
    for i in loom.parallel(y.shape[0]):
        if i % 2 == 0:
            y[i] = x[i * k]


@loom.kernel
def grid_total(n: Index, m: Index) -> F64:
    """An n x m scratch grid: a negative dim or a product past 64 bits is refused at the alloc."""
    g = alloc((n, m), F64)
    for i in range(n):
        for j in range(m):
            g[i, j] = 1.0
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += g[i, j]
    return s


@loom.kernel
def gather_into(x: MemRef[(N,), F64], idx: MemRef[(M,), I64], y: MemRef[(M,), F64]):
    """y[i] = x[idx[i]]: a loop simd could take, but for its check at each access."""
    for i in range(y.shape[0]):
        y[i] = x[Index(idx[i])]


@loom.kernel
def ring_next(x: MemRef[(N,), F64], y: MemRef[(M,), F64], n: Index):
    """y[i] = x[(i + 1) % n] and y[i] += x[(i + 2) % len(x)]: the first is checked at the access (n may exceed
    x), the second is in range by its divisor (Python's % of len(x))."""
    for i in range(y.shape[0]):
        y[i] = x[(i + 1) % n]  # tag: mod by n
        y[i] += x[(i + 2) % x.shape[0]]
