"""A compiler researcher's kernels, round two (``kernel_nelli_kernels.py``): each against itself run as plain
Python on numpy (``__wrapped__``), against numpy closed forms on seeded random data with edge sizes, values and
layouts, and (``mlir`` marker) against upstream mlir-opt and mlir-runner. Then hostile calls: data-dependent
indices out of range, read-only, strided, Fortran-order and aliasing arrays."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_nelli_kernels as K
from loom.backends.c.compiler import native_requested
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify

RNG = np.random.default_rng(7)
SRC = K.__file__


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _same(kernel, *args):
    """Run the kernel and its own Python on copies of ``args``: arrays and results must be equal bit for bit."""
    got_args, want_args = _copies(args), _copies(args)
    got = kernel(*got_args)
    with np.errstate(over="ignore"):  # numpy warns where it wraps (hashes); the kernel wraps the same
        want = kernel.__wrapped__(*want_args)
    for g, w in zip(got_args, want_args):
        if isinstance(g, np.ndarray):
            assert g.tobytes() == w.tobytes(), (kernel.name, g, w)
    got_t, want_t = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    assert len(got_t) == len(want_t) and all(np.asarray(g).tobytes() == np.asarray(w).tobytes() or g == w
                                             for g, w in zip(got_t, want_t)), (kernel.name, got, want)
    return got_args, got


def _murmur3_words(words: np.ndarray, seed: int) -> int:
    """MurmurHash3 x86_32 on Python ints (the reference the kernel must equal)."""
    m = 0xFFFFFFFF
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & m  # noqa: E731
    h = seed
    for k in words.tolist():
        k = rotl((k * 0xCC9E2D51) & m, 15) * 0x1B873593 & m
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & m
    h ^= 4 * len(words)
    for shift, mul in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h = ((h ^ (h >> shift)) * mul) & m
    return h ^ (h >> 16)


def _levenshtein(s, t) -> int:
    d = list(range(len(t) + 1))
    for i, a in enumerate(s):
        prev, d[0] = d[0], i + 1
        for j, b in enumerate(t):
            prev, d[j + 1] = d[j + 1], min(d[j + 1] + 1, d[j] + 1, prev + (a != b))
    return d[-1]


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [1, 2, 16, 64])
def test_sorts_and_scans_against_numpy(n):
    a = RNG.standard_normal(n).astype(np.float32)
    a[0] = -0.0
    out, _ = _same(K.bitonic_sort, a)
    np.testing.assert_array_equal(out[0], np.sort(a))
    x = RNG.integers(-2**40, 2**40, n)
    out, total = _same(K.blelloch_scan, x)
    np.testing.assert_array_equal(out[0], np.concatenate([[0], np.cumsum(x)[:-1]]))
    assert total == x.sum()
    keys = RNG.integers(0, 256, 3 * n, dtype=np.uint8)
    out, _ = _same(K.counting_sort_u8, keys, np.zeros_like(keys), np.zeros(3 * n, np.int32), np.zeros(256, np.int32))
    stable = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(out[1], keys[stable])
    np.testing.assert_array_equal(out[2], stable)


@pytest.mark.parametrize("bits", [0, 1, 3, 6])
def test_fft_against_numpy(bits):
    n = 1 << bits
    z = RNG.standard_normal(n) + 1j * RNG.standard_normal(n)
    out, _ = _same(K.fft_radix2, z.real.copy(), z.imag.copy(), bits)
    np.testing.assert_allclose(out[0] + 1j * out[1], np.fft.fft(z), rtol=1e-12, atol=1e-12 * n)


def test_lu_with_pivoting_against_numpy():
    for n in (1, 2, 5, 9):
        a = RNG.standard_normal((n, n))
        out, sign = _same(K.lu_pivot, a, np.zeros(n, np.int64))
        lower, upper = np.tril(out[0], -1) + np.eye(n), np.triu(out[0])
        np.testing.assert_allclose(lower @ upper, a[out[1]], rtol=1e-12, atol=1e-12)
        assert sign * np.linalg.det(upper) == pytest.approx(np.linalg.det(a), rel=1e-9)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert _same(K.lu_pivot, singular, np.zeros(2, np.int64))[1] == 0
    assert _same(K.lu_pivot, np.zeros((0, 0)), np.zeros(0, np.int64))[1] == 1


@pytest.mark.sanitize
def test_hashes_wrap_like_uint32():
    for n in (0, 1, 7):
        words = RNG.integers(0, 2**32, n, dtype=np.uint32)
        words[:1] = 0xFFFFFFFF
        _, h = _same(K.murmur3_32, words, np.uint32(0x9747B28C))
        assert int(h) == _murmur3_words(words, 0x9747B28C)
    import zlib
    for text in (b"", b"a", b"The quick brown fox jumps over the lazy dog", bytes(range(256))):
        _, (fnv, crc) = _same(K.fnv1a_crc32, np.frombuffer(text, np.uint8).copy())
        want_fnv = 0x811C9DC5
        for b in text:
            want_fnv = ((want_fnv ^ b) * 0x01000193) & 0xFFFFFFFF
        assert (int(fnv), int(crc)) == (want_fnv, zlib.crc32(text))


def test_tridiagonal_edit_distance_life():
    for n in (0, 1, 2, 9):
        lo, up, rhs = RNG.standard_normal(n), RNG.standard_normal(n), RNG.standard_normal(n)
        diag = 4.0 + RNG.random(n)
        out, _ = _same(K.thomas, lo, diag, up, rhs, np.zeros(n))
        dense = np.diag(diag) + np.diag(lo[1:], -1) + np.diag(up[:-1], 1)
        np.testing.assert_allclose(dense @ out[4], rhs, atol=1e-12)
    for ls, lt in ((0, 0), (0, 3), (5, 0), (8, 6)):
        s, t = RNG.integers(0, 3, ls).astype(np.int32), RNG.integers(0, 3, lt).astype(np.int32)
        _, d = _same(K.edit_distance, s, t, np.zeros(lt + 1, np.int32), np.zeros(lt + 1, np.int32))
        assert d == _levenshtein(s.tolist(), t.tolist())
    for h, w in ((1, 1), (3, 4), (8, 8)):
        g = (RNG.random((h, w)) < 0.4).astype(np.uint8)
        out, _ = _same(K.life_torus, g, np.zeros_like(g))
        nb = sum(np.roll(np.roll(g, di, 0), dj, 1).astype(int) for di in (-1, 0, 1) for dj in (-1, 0, 1)) - g
        np.testing.assert_array_equal(out[1], ((nb == 3) | ((g == 1) & (nb == 2))).astype(np.uint8))


def test_casts_quantisation_and_compensated_sums():
    x = (RNG.standard_normal(40) * 2).astype(np.float32)
    x[:4] = [-0.0, 0.01, -0.01, 1e30]
    out, clipped = _same(K.quantize_i8, x, np.zeros(40, np.int8), np.zeros(40, np.float32), np.float32(0.02))
    v = x / np.float32(0.02)
    want = np.clip(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)), -127, 127).astype(np.int8)
    np.testing.assert_array_equal(out[1], want)
    assert clipped == np.count_nonzero(np.abs(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))) > 127)
    y = np.array([1.0, 1e-8, np.nan, -np.inf, 3.0, 1e-8, -0.0], np.float32)
    _, (s, c, bad) = _same(K.kahan_mean, y)
    assert bad == 2 and s == np.float32(4.0)
    _, empty = _same(K.kahan_mean, np.zeros(0, np.float32))
    assert empty == (0.0, 0.0, 0)


def test_3d_4d_and_0d_arrays():
    v = RNG.random((3, 4, 5)).astype(np.float32)
    out, _ = _same(K.box3d_clamped, v, np.zeros_like(v))
    p = np.pad(v, 1)
    ones = np.pad(np.ones_like(v), 1)
    sl = lambda a, dz, dy, dx: a[1 + dz:4 + dz, 1 + dy:5 + dy, 1 + dx:6 + dx]  # noqa: E731
    moves = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    want = sum(sl(p, *m) for m in moves) / sum(sl(ones, *m) for m in moves)
    np.testing.assert_allclose(out[1], want, rtol=1e-6)
    _same(K.box3d_clamped, np.zeros((0, 2, 2), np.float32), np.zeros((0, 2, 2), np.float32))
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out, _ = _same(K.nhwc_to_nchw_relu, x, np.zeros((2, 5, 3, 4), np.float32))
    x[0, 0, 0, :2] = [-0.0, np.nan]  # max is IEEE maximum: NaN propagates, max(-0.0, 0.0) is +0.0
    y = np.zeros((2, 5, 3, 4), np.float32)
    K.nhwc_to_nchw_relu(x, y)
    assert y.tobytes() == (np.maximum(x.transpose(0, 3, 1, 2), np.float32(0.0)) + np.float32(0.0)).tobytes()
    total, count = np.array(1.5), np.array(3, np.int64)
    K.accumulate_0d(np.arange(4.0), total, count)
    assert (total[()], count[()]) == (7.5, 7)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 10])
def test_strided_negative_and_empty_ranges(n):
    x = np.arange(1, n + 1, dtype=np.int32)
    out, s = _same(K.strided_ranges, x, np.zeros(n, np.int32))
    want = np.zeros(n, np.int32)
    want[n - 1::-3] += x[n - 1::-3] if n else 0
    want[2::3] -= 1
    np.testing.assert_array_equal(out[1], want)
    assert s == len(range(n - 1, -1, -3)) + 10 * len(range(2, n, 3))


def _float_edges_reference(x, y):
    """IEEE 754-2019 minimum/maximum: NaN propagates, -0.0 < +0.0 (np.minimum returns either zero)."""
    zeros = (x == 0) & (y == 0)
    lo = np.where(zeros, np.where(np.signbit(x), x, y), np.minimum(x, y))
    hi = np.where(zeros, np.where(np.signbit(x), y, x), np.maximum(x, y))
    return np.stack([lo, hi, np.abs(x), np.copysign(1.0, x)], 1)


@pytest.mark.sanitize
def test_int_and_float_edges():
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    a = np.array([lo, hi, -7, 7, -7, 0, lo, 5], np.int32)
    b = np.array([1, -1, 2, -2, -2, lo, lo, 0], np.int32)
    out, _ = _same(K.int_edges, a, b, *[np.zeros(8, np.int32) for _ in range(3)])
    nz = b != 0
    np.testing.assert_array_equal(out[2][nz], a[nz] // b[nz])
    np.testing.assert_array_equal(out[3][nz], a[nz] % b[nz])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out[4], np.maximum(np.minimum(a, b), -np.abs(b)))  # -abs(MIN) wraps to MIN
    # MIN // -1 and MIN % -1 give numpy's answers (MIN, wrapped, and 0), with no C UB (this runs under UBSan)
    a1, b1 = np.array([lo, lo + 1, hi], np.int32), np.full(3, -1, np.int32)
    out, _ = _same(K.int_edges, a1, b1, *[np.zeros(3, np.int32) for _ in range(3)])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out[2], a1 // b1)
    np.testing.assert_array_equal(out[3], a1 % b1)
    x = np.array([np.nan, -0.0, 0.0, 1.0, -2.0, np.inf, -np.inf])
    y = np.array([1.0, 0.0, -0.0, np.nan, -0.0, np.nan, 5.0])
    out = np.zeros((7, 4))
    K.float_edges(x, y, out)
    assert out.tobytes() == _float_edges_reference(x, y).tobytes()


def test_writes_through_views_and_strided_slices():
    a, w = RNG.random((4, 5)), RNG.random(4)
    out, _ = _same(K.scale_rows_by_view, a, w)
    want = a * w[:, None]
    want[:, 1::2] *= -1
    np.testing.assert_array_equal(out[0], want)


def test_unsigned_invert_is_all_ones_xor():
    """``~x`` of a U32/U8 was refused ('constant -1 does not fit in U32'): the all-ones mask was written -1."""
    x = np.array([0, 1, 0xFFFFFFFF, 0x80000000], np.uint32)
    b = np.array([0, 7, 255], np.uint8)
    out, _ = _same(K.invert_u, x, b)
    np.testing.assert_array_equal(out[0], ~x)
    np.testing.assert_array_equal(out[1], ~b & 0xF0)


def test_helpers_with_guard_clause_returns():
    x = np.array([np.nan, -3.0, 0.1, 0.75, 2.0, 5.5, 7.0, 9.0, 60.0, -0.0])
    out, _ = _same(K.classify_all, x, np.zeros(10, np.int32), -1.0)
    classes = [-9, -1, 0, 1, 1, 1, 1, 2, 3, 0]
    np.testing.assert_array_equal(out[1], [c * 10 + min(i, 3) for i, c in enumerate(classes)])


def test_integer_to_a_negative_literal_power_is_refused_at_its_line():
    """``x ** -1`` on an I32 compiled to math.ipowi, 0 for every |x| > 1, where Python gives 0.2 and numpy
    refuses; now refused at trace time naming the line."""
    with pytest.raises(LoomError, match=r"I32 \*\* -1: a negative literal exponent has no integer result") as e:
        K.bad_negative_power.module
    assert f"{SRC}:{line_of(SRC, 'x[i] = x[i] ** -1')}:" in str(e.value)


# -- hostile calls ---------------------------------------------------------------------------------------------


@pytest.mark.sanitize
def test_data_dependent_indices_out_of_range_are_refused_at_the_access():
    """A key past the histogram (counts has 10 entries, keys go to 255) or an FFT size that is not 2**bits wrote
    outside the arrays: heap corruption ('double free or corruption' later). Now a LoomError at the access."""
    keys = np.array([3, 255], np.uint8)
    counts = np.zeros(10, np.int32)
    with pytest.raises(LoomError, match="index 255 out of range for dimension 0 of size 10") as e:
        K.counting_sort_u8(keys, np.zeros(2, np.uint8), np.zeros(2, np.int32), counts)
    assert f"{SRC}:{line_of(SRC, 'counts[Index(keys[i])] += 1')}:" in str(e.value)
    with pytest.raises(LoomError, match="index 8 out of range for dimension 0 of size 8"):
        K.fft_radix2(np.zeros(8), np.zeros(8), 4)
    re = RNG.random(8)
    K.fft_radix2(re.copy(), np.zeros(8), 3)  # in range: runs as before


@pytest.mark.sanitize
def test_views_placed_by_data_are_checked():
    """``row = a[idx[i]]`` and ``x[s:s + 4]`` with positions from an array read (and would write) outside the
    arrays: a subview's slice placed by data is now checked like an index."""
    a = RNG.random((4, 3))
    out, _ = _same(K.gather_rows, np.array([3, 0, 3], np.int32), a, np.zeros((3, 3)))
    np.testing.assert_array_equal(out[2], a[[3, 0, 3]])
    x = RNG.random(10)
    out, _ = _same(K.window_sums, x, np.array([0, 6, 3], np.int32), np.zeros(3))
    np.testing.assert_allclose(out[2], [x[0:4].sum(), x[6:10].sum(), x[3:7].sum()], rtol=1e-15)
    for bad in (4, -1):
        with pytest.raises(LoomError, match=f"slice offset {bad}, size 1, stride 1 out of range for dimension 0 "
                                            "of size 4 in memref.subview") as e:
            K.gather_rows(np.array([0, bad], np.int32), a, np.zeros((2, 3)))
        assert f"{SRC}:{line_of(SRC, 'row = a[Index(idx[i])]')}:" in str(e.value)
    with pytest.raises(LoomError, match="slice offset 7, size 4, stride 1 out of range for dimension 0 of size 10"):
        K.window_sums(x, np.array([7], np.int32), np.zeros(1))


