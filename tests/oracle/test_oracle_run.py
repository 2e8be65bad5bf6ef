"""loom.oracle.run executes MLIR text through upstream mlir-runner; every
result here is checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError
from loom.oracle import mlir

pytestmark = pytest.mark.mlir

MATMUL_SCF = """
func.func @matmul(%A: memref<16x8xf32>, %B: memref<8x12xf32>, %C: memref<16x12xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 16 : index
  %n = arith.constant 12 : index
  %k = arith.constant 8 : index
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      scf.for %p = %c0 to %k step %c1 {
        %a = memref.load %A[%i, %p] : memref<16x8xf32>
        %b = memref.load %B[%p, %j] : memref<8x12xf32>
        %c = memref.load %C[%i, %j] : memref<16x12xf32>
        %ab = arith.mulf %a, %b : f32
        %s = arith.addf %c, %ab : f32
        memref.store %s, %C[%i, %j] : memref<16x12xf32>
      }
    }
  }
  return
}
"""

SUM_OF_SQUARES_F64 = """
func.func @sumsq(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %v2 = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %v2 : f64
    scf.yield %a : f64
  }
  return %r : f64
}
"""

# i32 arithmetic that wraps around, plus an i8 output to exercise narrow types.
AXPY_I32 = """
func.func @axpy(%a: i32, %x: memref<37xi32>, %y: memref<37xi32>, %lo: memref<37xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 37 : index
  scf.for %i = %c0 to %n step %c1 {
    %xv = memref.load %x[%i] : memref<37xi32>
    %yv = memref.load %y[%i] : memref<37xi32>
    %m = arith.muli %a, %xv : i32
    %s = arith.addi %m, %yv : i32
    memref.store %s, %y[%i] : memref<37xi32>
    %t = arith.trunci %s : i32 to i8
    memref.store %t, %lo[%i] : memref<37xi8>
  }
  return
}
"""

# Dynamic 2-D shape, an index parameter and an i1 parameter.
SCALE_ROWS_DYN = """
func.func @scale_rows(%a: memref<?x?xf32>, %rows: index, %neg: i1, %k: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = memref.dim %a, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %s = arith.mulf %v, %k : f32
      %n = arith.negf %s : f32
      %r = arith.select %neg, %n, %s : f32
      memref.store %r, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
"""

LINALG_MATMUL = """
func.func @mm(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  linalg.matmul ins(%A, %B : memref<?x?xf32>, memref<?x?xf32>) outs(%C : memref<?x?xf32>)
  return
}
"""

EXP_AND_STATS = """
func.func @exp_stats(%x: memref<200x200xf32>, %y: memref<200x200xf32>) -> (f32, i64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 200 : index
  %z = arith.constant 0.0 : f32
  %cnt0 = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%mx = %z, %cnt = %cnt0) -> (f32, i64) {
    %q:2 = scf.for %j = %c0 to %n step %c1 iter_args(%mx2 = %mx, %cnt2 = %cnt) -> (f32, i64) {
      %v = memref.load %x[%i, %j] : memref<200x200xf32>
      %e = math.exp %v : f32
      memref.store %e, %y[%i, %j] : memref<200x200xf32>
      %m = arith.maximumf %mx2, %e : f32
      %pos = arith.cmpf ogt, %v, %z : f32
      %inc = arith.addi %cnt2, %one : i64
      %c = arith.select %pos, %inc, %cnt2 : i64
      scf.yield %m, %c : f32, i64
    }
    scf.yield %q#0, %q#1 : f32, i64
  }
  return %r#0, %r#1, %n : f32, i64, index
}
"""


def test_scf_matmul_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 12)).astype(np.float32)
    c = rng.standard_normal((16, 12)).astype(np.float32)
    out = mlir.run(MATMUL_SCF, "matmul", [a, b, c])
    assert out.memrefs[2].dtype == np.float32 and out.memrefs[2].shape == (16, 12)
    np.testing.assert_allclose(out.memrefs[2], c + a @ b, rtol=1e-5, atol=1e-5)
    # inputs are passed by value: untouched arguments come back unchanged, bit for bit
    np.testing.assert_array_equal(out.memrefs[0], a)
    assert out.results == []


def test_f64_reduction_returns_exact_scalar():
    x = np.random.default_rng(1).standard_normal(1001)
    out = mlir.run(SUM_OF_SQUARES_F64, "sumsq", [x], result_types=["f64"])
    (total,) = out.results
    assert isinstance(total, np.float64)
    want = 0.0
    for v in x:  # same order of additions as the loop: identical bits expected
        want += v * v
    assert total == want


def test_i32_kernel_wraps_and_truncates_like_numpy():
    rng = np.random.default_rng(2)
    x = rng.integers(-(2**31), 2**31, 37, dtype=np.int64).astype(np.int32)
    y = rng.integers(-(2**31), 2**31, 37, dtype=np.int64).astype(np.int32)
    lo = np.zeros(37, np.int8)
    a = -123457
    out = mlir.run(AXPY_I32, "axpy", [a, x, y, lo])
    want = (np.int64(a) * x.astype(np.int64) + y).astype(np.int32)  # wraps mod 2**32
    np.testing.assert_array_equal(out.memrefs[2], want)
    np.testing.assert_array_equal(out.memrefs[3], want.astype(np.int8))
    assert out.memrefs[0] is None


def test_dynamic_shapes_index_and_i1_params():
    a = np.arange(5 * 7, dtype=np.float32).reshape(5, 7) / 3
    out = mlir.run(SCALE_ROWS_DYN, "scale_rows", [a, 3, True, 2.5])
    want = a.copy()
    want[:3] *= np.float32(-2.5)
    np.testing.assert_array_equal(out.memrefs[0], want)
    out = mlir.run(SCALE_ROWS_DYN, "scale_rows", [a, 5, False, 0.5])
    np.testing.assert_array_equal(out.memrefs[0], a * np.float32(0.5))


def test_linalg_matmul_dynamic():
    rng = np.random.default_rng(3)
    a = rng.random((9, 5), dtype=np.float32)
    b = rng.random((5, 11), dtype=np.float32)
    c = np.zeros((9, 11), np.float32)
    out = mlir.run(LINALG_MATMUL, "mm", [a, b, c])
    np.testing.assert_allclose(out.memrefs[2], a @ b, rtol=1e-5, atol=1e-6)


def test_large_input_math_and_multiple_results():
    x = np.random.default_rng(4).uniform(-3, 3, (200, 200)).astype(np.float32)
    y = np.zeros_like(x)
    out = mlir.run(EXP_AND_STATS, "exp_stats", [x, y], result_types=[np.float32, np.int64, "index"])
    np.testing.assert_allclose(out.memrefs[1], np.exp(x), rtol=1e-5)
    mx, count, n = out.results
    np.testing.assert_allclose(mx, np.exp(x).max(), rtol=1e-5)
    assert count == int((x > 0).sum())
    assert n == 200


def test_xdsl_module_runs():
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser

    from loom.passes.pipeline import default_context

    module = Parser(default_context(), MATMUL_SCF).parse_module()
    assert isinstance(module, ModuleOp)
    a = np.ones((16, 8), np.float32)
    b = np.full((8, 12), 2, np.float32)
    c = np.zeros((16, 12), np.float32)
    out = mlir.run(module, "matmul", [a, b, c])
    np.testing.assert_array_equal(out.memrefs[2], np.full((16, 12), 16, np.float32))


@pytest.mark.parametrize(
    "args, message",
    [
        ([np.zeros((16, 8), np.float64), np.zeros((8, 12), np.float32), np.zeros((16, 12), np.float32)], "dtype float64"),
        ([np.zeros((8, 16), np.float32), np.zeros((8, 12), np.float32), np.zeros((16, 12), np.float32)], "shape (8, 16)"),
        ([np.zeros((16, 8), np.float32)], "takes 3 arguments, got 1"),
        ([1.0, np.zeros((8, 12), np.float32), np.zeros((16, 12), np.float32)], "expected a numpy array"),
    ],
)
def test_bad_arguments_raise_loom_error(args, message):
    with pytest.raises(LoomError) as info:
        mlir.run(MATMUL_SCF, "matmul", args)
    assert message in str(info.value)
    assert "@matmul" in str(info.value)


def test_bad_scalars_and_names_raise_loom_error():
    x = np.zeros(37, np.int32)
    lo = np.zeros(37, np.int8)
    with pytest.raises(LoomError, match="does not fit i32"):
        mlir.run(AXPY_I32, "axpy", [2**32, x, x.copy(), lo])
    with pytest.raises(LoomError, match="expected an integer for i32"):
        mlir.run(AXPY_I32, "axpy", [1.5, x, x.copy(), lo])
    with pytest.raises(LoomError, match=r"no func.func named @nope .*axpy"):
        mlir.run(AXPY_I32, "nope", [])
    with pytest.raises(LoomError, match=r"returns \(f64\), expected"):
        mlir.run(SUM_OF_SQUARES_F64, "sumsq", [np.zeros(3)], result_types=["f32"])


def test_runner_failure_is_a_loom_error_with_diagnostics():
    # An external function that does not exist: lowering works, the JIT cannot link.
    text = """
    func.func private @no_such_symbol(f32) -> f32
    func.func @k(%x: f32) -> f32 {
      %y = func.call @no_such_symbol(%x) : (f32) -> f32
      return %y : f32
    }
    """
    with pytest.raises(LoomError) as info:
        mlir.run(text, "k", [1.0])
    assert "mlir-runner" in str(info.value)
    assert "no_such_symbol" in str(info.value)


MIXED_TYPES = """
func.func @mixed(%a: memref<*xf32>, %b: memref<4xf32, strided<[1], offset: ?>>, %c: memref<f64>,
                 %d: memref<3xindex>, %e: memref<2x?xi1>, %f: memref<5xi16>) -> (i1, i8, f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %b[%c1] : memref<4xf32, strided<[1], offset: ?>>
  %w = arith.extf %v : f32 to f64
  memref.store %w, %c[] : memref<f64>
  %i = memref.load %d[%c1] : memref<3xindex>
  %j = arith.addi %i, %i : index
  memref.store %j, %d[%c0] : memref<3xindex>
  %t = memref.load %e[%c1, %c0] : memref<2x?xi1>
  %false = arith.constant false
  memref.store %false, %e[%c1, %c0] : memref<2x?xi1>
  %x = memref.load %f[%c1] : memref<5xi16>
  %x8 = arith.trunci %x : i16 to i8
  %h = arith.truncf %v : f32 to f16
  return %t, %x8, %h : i1, i8, f16
}
"""


def test_unranked_strided_zero_d_index_i1_i16_f16():
    a = np.ones(3, np.float32)
    b = np.array([0.5, 1.25, 2.0, 3.0], np.float32)
    c = np.zeros((), np.float64)
    d = np.array([5, -7, 9], np.int64)
    e = np.array([[True, False, True], [True, True, False]])
    f = np.array([1, -200, 3, 4, 5], np.int16)
    out = mlir.run(MIXED_TYPES, "mixed", [a, b, c, d, e, f])
    assert out.memrefs[2].shape == () and out.memrefs[2] == 1.25
    np.testing.assert_array_equal(out.memrefs[3], [-14, -7, 9])
    np.testing.assert_array_equal(out.memrefs[4], [[True, False, True], [False, True, False]])
    np.testing.assert_array_equal(out.memrefs[5], f)
    flag, low, half = out.results
    assert flag == np.True_
    assert low.dtype == np.int8 and low == np.int8(56)  # -200 truncated to 8 bits
    assert half.dtype == np.float16 and half == np.float16(1.25)
