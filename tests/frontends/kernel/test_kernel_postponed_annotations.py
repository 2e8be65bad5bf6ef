"""Kernels in a module with ``from __future__ import annotations`` (PEP 563: every annotation is a string that
Python never evaluates). Names a kernel's annotations use only there, imported or bound inside the function the
kernel is defined in, make no closure cell and are not globals; they are read from that function's locals when
the decorator ran (they were "unsupported annotation for parameter 'A': MemRef[(16, 24), I32]")."""

from __future__ import annotations

import numpy as np
import pytest


def make_local_import_kernels():
    import loom
    from loom.frontends.kernel import I32, MemRef

    @loom.kernel
    def add_row_index(A: MemRef[(16, 24), I32]):
        for i in range(16):
            for j in range(24):
                A[i, j] = A[i, j] + I32(i)

    @loom.kernel(checked=True)
    def add_column_index(A: MemRef[(16, 24), I32]):
        for i in range(16):
            for j in range(24):
                A[i, j] = A[i, j] + I32(j)

    return add_row_index, add_column_index


def make_typed_sum(T):
    import loom
    from loom.frontends.kernel import Dim, MemRef

    N = Dim("N")

    @loom.kernel(name=f"typed_sum_{T}")
    def total(x: MemRef[(N,), T]) -> T:
        s = T(0)
        for v in x:
            s += v
        return s

    return total


def test_names_imported_inside_the_defining_function_are_read_from_its_locals():
    rows, cols = make_local_import_kernels()
    a = np.arange(16 * 24, dtype=np.int32).reshape(16, 24)
    want = a + np.arange(16, dtype=np.int32)[:, None] + np.arange(24, dtype=np.int32)[None, :]
    rows(a)
    cols(a)
    assert np.array_equal(a, want)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_a_factory_s_type_parameter_is_read_from_its_locals(dtype):
    from loom.frontends.kernel import F64, I32
    k = make_typed_sum(F64 if dtype == np.float64 else I32)
    x = (np.arange(9) - 4).astype(dtype) * 3
    assert k(x) == x.sum() and k.signature.params[0].element.dtype == np.dtype(dtype)
