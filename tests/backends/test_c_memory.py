"""Subviews, strided layouts, temporary buffers, globals and affine loops, checked against numpy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tests.backends.cbackend_helpers import build

pytestmark = pytest.mark.sanitize
rng = np.random.default_rng(1)

TILED = """
func.func private @scale_tile(%T: memref<8x8xf32, strided<[?, 1], offset: ?>>, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %T[%i, %j] : memref<8x8xf32, strided<[?, 1], offset: ?>>
      %y = arith.mulf %x, %f : f32
      memref.store %y, %T[%i, %j] : memref<8x8xf32, strided<[?, 1], offset: ?>>
    }
  }
  return
}

func.func @scale_by_tiles(%A: memref<32x48xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %one = arith.constant 1.0 : f32
  scf.for %ti = %c0 to %c32 step %c8 {
    scf.for %tj = %c0 to %c48 step %c8 {
      %f0 = arith.index_cast %ti : index to i32
      %f1 = arith.sitofp %f0 : i32 to f32
      %f = arith.addf %f1, %one : f32
      %tile = memref.subview %A[%ti, %tj] [8, 8] [1, 1] : memref<32x48xf32> to memref<8x8xf32, strided<[48, 1], offset: ?>>
      %cast = "memref.cast"(%tile) : (memref<8x8xf32, strided<[48, 1], offset: ?>>) -> memref<8x8xf32, strided<[?, 1], offset: ?>>
      func.call @scale_tile(%cast, %f) : (memref<8x8xf32, strided<[?, 1], offset: ?>>, f32) -> ()
    }
  }
  return
}

func.func @row_and_column_sums(%A: memref<?x?xf32>, %rows: memref<?xf32>, %cols: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = memref.dim %A, %c0 : memref<?x?xf32>
  %m = memref.dim %A, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %row = memref.subview %A[%i, 0] [1, %m] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[1], offset: ?>>
    %s = scf.for %j = %c0 to %m step %c1 iter_args(%a = %z) -> (f32) {
      %x = memref.load %row[%j] : memref<?xf32, strided<[1], offset: ?>>
      %b = arith.addf %a, %x : f32
      scf.yield %b : f32
    }
    memref.store %s, %rows[%i] : memref<?xf32>
  }
  scf.for %j = %c0 to %m step %c1 {
    %col = memref.subview %A[0, %j] [%n, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?], offset: ?>>
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
      %x = memref.load %col[%i] : memref<?xf32, strided<[?], offset: ?>>
      %b = arith.addf %a, %x : f32
      scf.yield %b : f32
    }
    memref.store %s, %cols[%j] : memref<?xf32>
  }
  return
}

func.func @every_other(%A: memref<?x?xf32, strided<[?, ?], offset: ?>>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %half = arith.constant 2 : index
  %h = arith.ceildivsi %n, %half : index
  %sv = memref.subview %A[0, 1] [%h, 1] [2, 1] : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<?xf32, strided<[?], offset: ?>>
  %dst = memref.subview %out[0] [%h] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  "memref.copy"(%sv, %dst) : (memref<?xf32, strided<[?], offset: ?>>, memref<?xf32, strided<[1]>>) -> ()
  return
}
"""


def test_subview_strided_tiles_passed_to_private_function():
    a = rng.standard_normal((32, 48), dtype=np.float32)
    expected = a * (np.arange(32, dtype=np.float32) // 8 * 8 + 1)[:, None]
    build(TILED).function("scale_by_tiles")(a)
    np.testing.assert_allclose(a, expected, rtol=1e-6)


def test_rank_reducing_subviews():
    a = rng.standard_normal((9, 14), dtype=np.float32)
    rows = np.zeros(9, np.float32)
    cols = np.zeros(14, np.float32)
    build(TILED).function("row_and_column_sums")(a, rows, cols)
    np.testing.assert_allclose(rows, a.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cols, a.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_strided_layout_argument_accepts_numpy_views():
    base = rng.standard_normal((20, 30), dtype=np.float32)
    view = base[3:18, ::-2][:, ::1].T.T[::1, 2:]  # non-contiguous, negative column stride
    out = np.zeros((view.shape[0] + 1) // 2, np.float32)
    build(TILED).function("every_other")(view, out)
    np.testing.assert_array_equal(out, view[::2, 1])


TEMPS = """
func.func @transpose_twice_plus(%A: memref<6x10xf32>, %B: memref<6x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  %T = memref.alloc() : memref<10x6xf32>
  %S = memref.alloca() : memref<6x10xf32>
  scf.for %i = %c0 to %c6 step %c1 {
    scf.for %j = %c0 to %c10 step %c1 {
      %x = memref.load %A[%i, %j] : memref<6x10xf32>
      memref.store %x, %T[%j, %i] : memref<10x6xf32>
    }
  }
  scf.for %j = %c0 to %c10 step %c1 {
    scf.for %i = %c0 to %c6 step %c1 {
      %x = memref.load %T[%j, %i] : memref<10x6xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %S[%i, %j] : memref<6x10xf32>
    }
  }
  "memref.copy"(%S, %B) : (memref<6x10xf32>, memref<6x10xf32>) -> ()
  memref.dealloc %T : memref<10x6xf32>
  return
}