@pytest.mark.sanitize
def test_positions_passed_as_parameters_are_checked():
    """put_at(a, 9, 1.0) on 4 elements wrote a[9], directly or as a callee of a kernel passing its data."""
    a = np.zeros(4)
    K.put_at(a, 3, 2.5)
    K.scatter_ones(np.array([0, 2], np.int32), a)
    np.testing.assert_array_equal(a, [1.0, 0.0, 1.0, 2.5])
    where = f"{SRC}:{line_of(SRC, 'a[k] = v')}:"
    for call in (lambda: K.put_at(np.zeros(4), 9, 1.0), lambda: K.scatter_ones(np.array([0, 7], np.int32), a)):
        with pytest.raises(LoomError, match="out of range for dimension 0 of size 4 in memref.store") as e:
            call()
        assert where in str(e.value)
    x, y = RNG.random(9).astype(np.float32), RNG.random(9).astype(np.float32)
    out, _ = _same(K.shifted_add, x, y, 2)
    np.testing.assert_array_equal(out[1][:7], y[:7] + x[2:])


@pytest.mark.sanitize
def test_loops_bounded_by_parameters_are_checked_at_their_entry():
    """for i in range(n): y[i] += a * x[i] with n past the arrays wrote outside them; x[i + off] with off a
    parameter too. Checked once before the loop (first and last iteration), so it still vectorizes."""
    x, y = RNG.random(8).astype(np.float32), RNG.random(8).astype(np.float32)
    for n in (0, 1, 8):
        out, _ = _same(K.axpy_n, x, y, np.float32(2.0), n)
        np.testing.assert_array_equal(out[1][:n], y[:n] + np.float32(2.0) * x[:n])
    with pytest.raises(LoomError, match="index 8 out of range for dimension 0 of size 8") as e:
        K.axpy_n(x, y.copy(), np.float32(2.0), 9)
    assert f"{SRC}:{line_of(SRC, 'y[i] = y[i] + a * x[i]')}:" in str(e.value)
    with pytest.raises(LoomError, match="index 9 out of range for dimension 0 of size 9") as e:  # range(9 + 1)
        K.shifted_add(RNG.random(9).astype(np.float32), np.zeros(9, np.float32), -1)
    assert f"{SRC}:{line_of(SRC, 'y[i] = y[i] + x[i + off]')}:" in str(e.value)
    out, _ = _same(K.diff_from, x, np.zeros(8, np.float32), 1)
    np.testing.assert_array_equal(out[1][1:], np.diff(x))
    with pytest.raises(LoomError, match="index -1 out of range for dimension 0 of size 8") as e:
        K.diff_from(x, np.zeros(8, np.float32), 0)
    assert f"{SRC}:{line_of(SRC, 'y[i] = x[i] - x[i - 1]')}:" in str(e.value)
    from loom.backends.c import emit_c
    from loom.passes.recipes import lower_to_c
    text = emit_c(lower_to_c(K.axpy_n.module), check_gathers=True)
    loop = text.index("for (intptr_t")
    # x and y, first and last i: four checks, all before the loop
    assert text.count("loomh_check_index(loomh_ck,") == 4 and text.rindex("loomh_check_index(loomh_ck,") < loop


