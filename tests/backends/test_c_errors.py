"""User-facing errors of the C backend: bad call arguments, unsupported ops, compiler failures."""

from __future__ import annotations

import numpy as np
import pytest
from tests.backends.cbackend_helpers import build, parse

from loom.backends.c import compile_module, emit_c
from loom.errors import LoomError

KERNEL = """
func.func @k(%A: memref<4x8xf32>, %B: memref<?x?xi32>, %S: memref<?xf32, strided<[?], offset: ?>>, %n: i32, %f: f64, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %A[%c0, %c0] : memref<4x8xf32>
  memref.store %x, %A[%c0, %c0] : memref<4x8xf32>
  return %x : f32
}

func.func @reader(%A: memref<4x8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %A[%c0, %c0] : memref<4x8xf32>
  return %x : f32
}
"""


@pytest.fixture(scope="module")
def kernel():
    return build(KERNEL).function("k")


def good_args():
    return [np.ones((4, 8), np.float32), np.zeros((2, 3), np.int32), np.ones(5, np.float32), 3, 1.0, True]


@pytest.mark.sanitize
def test_good_call_runs(kernel):
    args = good_args()
    args[0][0, 0] = 7.5
    assert kernel(*args) == np.float32(7.5)


@pytest.mark.parametrize(
    "position,value,pattern",
    [
        (0, [[1.0] * 8] * 4, r"argument 0 of @k: expected a numpy array for memref<4x8xf32>, got list"),
        (0, np.ones((4, 8), np.float64), r"argument 0 of @k: dtype mismatch: expected float32 \(f32\), got float64"),
        (1, np.zeros(6, np.int32), r"argument 1 of @k: rank mismatch: expected 2 dims, got 1"),
        (0, np.ones((4, 9), np.float32), r"argument 0 of @k: dim 1 mismatch: expected 8, got 9"),
        (0, np.ones((8, 4), np.float32).T, r"argument 0 of @k: expected a C-contiguous array"),
        (1, np.zeros((3, 4), np.int32)[:, ::2], r"argument 1 of @k: expected a C-contiguous array"),
        (3, 2.5, r"argument 3 of @k: expected an integer scalar \(i32\), got float"),
        (3, 2**40, r"argument 3 of @k: integer 1099511627776 does not fit in i32"),
        (3, True, r"argument 3 of @k: expected an integer scalar"),
        (4, "1.0", r"argument 4 of @k: expected a float scalar \(f64\), got str"),
        (5, 2, r"argument 5 of @k: expected a bool \(i1\), got int 2"),
        (2, np.ones((3, 3), np.float32)[:, 1], None),  # fine: a strided layout takes a column view
        (2, np.ones(5, np.float32)[::-1], None),  # and a reversed one
    ],
)
def test_argument_checks(kernel, position, value, pattern):
    args = good_args()
    args[position] = value
    if pattern is None:
        kernel(*args)
        return
    with pytest.raises(LoomError, match=pattern):
        kernel(*args)


def test_misaligned_stride_for_strided_layout(kernel):
    raw = np.zeros(10, np.float32)
    odd = np.lib.stride_tricks.as_strided(raw, shape=(3,), strides=(6,))  # 6 bytes: not whole elements
    args = good_args()
    args[2] = odd
    with pytest.raises(LoomError, match="stride 6 bytes of dim 0 is not a multiple of the element size"):
        kernel(*args)


def test_wrong_number_of_arguments(kernel):
    with pytest.raises(LoomError, match="@k takes 6 arguments, got 2"):
        kernel(np.ones((4, 8), np.float32), 1)


def test_read_only_array_rejected_only_where_the_function_writes():
    mod = build(KERNEL)
    frozen = np.ones((4, 8), np.float32)
    frozen.flags.writeable = False
    args = good_args()
    args[0] = frozen
    with pytest.raises(LoomError, match="argument 0 of @k: the function may write to this memref but the array is read-only"):
        mod.function("k")(*args)
    assert mod.function("reader")(frozen) == np.float32(1.0)


def test_unknown_function_name():
    with pytest.raises(LoomError, match=r"no public function @nope .*has: k, reader"):
        build(KERNEL).function("nope")


def test_unsupported_op_names_op_and_source_location():
    module = parse("""
func.func @t(%n: index) {
  %e = tensor.empty(%n) : tensor<?xf32> loc("kernel.py":12:3)
  return
}
""")
    with pytest.raises(LoomError) as info:
        emit_c(module)
    assert info.value.filename == "kernel.py" and info.value.line == 12
    assert "unsupported operation 'tensor.empty' in C backend" in str(info.value)
    assert str(info.value).startswith("kernel.py:12:3: ")


def test_unsupported_type_is_a_loom_error():
    module = parse("""
func.func @t(%a: i128) -> i128 {
  return %a : i128
}
""")
    with pytest.raises(LoomError, match="unsupported type 'i128' in C backend"):
        emit_c(module)


def test_compiler_failure_reports_message_and_c_file(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LOOM_CFLAGS", "-DLOOM_BROKEN=1 -include /nonexistent/loom_missing_header.h")
    with pytest.raises(LoomError) as info:
        compile_module(parse(KERNEL), sanitize=False)
    text = str(info.value)
    assert "C compilation failed" in text and "loom_missing_header.h" in text
    assert info.value.filename is not None and info.value.filename.endswith(".c")
    assert (tmp_path / info.value.filename.split("/")[-1]).exists()