func.func @prefix_sums(%A: memref<?xi64>, %B: memref<?xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c0 : memref<?xi64>
  %z = arith.constant 0 : i64
  %buf = memref.alloc(%n) : memref<?xi64>
  %big = memref.alloca() : memref<100000xi64>
  %tmp = memref.alloca(%n) : memref<?xi64>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z) -> (i64) {
    %x = memref.load %A[%i] : memref<?xi64>
    %t = arith.addi %s, %x : i64
    memref.store %t, %buf[%i] : memref<?xi64>
    memref.store %t, %big[%i] : memref<100000xi64>
    scf.yield %t : i64
  }
  scf.for %i = %c0 to %n step %c1 {
    %per_iteration = memref.alloca() : memref<3000xi64>
    %x = memref.load %big[%i] : memref<100000xi64>
    memref.store %x, %per_iteration[%c0] : memref<3000xi64>
    %y = memref.load %per_iteration[%c0] : memref<3000xi64>
    memref.store %y, %tmp[%i] : memref<?xi64>
  }
  "memref.copy"(%tmp, %B) : (memref<?xi64>, memref<?xi64>) -> ()
  memref.dealloc %buf : memref<?xi64>
  return %last : i64
}
"""


def test_alloc_and_alloca_temporaries():
    mod = build(TEMPS)
    a = rng.standard_normal((6, 10), dtype=np.float32)
    b = np.zeros_like(a)
    mod.function("transpose_twice_plus")(a, b)
    np.testing.assert_array_equal(b, a + a)
    x = rng.integers(-10**9, 10**9, 777)
    y = np.zeros_like(x)
    last = mod.function("prefix_sums")(x, y)
    np.testing.assert_array_equal(y, np.cumsum(x))
    assert int(last) == int(x.sum())
    # 100000 x i64 must not live on the stack; the small static alloca may.
    assert re.search(r"loomh_alloc_tracked\(loomh_ck, \d+, 100000,", mod.c_source)


AFFINE = """
#tile_end = affine_map<(d0)[s0] -> (d0 + 32, s0)>
func.func @tiled_shift_add(%A: memref<?xf32>, %B: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  affine.for %t = 1 to %n step 32 {
    affine.for %i = %t to min #tile_end(%t)[%n] {
      %x = affine.load %A[%i - 1] : memref<?xf32>
      %y = affine.load %A[%i] : memref<?xf32>
      %s = arith.addf %x, %y : f32
      affine.store %s, %B[%i] : memref<?xf32>
    }
  }
  return
}

func.func @tiled_matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %A, %c0 : memref<?x?xf32>
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %N = memref.dim %B, %c1 : memref<?x?xf32>
  affine.for %ii = 0 to %M step 4 {
    affine.for %jj = 0 to %N step 8 {
      affine.for %i = #map_id(%ii) to min affine_map<(d0)[s0] -> (d0 + 4, s0)>(%ii)[%M] {
        affine.for %j = #map_id(%jj) to min affine_map<(d0)[s0] -> (d0 + 8, s0)>(%jj)[%N] {
          %z = arith.constant 0.0 : f32
          %acc = affine.for %k = 0 to %K iter_args(%a = %z) -> (f32) {
            %x = affine.load %A[%i, %k] : memref<?x?xf32>
            %y = affine.load %B[%k, %j] : memref<?x?xf32>
            %p = arith.mulf %x, %y : f32
            %q = arith.addf %a, %p : f32
            affine.yield %q : f32
          }
          affine.store %acc, %C[%i, %j] : memref<?x?xf32>
        }
      }
    }
  }
  return
}

