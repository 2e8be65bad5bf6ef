"""Calling a kernel with what numpy users pass: transposed, strided and Fortran-order views (were refused as not
C-contiguous) run on contiguous copies, written views are written back; scalar arguments out of their type's range
are a LoomError (a Python int raised a bare OverflowError, a numpy int64 silently wrapped: 2**40 became 0)."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError

X = np.arange(20, dtype=np.float32).reshape(4, 5)


@pytest.mark.sanitize
@pytest.mark.parametrize("view", ["transposed", "strided", "fortran", "reversed"])
def test_views_in_and_out(view):
    x = {"transposed": X.T, "strided": X[:, ::2], "fortran": np.asfortranarray(X), "reversed": X[::-1, ::-1]}[view]
    y_base = np.full((x.shape[1] + 2, x.shape[0] + 2), -1, np.float32)
    y = y_base[1:-1, 1:-1].T  # a written, non-contiguous view into a larger array
    U.scale_into(x, y, np.float32(2.0))
    np.testing.assert_array_equal(y, x * 2)
    assert (y_base[0] == -1).all() and (y_base[:, 0] == -1).all()  # nothing outside the view written


def test_read_only_view_is_fine_when_only_read():
    x = np.broadcast_to(np.arange(5, dtype=np.float32), (3, 5))  # read-only, zero strides
    y = np.zeros((3, 5), np.float32)
    U.scale_into(x, y, np.float32(3.0))
    np.testing.assert_array_equal(y, x * 3)


def test_written_read_only_view_is_refused():
    y = np.broadcast_to(np.zeros(5, np.float32), (3, 5))
    with pytest.raises(LoomError, match="'Y' is written by the kernel but the array is read-only"):
        U.scale_into(np.ones((3, 5), np.float32), y, np.float32(1.0))


def test_written_view_aliasing_another_argument_is_refused():
    a = np.ones((4, 4), np.float32)
    with pytest.raises(LoomError, match="'Y' is a non-contiguous view written by the kernel and shares memory with 'X'"):
        U.scale_into(a, a.T, np.float32(2.0))


@pytest.mark.parametrize("k,j,words", [
    (2**40, 0, "'k' expects I32 in [-2147483648, 2147483647], got 1099511627776"),
    (np.int64(2**40), 0, "got 1099511627776"),
    (1, 2**70, "'j' expects Index in"),
])
def test_scalar_out_of_range_is_refused(k, j, words):
    with pytest.raises(LoomError) as info:
        U.add_k(np.ones(3, np.int32), k, j)
    assert words in info.value.message


def test_scalars_in_range_still_pass():
    assert U.add_k(np.arange(3, dtype=np.int32), np.int64(-5), np.int8(2)) == -3


def test_unsigned_arrays_get_advice():
    with pytest.raises(LoomError) as info:
        U.add_k(np.ones(3, np.uint32), 1, 0)
    assert "expects dtype int32, got uint32 (declare the parameter U32 for unsigned elements)" in info.value.message
