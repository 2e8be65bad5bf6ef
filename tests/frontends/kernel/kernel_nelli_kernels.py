"""A compiler researcher's kernels, round two (for ``test_kernel_nelli.py``): bitonic sort, an FFT on split
re/im arrays, LU with partial pivoting, hashes with uint32 wraparound, scans, a tridiagonal solve, edit distance,
a torus Game of Life, quantisation casts, 0-d/3-d/4-d arrays, strided and empty ranges, helpers calling helpers.
Each is checked against itself run as plain Python on numpy, against numpy, and against upstream mlir-runner."""

import math

import loom
from loom.frontends.kernel import F32, F64, I8, I32, I64, U8, U32, Dim, Index, MemRef

N = Dim("N")
M = Dim("M")


@loom.kernel
def bitonic_sort(a: MemRef[(N,), F32]):
    """In-place bitonic sorting network; N a power of two. Partner index by xor of the position."""
    n = a.shape[0]
    k = 2
    while k <= n:
        j = k // 2
        while j > 0:
            for i in range(n):
                p = i ^ j
                if p > i:
                    up = (i & k) == 0
                    if (a[i] > a[p]) == up:
                        t = a[i]
                        a[i] = a[p]
                        a[p] = t
            j = j // 2
        k = k * 2


def _bit_reverse(i, bits):
    r = i - i  # zero of i's type
    for _ in range(bits):
        r = (r << 1) | (i & 1)
        i = i >> 1
    return r


@loom.kernel
def fft_radix2(re: MemRef[(N,), F64], im: MemRef[(N,), F64], bits: Index):
    """Iterative decimation-in-time FFT in place on split real/imaginary arrays (N == 2**bits)."""
    n = re.shape[0]
    for i in range(n):
        r = _bit_reverse(i, bits)
        if r > i:
            tr = re[i]
            re[i] = re[r]
            re[r] = tr
            ti = im[i]
            im[i] = im[r]
            im[r] = ti
    half = 1
    while half < n:
        step = half * 2
        for start in range(0, n, step):
            for k in range(half):
                ang = -math.pi * F64(I64(k)) / F64(I64(half))
                wr = math.cos(ang)
                wi = math.sin(ang)
                a = start + k
                b = a + half
                xr = re[b] * wr - im[b] * wi
                xi = re[b] * wi + im[b] * wr
                re[b] = re[a] - xr
                im[b] = im[a] - xi
                re[a] = re[a] + xr
                im[a] = im[a] + xi
        half = step


@loom.kernel
def lu_pivot(a: MemRef[(N, N), F64], perm: MemRef[(N,), I64]) -> I32:
    """Doolittle LU with partial pivoting in place (L below the diagonal, unit diagonal implied).
    Returns the permutation's sign, or 0 for a singular matrix."""
    n = a.shape[0]
    sign = I32(1)
    for i in range(n):
        perm[i] = I64(i)
    for k in range(n):
        p = k
        best = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > best:
                best = abs(a[i, k])
                p = i
        if best == 0.0:
            return I32(0)
        if p != k:
            sign = -sign
            t = perm[k]
            perm[k] = perm[p]
            perm[p] = t
            for j in range(n):
                s = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = s
        for i in range(k + 1, n):
            f = a[i, k] / a[k, k]
            a[i, k] = f
            for j in range(k + 1, n):
                a[i, j] -= f * a[k, j]
    return sign


def _rotl32(x, r):
    return (x << r) | (x >> (32 - r))


def _fmix32(h):
    h ^= h >> 16
    h *= 0x85EBCA6B
    h ^= h >> 13
    h *= 0xC2B2AE35
    h ^= h >> 16
    return h


@loom.kernel
def murmur3_32(key: MemRef[(N,), U32], seed: U32) -> U32:
    """MurmurHash3 x86_32 of whole 32-bit words: multiplications wrap, helpers call helpers."""
    h = seed
    for i in range(key.shape[0]):
        k = key[i] * 0xCC9E2D51
        k = _rotl32(k, 15)
        k = k * 0x1B873593
        h ^= k
        h = _rotl32(h, 13)
        h = h * 5 + 0xE6546B64
    h ^= U32(I32(key.shape[0] * 4))
    return _fmix32(h)


