"""numpy-style indexing a user writes: ``A[i]`` of a matrix is its row and ``A[1][2]`` an element (both were
"has rank 2 but is indexed with 1 indices"); assigning to a slice fills it with a scalar or copies a same-shaped
memref into it (was "assignment to a memref slice is not supported"). Against numpy and mlir-runner."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify

SRC = U.__file__


def _numpy(a, b):
    a[0, :] = 0
    a[:, 1] = b[:, 2]
    a[2] = b[0]
    a[1, 2:] = 5
    a[2][0] = 7
    return a, a[1][2] + b[1][1]


def _inputs():
    return np.arange(12, dtype=np.float32).reshape(3, 4), np.arange(12, dtype=np.float32).reshape(3, 4) + 100


@pytest.mark.sanitize
def test_rows_chained_indexing_and_slice_assignment():
    a, b = _inputs()
    want_a, want_r = _numpy(a.copy(), b)
    assert U.numpy_style_rows(a, b) == want_r
    np.testing.assert_array_equal(a, want_a)


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    upstream_verify(U.numpy_style_rows.module)
    a, b = _inputs()
    want_a, want_r = _numpy(a.copy(), b)
    ran = mlir.run(U.numpy_style_rows.module, "numpy_style_rows", [a, b])
    np.testing.assert_array_equal(ran.memrefs[0], want_a)
    assert ran.results[0] == want_r


def test_static_shape_mismatch_is_located():
    with pytest.raises(LoomError) as info:
        U.slice_shape_mismatch.module
    assert info.value.line == line_of(SRC, "# U:sliceshape")
    assert "shape [3] to a slice of shape [4]" in info.value.message


def test_run_time_shape_mismatch_is_caught_in_checked_mode():
    a = np.zeros((3, 4), np.float32)
    U.slice_copy_checked(a, np.ones((4, 2), np.float32))
    np.testing.assert_array_equal(a[0], 1)
    with pytest.raises(LoomError) as info:
        U.slice_copy_checked(a, np.ones((5, 2), np.float32))
    assert info.value.line == line_of(SRC, "# U:slicedyn")
    assert "size 5 in the source and 4 in the target" in info.value.message