def test_gather_checks_cover_loaded_bounds_and_carried_positions():
    from loom.backends.c import emit_c
    from loom.passes.recipes import lower_to_c
    from tests.frontends.kernel import kernel_research_kernels as R
    # a loaded key, a while loop's carried position, a CSR row's loaded bounds: checked; so are edit distance's
    # rows (prev has its own dim M1, indexed over t's M + 1) and the torus' (i + di) % h
    for kernel, checked in ((K.counting_sort_u8, True), (R.insertion_sort, True), (R.csr_matvec, True),
                            (K.edit_distance, True), (K.life_torus, True), (K.put_at, True),
                            (K.shifted_add, True)):
        text = emit_c(lower_to_c(kernel.module), check_gathers=True)
        assert ("loomh_check_index(loomh_ck," in text) == checked, kernel.name
    # counts[k] += 1 reads and writes one element: one check per (index, size) and block, not one per access
    text = emit_c(lower_to_c(K.counting_sort_u8.module), check_gathers=True)
    assert text.count("loomh_check_index(loomh_ck,") == 4  # key -> counts; pos -> out, pos -> order; key -> counts
    # loops over dims with boundary ifs (box filter; out's dims are v's only by name): checked at the loops'
    # entries, the inner loop in two copies, the one with no check taken when the guarded neighbours are in range
    text = emit_c(lower_to_c(K.box3d_clamped.module), check_gathers=True)
    fast = text[text.index("if (fast"):text.index("} else {", text.index("if (fast"))]
    assert "loomh_check_index" not in fast and "loomh_check_index(loomh_ck," in text
    assert "loomh_check_index(loomh_ck," not in emit_c(lower_to_c(K.counting_sort_u8.module))  # asked for only


