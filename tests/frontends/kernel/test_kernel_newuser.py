"""A new user's kernels (``kernel_newuser_kernels.py``) against numpy, their own Python (``__wrapped__``) and, for
the ones with data-dependent control flow, mlir-runner; and hostile calls to them: each bad index, size or shape
is a LoomError at the kernel's line."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_newuser_kernels as K
from loom.errors import LoomError
from loom.oracle import mlir

RNG = np.random.default_rng(11)


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _run(kernel, *args):
    """The kernel and its own Python on copies of ``args``: arrays and results must agree; the compiled ones
    are returned for the numpy comparison."""
    got_args, want_args = _copies(args), _copies(args)
    got = kernel(*got_args)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        want = kernel.__wrapped__(*want_args)
    for g, w in zip(got_args, want_args):
        if isinstance(g, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=kernel.name)
    if want is not None:
        assert got == pytest.approx(want, rel=1e-12), kernel.name
    return got_args, got


def _csr(dense):
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int32)
    r, c = np.nonzero(dense)
    return indptr, c.astype(np.int32), dense[r, c]


def _cases():
    """(kernel, args, numpy check of (compiled args, result))."""
    u = RNG.random(20)
    heat_ref = u.copy()
    for _ in range(5):
        nxt = heat_ref.copy()
        nxt[1:-1] = heat_ref[1:-1] + 0.2 * (heat_ref[:-2] - 2 * heat_ref[1:-1] + heat_ref[2:])
        heat_ref = nxt
    a32 = RNG.random((7, 9), dtype=np.float32)
    jac = a32.copy()
    jac[1:-1, 1:-1] = np.float32(0.2) * (a32[1:-1, 1:-1] + a32[:-2, 1:-1] + a32[2:, 1:-1] + a32[1:-1, :-2]
                                         + a32[1:-1, 2:])
    ints = RNG.integers(-2**31, 2**31, 50).astype(np.int32)
    x20, starts = RNG.standard_normal(20), np.array([0, 3, 3, 10, 19])
    seg = [x20[s:e].max() if e > s else -np.inf for s, e in zip(starts, [*starts[1:], 20])]
    data = RNG.integers(0, 256, 1000).astype(np.uint8)
    dense = (RNG.random((6, 5)) < 0.4) * RNG.random((6, 5))
    r, c = np.nonzero(dense)
    rows, cols = np.r_[r, r[:2]].astype(np.int32), np.r_[c, c[:2]].astype(np.int32)  # duplicates add up
    vals, xm = np.r_[dense[r, c], dense[r[:2], c[:2]]], RNG.random(5)
    coo_ref = np.zeros(6)
    np.add.at(coo_ref, rows, vals * xm[cols])
    xn = RNG.random(6)
    L = np.tril(RNG.random((6, 6))) + 6 * np.eye(6)
    b6 = RNG.random(6)
    sq = RNG.random((5, 5))
    big = np.array([1, 2, 3, 6, 7, 27, 97, 2**31 + 1], np.uint32)
    sx = np.sort(RNG.random(17))
    queries = np.r_[RNG.random(10), sx[:3], -1.0, 2.0]
    spd = RNG.random((6, 6)) + 6 * np.eye(6)
    ell_cols = RNG.integers(-1, 7, (9, 3)).astype(np.int32)
    ell_vals, x7 = RNG.random((9, 3)), RNG.random(7)
    x30 = RNG.random(30)
    return [
        (K.heat_1d, (u, np.zeros(20), 0.2, 5), lambda o, _: np.testing.assert_allclose(o[0], heat_ref, rtol=1e-13)),
        (K.jacobi_2d, (a32, np.zeros_like(a32)), lambda o, _: np.testing.assert_allclose(o[1], jac, rtol=1e-6)),
        (K.inclusive_scan_i32, (ints, np.zeros_like(ints)),
         lambda o, t: (np.testing.assert_array_equal(o[1], np.cumsum(ints, dtype=np.int64).astype(np.int32)),
                       t == o[1][-1] or pytest.fail("total"))),
        (K.segmented_max, (x20, starts, np.zeros(5)), lambda o, _: np.testing.assert_array_equal(o[2], seg)),
        (K.histogram_u8, (data, np.zeros(32, np.int64), 3),
         lambda o, _: np.testing.assert_array_equal(o[1], np.bincount(data >> 3, minlength=32))),
        (K.bitonic_sort8, (RNG.integers(-100, 100, 8).astype(np.int32),),
         lambda o, _: np.testing.assert_array_equal(o[0], np.sort(o[0]))),
        (K.coo_spmv, (rows, cols, vals, xm, np.zeros(6)),
         lambda o, _: np.testing.assert_allclose(o[4], coo_ref, rtol=1e-14)),
        (K.csr_transpose_spmv, (*_csr(dense), xn, np.full(5, 7.0)),
         lambda o, _: np.testing.assert_allclose(o[4], dense.T @ xn, rtol=1e-14)),
        (K.forward_substitution, (L, b6, np.zeros(6)),
         lambda o, _: np.testing.assert_allclose(o[2], np.linalg.solve(L, b6), rtol=1e-12)),
        (K.upper_tri_pack, (sq, np.zeros(15)),
         lambda o, k: (np.testing.assert_array_equal(o[1], sq[np.triu_indices(5)]), k == 15 or pytest.fail("k"))),
        (K.collatz_steps, (big, np.zeros(8, np.int32), 1000), None),  # against its own Python (uint32 wrap)
        (K.binary_search_all, (sx, queries, np.zeros(15, np.int64)),
         lambda o, _: np.testing.assert_array_equal(o[2], np.searchsorted(sx, queries, side="left"))),
        (K.gauss_seidel_sweep, (spd, b6, np.zeros(6), 60),
         lambda o, d: (np.testing.assert_allclose(o[2], np.linalg.solve(spd, b6), rtol=1e-10),
                       d < 1e-10 or pytest.fail("delta"))),
        (K.ell_spmv_parallel, (ell_vals, ell_cols, x7, np.zeros(9)),
         lambda o, _: np.testing.assert_allclose(
             o[3], np.where(ell_cols >= 0, ell_vals * x7[np.maximum(ell_cols, 0)], 0).sum(1), rtol=1e-14)),
        (K.wave_scratch, (x30, np.zeros(30), 4),
         lambda o, _: np.testing.assert_allclose(o[1], np.convolve(x30, np.ones(4))[:30], rtol=1e-12)),
    ]


@pytest.mark.sanitize
def test_new_users_kernels_equal_numpy_and_their_own_python():
    cases = _cases()
    assert len(cases) >= 10
    for kernel, args, check in cases:
        out, result = _run(kernel, *args)
        if check is not None:
            check(out, result)


# mlir-runner runs the ones whose control flow or indices come from the data
RUN = {"bitonic_sort8", "coo_spmv", "segmented_max", "collatz_steps", "binary_search_all", "histogram_u8"}


@pytest.mark.mlir
def test_the_data_dependent_ones_agree_with_mlir_runner():
    for kernel, args, _ in _cases():
        if kernel.name not in RUN:
            continue
        want_args = _copies(args)
        kernel(*want_args)
        ran = mlir.run(kernel.module, kernel.name, _copies(args))
        for got, want in zip(ran.memrefs, want_args):
            if got is not None:
                np.testing.assert_array_equal(got, want, err_msg=kernel.name)


@pytest.mark.sanitize
@pytest.mark.parametrize("call, message", [
    (lambda: K.heat_1d(np.zeros(0), np.zeros(0), 0.1, 1), "index 0 out of range for dimension 0 of size 0"),
    (lambda: K.segmented_max(np.ones(5), np.array([0, 7]), np.zeros(2)), "index 5 out of range"),
    (lambda: K.histogram_u8(np.array([255, 3], np.uint8), np.zeros(32, np.int64), 2), "index 63 out of range"),
    (lambda: K.coo_spmv(np.array([0, 9], np.int32), np.array([0, 0], np.int32), np.ones(2), np.ones(3),
                        np.zeros(4)), "index 9 out of range for dimension 0 of size 4"),
    (lambda: K.coo_spmv(np.array([0, 1], np.int32), np.array([0, -1], np.int32), np.ones(2), np.ones(3),
                        np.zeros(4)), "index -1 out of range for dimension 0 of size 3"),
    (lambda: K.csr_transpose_spmv(np.array([0, 2, 5], np.int32), np.array([0, 1, 0], np.int32), np.ones(3),
                                  np.ones(2), np.zeros(2)), "index 3 out of range"),
    (lambda: K.upper_tri_pack(np.ones((5, 5)), np.zeros(14)), "index 14 out of range for dimension 0 of size 14"),
    (lambda: K.ell_spmv_parallel(np.ones((4, 2)), np.array([[0, 1], [2, 9], [0, 0], [1, -1]], np.int32),
                                 np.ones(3), np.zeros(4)), "index 9 out of range for dimension 0 of size 3"),
    (lambda: K.wave_scratch(np.ones(4), np.zeros(4), 0), "integer division by zero"),
    (lambda: K.wave_scratch(np.ones(4), np.zeros(4), -3), "negative size -3 for memref.alloc in @wave_scratch"),
    (lambda: K.wave_scratch(np.ones(4), np.zeros(4), 2**61), "cannot allocate"),
])
def test_hostile_calls_are_located_errors(call, message):
    with pytest.raises(LoomError, match=message) as e:
        call()
    assert str(e.value).startswith(K.__file__ + ":")
