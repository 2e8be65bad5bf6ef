"""Checked mode of the C backend: a bad index, slice or divisor is a LoomError at the op's location.

Expected messages and values are computed by hand from the MLIR below; results of
correct programs are compared with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.backends.cbackend_helpers import parse, sanitizer_preload
from loom.backends.c import compile_module, emit_c
from loom.errors import LoomError

pytestmark = pytest.mark.sanitize


def checked(text: str, name: str):
    return compile_module(parse(text), checked=True).function(name)


SHIFT_1D = """
func.func @shift(%A: memref<?xf32>, %B: memref<?xf32>, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %B, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %d : index
    %x = memref.load %A[%j] : memref<?xf32> loc("shift.py":7:16)
    memref.store %x, %B[%i] : memref<?xf32> loc("shift.py":7:9)
  }
  return
}
"""


def test_load_past_the_end_reports_index_dim_size_and_location():
    fn = checked(SHIFT_1D, "shift")
    a = np.arange(16, dtype=np.float32)
    b = np.zeros(16, np.float32)
    with pytest.raises(LoomError) as info:
        fn(a, b, 1)
    err = info.value
    assert err.message == "index 16 out of range for dimension 0 of size 16 in memref.load"
    assert (err.filename, err.line, err.column) == ("shift.py", 7, 16)
    # stores before the failing iteration happened; nothing after it
    np.testing.assert_array_equal(b[:15], a[1:])
    assert b[15] == 0


def test_negative_index_is_out_of_range():
    fn = checked(SHIFT_1D, "shift")
    with pytest.raises(LoomError, match=r"^shift.py:7:16: index -3 out of range for dimension 0 of size 8 "):
        fn(np.ones(8, np.float32), np.zeros(8, np.float32), -3)


def test_correct_program_gives_the_same_result_in_both_modes():
    a = np.random.default_rng(0).standard_normal(40).astype(np.float32)
    for mode in (False, True):
        b = np.zeros(37, np.float32)
        compile_module(parse(SHIFT_1D), checked=mode).function("shift")(a, b, 3)
        np.testing.assert_array_equal(b, a[3:40])


STORE_2D = """
func.func @fill(%C: memref<?x?xi32>, %extra: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %C, %c0 : memref<?x?xi32>
  %n = memref.dim %C, %c1 : memref<?x?xi32>
  %n2 = arith.addi %n, %extra : index
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n2 step %c1 {
      %v = arith.index_cast %j : index to i32
      memref.store %v, %C[%i, %j] : memref<?x?xi32> loc("fill.py":21:13)
    }
  }
  return
}
"""


def test_2d_store_past_the_row_end():
    fn = checked(STORE_2D, "fill")
    c = np.zeros((3, 5), np.int32)
    fn(c, 0)
    np.testing.assert_array_equal(c, np.tile(np.arange(5, dtype=np.int32), (3, 1)))
    with pytest.raises(LoomError) as info:
        fn(np.zeros((3, 5), np.int32), 1)
    assert info.value.message == "index 5 out of range for dimension 1 of size 5 in memref.store"
    assert (info.value.filename, info.value.line) == ("fill.py", 21)


STATIC_AFFINE = """
func.func @stencil(%A: memref<8x6xf64>, %B: memref<8x6xf64>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 6 {
      %x = affine.load %A[%i + 1, %j] : memref<8x6xf64> loc("st.py":3:5)
      affine.store %x, %B[%i, %j] : memref<8x6xf64>
    }
  }
  return
}
"""


def test_affine_load_with_static_shape():
    fn = checked(STATIC_AFFINE, "stencil")
    a = np.arange(48, dtype=np.float64).reshape(8, 6)
    b = np.zeros((8, 6))
    with pytest.raises(LoomError, match="index 8 out of range for dimension 0 of size 8 in affine.load"):
        fn(a, b)
    np.testing.assert_array_equal(b[:7], a[1:])


AFFINE_STORE = """
func.func @put(%B: memref<4x?xf32>, %k: index) {
  %c = arith.constant 1.5 : f32
  affine.store %c, %B[%k floordiv 2, %k mod 3] : memref<4x?xf32> loc("put.py":9:1)
  return
}
"""


def test_affine_store_checks_map_results():
    fn = checked(AFFINE_STORE, "put")
    b = np.zeros((4, 2), np.float32)
    fn(b, 7)  # [3, 1]
    assert b[3, 1] == 1.5 and b.sum() == 1.5
    with pytest.raises(LoomError, match="index 2 out of range for dimension 1 of size 2 in affine.store"):
        fn(b, 5)  # [2, 2]
    with pytest.raises(LoomError, match="index 4 out of range for dimension 0 of size 4 in affine.store"):
        fn(b, 8)  # [4, 2]: dim 0 is checked first


SUBVIEW = """
func.func @window(%A: memref<?xf32>, %off: index) -> f32 {
  %c0 = arith.constant 0 : index
  %w = memref.subview %A[%off] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: ?>> loc("win.py":4:9)
  %x = memref.load %w[%c0] : memref<4xf32, strided<[1], offset: ?>>
  return %x : f32
}
"""


def test_subview_must_lie_inside_its_source():
    fn = checked(SUBVIEW, "window")
    a = np.arange(10, dtype=np.float32)
    assert fn(a, 6) == 6.0  # elements 6..9: the last window that fits
    with pytest.raises(LoomError) as info:
        fn(a, 7)
    assert info.value.message == (
        "slice offset 7, size 4, stride 1 out of range for dimension 0 of size 10 in memref.subview")
    assert (info.value.filename, info.value.line) == ("win.py", 4)


STRIDED_SUBVIEW = """
func.func @inner(%A: memref<?x?xi64>, %i: index) -> i64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %w = memref.subview %A[%i, 0] [1, 3] [1, 2] : memref<?x?xi64> to memref<3xi64, strided<[2], offset: ?>>
  %x = memref.load %w[%c2] : memref<3xi64, strided<[2], offset: ?>>
  %y = memref.load %w[%c1] : memref<3xi64, strided<[2], offset: ?>>
  %s = arith.addi %x, %y : i64
  return %s : i64
}
"""


def test_rank_reducing_strided_subview_checks_every_source_dim():
    fn = checked(STRIDED_SUBVIEW, "inner")
    a = np.arange(30, dtype=np.int64).reshape(5, 6)
    assert fn(a, 4) == a[4, 4] + a[4, 2]
    with pytest.raises(LoomError, match="slice offset 5, size 1, stride 1 out of range for dimension 0 of size 5"):
        fn(a, 5)
    narrow = np.arange(25, dtype=np.int64).reshape(5, 5)  # columns 0, 2, 4 fit
    assert fn(narrow, 1) == narrow[1, 4] + narrow[1, 2]
    with pytest.raises(LoomError, match="slice offset 0, size 3, stride 2 out of range for dimension 1 of size 4"):
        fn(np.zeros((5, 4), np.int64), 1)


MINUS_ONE = """
func.func @div32(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  return %q : i32
}
func.func @rem64(%a: i64, %b: i64) -> i64 {
  %q = arith.remsi %a, %b : i64
  return %q : i64
}
func.func @floor64(%a: i64, %b: i64) -> i64 {
  %q = arith.floordivsi %a, %b : i64
  return %q : i64
}
func.func @ceil_index(%a: index, %b: index) -> index {
  %q = arith.ceildivsi %a, %b : index
  return %q : index
}
func.func @div_literal(%a: i64) -> i64 {
  %m = arith.constant -1 : i64
  %q = arith.divsi %a, %m : i64
  return %q : i64
}
"""


@pytest.mark.sanitize
def test_signed_division_by_minus_one_wraps_as_numpy():
    """MIN / -1 does not fit: numpy wraps it to MIN (MIN % -1 is 0); C's ``/`` and ``%`` are undefined there, so
    the generated C must compute it without them (UBSan in the sanitizer session)."""
    module = compile_module(parse(MINUS_ONE))
    i32, i64 = np.iinfo(np.int32), np.iinfo(np.int64)
    with np.errstate(over="ignore", divide="ignore"):
        for a in (i32.min, i32.min + 1, -7, 0, 7, i32.max):
            assert module.function("div32")(a, -1) == np.int32(-a if a != i32.min else a)
        for a in (i64.min, i64.min + 1, -7, 0, 7, i64.max):
            want_floor = np.array([a], np.int64) // np.array([-1], np.int64)
            assert module.function("rem64")(a, -1) == np.array([a], np.int64) % np.array([-1], np.int64)
            assert module.function("floor64")(a, -1) == want_floor[0]
            assert module.function("ceil_index")(a, -1) == want_floor[0]  # exact: floor and ceil agree
            assert module.function("div_literal")(a) == want_floor[0]
        assert module.function("floor64")(-7, 2) == -4 and module.function("rem64")(-7, 2) == -1


DIVISION = """
func.func @div(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32 loc("div.py":2:12)
  return %q : i32
}
func.func @rem(%a: i64, %b: i64) -> i64 {
  %q = arith.remui %a, %b : i64 loc("div.py":5:12)
  return %q : i64
}
func.func @floor(%a: index, %b: index) -> index {
  %q = arith.floordivsi %a, %b : index
  return %q : index
}
"""


def test_integer_division_by_zero_and_overflow():
    module = compile_module(parse(DIVISION), checked=True)
    div, rem, floor = (module.function(n) for n in ("div", "rem", "floor"))
    assert div(-7, 2) == -3 and rem(7, 4) == 3 and floor(-7, 2) == -4
    with pytest.raises(LoomError) as info:
        div(5, 0)
    assert info.value.message == "integer division by zero in arith.divsi"
    assert (info.value.filename, info.value.line, info.value.column) == ("div.py", 2, 12)
    with pytest.raises(LoomError, match="^div.py:5:12: integer division by zero in arith.remui"):
        rem(5, 0)
    assert div(-(2**31), -1) == -(2**31)  # MIN / -1 wraps to MIN (numpy's answer): test_signed_division_by_minus_one
    with pytest.raises(LoomError) as info:
        floor(3, 0)
    # no source location in the IR: the error names the op and its function
    assert info.value.filename is None and info.value.where == "'arith.floordivsi' in @floor"


CALLS = """
func.func private @get(%A: memref<?xf32>, %i: index) -> f32 {
  %x = memref.load %A[%i] : memref<?xf32> loc("lib.py":30:11)
  return %x : f32
}
func.func @twice(%A: memref<?xf32>, %i: index) -> (f32, f32) {
  %c1 = arith.constant 1 : index
  %t = memref.alloc() : memref<1024xf32>
  %tmp = memref.alloca() : memref<8192xf32>
  %x = func.call @get(%A, %i) : (memref<?xf32>, index) -> f32
  %j = arith.addi %i, %c1 : index
  %y = func.call @get(%A, %j) : (memref<?xf32>, index) -> f32
  memref.dealloc %t : memref<1024xf32>
  return %x, %y : f32, f32
}
"""


def test_failure_in_a_callee_unwinds_through_the_caller():
    fn = checked(CALLS, "twice")
    a = np.arange(5, dtype=np.float32) * 2
    assert fn(a, 3) == (6.0, 8.0)
    for _ in range(3):  # heap buffers of the aborted calls are freed by the wrapper (clean under ASan)
        with pytest.raises(LoomError) as info:
            fn(a, 4)
        assert info.value.message == "index 5 out of range for dimension 0 of size 5 in memref.load"
        assert (info.value.filename, info.value.line) == ("lib.py", 30)
    assert fn(a, 0) == (0.0, 2.0)


COPY = """
func.func @copy(%A: memref<?x3xi16>, %B: memref<?x3xi16>) {
  "memref.copy"(%A, %B) : (memref<?x3xi16>, memref<?x3xi16>) -> ()
  return
}
"""


def test_copy_shapes_must_agree():
    fn = checked(COPY, "copy")
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    b = np.zeros((2, 3), np.int16)
    fn(a, b)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(LoomError, match="dimension 0 has size 2 in the source and 4 in the target"):
        fn(a, np.zeros((4, 3), np.int16))


def test_unchecked_source_is_unchanged_and_cached_separately(monkeypatch):
    module = parse(SHIFT_1D)
    plain = emit_c(module)
    assert "loomh_check" not in plain and "setjmp" not in plain
    checked_source = emit_c(module, checked=True)
    assert "loomh_check_index" in checked_source and "setjmp" in checked_source
    monkeypatch.delenv("LOOM_CHECK_BOUNDS", raising=False)
    unchecked_mod = compile_module(module)
    assert unchecked_mod.c_source == plain and unchecked_mod.sites is None
    monkeypatch.setenv("LOOM_CHECK_BOUNDS", "1")
    env_mod = compile_module(module)
    assert env_mod.c_source == checked_source and env_mod.so_path != unchecked_mod.so_path
    assert compile_module(module, checked=False) is unchecked_mod


def test_same_c_with_other_locations_reports_its_own_location():
    first = SUBVIEW
    second = SUBVIEW.replace('loc("win.py":4:9)', 'loc("other.py":40:2)')
    a = np.arange(8, dtype=np.float32)
    for text, where in ((first, ("win.py", 4)), (second, ("other.py", 40))):
        with pytest.raises(LoomError) as info:
            checked(text, "window")(a, 5)
        assert (info.value.filename, info.value.line) == where


def test_checked_source_is_c99():
    """Checked C compiles with -std=c99 -pedantic -Wall -Werror (setjmp/longjmp are C99)."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.c")
        with open(path, "w") as f:
            f.write(emit_c(parse(CALLS + DIVISION + SUBVIEW + COPY), checked=True))
        proc = subprocess.run(
            [os.environ.get("CC", "cc"), "-std=c99", "-pedantic", "-Wall", "-Werror", "-Wno-unused-variable",
             "-Wno-unused-function", "-c", path, "-o", os.path.join(tmp, "k.o")],
            capture_output=True, text=True,
        )
    assert proc.returncode == 0, proc.stderr


