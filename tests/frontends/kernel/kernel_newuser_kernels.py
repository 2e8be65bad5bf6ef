"""A new user's kernels: stencils, scans, a histogram, a sorting network, sparse matrix-vector products with
index arrays, triangular loops, while loops. ``test_kernel_newuser`` runs them against numpy, their own Python
and mlir-runner."""

import math

import loom
from loom.frontends.kernel import F32, F64, I32, I64, U8, U32, Dim, Index, MemRef, alloc

N, M, NNZ, B = Dim("N"), Dim("M"), Dim("NNZ"), Dim("B")


@loom.kernel
def heat_1d(u: MemRef[(N,), F64], v: MemRef[(N,), F64], alpha: F64, steps: Index):
    """Explicit heat equation with fixed ends, ping-ponging between u and v; the result ends in u."""
    n = u.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            v[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        v[0] = u[0]
        v[n - 1] = u[n - 1]
        for i in range(n):
            u[i] = v[i]


@loom.kernel
def jacobi_2d(a: MemRef[(N, M), F32], b: MemRef[(N, M), F32]):
    """Five-point average of the interior; the border of b is copied from a."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if i == 0 or j == 0 or i == a.shape[0] - 1 or j == a.shape[1] - 1:
                b[i, j] = a[i, j]
            else:
                b[i, j] = F32(0.2) * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@loom.kernel
def inclusive_scan_i32(x: MemRef[(N,), I32], y: MemRef[(N,), I32]) -> I32:
    """Inclusive prefix sum with int32 wraparound; returns the total."""
    s = I32(0)
    for i in range(x.shape[0]):
        s += x[i]
        y[i] = s
    return s


@loom.kernel
def segmented_max(x: MemRef[(N,), F64], starts: MemRef[(M,), I64], out: MemRef[(M,), F64]):
    """Maximum of each segment x[starts[s]:starts[s + 1]] (the last runs to the end); -inf when empty."""
    nseg = starts.shape[0]
    for s in range(nseg):
        lo = Index(starts[s])
        hi = Index(starts[s + 1]) if s + 1 < nseg else x.shape[0]
        m = -math.inf
        for k in range(lo, hi):
            m = max(m, x[k])
        out[s] = m


@loom.kernel
def histogram_u8(data: MemRef[(N,), U8], bins: MemRef[(B,), I64], shift: Index):
    """Counts of data >> shift (bins has 256 >> shift entries)."""
    for i in range(data.shape[0]):
        bins[Index(data[i]) >> shift] += 1


@loom.kernel
def bitonic_sort8(x: MemRef[(8,), I32]):
    """Bitonic sorting network on 8 elements (ascending)."""
    k = 2
    while k <= 8:
        j = k // 2
        while j > 0:
            for i in range(8):
                partner = i ^ j
                if partner > i:
                    up = (i & k) == 0
                    a = x[i]
                    b = x[partner]
                    if (a > b) == up:
                        x[i] = b
                        x[partner] = a
            j = j // 2
        k = k * 2


@loom.kernel
def coo_spmv(rows: MemRef[(NNZ,), I32], cols: MemRef[(NNZ,), I32], vals: MemRef[(NNZ,), F64],
             x: MemRef[(M,), F64], y: MemRef[(N,), F64]):
    """y += A x for A in coordinate format (duplicates add up)."""
    for k in range(vals.shape[0]):
        y[Index(rows[k])] += vals[k] * x[Index(cols[k])]


@loom.kernel
def csr_transpose_spmv(indptr: MemRef[("R1",), I32], indices: MemRef[(NNZ,), I32], vals: MemRef[(NNZ,), F64],
                       x: MemRef[(N,), F64], y: MemRef[(M,), F64]):
    """y = A^T x for A in CSR (a scatter per nonzero)."""
    for j in range(y.shape[0]):
        y[j] = 0.0
    for r in range(indptr.shape[0] - 1):
        for k in range(Index(indptr[r]), Index(indptr[r + 1])):
            y[Index(indices[k])] += vals[k] * x[r]


@loom.kernel
def forward_substitution(L: MemRef[(N, N), F64], b: MemRef[(N,), F64], x: MemRef[(N,), F64]):
    """Solve L x = b for lower-triangular L (a triangular loop nest)."""
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]


@loom.kernel
def upper_tri_pack(a: MemRef[(N, N), F64], packed: MemRef[(M,), F64]) -> Index:
    """Packs the upper triangle row by row (i <= j) into packed; returns the count."""
    n = a.shape[0]
    k = 0
    for i in range(n):
        for j in range(i, n):
            packed[k] = a[i, j]
            k += 1
    return k


@loom.kernel
def collatz_steps(x: MemRef[(N,), U32], steps: MemRef[(N,), I32], limit: I32):
    """Steps for each x to reach 1 under the Collatz map (uint32 arithmetic), at most limit."""
    for i in range(x.shape[0]):
        v = x[i]
        c = I32(0)
        while v != 1 and c < limit:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            c += 1
        steps[i] = c


@loom.kernel
def binary_search_all(sorted_x: MemRef[(N,), F64], queries: MemRef[(M,), F64], pos: MemRef[(M,), I64]):
    """numpy.searchsorted(sorted_x, queries, side='left') with a while loop per query."""
    for q in range(queries.shape[0]):
        lo = 0
        hi = sorted_x.shape[0]
        v = queries[q]
        while lo < hi:
            mid = (lo + hi) // 2
            if sorted_x[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        pos[q] = I64(lo)


@loom.kernel
def gauss_seidel_sweep(a: MemRef[(N, N), F64], b: MemRef[(N,), F64], x: MemRef[(N,), F64], sweeps: Index) -> F64:
    """Gauss-Seidel sweeps in place; returns the last sweep's largest update."""
    n = a.shape[0]
    delta = 0.0
    for t in range(sweeps):
        delta = 0.0
        for i in range(n):
            s = b[i]
            for j in range(n):
                if j != i:
                    s -= a[i, j] * x[j]
            new = s / a[i, i]
            delta = max(delta, abs(new - x[i]))
            x[i] = new
    return delta


@loom.kernel
def ell_spmv_parallel(vals: MemRef[(N, "W"), F64], cols: MemRef[(N, "W"), I32], x: MemRef[(M,), F64],
                      y: MemRef[(N,), F64]):
    """ELLPACK y = A x with a parallel row loop; padding entries have column -1 and are skipped."""
    for i in loom.parallel(y.shape[0]):
        s = 0.0
        for k in range(vals.shape[1]):
            c = cols[i, k]
            if c >= 0:
                s += vals[i, k] * x[Index(c)]
        y[i] = s


@loom.kernel
def wave_scratch(x: MemRef[(N,), F64], y: MemRef[(N,), F64], taps: Index):
    """A moving sum over the last taps values through a ring buffer of taps elements."""
    ring = alloc((taps,), F64)
    for k in range(taps):
        ring[k] = 0.0
    s = 0.0
    for i in range(x.shape[0]):
        slot = i % taps
        s += x[i] - ring[slot]
        ring[slot] = x[i]
        y[i] = s