@loom.kernel
def fnv1a_crc32(data: MemRef[(N,), U8]) -> tuple[U32, U32]:
    """FNV-1a and bitwise (table-free) CRC-32 of a byte string, in one pass."""
    fnv = U32(0x811C9DC5)
    crc = U32(0xFFFFFFFF)
    for i in range(data.shape[0]):
        b = U32(data[i])
        fnv = (fnv ^ b) * 0x01000193
        crc ^= b
        for _ in range(8):
            mask = U32(0) - (crc & 1)
            crc = (crc >> 1) ^ (0xEDB88320 & mask)
    return fnv, crc ^ 0xFFFFFFFF


@loom.kernel
def blelloch_scan(x: MemRef[(N,), I64]) -> I64:
    """Work-efficient exclusive scan in place (N a power of two): up-sweep then down-sweep with strided ranges.
    Returns the total."""
    n = x.shape[0]
    d = 1
    while d < n:
        for i in range(2 * d - 1, n, 2 * d):
            x[i] += x[i - d]
        d *= 2
    total = x[n - 1]
    x[n - 1] = I64(0)
    d = n // 2
    while d >= 1:
        for i in range(2 * d - 1, n, 2 * d):
            t = x[i - d]
            x[i - d] = x[i]
            x[i] += t
        d //= 2
    return total


@loom.kernel
def counting_sort_u8(keys: MemRef[(N,), U8], out: MemRef[(N,), U8], order: MemRef[(N,), I32],
                     counts: MemRef[(M,), I32]):
    """Stable counting sort of bytes (M == 256): a histogram, an exclusive scan, then a scatter of positions."""
    for b in range(counts.shape[0]):
        counts[b] = 0
    for i in range(keys.shape[0]):
        counts[Index(keys[i])] += 1
    run = I32(0)
    for b in range(counts.shape[0]):
        c = counts[b]
        counts[b] = run
        run += c
    for i in range(keys.shape[0]):
        k = Index(keys[i])
        pos = Index(counts[k])
        out[pos] = keys[i]
        order[pos] = I32(i)
        counts[k] += 1


