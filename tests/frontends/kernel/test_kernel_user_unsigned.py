"""Unsigned element types U8, U16, U32, U64 (uint8 images were refused: there was no unsigned type). They are
signless iN in the IR; comparisons, //, %, >>, min/max and casts use the unsigned ops. Against numpy, and the same
bits from upstream mlir-runner."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify

SRC = U.__file__
X = np.array([0, 1, 127, 128, 200, 201, 255, 77], np.uint8)


def _numpy(x):
    v = x.astype(np.int64)
    y = U.U8_CURVE[255 - v // 3 + (v >> 4) % 7]
    return y, v.astype(np.float32) * np.float32(0.5), ((v > 200) + (v >= 128) * 2).astype(np.int32), x.max()


def _outputs(n):
    return np.zeros(n, np.uint8), np.zeros(n, np.float32), np.zeros(n, np.int32)


@pytest.mark.sanitize
def test_u8_pixels_match_numpy():
    y, t, c = _outputs(len(X))
    m = U.u8_pixels(X, y, t, c)
    wy, wt, wc, wm = _numpy(X)
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(t, wt)
    np.testing.assert_array_equal(c, wc)
    assert m == wm and isinstance(m, np.uint8)


@pytest.mark.mlir
def test_upstream_mlir_gives_the_same_bits():
    upstream_verify(U.u8_pixels.module)
    ran = mlir.run(U.u8_pixels.module, "u8_pixels", [X, *_outputs(len(X))])
    wy, wt, wc, wm = _numpy(X)
    np.testing.assert_array_equal(ran.memrefs[1].view(np.uint8), wy)
    np.testing.assert_array_equal(ran.memrefs[3], wc)
    assert np.int8(ran.results[0]).view(np.uint8) == wm


def test_unsigned_casts():
    got = U.unsigned_casts(np.uint16(65535), np.uint32(4_000_000_000), np.float32(250.7), np.int16(-2))
    assert got == (65535, 4_000_000_000, 250, 4e9, -1, 65534)


def test_u8_rows_through_a_callee():
    a = np.array([[3, 250, 7], [129, 128, 0]], np.uint8)
    out = np.zeros(2, np.uint8)
    U.u8_image_maxima(a, out)
    np.testing.assert_array_equal(out, a.max(1))


@pytest.mark.parametrize("kernel,marker,words", [
    (U.u8_literal_too_big, "U:u8lit", "constant 300 does not fit in U8"),
    (U.i8_into_u8_callee, "U:u8call", "has elements I8, expected U8"),
    (U.u8_into_linalg, "U:u8linalg", "does not take unsigned"),
])
def test_unsigned_misuse_is_located(kernel, marker, words):
    with pytest.raises(LoomError) as info:
        kernel.module
    assert info.value.line == line_of(SRC, "# " + marker) and words in info.value.message, info.value.message


def test_signed_arrays_are_not_unsigned_parameters():
    with pytest.raises(LoomError, match="expects dtype uint8, got int8"):
        U.u8_row_max(np.zeros(3, np.int8))