def test_read_only_strided_fortran_and_aliasing_arrays():
    ro = np.zeros(3)
    ro.setflags(write=False)
    with pytest.raises(LoomError, match="'x' is written by the kernel but the array is read-only") as e:
        K.thomas(np.zeros(3), np.ones(3), np.zeros(3), np.zeros(3), ro)
    assert f"{SRC}:{line_of(SRC, 'x: MemRef[(N,), F64]):')}" in str(e.value)
    K.thomas(ro, np.ones(3), ro, np.zeros(3), np.zeros(3))  # read-only inputs are fine
    a = np.asfortranarray(RNG.standard_normal((4, 4)))
    fa, ca = a.copy(order="F"), np.ascontiguousarray(a)
    K.lu_pivot(fa, np.zeros(4, np.int64))
    K.lu_pivot(ca, np.zeros(4, np.int64))
    np.testing.assert_array_equal(fa, ca)
    big = np.zeros(12)
    K.thomas(np.zeros(6), np.full(6, 2.0), np.zeros(6), np.arange(6.0), big[::2])  # written strided view
    np.testing.assert_array_equal(big[::2], np.arange(6.0) / 2)
    np.testing.assert_array_equal(big[1::2], 0)
    x = np.arange(8.0)
    got = x.copy()
    if native_requested(None):  # restrict pointers: aliasing arguments are refused (loom.backends.c.restrict)
        with pytest.raises(LoomError, match="share memory"):
            K.scale_rows_by_view(got.reshape(2, 4), got[:2])
    else:
        K.scale_rows_by_view(got.reshape(2, 4), got[:2])  # w aliases the matrix it scales, as in numpy
        want = x.copy()
        K.scale_rows_by_view.__wrapped__(want.reshape(2, 4), want[:2])
        np.testing.assert_array_equal(got, want)
    for bad, msg in ((np.zeros(3, np.float32), "expects dtype float64, got float32"),
                     (np.zeros((3, 1)), "expects rank 1, got an array of rank 2"),
                     (np.zeros(4), r"'diag' dim 0 \(N\) is 3 but 'lower' dim 0 \(N\) is 4"),
                     (np.zeros(3, ">f8"), "expects dtype float64, got >f8")):
        with pytest.raises(LoomError, match=msg):
            K.thomas(bad, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))


