"""Slices passed to another kernel (``vec_sum(A[i, :])``, a column, a strided slice) were refused ("has type
memref<?xf32, strided<...>>, expected memref<?xf32>"); the callee now gets a contiguous copy, written back after
the call. Against numpy, and upstream mlir-runner."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import upstream_verify

A = np.random.default_rng(4).standard_normal((4, 7)).astype(np.float32)


def _outs():
    return np.zeros(4, np.float32), np.zeros(7, np.float32), np.zeros(1, np.float32)


@pytest.mark.sanitize
def test_slices_reach_the_callee():
    rows, cols, odd = _outs()
    U.sums_of_slices(A, rows, cols, odd)
    np.testing.assert_allclose(rows, A.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cols, A.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(odd, [A[1, 1::2].sum()], rtol=1e-5)


@pytest.mark.sanitize
def test_callee_writes_reach_the_slice():
    a = A.copy()
    U.scale_columns(a)
    np.testing.assert_array_equal(a, A * np.arange(1, 8, dtype=np.float32))


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    for k in (U.sums_of_slices, U.scale_columns):
        upstream_verify(k.module)
    ran = mlir.run(U.sums_of_slices.module, "sums_of_slices", [A, *_outs()])
    np.testing.assert_allclose(ran.memrefs[1], A.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ran.memrefs[2], A.sum(0), rtol=1e-5, atol=1e-6)
    ran = mlir.run(U.scale_columns.module, "scale_columns", [A.copy()])
    np.testing.assert_array_equal(ran.memrefs[0], A * np.arange(1, 8, dtype=np.float32))
