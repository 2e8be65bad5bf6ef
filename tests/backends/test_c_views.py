"""Views the accelerator drivers use (dma-inline-copies): memref.reinterpret_cast, memref.cast to static
sizes, memref.copy moving contiguous rows with memcpy, and external functions returning a memref.
Results are compared with numpy slicing of the same arrays."""

from __future__ import annotations

import re
import numpy as np
import pytest
from tests.backends.cbackend_helpers import parse

from loom.backends.c import compile_module
from loom.errors import LoomError

pytestmark = pytest.mark.sanitize

PACK = """
func.func @pack(%A: memref<8x8xi32>, %out: memref<?xi32>, %row: index, %off: index, %rows: index) {
  %t = memref.subview %A[%row, 2] [%rows, 4] [1, 1] : memref<8x8xi32> to memref<?x4xi32, strided<[8, 1], offset: ?>>
  %full = "memref.cast"(%t) : (memref<?x4xi32, strided<[8, 1], offset: ?>>) -> memref<4x4xi32, strided<[8, 1], offset: ?>>
  %dst = memref.reinterpret_cast %out to offset: [%off], sizes: [4, 4], strides: [4, 1] : memref<?xi32> to memref<4x4xi32, strided<[4, 1], offset: ?>>
  "memref.copy"(%full, %dst) : (memref<4x4xi32, strided<[8, 1], offset: ?>>, memref<4x4xi32, strided<[4, 1], offset: ?>>) -> ()
  return
}

func.func @whole(%A: memref<4x4xi32>, %out: memref<?xi32>, %off: index) {
  %dst = memref.reinterpret_cast %out to offset: [%off], sizes: [4, 4], strides: [4, 1] : memref<?xi32> to memref<4x4xi32, strided<[4, 1], offset: ?>>
  "memref.copy"(%A, %dst) : (memref<4x4xi32>, memref<4x4xi32, strided<[4, 1], offset: ?>>) -> ()
  return
}

func.func @wide(%A: memref<2x40xi32>, %out: memref<?xi32>) {
  %t = memref.subview %A[0, 4] [2, 32] [1, 1] : memref<2x40xi32> to memref<2x32xi32, strided<[40, 1], offset: 4>>
  %dst = memref.reinterpret_cast %out to offset: [1], sizes: [2, 32], strides: [32, 1] : memref<?xi32> to memref<2x32xi32, strided<[32, 1], offset: 1>>
  "memref.copy"(%t, %dst) : (memref<2x32xi32, strided<[40, 1], offset: 4>>, memref<2x32xi32, strided<[32, 1], offset: 1>>) -> ()
  return
}

func.func @rows80(%A: memref<5x3x24xi32>, %out: memref<?xi32>) {
  %t = memref.subview %A[0, 0, 2] [5, 3, 20] [1, 1, 1] : memref<5x3x24xi32> to memref<5x3x20xi32, strided<[72, 24, 1], offset: 2>>
  %dst = memref.reinterpret_cast %out to offset: [0], sizes: [5, 3, 20], strides: [60, 20, 1] : memref<?xi32> to memref<5x3x20xi32, strided<[60, 20, 1]>>
  "memref.copy"(%t, %dst) : (memref<5x3x20xi32, strided<[72, 24, 1], offset: 2>>, memref<5x3x20xi32, strided<[60, 20, 1]>>) -> ()
  return
}

func.func @wider(%A: memref<3x70xi32>, %out: memref<?xi32>) {
  %t = memref.subview %A[0, 3] [3, 65] [1, 1] : memref<3x70xi32> to memref<3x65xi32, strided<[70, 1], offset: 3>>
  %dst = memref.reinterpret_cast %out to offset: [1], sizes: [3, 65], strides: [65, 1] : memref<?xi32> to memref<3x65xi32, strided<[65, 1], offset: 1>>
  "memref.copy"(%t, %dst) : (memref<3x65xi32, strided<[70, 1], offset: 3>>, memref<3x65xi32, strided<[65, 1], offset: 1>>) -> ()
  return
}
"""