@loom.kernel
def thomas(lower: MemRef[(N,), F64], diag: MemRef[(N,), F64], upper: MemRef[(N,), F64], rhs: MemRef[(N,), F64],
           x: MemRef[(N,), F64]):
    """Tridiagonal solve (Thomas algorithm): forward sweep, then back substitution on a negative-step range.
    ``diag`` and ``rhs`` are overwritten."""
    n = diag.shape[0]
    for i in range(1, n):
        w = lower[i] / diag[i - 1]
        diag[i] -= w * upper[i - 1]
        rhs[i] -= w * rhs[i - 1]
    if n > 0:
        x[n - 1] = rhs[n - 1] / diag[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = (rhs[i] - upper[i] * x[i + 1]) / diag[i]


@loom.kernel
def edit_distance(s: MemRef[(N,), I32], t: MemRef[(M,), I32], prev: MemRef[("M1",), I32],
                  cur: MemRef[("M1",), I32]) -> I32:
    """Levenshtein distance with two rows (M1 == M + 1), min() of three."""
    m = t.shape[0]
    for j in range(m + 1):
        prev[j] = I32(j)
    for i in range(s.shape[0]):
        cur[0] = I32(i + 1)
        for j in range(m):
            cost = 0 if s[i] == t[j] else 1
            cur[j + 1] = min(prev[j + 1] + 1, cur[j] + 1, prev[j] + cost)
        for j in range(m + 1):
            prev[j] = cur[j]
    return prev[m]


@loom.kernel
def life_torus(g: MemRef[(N, M), U8], out: MemRef[(N, M), U8]):
    """One Game of Life step on a torus: neighbours wrap with Python's % of negative indices."""
    h = g.shape[0]
    w = g.shape[1]
    for i in range(h):
        for j in range(w):
            c = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    if di != 0 or dj != 0:
                        c += Index(g[(i + di) % h, (j + dj) % w])
            alive = g[i, j] != 0
            out[i, j] = 1 if c == 3 or (alive and c == 2) else 0


@loom.kernel
def quantize_i8(x: MemRef[(N,), F32], q: MemRef[(N,), I8], back: MemRef[(N,), F32], scale: F32) -> I32:
    """Symmetric int8 quantisation: round half away from zero, saturate, count the clipped, dequantise."""
    clipped = I32(0)
    for i in range(x.shape[0]):
        v = x[i] / scale
        r = math.floor(abs(v) + 0.5)
        if v < 0.0:
            r = -r
        if r > 127.0:
            r = F32(127.0)
            clipped += 1
        elif r < -127.0:
            r = F32(-127.0)
            clipped += 1
        q[i] = I8(r)
        back[i] = F32(q[i]) * scale
    return clipped


@loom.kernel
def kahan_mean(x: MemRef[(N,), F32]) -> tuple[F32, F32, I64]:
    """Compensated sum of f32 values: (sum, compensation, count of non-finite values skipped)."""
    s = F32(0.0)
    c = F32(0.0)
    bad = I64(0)
    for v in x:
        if math.isfinite(v):
            y = v - c
            t = s + y
            c = (t - s) - y
            s = t
        else:
            bad += 1
    return s, c, bad


@loom.kernel
def box3d_clamped(v: MemRef[("D", "H", "W"), F32], out: MemRef[("D", "H", "W"), F32]):
    """3-D 7-point average with boundary ifs: a neighbour outside the volume is not counted."""
    d = v.shape[0]
    h = v.shape[1]
    w = v.shape[2]
    for z in range(d):
        for y in range(h):
            for x in range(w):
                s = v[z, y, x]
                n = F32(1.0)
                if z > 0:
                    s += v[z - 1, y, x]
                    n += 1.0
                if z + 1 < d:
                    s += v[z + 1, y, x]
                    n += 1.0
                if y > 0:
                    s += v[z, y - 1, x]
                    n += 1.0
                if y + 1 < h:
                    s += v[z, y + 1, x]
                    n += 1.0
                if x > 0:
                    s += v[z, y, x - 1]
                    n += 1.0
                if x + 1 < w:
                    s += v[z, y, x + 1]
                    n += 1.0
                out[z, y, x] = s / n


@loom.kernel
def nhwc_to_nchw_relu(x: MemRef[("B", "H", "W", "C"), F32], y: MemRef[("B", "C", "H", "W"), F32]):
    """4-D layout change with a fused relu (max with 0.0: -0.0 is below +0.0)."""
    for b in range(x.shape[0]):
        for h in range(x.shape[1]):
            for w in range(x.shape[2]):
                for c in range(x.shape[3]):
                    y[b, c, h, w] = max(x[b, h, w, c], 0.0)


@loom.kernel
def accumulate_0d(x: MemRef[(N,), F64], total: MemRef[(), F64], count: MemRef[(), I64]):
    """0-d arrays as in/out scalars: total[()] += sum, count[()] += n."""
    for i in range(x.shape[0]):
        total[()] += x[i]
    count[()] += I64(x.shape[0])


@loom.kernel
def strided_ranges(x: MemRef[(N,), I32], y: MemRef[(N,), I32]) -> I32:
    """Negative steps other than -1, empty ranges, a step of 3: every visit counted with its position."""
    n = x.shape[0]
    s = I32(0)
    for i in range(n - 1, -1, -3):
        y[i] += x[i]
        s += 1
    for i in range(n, 0):  # empty
        y[0] += 100
    for i in range(2, n, 3):
        y[i] -= 1
        s += 10
    for i in range(0, n, -2):  # empty: positive span, negative step
        y[0] += 1000
    return s


@loom.kernel
def int_edges(a: MemRef[(N,), I32], b: MemRef[(N,), I32], q: MemRef[(N,), I32], r: MemRef[(N,), I32],
              m: MemRef[(N,), I32]):
    """Floor division, Python remainder, abs, min/max on the edges of int32 (INT_MIN // -1 wraps, as numpy)."""
    for i in range(a.shape[0]):
        if b[i] != 0:
            q[i] = a[i] // b[i]
            r[i] = a[i] % b[i]
        m[i] = max(min(a[i], b[i]), -abs(b[i]))


@loom.kernel
def float_edges(x: MemRef[(N,), F64], y: MemRef[(N,), F64], out: MemRef[(N, 4), F64]):
    """min/max/abs/copysign on NaN and signed zeros (min/max: NaN-propagating, -0.0 < +0.0: IEEE 754-2019
    minimum/maximum, not Python's builtins, whose answer depends on the argument order)."""
    for i in range(x.shape[0]):
        out[i, 0] = min(x[i], y[i])
        out[i, 1] = max(x[i], y[i])
        out[i, 2] = abs(x[i])
        out[i, 3] = math.copysign(1.0, x[i])


@loom.kernel
def scale_rows_by_view(a: MemRef[(N, M), F64], w: MemRef[(N,), F64]):
    """Writes through a row view (``row = a[i]``) and a strided slice of it (every other column)."""
    for i in range(a.shape[0]):
        row = a[i]
        for j in range(row.shape[0]):
            row[j] = row[j] * w[i]
        odd = row[1::2]
        for j in range(odd.shape[0]):
            odd[j] = -odd[j]


@loom.kernel
def invert_u(x: MemRef[(N,), U32], y: MemRef[(M,), U8]):
    """Bitwise not of unsigned values (xor with all ones)."""
    for i in range(x.shape[0]):
        x[i] = ~x[i]
    for i in range(y.shape[0]):
        y[i] = ~y[i] & 0xF0


@loom.kernel
def bad_negative_power(x: MemRef[(N,), I32]):
    for i in range(x.shape[0]):
        x[i] = x[i] ** -1


def _classify(x, lo):
    """Guard clauses, as Python is written: each early return skips the rest."""
    if math.isnan(x):
        return I32(-9)
    if x < lo:
        return I32(-1)
    y = x * 2.0
    if y > 10.0:
        if y > 100.0:
            return I32(3)
        z = y - 10.0
        if z > 5.0:
            return I32(2)
    elif y < 1.0:
        return I32(0)
    return I32(1)


def _clamp_step(v, hi):
    if v <= hi:
        return v
    return hi
    v = v // 0  # never runs, as in Python


@loom.kernel
def classify_all(x: MemRef[(N,), F64], out: MemRef[(N,), I32], lo: F64):
    """Helpers with guard-clause returns (refused before: 'return must be the last statement')."""
    for i in range(x.shape[0]):
        out[i] = _classify(x[i], lo) * 10 + _clamp_step(I32(i), 3)


@loom.kernel
def gather_rows(idx: MemRef[(N,), I32], a: MemRef[(M, "C"), F64], out: MemRef[(N, "C"), F64]):
    """Rows picked by an index array, through a row view placed by data."""
    for i in range(idx.shape[0]):
        row = a[Index(idx[i])]
        for j in range(row.shape[0]):
            out[i, j] = row[j]


@loom.kernel
def window_sums(x: MemRef[(N,), F64], starts: MemRef[(M,), I32], out: MemRef[(M,), F64]):
    """Sums of 4-wide windows starting at positions read from an array (slices placed by data)."""
    for i in range(starts.shape[0]):
        s = Index(starts[i])
        w = x[s:s + 4]
        acc = 0.0
        for j in range(4):
            acc += w[j]
        out[i] = acc


@loom.kernel
def put_at(a: MemRef[(N,), F64], k: Index, v: F64):
    """One element written at a position the caller passes."""
    a[k] = v


@loom.kernel
def scatter_ones(idx: MemRef[(M,), I32], a: MemRef[(N,), F64]):
    """Positions from an array, written by a callee kernel (its parameter is the caller's data)."""
    for i in range(idx.shape[0]):
        put_at(a, Index(idx[i]), 1.0)


@loom.kernel
def shifted_add(x: MemRef[(N,), F32], y: MemRef[(N,), F32], off: Index):
    """x[i + off] moves with the loop: checked once at the loop's entry (first and last i), not per element."""
    for i in range(y.shape[0] - off):
        y[i] = y[i] + x[i + off]


@loom.kernel
def axpy_n(x: MemRef[(N,), F32], y: MemRef[(N,), F32], a: F32, n: Index):
    """A loop bound passed by the caller (n may exceed the arrays)."""
    for i in range(n):
        y[i] = y[i] + a * x[i]


@loom.kernel
def diff_from(x: MemRef[(N,), F32], y: MemRef[(N,), F32], lo: Index):
    """Backward differences from a caller's start (lo = 0 reads x[-1])."""
    for i in range(lo, x.shape[0]):
        y[i] = x[i] - x[i - 1]


@loom.kernel
def parallel_gather(idx: MemRef[(N,), I32], x: MemRef[(M,), F64], y: MemRef[(N,), F64]):
    """y[i] = x[idx[i]] over a parallel loop: the data-placed index is checked inside the OpenMP region."""
    for i in loom.parallel(y.shape[0]):
        y[i] = x[Index(idx[i])]


@loom.kernel
def parallel_scale_then_divide(x: MemRef[(N,), F64], y: MemRef[(N,), F64], n: I32, d: I32) -> I32:
    """A parallel loop with no check inside, in a function whose division may fail (a guarded function)."""
    for i in loom.parallel(y.shape[0]):
        y[i] = 2.0 * x[i]
    return n // d


@loom.kernel
def parallel_axpy(x: MemRef[(N,), F32], y: MemRef[(N,), F32], n: Index, a: F32):
    """y[i] += a * x[i] for i < n over a parallel loop: n past the arrays is checked before the loop's region."""
    for i in loom.parallel(n):
        y[i] = a * x[i] + y[i]
