"""External functions linked from C, affine.if, and IR the backend must refuse."""

from __future__ import annotations

import numpy as np
import pytest
from tests.backends.cbackend_helpers import build, parse

from loom.backends.c import compile_module, emit_c
from loom.errors import LoomError

EXTERN = """
func.func private @ext_fill(memref<?xf32>, f32) -> ()
func.func private @ext_scale(f64) -> f64

func.func @fill_and_scale(%A: memref<?xf32>, %v: f32, %x: f64) -> f64 {
  func.call @ext_fill(%A, %v) : (memref<?xf32>, f32) -> ()
  %y = func.call @ext_scale(%x) : (f64) -> f64
  return %y : f64
}
"""

RUNTIME_C = """
#include <stdint.h>
typedef struct { float *allocated; float *aligned; intptr_t offset; intptr_t sizes[1]; intptr_t strides[1]; } desc1;
void ext_fill(desc1 *d, float v) {
  for (intptr_t i = 0; i < d->sizes[0]; i++) d->aligned[d->offset + i * d->strides[0]] = v + (float)i;
}
double ext_scale(double x) { return 3.0 * x; }
"""


@pytest.mark.sanitize
def test_external_functions_use_descriptor_convention_and_link(tmp_path):
    runtime = tmp_path / "runtime.c"
    runtime.write_text(RUNTIME_C)
    mod = compile_module(parse(EXTERN), extra_flags=[str(runtime)])
    a = np.zeros(7, np.float32)
    y = mod.function("fill_and_scale")(a, 0.5, 2.0)
    np.testing.assert_array_equal(a, 0.5 + np.arange(7, dtype=np.float32))
    assert y == 6.0
    assert "extern void ext_fill(" in mod.c_source
    with pytest.raises(LoomError, match="no public function @ext_scale"):
        mod.function("ext_scale")


AFFINE_IF = """
func.func @clamp_band(%A: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?xi32>
  %z = arith.constant 0 : i32
  affine.for %i = 0 to %n {
    "affine.if"(%i, %n) <{condition = affine_set<(d0)[s0] : (d0 - 2 >= 0, s0 - d0 - 3 >= 0)>}> ({
      affine.store %z, %A[%i] : memref<?xi32>
      affine.yield
    }, {
    }) : (index, index) -> ()
  }
  return
}
"""


@pytest.mark.sanitize
def test_affine_if_integer_set():
    a = np.arange(1, 11, dtype=np.int32)
    build(AFFINE_IF).function("clamp_band")(a)
    expected = np.arange(1, 11, dtype=np.int32)
    expected[2:8] = 0  # 2 <= i <= n - 3
    np.testing.assert_array_equal(a, expected)


def test_memref_result_is_refused_with_function_name():
    module = parse("""
func.func @make() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
""")
    with pytest.raises(LoomError, match="func @make: memref results are not supported"):
        emit_c(module)


def test_memref_loop_carried_value_is_refused():
    module = parse("""
func.func @f(%A: memref<4xf32>, %B: memref<4xf32>, %c: i1) {
  %m = scf.if %c -> (memref<4xf32>) {
    scf.yield %A : memref<4xf32>
  } else {
    scf.yield %B : memref<4xf32>
  }
  return
}
""")
    with pytest.raises(LoomError, match="'scf.if' with memref results is not supported"):
        emit_c(module)


@pytest.mark.sanitize
def test_rank0_and_f16_memrefs():
    mod = build("""
func.func @acc(%S: memref<f32>, %H: memref<3xf16>) {
  %x = memref.load %S[] : memref<f32>
  %c0 = arith.constant 0 : index
  %h = memref.load %H[%c0] : memref<3xf16>
  %hx = arith.extf %h : f16 to f32
  %y = arith.addf %x, %hx : f32
  memref.store %y, %S[] : memref<f32>
  %t = arith.truncf %y : f32 to f16
  %c2 = arith.constant 2 : index
  memref.store %t, %H[%c2] : memref<3xf16>
  return
}""")
    s = np.array(1.5, np.float32)
    h = np.array([2.25, 0, 0], np.float16)
    mod.function("acc")(s, h)
    assert s == np.float32(3.75)
    np.testing.assert_array_equal(h, np.array([2.25, 0, 3.75], np.float16))
