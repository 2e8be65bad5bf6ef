"""Loop nests, reductions, branches and while loops, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from tests.backends.cbackend_helpers import build

pytestmark = pytest.mark.sanitize
rng = np.random.default_rng(0)

MATMUL_STATIC = """
func.func @matmul(%A: memref<12x20xf32>, %B: memref<20x9xf32>, %C: memref<12x9xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = arith.constant 12 : index
  %N = arith.constant 9 : index
  %K = arith.constant 20 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %M step %c1 {
    scf.for %j = %c0 to %N step %c1 {
      %acc = scf.for %k = %c0 to %K step %c1 iter_args(%a = %z) -> (f32) {
        %x = memref.load %A[%i, %k] : memref<12x20xf32>
        %y = memref.load %B[%k, %j] : memref<20x9xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %a, %p : f32
        scf.yield %s : f32
      }
      memref.store %acc, %C[%i, %j] : memref<12x9xf32>
    }
  }
  return
}
"""

MATMUL_DYNAMIC = """
func.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %A, %c0 : memref<?x?xf32>
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %N = memref.dim %B, %c1 : memref<?x?xf32>
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %M step %c1 {
    scf.for %j = %c0 to %N step %c1 {
      %acc = scf.for %k = %c0 to %K step %c1 iter_args(%a = %z) -> (f32) {
        %x = memref.load %A[%i, %k] : memref<?x?xf32>
        %y = memref.load %B[%k, %j] : memref<?x?xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %a, %p : f32
        scf.yield %s : f32
      }
      memref.store %acc, %C[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
"""


def test_matmul_static_shape():
    a = rng.standard_normal((12, 20), dtype=np.float32)
    b = rng.standard_normal((20, 9), dtype=np.float32)
    c = np.full((12, 9), np.nan, np.float32)
    build(MATMUL_STATIC).function("matmul")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n", [(7, 13, 5), (1, 1, 1), (16, 3, 33)])
def test_matmul_dynamic_shape(m, k, n):
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.zeros((m, n), np.float32)
    build(MATMUL_DYNAMIC).function("matmul")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


STENCIL = """
func.func @blur(%I: memref<?x?xf32>, %O: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %H = memref.dim %I, %c0 : memref<?x?xf32>
  %W = memref.dim %I, %c1 : memref<?x?xf32>
  %Hm = arith.subi %H, %c1 : index
  %Wm = arith.subi %W, %c1 : index
  %ninth = arith.constant 0.111111111 : f32
  %z = arith.constant 0.0 : f32
  scf.for %y = %c0 to %H step %c1 {
    scf.for %x = %c0 to %W step %c1 {
      %top = arith.cmpi eq, %y, %c0 : index
      %bot = arith.cmpi eq, %y, %Hm : index
      %lft = arith.cmpi eq, %x, %c0 : index
      %rgt = arith.cmpi eq, %x, %Wm : index
      %b1 = arith.ori %top, %bot : i1
      %b2 = arith.ori %lft, %rgt : i1
      %border = arith.ori %b1, %b2 : i1
      %v = scf.if %border -> (f32) {
        %e = memref.load %I[%y, %x] : memref<?x?xf32>
        scf.yield %e : f32
      } else {
        %ym = arith.subi %y, %c1 : index
        %xm = arith.subi %x, %c1 : index
        %sum = scf.for %dy = %c0 to %c2 step %c1 iter_args(%s0 = %z) -> (f32) {
          %s3 = scf.for %dx = %c0 to %c2 step %c1 iter_args(%s1 = %s0) -> (f32) {
            %yy = arith.addi %ym, %dy : index
            %xx = arith.addi %xm, %dx : index
            %e = memref.load %I[%yy, %xx] : memref<?x?xf32>
            %s2 = arith.addf %s1, %e : f32
            scf.yield %s2 : f32
          }
          scf.yield %s3 : f32
        }
        %last_y = arith.addi %y, %c1 : index
        %last_x = arith.addi %x, %c1 : index
        %r0 = scf.for %d = %c0 to %c2 step %c1 iter_args(%s = %sum) -> (f32) {
          %yy = arith.addi %ym, %d : index
          %e = memref.load %I[%yy, %last_x] : memref<?x?xf32>
          %s2 = arith.addf %s, %e : f32
          scf.yield %s2 : f32
        }
        %r1 = scf.for %d = %c0 to %c2 step %c1 iter_args(%s = %r0) -> (f32) {
          %xx = arith.addi %xm, %d : index
          %e = memref.load %I[%last_y, %xx] : memref<?x?xf32>
          %s2 = arith.addf %s, %e : f32
          scf.yield %s2 : f32
        }
        %corner = memref.load %I[%last_y, %last_x] : memref<?x?xf32>
        %all = arith.addf %r1, %corner : f32
        %avg = arith.mulf %all, %ninth : f32
        scf.yield %avg : f32
      }
      memref.store %v, %O[%y, %x] : memref<?x?xf32>
    }
  }
  return
}
"""


def test_stencil_with_scf_if_borders():
    img = rng.standard_normal((23, 31), dtype=np.float32)
    out = np.zeros_like(img)
    build(STENCIL).function("blur")(img, out)
    expected = img.copy()
    inner = sum(img[1 + dy : 22 + dy, 1 + dx : 30 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    expected[1:-1, 1:-1] = inner * np.float32(0.111111111)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


REDUCTION = """
func.func @sum_and_max(%A: memref<?xf64>) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %s, %m = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z, %b = %ninf) -> (f64, f64) {
    %x = memref.load %A[%i] : memref<?xf64>
    %a2 = arith.addf %a, %x : f64
    %b2 = arith.maximumf %b, %x : f64
    scf.yield %a2, %b2 : f64, f64
  }
  return %s, %m : f64, f64
}

func.func @fib(%n: i32) -> i64 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a0 = arith.constant 0 : i64
  %b0 = arith.constant 1 : i64
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %a0, %b = %b0) -> (i64, i64) : i32 {
    %s = arith.addi %a, %b : i64
    scf.yield %b, %s : i64, i64
  }
  return %r#0 : i64
}
"""


def test_loop_carried_reduction_two_results():
    a = rng.standard_normal(1001)
    total, biggest = build(REDUCTION).function("sum_and_max")(a)
    assert total == pytest.approx(a.sum(), rel=1e-12)
    assert biggest == a.max()
    assert isinstance(total, np.float64)


def test_swapping_iter_args_fibonacci():
    fib = build(REDUCTION).function("fib")
    expected = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55]
    assert [int(fib(n)) for n in range(11)] == expected
    assert int(fib(90)) == 2880067194370816120


WHILE = """
func.func @collatz_steps(%n0: i64) -> i32 {
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %three = arith.constant 3 : i64
  %zero32 = arith.constant 0 : i32
  %one32 = arith.constant 1 : i32
  %res:2 = scf.while (%n = %n0, %steps = %zero32) : (i64, i32) -> (i64, i32) {
    %go = arith.cmpi ne, %n, %one : i64
    scf.condition(%go) %n, %steps : i64, i32
  } do {
  ^bb0(%m: i64, %s: i32):
    %r = arith.remui %m, %two : i64
    %even = arith.cmpi eq, %r, %one : i64
    %next = scf.if %even -> (i64) {
      %t = arith.muli %m, %three : i64
      %u = arith.addi %t, %one : i64
      scf.yield %u : i64
    } else {
      %h = arith.divui %m, %two : i64
      scf.yield %h : i64
    }
    %s2 = arith.addi %s, %one32 : i32
    scf.yield %next, %s2 : i64, i32
  }
  return %res#1 : i32
}
"""


def _collatz(n: int) -> int:
    steps = 0
    while n != 1:
        n = 3 * n + 1 if n % 2 else n // 2
        steps += 1
    return steps


def test_scf_while_collatz():
    fn = build(WHILE).function("collatz_steps")
    for n in (1, 2, 3, 7, 27, 97, 871):
        assert int(fn(n)) == _collatz(n)


PARALLEL = """
func.func @axpy2d(%X: memref<?x?xf32>, %Y: memref<?x?xf32>, %a: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %X, %c0 : memref<?x?xf32>
  %m = memref.dim %X, %c1 : memref<?x?xf32>
  "scf.parallel"(%c0, %c0, %n, %m, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %x = memref.load %X[%i, %j] : memref<?x?xf32>
    %y = memref.load %Y[%i, %j] : memref<?x?xf32>
    %t = arith.mulf %a, %x : f32
    %r = arith.addf %t, %y : f32
    memref.store %r, %Y[%i, %j] : memref<?x?xf32>
    "scf.reduce"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  return
}

func.func @total(%X: memref<?xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %n = memref.dim %X, %c0 : memref<?xi32>
  %s = "scf.parallel"(%c0, %n, %c1, %z) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %x = memref.load %X[%i] : memref<?xi32>
    "scf.reduce"(%x) ({
    ^bb1(%l: i32, %r: i32):
      %q = arith.addi %l, %r : i32
      "scf.reduce.return"(%q) : (i32) -> ()
    }) : (i32) -> ()
  }) : (index, index, index, i32) -> i32
  return %s : i32
}
"""


def test_scf_parallel_elementwise_and_reduction():
    mod = build(PARALLEL)
    x = rng.standard_normal((17, 6), dtype=np.float32)
    y = rng.standard_normal((17, 6), dtype=np.float32)
    expected = np.float32(2.5) * x + y
    mod.function("axpy2d")(x, y, 2.5)
    np.testing.assert_allclose(y, expected, rtol=1e-5)
    v = rng.integers(-1000, 1000, 333, dtype=np.int32)
    assert int(mod.function("total")(v)) == int(v.sum())


CALLS = """
func.func private @dot(%A: memref<?xf32>, %B: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = memref.load %B[%i] : memref<?xf32>
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %a, %p : f32
    scf.yield %q : f32
  }
  return %s : f32
}

func.func private @divmod(%a: i32, %b: i32) -> (i32, i32) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  return %q, %r : i32, i32
}

func.func @norm2_and_divmod(%A: memref<?xf32>, %a: i32, %b: i32) -> (f32, i32, i32) {
  %d = func.call @dot(%A, %A) : (memref<?xf32>, memref<?xf32>) -> f32
  %q, %r = func.call @divmod(%a, %b) : (i32, i32) -> (i32, i32)
  return %d, %q, %r : f32, i32, i32
}
"""


def test_func_call_of_private_functions():
    mod = build(CALLS)
    a = rng.standard_normal(50, dtype=np.float32)
    d, q, r = mod.function("norm2_and_divmod")(a, -17, 5)
    assert d == pytest.approx(float(np.dot(a, a)), rel=1e-5)
    assert (int(q), int(r)) == (-3, -2)  # C-style truncation, as arith.divsi/remsi
    # a dynamic divisor makes the module guarded (division checks): private bodies are loomc_*, still static
    assert "static float loomc_dot(loomh_ctx *" in mod.c_source


def test_private_function_is_not_callable_from_python():
    from loom.errors import LoomError

    with pytest.raises(LoomError, match="no public function @dot"):
        build(CALLS).function("dot")
