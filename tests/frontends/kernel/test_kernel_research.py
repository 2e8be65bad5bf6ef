"""A researcher's own kernels (``kernel_research_kernels.py``): sorting, searching, sparse, stencils, tiles,
bit tricks, fixed point, mixed int/float, helpers, 3-D/4-D arrays, while loops, tuple returns, scalars in and out.
Each is checked against itself run as plain Python on numpy (``__wrapped__``) and against numpy or scipy-free
closed forms, on seeded random data; every module verifies in upstream mlir-opt and mlir-runner agrees."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_research_kernels as R
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import upstream_verify

RNG = np.random.default_rng(2024)


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _same(kernel, *args, rtol=0.0):
    """Run the kernel and its own Python on copies of ``args``; arrays and results must agree."""
    got_args, want_args = _copies(args), _copies(args)
    got = kernel(*got_args)
    with np.errstate(over="ignore"):  # numpy warns where the kernel wraps (xorshift), the same bits
        want = kernel.__wrapped__(*want_args)
    for g, w in zip(got_args, want_args):
        if isinstance(g, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0) if rtol else np.testing.assert_array_equal(g, w)
    got_t = got if isinstance(got, tuple) else (got,)
    want_t = want if isinstance(want, tuple) else (want,)
    assert len(got_t) == len(want_t)
    for g, w in zip(got_t, want_t):
        assert (g is None and w is None) or (abs(float(g) - float(w)) <= rtol * abs(float(w)) if rtol else g == w), \
            (kernel.name, got, want)
    return got_args, got


def _csr(rows, cols, density):
    dense = RNG.random((rows, cols)) * (RNG.random((rows, cols)) < density)
    indptr, indices, data = [0], [], []
    for r in dense:
        nz = np.flatnonzero(r)
        indices += nz.tolist()
        data += r[nz].tolist()
        indptr.append(len(indices))
    return dense, np.array(indptr, np.int32), np.array(indices, np.int32), np.array(data)


def _spd(n):
    a = RNG.random((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.mark.sanitize
@pytest.mark.parametrize("trial", range(3))
def test_research_kernels_match_python_and_numpy(trial):
    x = RNG.random(11)
    out, _ = _same(R.prefix_sum, x, np.zeros(11))
    np.testing.assert_allclose(out[1], np.cumsum(x), rtol=1e-12)

    xi = RNG.integers(-20, 120, 60).astype(np.int32)
    out, _ = _same(R.histogram, xi, np.zeros(8, np.int64), np.int32(0), np.int32(10))
    assert out[1].sum() == 60

    f = RNG.random(17).astype(np.float32)
    out, _ = _same(R.bubble_sort, f)
    np.testing.assert_array_equal(out[0], np.sort(f))
    v = RNG.integers(-9, 9, 13).astype(np.int32)
    out, _ = _same(R.insertion_sort, v)
    np.testing.assert_array_equal(out[0], np.sort(v))

    srt = np.sort(RNG.integers(0, 100, 20)).astype(np.int64)
    for t in (-1, 0, 50, srt[trial * 5], 1000):
        _, got = _same(R.lower_bound, srt, np.int64(t))
        assert got == np.searchsorted(srt, t, "left")

    dense, indptr, indices, data = _csr(7, 9, 0.3 + 0.2 * trial)
    xv = RNG.random(9)
    out, _ = _same(R.csr_matvec, indptr, indices, data, xv, np.zeros(7))
    np.testing.assert_allclose(out[4], dense @ xv, rtol=1e-12)

    a = RNG.random((5 + trial, 7)).astype(np.float32)
    out, _ = _same(R.laplacian, a, np.zeros_like(a))
    p = np.pad(a, 1)
    np.testing.assert_allclose(out[1], 4 * a - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:], rtol=1e-5)
    b = RNG.random((9, 6 + trial)).astype(np.float32)
    out, _ = _same(R.tiled_transpose, b, np.zeros(b.T.shape, np.float32))
    np.testing.assert_array_equal(out[1], b.T)

    m = RNG.normal(0, 1, 12)
    _, got = _same(R.min_max_argmax, m)
    assert got == (m.min(), m.max(), np.argmax(m))
    _, got = _same(R.argmin_first, np.array([3, 1, 2, 1, 5], np.float32))
    assert got == 1

    u = RNG.integers(0, 2**32, 20, dtype=np.uint64).astype(np.uint32)
    out, _ = _same(R.popcount, u, np.zeros(20, np.int32))
    np.testing.assert_array_equal(out[1], [bin(int(w)).count("1") for w in u])
    _same(R.xorshift32, np.uint32(2463534242 + trial), np.zeros(10, np.uint32))
    qa, qb = (RNG.integers(-32768, 32768, 30).astype(np.int16) for _ in range(2))
    out, _ = _same(R.q15_mul, qa, qb, np.zeros(30, np.int16))
    want = np.clip((qa.astype(np.int64) * qb + (1 << 14)) >> 15, -32768, 32767)
    np.testing.assert_array_equal(out[2], want)

    _same(R.mixed_mean, xi, 0.5, rtol=1e-12)
    _same(R.squash, (RNG.random(10) * 4 - 2).astype(np.float32), np.zeros(10, np.float32))
    s = RNG.random((4, 6))
    out, _ = _same(R.standardize_rows, s, rtol=1e-9)
    np.testing.assert_allclose(out[0], (s - s.mean(1, keepdims=True)) / s.std(1, keepdims=True), rtol=1e-6)

    c = RNG.random((3, 4, 5))
    out, _ = _same(R.sum_planes, c, np.zeros(3), rtol=1e-12)
    np.testing.assert_allclose(out[1], c.sum(axis=(1, 2)), rtol=1e-12)
    img = RNG.standard_normal((2, 3, 6, 4)).astype(np.float32)
    out, _ = _same(R.maxpool2_nchw, img, np.zeros((2, 3, 3, 2), np.float32))
    np.testing.assert_array_equal(out[1], img.reshape(2, 3, 3, 2, 2, 2).max(axis=(3, 5)))


@pytest.mark.sanitize
def test_scalar_and_while_kernels_match_python():
    for n in (1, 7, 27, 97):
        _same(R.collatz_steps, np.int64(n))
    for a, b in ((12, 18), (17, 5), (0, 9), (9, 0), (-12, 18)):
        _same(R.gcd, np.int64(a), np.int64(b))
    for a, b in ((7, 2), (-7, 2), (7, -2), (-7, -2), (-2**31, 3)):
        _, got = _same(R.divmod_scalars, np.int32(a), np.int32(b))
        assert got == divmod(a, b)
    for n in (0, 2, 3, 30, 100):
        _same(R.count_primes, np.int32(n))
    primes = np.zeros(30, np.int32)
    assert R.sieve(100, primes) == 25
    np.testing.assert_array_equal(primes[:25], [p for p in range(2, 100) if all(p % d for d in range(2, p))])
    small = np.zeros(4, np.int32)
    assert R.sieve(100, small) == 4 and small.tolist() == [2, 3, 5, 7]  # stops when the output is full
    _same(R.sieve, 50, np.zeros(20, np.int32))

    a = np.sort(RNG.integers(0, 50, 9)).astype(np.int32)
    b = np.sort(RNG.integers(0, 50, 6)).astype(np.int32)
    out, _ = _same(R.merge_sorted, a, b, np.zeros(15, np.int32))
    np.testing.assert_array_equal(out[2], np.sort(np.concatenate([a, b])))
    r = np.repeat(RNG.integers(-3, 3, 8), RNG.integers(1, 4, 8)).astype(np.int8)
    _same(R.run_lengths, r, np.zeros_like(r), np.zeros(len(r), np.int32))

    spd = _spd(5)
    out, got = _same(R.cholesky, spd, np.zeros((5, 5)), rtol=1e-12)
    assert got == -1
    np.testing.assert_allclose(out[1], np.linalg.cholesky(spd), rtol=1e-10)
    bad = spd.copy()
    bad[2, 2] = -50.0
    _, got = _same(R.cholesky, bad, np.zeros((5, 5)), rtol=1e-12)
    assert got == 2

    d = RNG.random((6, 6)) * 10
    np.fill_diagonal(d, 0)
    out, _ = _same(R.floyd_warshall, d)
    ref = d.copy()
    for k in range(6):
        ref = np.minimum(ref, ref[:, k:k + 1] + ref[k:k + 1, :])
    np.testing.assert_allclose(out[0], ref, rtol=1e-12)

    cr, ci = np.linspace(-2, 0.5, 9), np.linspace(-1, 1, 9)
    _same(R.mandelbrot, cr, ci, np.zeros(9, np.int32), np.int32(50))
    _same(R.dot_of_pairs, RNG.random(7).astype(np.float32), rtol=1e-6)


# every kernel of the suite, with arguments for an mlir-runner run
def _runner_cases():
    dense, indptr, indices, data = _csr(4, 5, 0.5)
    spd = _spd(4)
    return [
        (R.prefix_sum, [np.arange(5.0), np.zeros(5)]),
        (R.histogram, [np.array([-5, 3, 14, 99, 200], np.int32), np.zeros(4, np.int64), np.int32(0), np.int32(10)]),
        (R.bubble_sort, [np.array([3, 1, 2, 0], np.float32)]),
        (R.insertion_sort, [np.array([3, -1, 2, 0], np.int32)]),
        (R.lower_bound, [np.array([1, 3, 3, 7], np.int64), np.int64(3)]),
        (R.csr_matvec, [indptr, indices, data, np.arange(5.0), np.zeros(4)]),
        (R.laplacian, [np.arange(12, dtype=np.float32).reshape(3, 4), np.zeros((3, 4), np.float32)]),
        (R.tiled_transpose, [np.arange(30, dtype=np.float32).reshape(5, 6), np.zeros((6, 5), np.float32)]),
        (R.min_max_argmax, [np.array([0.5, -2.0, 7.0, 1.0])]),
        (R.popcount, [np.array([0, 7, 2**32 - 1], np.uint32), np.zeros(3, np.int32)]),
        (R.xorshift32, [np.uint32(2463534242), np.zeros(4, np.uint32)]),
        (R.q15_mul, [np.array([-32768, 16384, 5], np.int16), np.array([-32768, 16384, -7], np.int16),
                     np.zeros(3, np.int16)]),
        (R.mixed_mean, [np.array([4, -9, 16], np.int32), 0.25]),
        (R.squash, [np.array([-3, 0.5, 1.5], np.float32), np.zeros(3, np.float32)]),
        (R.standardize_rows, [np.arange(8.0).reshape(2, 4) ** 2]),
        (R.sum_planes, [np.arange(24.0).reshape(2, 3, 4), np.zeros(2)]),
        (R.maxpool2_nchw, [np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)[:, :, ::-1].copy(),
                           np.zeros((1, 2, 2, 2), np.float32)]),
        (R.collatz_steps, [np.int64(27)]),
        (R.gcd, [np.int64(84), np.int64(36)]),
        (R.divmod_scalars, [np.int32(-7), np.int32(2)]),
        (R.count_primes, [np.int32(30)]),
        (R.sieve, [30, np.zeros(20, np.int32)]),
        (R.merge_sorted, [np.array([1, 4, 9], np.int32), np.array([2, 3], np.int32), np.zeros(5, np.int32)]),
        (R.run_lengths, [np.array([1, 1, 2, 2, 2, -1], np.int8), np.zeros(6, np.int8), np.zeros(6, np.int32)]),
        (R.cholesky, [spd, np.zeros((4, 4))]),
        (R.floyd_warshall, [np.array([[0, 5, 1], [5, 0, 9], [1, 1, 0]], np.float64)]),
        (R.mandelbrot, [np.array([-1.0, 0.3, 1.0]), np.array([0.0, 0.5, 1.0]), np.zeros(3, np.int32), np.int32(30)]),
        (R.argmin_first, [np.array([2, 0.5, 0.5, 3], np.float32)]),
        (R.dot_of_pairs, [np.array([1, 2, 3], np.float32)]),
    ]


# run through mlir-runner (0.4 s each): the ones with data-dependent control flow, indices and bit tricks
RUN = {"histogram", "bubble_sort", "insertion_sort", "csr_matvec", "xorshift32", "q15_mul", "sieve", "run_lengths",
       "cholesky", "mandelbrot", "dot_of_pairs"}


@pytest.mark.mlir
def test_upstream_mlir_verifies_every_research_kernel_and_runs_the_control_flow_ones():
    cases = _runner_cases()
    assert len(cases) >= 25 and RUN <= {k.name for k, _ in cases}
    for kernel, args in cases:
        upstream_verify(kernel.module)
        if kernel.name not in RUN:
            continue
        want_args = _copies(args)
        with np.errstate(over="ignore"):
            want = kernel.__wrapped__(*want_args)
        ran = mlir.run(kernel.module, kernel.name, _copies(args))
        for got, w in zip(ran.memrefs, want_args):
            if got is not None:
                np.testing.assert_allclose(got, w, rtol=1e-12, err_msg=kernel.name)
        want_t = [] if want is None else list(want) if isinstance(want, tuple) else [want]
        assert len(ran.results) == len(want_t), kernel.name
        for g, w in zip(ran.results, want_t):
            assert g == pytest.approx(w, rel=1e-12), kernel.name
