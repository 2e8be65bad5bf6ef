"""A researcher's own kernels, written as plain Python (for ``test_kernel_research.py``): each is checked
against itself run as Python on numpy (``__wrapped__``), numpy, and upstream mlir-runner."""

import math

import loom
from loom.frontends.kernel import F32, F64, I8, I16, I32, I64, U8, U32, Dim, Index, MemRef, alloc, parallel

N = Dim("N")
M = Dim("M")
K = Dim("K")


@loom.kernel
def prefix_sum(x: MemRef[(N,), F64], y: MemRef[(N,), F64]):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
        y[i] = acc


@loom.kernel
def histogram(x: MemRef[(N,), I32], h: MemRef[(K,), I64], lo: I32, width: I32):
    """Data-dependent bins, clamped to the ends."""
    nb = h.shape[0]
    for i in range(x.shape[0]):
        b = (x[i] - lo) // width
        if b < 0:
            b = I32(0)
        bi = Index(b)
        if bi >= nb:
            bi = nb - 1
        h[bi] += 1


@loom.kernel
def bubble_sort(a: MemRef[(N,), F32]):
    n = a.shape[0]
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                t = a[j]
                a[j] = a[j + 1]
                a[j + 1] = t
                swapped = True
        if not swapped:
            break


@loom.kernel
def insertion_sort(a: MemRef[(N,), I32]):
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key


@loom.kernel
def lower_bound(a: MemRef[(N,), I64], t: I64) -> Index:
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@loom.kernel
def csr_matvec(indptr: MemRef[("R1",), I32], indices: MemRef[("NNZ",), I32], data: MemRef[("NNZ",), F64],
               x: MemRef[(N,), F64], y: MemRef[(M,), F64]):
    for r in range(y.shape[0]):
        s = 0.0
        for k in range(Index(indptr[r]), Index(indptr[r + 1])):
            s += data[k] * x[Index(indices[k])]
        y[r] = s


@loom.kernel
def laplacian(a: MemRef[(M, N), F32], b: MemRef[(M, N), F32]):
    """5-point stencil; the border reads only the neighbours that exist."""
    h = a.shape[0]
    w = a.shape[1]
    for i in range(h):
        for j in range(w):
            s = a[i, j] * 4.0
            if i > 0:
                s -= a[i - 1, j]
            if i < h - 1:
                s -= a[i + 1, j]
            if j > 0:
                s -= a[i, j - 1]
            if j < w - 1:
                s -= a[i, j + 1]
            b[i, j] = s


TILE = 4


@loom.kernel
def tiled_transpose(a: MemRef[(M, N), F32], b: MemRef[(N, M), F32]):
    for ii in range(0, a.shape[0], TILE):
        for jj in range(0, a.shape[1], TILE):
            for i in range(ii, min(ii + TILE, a.shape[0])):
                for j in range(jj, min(jj + TILE, a.shape[1])):
                    b[j, i] = a[i, j]


@loom.kernel
def min_max_argmax(x: MemRef[(N,), F64]) -> tuple[F64, F64, Index]:
    lo = x[0]
    hi = x[0]
    arg = 0
    for i in range(1, x.shape[0]):
        lo = min(lo, x[i])
        if x[i] > hi:
            hi = x[i]
            arg = i
    return lo, hi, arg


@loom.kernel
def popcount(x: MemRef[(N,), U32], y: MemRef[(N,), I32]):
    for i in range(x.shape[0]):
        v = x[i]
        c = 0
        while v != 0:
            v = v & (v - 1)
            c += 1
        y[i] = I32(c)


@loom.kernel
def xorshift32(state: U32, out: MemRef[(N,), U32]) -> U32:
    s = state
    for i in range(out.shape[0]):
        s ^= s << 13
        s ^= s >> 17
        s ^= s << 5
        out[i] = s
    return s


@loom.kernel
def q15_mul(a: MemRef[(N,), I16], b: MemRef[(N,), I16], y: MemRef[(N,), I16]):
    """Fixed-point Q15 product, rounded and saturated."""
    for i in range(a.shape[0]):
        p = (I32(a[i]) * I32(b[i]) + (1 << 14)) >> 15
        y[i] = I16(max(-32768, min(32767, p)))


@loom.kernel
def mixed_mean(x: MemRef[(N,), I32], s: F64) -> F64:
    acc = 0.0
    for i in range(x.shape[0]):
        acc += F64(x[i]) * s + math.sqrt(F64(abs(x[i])))
    return acc / F64(x.shape[0])


def clamp(v, lo, hi):
    return max(lo, min(v, hi))


@loom.kernel
def squash(x: MemRef[(N,), F32], y: MemRef[(N,), F32]):
    def sq(v):
        return v * v

    for i in range(x.shape[0]):
        y[i] = clamp(sq(x[i]), 0.0, 4.0)


def row_stats(a, i):
    s = 0.0
    q = 0.0
    for j in range(a.shape[1]):
        s += a[i, j]
        q += a[i, j] * a[i, j]
    m = s / F64(a.shape[1])
    return m, q / F64(a.shape[1]) - m * m


