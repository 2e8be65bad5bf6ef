"""``break`` and ``continue`` in for and while loops (both were refused). The reference is the kernel itself run
as plain Python (``__wrapped__``) on the same arrays; upstream mlir-runner must agree."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import upstream_verify

RNG = np.random.default_rng(11)


def _python(kernel, *args):
    """The kernel's own Python on numpy scalars (int wrap-around aside, the same arithmetic)."""
    return kernel.__wrapped__(*args)


@pytest.mark.sanitize
@pytest.mark.parametrize("trial", range(8))
def test_break_and_continue_match_python(trial):
    x = RNG.integers(-3, 12, 9).astype(np.int32)
    for v in (x[trial % 9], 100):
        assert U.first_index_of(x, np.int32(v)) == _python(U.first_index_of, x, np.int32(v))
    assert U.sum_skipping_negatives_until_zero(x) == _python(U.sum_skipping_negatives_until_zero, x)
    a = RNG.integers(0, 10, (4, 6)).astype(np.int32)
    y, want = np.zeros(4, np.int32), np.zeros(4, np.int32)
    U.rows_until_sentinel(a, y)
    _python(U.rows_until_sentinel, a, want)
    np.testing.assert_array_equal(y, want)
    f = RNG.random(7).astype(np.float32)
    assert U.countdown_break(f) == _python(U.countdown_break, f)


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    x = np.array([5, -1, 3, 40, -2, 30, 0, 8], np.int32)
    for kernel in (U.first_index_of, U.sum_skipping_negatives_until_zero):
        upstream_verify(kernel.module)
    ran = mlir.run(U.sum_skipping_negatives_until_zero.module, "sum_skipping_negatives_until_zero", [x])
    assert ran.results[0] == _python(U.sum_skipping_negatives_until_zero, x)
    ran = mlir.run(U.first_index_of.module, "first_index_of", [x, np.int32(30)])
    assert ran.results[0] == 5
    a = RNG.integers(0, 10, (4, 6)).astype(np.int32)
    want = np.zeros(4, np.int32)
    _python(U.rows_until_sentinel, a, want)
    ran = mlir.run(U.rows_until_sentinel.module, "rows_until_sentinel", [a, np.zeros(4, np.int32)])
    np.testing.assert_array_equal(ran.memrefs[1], want)
