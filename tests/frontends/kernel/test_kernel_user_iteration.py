"""Iterating the way Python code does (all were "only 'for ... in range(...)' loops are supported"):
``for x in X``, ``enumerate``, ``zip`` and ``for row in A`` over memrefs, and a loop over a Python tuple of
constants (unrolled at trace time). Against numpy and mlir-runner."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify

SRC = U.__file__
X = np.arange(1, 6, dtype=np.float32)
A = np.arange(10, dtype=np.float32).reshape(2, 5)


def _want():
    y = X * np.arange(5, dtype=np.float32)
    return y, X.sum() + (X * y).sum() + (A * np.arange(2)[:, None]).sum()


@pytest.mark.sanitize
def test_memref_iteration_forms():
    y = np.zeros(5, np.float32)
    got = U.iterate_forms(X, y, A)
    want_y, want = _want()
    np.testing.assert_array_equal(y, want_y)
    assert got == pytest.approx(want, rel=1e-6)


def test_tuple_loop_is_unrolled():
    x = np.arange(6, dtype=np.float32) ** 2
    y = np.zeros(6, np.float32)
    U.smooth3(x, y)
    np.testing.assert_allclose(y[1:-1], np.convolve(x, U.COEF, "valid"), rtol=1e-6)


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    upstream_verify(U.iterate_forms.module)
    ran = mlir.run(U.iterate_forms.module, "iterate_forms", [X, np.zeros(5, np.float32), A])
    want_y, want = _want()
    np.testing.assert_array_equal(ran.memrefs[1], want_y)
    assert ran.results[0] == pytest.approx(want, rel=1e-6)


def test_break_in_an_unrolled_loop_is_refused():
    with pytest.raises(LoomError) as info:
        U.tuple_loop_break.module
    assert info.value.line == line_of(SRC, "# U:tuplebreak") and "Python tuple" in info.value.message