@pytest.mark.parametrize("wide", [True, False])
def test_rows_of_128_bytes_move_with_avx_where_the_cpu_has_it_else_inline(wide):
    mod = compile_module(parse(PACK), extra_flags=[] if wide else ["-DLOOMH_WIDE_ROWS=0"])
    A = np.arange(80, dtype=np.int32).reshape(2, 40)
    out = np.zeros(66, np.int32)
    mod.function("wide")(A, out)
    np.testing.assert_array_equal(out[1:65], A[:, 4:36].ravel())
    assert out[0] == 0 and out[65] == 0
    # one helper call for both rows: four 32-byte moves per row, strides in bytes
    helper = re.search(r"void loomh_rows_128\(char \*restrict d, .*?\n\}\n", mod.c_source, re.S).group(0)
    assert [int(b) for b in re.findall(r"\(loomh_v32 \*\)\(d \+ (\d+)\)", helper)] == [0, 32, 64, 96]
    wide_fn = re.search(r"void loom_wide\([^;]*?\) \{\n.*?\n\}\n", mod.c_source, re.S).group(0)
    assert "loomh_rows_128((char *)&m2[1], (const char *)&m1[4], 2, (intptr_t)(32) * (intptr_t)sizeof(int32_t), " \
           "(intptr_t)(40) * (intptr_t)sizeof(int32_t));" in wide_fn
    # else (no AVX, or not x86-64): a constant-size memcpy the C compiler expands into moves, not libc's
    assert re.search(r"\bmemcpy\(&\w+\[.*\(size_t\)\(32\) \* sizeof\(int32_t\)\);", wide_fn)
    assert "loomh_memcpy_long" not in wide_fn


@pytest.mark.parametrize("wide", [True, False])
def test_rows_of_80_bytes_in_a_nest_end_with_an_overlapping_move(wide):
    mod = compile_module(parse(PACK), extra_flags=[] if wide else ["-DLOOMH_WIDE_ROWS=0"])
    A = np.arange(360, dtype=np.int32).reshape(5, 3, 24)
    out = np.full(301, -1, np.int32)
    mod.function("rows80")(A, out)
    np.testing.assert_array_equal(out[:300], A[:, :, 2:22].ravel())
    assert out[300] == -1
    helper = re.search(r"void loomh_rows_80\(.*?\n\}\n", mod.c_source, re.S).group(0)
    assert [int(b) for b in re.findall(r"\(loomh_v32 \*\)\(d \+ (\d+)\)", helper)] == [0, 32, 48]
    # the outer dim stays a loop; the helper takes the three rows of each step
    assert re.search(r"loomh_rows_80\(\(char \*\)&m2\[\(c\d+ \* 60\)\], .*, 3, ", mod.c_source)


def test_rows_longer_than_256_bytes_go_through_the_c_librarys_memcpy():
    mod = compile_module(parse(PACK))
    A = np.arange(210, dtype=np.int32).reshape(3, 70)
    out = np.zeros(197, np.int32)
    mod.function("wider")(A, out)
    np.testing.assert_array_equal(out[1:196], A[:, 3:68].ravel())
    assert out[0] == 0 and out[196] == 0
    assert "(size_t)(65) * sizeof(int32_t)" in mod.c_source  # 260 bytes per row
    # the volatile pointer (it keeps the C compiler from expanding the copy as rep movsq) is read once per copy
    (pointer,) = re.findall(r"void \*\(\*const (\w+)\)\(void \*, const void \*, size_t\) = loomh_memcpy_long;",
                            mod.c_source)
    assert mod.c_source.count(f"{pointer}(&") == 1 and "loomh_memcpy_long(&" not in mod.c_source


def test_tile_copied_into_a_reinterpreted_buffer_row_by_row():
    mod = compile_module(parse(PACK))
    A = np.arange(64, dtype=np.int32).reshape(8, 8)
    out = np.full(40, -1, np.int32)
    mod.function("pack")(A, out, 3, 5, 4)
    want = np.full(40, -1, np.int32)
    want[5:21] = A[3:7, 2:6].ravel()
    np.testing.assert_array_equal(out, want)
    # the cast's static sizes and strides are constants in C: one 4-word memcpy per row
    assert "(size_t)(4) * sizeof(int32_t)" in mod.c_source
    # a dense tile into a dense block: one memcpy of all 16 words
    B = np.arange(16, dtype=np.int32).reshape(4, 4) * 3
    out[:] = 0
    mod.function("whole")(B, out, 7)
    np.testing.assert_array_equal(out[7:23], B.ravel())
    assert out[:7].sum() == 0 and out[23:].sum() == 0
    assert "(size_t)(16) * sizeof(int32_t)" in mod.c_source


