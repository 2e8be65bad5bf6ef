"""Defect 4: shifts by any amount have defined results, numpy's (also under UBSan).

MLIR makes a shift by >= the bit width poison and C makes it undefined; loom's C gives what numpy
gives for the same operation: the amount read as unsigned, 0 when it shifts every bit out (the
sign fill, 0 or -1, for arithmetic right shifts)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from loom import I32, MemRef, kernel
from loom.backends.c import compile_module
from loom.dialects import context

SHIFT_MLIR = """
func.func @shift(%a: memref<?x{t}>, %b: memref<?x{t}>, %l: memref<?x{t}>, %rs: memref<?x{t}>, %ru: memref<?x{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x{t}>
  scf.for %i = %c0 to %n step %c1 {{
    %x = memref.load %a[%i] : memref<?x{t}>
    %s = memref.load %b[%i] : memref<?x{t}>
    %v1 = arith.shli %x, %s : {t}
    %v2 = arith.shrsi %x, %s : {t}
    %v3 = arith.shrui %x, %s : {t}
    memref.store %v1, %l[%i] : memref<?x{t}>
    memref.store %v2, %rs[%i] : memref<?x{t}>
    memref.store %v3, %ru[%i] : memref<?x{t}>
  }}
  func.return
}}
"""

TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


@pytest.mark.sanitize
@pytest.mark.parametrize("t", list(TYPES))
def test_shifts_match_numpy_for_every_amount(t):
    dtype = TYPES[t]
    info = np.iinfo(dtype)
    bits = info.bits
    values = np.array([0, 1, -1, 5, -8, 77, info.min, info.max, info.min + 1, info.max // 3], dtype)
    amounts = np.array(sorted({0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, -1, -bits, info.max, info.min}),
                       dtype)
    a = np.repeat(values, len(amounts))
    b = np.tile(amounts, len(values))
    fn = compile_module(Parser(context(), SHIFT_MLIR.format(t=t)).parse_module()).function("shift")
    left, right_s, right_u = (np.zeros_like(a) for _ in range(3))
    fn(a, b, left, right_s, right_u)
    udtype = np.dtype(f"u{dtype().itemsize}")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(left, np.left_shift(a, b))
        np.testing.assert_array_equal(right_s, np.right_shift(a, b))
        np.testing.assert_array_equal(right_u.view(udtype), np.right_shift(a.view(udtype), b.view(udtype)))


@kernel
def shift_kernel(A: MemRef[(6,), I32], S: MemRef[(6,), I32], L: MemRef[(6,), I32], R: MemRef[(6,), I32]):
    for i in range(6):
        L[i] = A[i] << S[i]
        R[i] = A[i] >> S[i]


@pytest.mark.sanitize
def test_kernel_shifts_match_numpy():
    a = np.array([3, -3, 1, -1, 12345, -2**31], np.int32)
    s = np.array([31, 32, 40, -1, 2, 33], np.int32)
    left, right = np.zeros(6, np.int32), np.zeros(6, np.int32)
    shift_kernel(a, s, left, right)
    np.testing.assert_array_equal(left, np.left_shift(a, s))
    np.testing.assert_array_equal(right, np.right_shift(a, s))