func.func @affine_index_math(%n: index) -> (index, index, index, index) {
  %a = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%n)
  %b = affine.apply affine_map<(d0) -> (d0 ceildiv 4)>(%n)
  %c = affine.apply affine_map<(d0) -> (d0 mod 4)>(%n)
  %d = affine.min affine_map<(d0)[s0] -> (d0 * 2 + 3, s0 - 1, 100)>(%n)[%n]
  return %a, %b, %c, %d : index, index, index, index
}
"""


def test_affine_tiled_loop_with_min_bound_remainder():
    mod = build(AFFINE.replace("#map_id(%ii)", "%ii").replace("#map_id(%jj)", "%jj"))
    for n in (1, 2, 31, 32, 33, 100):
        a = rng.standard_normal(n, dtype=np.float32)
        b = np.zeros(n, np.float32)
        mod.function("tiled_shift_add")(a, b)
        expected = np.zeros(n, np.float32)
        expected[1:] = a[:-1] + a[1:]
        np.testing.assert_array_equal(b, expected)
    a = rng.standard_normal((10, 7), dtype=np.float32)
    b = rng.standard_normal((7, 13), dtype=np.float32)
    c = np.zeros((10, 13), np.float32)
    mod.function("tiled_matmul")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_affine_floordiv_ceildiv_mod_min():
    mod = build(AFFINE.replace("#map_id(%ii)", "%ii").replace("#map_id(%jj)", "%jj"))
    fn = mod.function("affine_index_math")
    for n in (-9, -4, -1, 0, 1, 7, 8, 60):
        got = tuple(int(x) for x in fn(n))
        assert got == (n // 4, -((-n) // 4), n % 4, min(2 * n + 3, n - 1, 100))


GLOBALS = """
"memref.global"() <{sym_name = "lut", sym_visibility = "private", type = memref<4xi32>, initial_value = dense<[10, -20, 30, -40]> : tensor<4xi32>, constant}> : () -> ()
func.func @lookup(%I: memref<?xindex>, %O: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %I, %c0 : memref<?xindex>
  %g = memref.get_global @lut : memref<4xi32>
  scf.for %i = %c0 to %n step %c1 {
    %k = memref.load %I[%i] : memref<?xindex>
    %v = memref.load %g[%k] : memref<4xi32>
    memref.store %v, %O[%i] : memref<?xi32>
  }
  return
}
"""


def test_memref_global_lookup_table():
    idx = rng.integers(0, 4, 50).astype(np.intp)
    out = np.zeros(50, np.int32)
    build(GLOBALS).function("lookup")(idx, out)
    np.testing.assert_array_equal(out, np.array([10, -20, 30, -40], np.int32)[idx])


GATHER = """
func.func @gather(%idx: memref<64xi8>, %table: memref<256x{T}>, %out: memref<64x{T}>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %b = memref.load %idx[%i] : memref<64xi8>
    %w = arith.extui %b : i8 to i32
    %j = arith.index_cast %w : i32 to index
    %v = memref.load %table[%j] : memref<256x{T}>
    memref.store %v, %out[%i] : memref<64x{T}>
  }
  return
}
"""


@pytest.mark.parametrize("elem, dtype, opaque", [("i8", np.int8, True), ("i16", np.int16, True),
                                                 ("i32", np.int32, False), ("f64", np.float64, False)])
def test_a_narrow_gather_index_is_hidden_from_the_vectorizer(elem, dtype, opaque):
    """A table load whose index is computed from a load in the same loop (a LUT): for elements of at most 16 bits
    the index goes through an empty asm (gcc would vectorize the loop with emulated gathers, slower than scalar);
    wider elements and native mode keep it. The values are the table's either way."""
    from tests.backends.cbackend_helpers import parse

    from loom.backends.c import emit_c

    text = GATHER.replace("{T}", elem)
    assert ('__asm__("" : "+r"' in emit_c(parse(text))) == opaque
    assert '__asm__' not in emit_c(parse(text), native=True)
    idx = rng.integers(-128, 128, 64).astype(np.int8)
    table = rng.integers(-100, 100, 256).astype(dtype)
    out = np.zeros(64, dtype)
    build(text).function("gather")(idx, table, out)
    np.testing.assert_array_equal(out, table[idx.view(np.uint8)])


def test_hls_cpp_takes_no_gather_barrier():
    """The HLS backend shares the C handlers; its C++ gets no asm (an HLS tool takes none)."""
    from tests.backends.cbackend_helpers import parse

    from loom.backends.hls import emit_hls

    assert "__asm__" not in emit_hls(parse(GATHER.replace("{T}", "i8"))).source