_LEAK_SCRIPT = """
import numpy as np
from tests.backends.cbackend_helpers import parse
from loom.backends.c import compile_module
from loom.errors import LoomError
fn = compile_module(parse({text!r}), checked=True).function("twice")
for _ in range(3):
    try:
        fn(np.arange(5, dtype=np.float32), 4)
    except LoomError as err:
        print("raised:", err.message)
"""


def test_buffers_of_an_aborted_call_are_freed_under_leak_sanitizer(tmp_path):
    """LeakSanitizer in a child process finds no leak from the compiled module after failed checks."""
    import os
    import subprocess
    import sys

    cc = os.environ.get("CC", "cc")
    preload = sanitizer_preload(cc)
    wrapper = tmp_path / "cc"  # the compiler itself must not run with the sanitizer preloaded
    wrapper.write_text(f'#!/bin/sh\nunset LD_PRELOAD\nexec {cc} "$@"\n')
    wrapper.chmod(0o755)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, CC=str(wrapper), LOOM_SANITIZE="1", LD_PRELOAD=preload,
               ASAN_OPTIONS="detect_leaks=1", LOOM_CACHE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(here)), env.get("PYTHONPATH")]))
    script = _LEAK_SCRIPT.format(text=CALLS)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.count("raised: index 5 out of range") == 3, proc.stdout + proc.stderr[-3000:]
    # the interpreter's own leaks may be reported; none may come from the generated C
    assert "loomh_alloc" not in proc.stderr and "loomc_" not in proc.stderr, proc.stderr[-3000:]
