"""Kernels made by a factory for several element types: ``def make(T): @kernel def k(x: MemRef[(N,), T])``. T is
used in annotations only, so it is neither a closure variable nor a global; the annotation Python evaluated is read
instead (it was "MemRef element type ... must be one of F32, ..., got 'T'")."""

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F32, F64, I32, I64, Dim, MemRef

N = Dim("N")


def make_sum(T, R):
    @loom.kernel(name=f"sum_{T}")
    def total(x: MemRef[(N,), T], scale: T) -> tuple[R, I32]:
        s = R(0)
        for v in x:
            s += R(v * scale)
        return s, I32(x.shape[0])

    return total


def make_bad(T):
    @loom.kernel(name="bad")
    def bad(x: MemRef[(N,), T]):
        pass

    return bad


@pytest.mark.parametrize("T, R", [(F32, F64), (F64, F64), (I32, I64), (I64, I64)], ids=str)
def test_factory_kernels_match_python(T, R):
    k = make_sum(T, R)
    x = (np.arange(7) - 3).astype(T.dtype)
    got = k(x, T.dtype.type(2))
    assert got == k.__wrapped__(x, T.dtype.type(2))
    assert str(k.signature.params[0].element) == str(T) and k.result_types[0] == R.xdsl


def test_a_factory_annotation_that_is_no_kernel_type_is_still_refused_at_its_line():
    with pytest.raises(LoomError) as info:
        make_bad(np.float32).module
    assert "MemRef element type of parameter 'x'" in info.value.message and info.value.line is not None
