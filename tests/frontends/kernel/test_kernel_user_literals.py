"""Literals against the type of the other operand: a signed op never reads a literal that wrapped, a float
literal that would round to inf is refused at trace time (it crashed with a struct OverflowError)."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from tests.frontends.kernel.kernel_frontend_helpers import line_of

SRC = U.__file__


@pytest.mark.parametrize("kernel,marker,words", [
    (U.i8_above, "U:i8cmp", "constant 200 is outside the range of I8 (-128..127) in '>'"),
    (U.i32_floordiv_wide, "U:i32div", "constant 3000000000 is outside the range of I32"),
    (U.i8_max_wide, "U:i8max", "max()"),
    (U.f32_huge, "U:f32huge", "constant 1e+40 is out of range for F32"),
    (U.f64_huge_int, "U:f64hugeint", "out of range for F64"),
], ids=lambda v: v if isinstance(v, str) and v.startswith("U:") else "")
def test_out_of_range_literal_is_located(kernel, marker, words):
    with pytest.raises(LoomError) as info:
        kernel.module
    assert info.value.filename == SRC and info.value.line == line_of(SRC, "# " + marker)
    assert words in info.value.message, info.value.message


def test_bitwise_literal_keeps_its_bit_pattern():
    x = np.array([0x1F, -1, 0x7F, -128], np.int8)
    want = x & np.int8(-16)
    U.i8_mask(x)
    np.testing.assert_array_equal(x, want)


def test_infinite_literal_is_fine_in_f32():
    x = np.array([-3.0, -1.5, -2.0], np.float32)
    assert U.f32_inf_floor(x) == np.float32(-1.5)
    assert U.f32_inf_floor(np.zeros(0, np.float32)) == -np.inf