# -- upstream MLIR as the oracle ---------------------------------------------------------------------------------

def _runner_cases():
    return [
        (K.bitonic_sort, [RNG.standard_normal(8).astype(np.float32)]),
        (K.lu_pivot, [RNG.standard_normal((4, 4)), np.zeros(4, np.int64)]),
        (K.blelloch_scan, [RNG.integers(-99, 99, 8)]),
        (K.edit_distance, [np.array([1, 2, 3, 1], np.int32), np.array([2, 3, 1], np.int32),
                           np.zeros(4, np.int32), np.zeros(4, np.int32)]),
        (K.strided_ranges, [np.arange(7, dtype=np.int32), np.zeros(7, np.int32)]),
        (K.int_edges, [np.array([-2**31, 7, -7, 0], np.int32), np.array([2**31 - 1, -2, 3, -2**31], np.int32),
                       np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.int32)]),
        (K.float_edges, [np.array([np.nan, -0.0, 0.0, -2.0]), np.array([1.0, 0.0, -0.0, np.nan]), np.zeros((4, 4))]),
        (K.thomas, [RNG.random(5), RNG.random(5) + 4, RNG.random(5), RNG.random(5), np.zeros(5)]),
        (K.murmur3_32, [RNG.integers(0, 2**32, 5, dtype=np.uint32), np.uint32(0xFFFFFFFF)]),
        (K.classify_all, [np.array([np.nan, -3.0, 0.1, 7.0, 60.0]), np.zeros(5, np.int32), -1.0]),
    ]


