"""A numpy array the kernel reads from its module (a LUT, filter taps) was refused ("closure over non-constant
value"); it is now a constant table (memref.global). Values against numpy; writes to it are refused."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, ops_named, upstream_verify

SRC = U.__file__
X = np.random.default_rng(8).integers(0, 16, (5, 6)).astype(np.int32)


def _numpy(x):
    y = np.zeros(x.shape, np.float32)
    for i in range(1, x.shape[0] - 1):
        for j in range(1, x.shape[1] - 1):
            y[i, j] = U.GAMMA[int((U.TAPS * x[i - 1:i + 2, j - 1:j + 2]).sum()) // 16]
    return y


@pytest.mark.sanitize
def test_lookup_and_taps_from_numpy_globals():
    y = np.zeros(X.shape, np.float32)
    U.gamma_blur(X, y)
    np.testing.assert_array_equal(y, _numpy(X))
    assert len(ops_named(U.gamma_blur.module, "memref.global")) == 2


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    upstream_verify(U.gamma_blur.module)
    ran = mlir.run(U.gamma_blur.module, "gamma_blur", [X, np.zeros(X.shape, np.float32)])
    np.testing.assert_array_equal(ran.memrefs[1], _numpy(X))


def test_bool_and_special_float_tables():
    for k in range(4):
        b, f = U.table_kinds(k)
        assert b == int(U.ODD[k])
        np.testing.assert_array_equal(np.float64(f), U.SPECIAL[k])


@pytest.mark.parametrize("kernel,marker,words", [
    (U.calls_with_table, "U:tablecall", "cannot be passed to kernel 'vec_sum'"),
    (U.writes_table, "U:tablewrite", "'GAMMA' is a constant table"),
    (U.writes_table_slice, "U:tableslice", "cannot be written"),
])
def test_tables_are_read_only(kernel, marker, words):
    with pytest.raises(LoomError) as info:
        kernel.module
    assert info.value.line == line_of(SRC, "# " + marker) and words in info.value.message, info.value.message
