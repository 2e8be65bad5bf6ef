"""@loom.kernel(checked=True): an out-of-range index or a zero divisor is a LoomError at the kernel's line.

Expected lines are found from marker comments in this file; expected results of
correct kernels come from numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from loom import F32, I32, Dim, Index, MemRef, kernel
from loom.errors import LoomError

pytestmark = pytest.mark.sanitize

N = Dim("N")


def line_of(marker: str) -> int:
    with open(__file__) as f:
        lines = [k for k, text in enumerate(f, 1) if text.rstrip().endswith(marker)]
    assert len(lines) == 1, marker
    return lines[0]


@kernel(checked=True)
def shift_left(a: MemRef[(N,), F32], b: MemRef[(N,), F32]):
    for i in range(N):
        b[i] = a[i + 1]  # OOB-LOAD


@kernel(checked=True)
def blur_rows(A: MemRef[("H", "W"), F32], B: MemRef[("H", "W"), F32]):
    H, W = A.shape
    for i in range(H):
        for j in range(W):
            B[i, j + 1] = 0.5 * (A[i, j] + A[i, j])  # OOB-STORE


@kernel(checked=True, loops="affine")
def static_stencil(A: MemRef[(6, 5), F32], B: MemRef[(6, 5), F32]):
    for i in range(6):
        for j in range(5):
            B[i, j] = A[i + 1, j]  # OOB-AFFINE


@kernel(checked=True)
def window_sum(a: MemRef[(N,), F32], start: Index, out: MemRef[(1,), F32]):
    w = a[start : start + 4]  # OOB-SLICE
    acc = 0.0
    for k in range(4):
        acc = acc + w[k]
    out[0] = acc


@kernel(checked=True)
def divide(a: MemRef[(N,), I32], b: MemRef[(N,), I32], q: MemRef[(N,), I32]):
    for i in range(N):
        q[i] = a[i] // b[i]  # DIV-ZERO


def matmul(A: MemRef[("M", "K"), F32], B: MemRef[("K", "N"), F32], C: MemRef[("M", "N"), F32]):
    M, N = C.shape
    for i in range(M):
        for j in range(N):
            acc = C[i, j]
            for k in range(A.shape[1]):
                acc = acc + A[i, k] * B[k, j]
            C[i, j] = acc


matmul_checked = kernel(checked=True)(matmul)
matmul_plain = kernel(checked=False)(matmul)


def _raises_at(marker: str, message: str, fn, *args) -> LoomError:
    with pytest.raises(LoomError) as info:
        fn(*args)
    err = info.value
    assert err.message in ((message,) if isinstance(message, str) else message)
    assert err.filename == __file__ and err.line == line_of(marker)
    return err


def test_off_by_one_load_1d():
    a = np.arange(16, dtype=np.float32)
    b = np.zeros(16, np.float32)
    _raises_at("# OOB-LOAD", "index 16 out of range for dimension 0 of size 16 in memref.load", shift_left, a, b)
    np.testing.assert_array_equal(b[:15], a[1:])


def test_off_by_one_store_2d_with_dynamic_shapes():
    a = np.ones((3, 7), np.float32)
    _raises_at("# OOB-STORE", "index 7 out of range for dimension 1 of size 7 in memref.store",
               blur_rows, a, np.zeros_like(a))


def test_affine_kernel_with_static_shapes():
    a = np.arange(30, dtype=np.float32).reshape(6, 5)
    # the affine loads may be lowered to memref.load before the C backend
    expected = tuple(f"index 6 out of range for dimension 0 of size 6 in {op}" for op in ("affine.load", "memref.load"))
    _raises_at("# OOB-AFFINE", expected, static_stencil, a, np.zeros_like(a))


def test_slice_past_the_end():
    a = np.arange(10, dtype=np.float32)
    out = np.zeros(1, np.float32)
    window_sum(a, 6, out)
    assert out[0] == 6 + 7 + 8 + 9
    _raises_at("# OOB-SLICE", "slice offset 7, size 4, stride 1 out of range for dimension 0 of size 10 "
               "in memref.subview", window_sum, a, 7, out)


def test_integer_division_by_zero():
    a = np.array([7, -7, 9], np.int32)
    q = np.zeros(3, np.int32)
    divide(a, np.array([2, 2, 4], np.int32), q)
    np.testing.assert_array_equal(q, a // np.array([2, 2, 4]))
    err = _raises_at("# DIV-ZERO", f"integer division by zero in {_division_op()}",
                     divide, a, np.array([2, 0, 4], np.int32), q)
    assert "division by zero" in str(err)


def _division_op() -> str:
    names = [op.name for op in divide.module.walk() if "div" in op.name]
    assert len(names) == 1, names
    return names[0]


def test_correct_kernel_same_result_in_both_modes():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 7)).astype(np.float32)
    B = rng.standard_normal((7, 3)).astype(np.float32)
    C0 = rng.standard_normal((5, 3)).astype(np.float32)
    expected = C0 + A @ B
    results = []
    for fn in (matmul_checked, matmul_plain):
        C = C0.copy()
        fn(A, B, C)
        np.testing.assert_allclose(C, expected, rtol=1e-5, atol=1e-5)
        results.append(C)
    np.testing.assert_array_equal(results[0], results[1])


def test_checked_keyword_reaches_the_c_backend(monkeypatch):
    monkeypatch.delenv("LOOM_CHECK_BOUNDS", raising=False)
    from loom.backends.c import compile_module
    from loom.passes.recipes import lower_to_c
    assert matmul_checked.compile().sites is not None
    # every kernel has its indices checked, the plain one at its loops' entries (its innermost loop has no
    # check); checked mode checks each access where it runs
    for k, inner_checks in ((matmul_checked, True), (matmul_plain, False)):
        source = compile_module(lower_to_c(k.module), checked=k.checked, check_gathers=True).c_source
        innermost = source[source.rindex("for ("):]
        assert ("loomh_check_index" in innermost[:innermost.index("}")]) == inner_checks, k.name

    @kernel
    def follows_env(a: MemRef[(N,), F32], b: MemRef[(N,), F32]):
        for i in range(N):
            b[i] = a[i + 2]

    monkeypatch.setenv("LOOM_CHECK_BOUNDS", "1")
    with pytest.raises(LoomError, match="index 4 out of range for dimension 0 of size 4"):
        follows_env(np.zeros(4, np.float32), np.zeros(4, np.float32))