@pytest.mark.mlir
def test_upstream_mlir_verifies_every_kernel_and_runs_ten():
    for kernel in (K.bitonic_sort, K.fft_radix2, K.lu_pivot, K.murmur3_32, K.fnv1a_crc32, K.blelloch_scan,
                   K.counting_sort_u8, K.thomas, K.edit_distance, K.life_torus, K.quantize_i8, K.kahan_mean,
                   K.box3d_clamped, K.nhwc_to_nchw_relu, K.accumulate_0d, K.strided_ranges, K.int_edges,
                   K.float_edges, K.scale_rows_by_view, K.classify_all, K.invert_u):
        upstream_verify(kernel.module)
    for kernel, args in _runner_cases():
        want_args = _copies(args)
        with np.errstate(over="ignore"):  # abs(MIN) wraps
            want = kernel.__wrapped__(*want_args) if kernel is not K.float_edges else None
        if kernel is K.float_edges:  # min/max are IEEE minimum/maximum, not Python's builtins
            want_args[2][:] = _float_edges_reference(*want_args[:2])
        ran = mlir.run(kernel.module, kernel.name, _copies(args))
        for got, w in zip(ran.memrefs, want_args):
            if got is not None:
                assert got.tobytes() == w.tobytes() or np.allclose(got, w, rtol=1e-12, atol=0), kernel.name
        want_t = [] if want is None else list(want) if isinstance(want, tuple) else [want]
        # unsigned results come back as their signed bits
        assert [int(g) % 2**32 if isinstance(w, np.unsignedinteger) else g for g, w in zip(ran.results, want_t)] \
            == [int(w) if isinstance(w, np.unsignedinteger) else w for w in want_t], kernel.name