GATHER = """
func.func @gather(%A: memref<3x9x5xi32>, %out: memref<?xi32>, %ch: index, %off: index) {
  %t = memref.subview %A[0, 0, %ch] [1, 9, 1] [1, 1, 1] : memref<3x9x5xi32> to memref<1x9x1xi32, strided<[45, 5, 1], offset: ?>>
  %dst = memref.reinterpret_cast %out to offset: [%off], sizes: [1, 9, 1], strides: [9, 1, 1] : memref<?xi32> to memref<1x9x1xi32, strided<[9, 1, 1], offset: ?>>
  "memref.copy"(%t, %dst) : (memref<1x9x1xi32, strided<[45, 5, 1], offset: ?>>, memref<1x9x1xi32, strided<[9, 1, 1], offset: ?>>) -> ()
  return
}

func.func @column(%A: memref<8x3xi32>, %out: memref<?xi32>) {
  %t = memref.subview %A[0, 1] [3, 1] [1, 1] : memref<8x3xi32> to memref<3x1xi32, strided<[3, 1], offset: 1>>
  %dst = memref.reinterpret_cast %out to offset: [0], sizes: [3, 1], strides: [1, 1] : memref<?xi32> to memref<3x1xi32, strided<[1, 1]>>
  "memref.copy"(%t, %dst) : (memref<3x1xi32, strided<[3, 1], offset: 1>>, memref<3x1xi32, strided<[1, 1]>>) -> ()
  return
}
"""


def test_a_gather_of_single_words_is_unrolled_and_stays_exact():
    """One word per row of a strided view (a 1x1 conv window's channels): the loop over the 9 words is the
    unrolled one (the size-1 loops around it are not); a 3-word gather is left rolled."""
    mod = compile_module(parse(GATHER))
    A = np.arange(3 * 9 * 5, dtype=np.int32).reshape(3, 9, 5) * 7 - 50
    out = np.full(14, -1, np.int32)
    mod.function("gather")(A, out, 3, 2)
    want = np.full(14, -1, np.int32)
    want[2:11] = A[0, :, 3]
    np.testing.assert_array_equal(out, want)
    source = mod.c_source
    loop = source[source.index("#pragma GCC unroll 8"):].splitlines()[1]
    assert loop.strip().startswith("for (intptr_t") and " < 9; " in loop
    assert source.count("#pragma GCC unroll") == 1  # not for @column: 3 iterations
    B = np.arange(24, dtype=np.int32).reshape(8, 3)
    col = np.zeros(3, np.int32)
    mod.function("column")(B, col)
    np.testing.assert_array_equal(col, B[:3, 1])


def test_checked_reinterpret_cast_outside_its_buffer_is_an_error():
    fn = compile_module(parse(PACK), checked=True).function("pack")
    A = np.arange(64, dtype=np.int32).reshape(8, 8)
    fn(A, np.zeros(21, np.int32), 0, 5, 4)  # words 5..20: inside
    with pytest.raises(LoomError, match="slice offset 6, size 16, stride 1 out of range for dimension 0 of size 21"):
        fn(A, np.zeros(21, np.int32), 0, 6, 4)


VIEW = """
func.func private @ext_window() -> memref<?xi32>

func.func @read_window(%i: index) -> i32 {
  %w = func.call @ext_window() : () -> memref<?xi32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %w, %c0 : memref<?xi32>
  %x = memref.load %w[%i] : memref<?xi32>
  %n32 = arith.index_cast %n : index to i32
  %r = arith.muli %x, %n32 : i32
  return %r : i32
}
"""

WINDOW_C = """
#include <stdint.h>
typedef struct { int32_t *allocated; int32_t *aligned; intptr_t offset; intptr_t sizes[1]; intptr_t strides[1]; } desc1;
static int32_t words[8] = {10, 11, 12, 13, 14, 15, 16, 17};
void ext_window(desc1 *result) {
  desc1 d = {words, words + 2, 0, {5}, {1}}; /* words[2..6]; identity layout: offset 0 */
  *result = d;
}
"""


def test_external_function_returning_a_memref_fills_the_callers_descriptor(tmp_path):
    runtime = tmp_path / "window.c"
    runtime.write_text(WINDOW_C)
    mod = compile_module(parse(VIEW), extra_flags=[str(runtime)])
    assert "extern void ext_window(loomd_memref_i32_1d *result);" in mod.c_source
    fn = mod.function("read_window")
    assert [fn(i) for i in range(5)] == [5 * w for w in (12, 13, 14, 15, 16)]


def test_a_defined_function_returning_a_memref_is_still_refused():
    text = VIEW.replace("func.func private @ext_window() -> memref<?xi32>",
                        "func.func @ext_window() -> memref<?xi32> {\n  %a = memref.alloc() : memref<4xi32>\n"
                        "  %c = \"memref.cast\"(%a) : (memref<4xi32>) -> memref<?xi32>\n"
                        "  return %c : memref<?xi32>\n}")
    with pytest.raises(LoomError, match="memref results are not supported"):
        compile_module(parse(text))