@loom.kernel
def standardize_rows(a: MemRef[(M, K), F64]):
    for i in range(a.shape[0]):
        m, v = row_stats(a, i)
        inv = 1.0 / math.sqrt(v + 1e-12)
        for j in range(a.shape[1]):
            a[i, j] = (a[i, j] - m) * inv


@loom.kernel
def sum_planes(a: MemRef[("A", "B", "C"), F64], out: MemRef[("A",), F64]):
    for i in range(a.shape[0]):
        plane = a[i]
        s = 0.0
        for j in range(plane.shape[0]):
            for k in range(plane.shape[1]):
                s += plane[j, k]
        out[i] = s


@loom.kernel
def maxpool2_nchw(x: MemRef[("B", "C", "H", "W"), F32], y: MemRef[("B", "C", "H2", "W2"), F32]):
    for n in range(y.shape[0]):
        for c in range(y.shape[1]):
            for h in range(y.shape[2]):
                for w in range(y.shape[3]):
                    m = x[n, c, 2 * h, 2 * w]
                    for dh in range(2):
                        for dw in range(2):
                            m = max(m, x[n, c, 2 * h + dh, 2 * w + dw])
                    y[n, c, h, w] = m


@loom.kernel
def collatz_steps(n0: I64) -> I64:
    n = n0
    steps = I64(0)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@loom.kernel
def gcd(a: I64, b: I64) -> I64:
    while b != 0:
        a, b = b, a % b
    return a


@loom.kernel
def divmod_scalars(a: I32, b: I32) -> tuple[I32, I32]:
    return a // b, a % b


@loom.kernel
def count_primes(n: I32) -> I32:
    cnt = I32(0)
    for k in range(2, Index(n)):
        p = True
        d = 2
        while d * d <= k:
            if k % d == 0:
                p = False
                break
            d += 1
        if p:
            cnt += 1
    return cnt


@loom.kernel
def sieve(n: Index, primes: MemRef[(N,), I32]) -> Index:
    """Writes the primes below n into primes[], returns how many (stops when primes[] is full)."""
    composite = alloc((n,), U8)
    for i in range(n):
        composite[i] = 0
    found = 0
    for p in range(2, n):
        if composite[p] == 0:
            if found == primes.shape[0]:
                break
            primes[found] = I32(p)
            found += 1
            for q in range(p * p, n, p):
                composite[q] = 1
    return found


@loom.kernel
def merge_sorted(a: MemRef[("A",), I32], b: MemRef[("B",), I32], out: MemRef[("C",), I32]):
    i = 0
    j = 0
    k = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] <= b[j]:
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    while i < a.shape[0]:
        out[k] = a[i]
        i += 1
        k += 1
    while j < b.shape[0]:
        out[k] = b[j]
        j += 1
        k += 1


@loom.kernel
def run_lengths(x: MemRef[(N,), I8], vals: MemRef[(N,), I8], lens: MemRef[(N,), I32]) -> Index:
    n = 0
    i = 0
    while i < x.shape[0]:
        j = i + 1
        while j < x.shape[0] and x[j] == x[i]:
            j += 1
        vals[n] = x[i]
        lens[n] = I32(Index(j - i))
        n += 1
        i = j
    return n


@loom.kernel
def cholesky(a: MemRef[(N, N), F64], l: MemRef[(N, N), F64]) -> I32:
    """Lower factor of an SPD matrix; returns the column it failed at (not positive definite), or -1."""
    n = a.shape[0]
    for j in range(n):
        s = a[j, j]
        for k in range(j):
            s -= l[j, k] * l[j, k]
        if s <= 0.0:
            return I32(Index(j))
        d = math.sqrt(s)
        l[j, j] = d
        for i in range(j + 1, n):
            t = a[i, j]
            for k in range(j):
                t -= l[i, k] * l[j, k]
            l[i, j] = t / d
    return -1


@loom.kernel
def floyd_warshall(d: MemRef[(N, N), F64]):
    n = d.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                via = d[i, k] + d[k, j]
                if via < d[i, j]:
                    d[i, j] = via


@loom.kernel
def mandelbrot(cr: MemRef[(N,), F64], ci: MemRef[(N,), F64], iters: MemRef[(N,), I32], limit: I32):
    for p in parallel(cr.shape[0]):
        zr = 0.0
        zi = 0.0
        it = I32(0)
        while it < limit:
            if zr * zr + zi * zi > 4.0:
                break
            zr, zi = zr * zr - zi * zi + cr[p], 2.0 * zr * zi + ci[p]
            it += 1
        iters[p] = it


@loom.kernel
def argmin_first(x: MemRef[(N,), F32]) -> Index:
    best = 0
    for i in range(1, x.shape[0]):
        if x[i] < x[best]:
            best = i
    return best


@loom.kernel
def pair_stats(a: F32, b: F32) -> tuple[F32, F32]:
    return a + b, a * b


@loom.kernel
def dot_of_pairs(x: MemRef[(N,), F32]) -> F32:
    s = F32(0.0)
    for i in range(x.shape[0] - 1):
        p, q = pair_stats(x[i], x[i + 1])
        s += p - q
    return s