def test_an_mlir_file_function_checks_data_placed_indices(tmp_path):
    """A .mlir function run as a kernel (``loom run FILE.mlir``) is compiled as a Python kernel is: a scatter
    position read from an array is checked (static shapes: no checked mode); it wrote outside the array."""
    from loom.jit.mlir_function import MlirFunction, parse_mlir_file
    path = tmp_path / "scatter.mlir"
    path.write_text("""func.func @scatter(%idx: memref<2xi32>, %x: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  scf.for %i = %c0 to %c1 step %c1 {
    %k = memref.load %idx[%i] : memref<2xi32>
    %kk = arith.index_cast %k : i32 to index
    memref.store %one, %x[%kk] : memref<4xf64>
  }
  func.return
}
""")
    fn = MlirFunction(path, parse_mlir_file(path), "scatter")
    x = np.zeros(4)
    fn(np.array([2, 0], np.int32), x)
    np.testing.assert_array_equal(x, [0, 0, 1, 0])
    with pytest.raises(LoomError, match="index 9 out of range for dimension 0 of size 4 in memref.store") as e:
        fn(np.array([9, 0], np.int32), np.zeros(4))
    assert "'memref.store' in @scatter" in str(e.value)  # the op and its function (no file locations kept)


@pytest.mark.sanitize
def test_a_data_placed_index_in_a_parallel_loop_is_checked_and_the_loop_keeps_its_threads():
    """A gather in a parallel loop was not checked (the whole module was left unchecked, so a bad index wrote or read
    outside the arrays); then it was checked with the loop running serially (a failed check's longjmp cannot leave
    an OpenMP region). Now the check records its failure in the region and the function reports it after the
    region: the loop stays an OpenMP loop, and the error is the earliest iteration's, as a serial run reports."""
    from loom.backends.c.emitter import lower_module
    from loom.passes.recipes import lower_to_c
    x = RNG.random(5)
    y = np.zeros(3)
    K.parallel_gather(np.array([4, 0, 2], np.int32), x, y)
    np.testing.assert_array_equal(y, x[[4, 0, 2]])
    with pytest.raises(LoomError, match="index 5 out of range for dimension 0 of size 5") as e:
        K.parallel_gather(np.array([0, 5, 1], np.int32), x, y)
    assert f"{SRC}:{line_of(SRC, 'y[i] = x[Index(idx[i])]')}:" in str(e.value)
    idx = np.arange(1000, dtype=np.int32) % 5
    idx[[10, 600, 999]] = [1010, -1, 7]  # failures in both threads' halves: the first one (i = 10) is reported
    for _ in range(5):
        with pytest.raises(LoomError, match="index 1010 out of range for dimension 0 of size 5"):
            K.parallel_gather(idx, x, np.zeros(1000))
    y = np.zeros(1000)
    K.parallel_gather(idx % 5, x, y)
    np.testing.assert_array_equal(y, x[idx % 5])
    gather_c = lower_module(lower_to_c(K.parallel_gather.module), check_gathers=True).source
    divide_c = lower_module(lower_to_c(K.parallel_scale_then_divide.module), check_gathers=True).source
    assert "#pragma omp parallel for" in gather_c and "loomh_defer(" in gather_c
    assert "#pragma omp parallel" in divide_c and "loomh_check_divisor" in divide_c
    y = np.zeros(4)
    assert K.parallel_scale_then_divide(np.arange(4.0), y, 7, 2) == 3
    np.testing.assert_array_equal(y, 2.0 * np.arange(4.0))
    with pytest.raises(LoomError, match="division by zero"):
        K.parallel_scale_then_divide(np.arange(4.0), y, 7, 0)


@pytest.mark.sanitize
def test_a_parallel_loop_bounded_by_a_parameter_is_checked_before_its_region():
    """for i in parallel(n): y[i] += a * x[i] with n past the arrays wrote outside them; checked at the first and
    last iteration before the OpenMP region, so the loop keeps its threads."""
    from loom.backends.c.emitter import lower_module
    from loom.passes.recipes import lower_to_c
    x, y = RNG.random(6).astype(np.float32), RNG.random(6).astype(np.float32)
    want = y.copy()
    want[:4] += np.float32(2.0) * x[:4]
    K.parallel_axpy(x, y, 4, 2.0)
    np.testing.assert_array_equal(y, want)
    K.parallel_axpy(x, y, 0, 2.0)  # an empty loop checks nothing
    with pytest.raises(LoomError, match="index 6 out of range for dimension 0 of size 6") as e:
        K.parallel_axpy(x, y, 7, 2.0)
    assert f"{SRC}:{line_of(SRC, 'y[i] = a * x[i] + y[i]')}:" in str(e.value)
    source = lower_module(lower_to_c(K.parallel_axpy.module), check_gathers=True).source
    assert source.index("loomh_check_index") < source.index("#pragma omp parallel")
