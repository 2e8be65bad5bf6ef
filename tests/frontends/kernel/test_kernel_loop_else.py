"""``for ... else`` and ``while ... else`` (both were refused): the else clause runs when the loop ends without a
break (a return from the loop skips it too). References: the kernels run as plain Python; mlir-runner."""

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F32, I32, Dim, Index, MemRef
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify

N = Dim("N")


@loom.kernel
def is_prime(n: I32) -> I32:
    r = I32(1)
    if n < 2:
        r = I32(0)
    for d in range(2, Index(n)):
        if d * d > Index(n):
            break
        if n % I32(d) == 0:
            r = I32(0)
            break
    else:
        r = r + 10  # only when the loop ran out (no divisor test ended it)
    return r


@loom.kernel
def find_or_append(x: MemRef[(N,), I32], v: I32, used: Index) -> Index:
    """Index of v among the first `used` entries, else append it (the classic for-else search)."""
    pos = used
    for i in range(used):
        if x[i] == v:
            pos = i
            break
    else:
        x[used] = v
    return pos


@loom.kernel
def countdown_else(x: MemRef[(N,), F32], t: F32) -> tuple[Index, F32]:
    i = x.shape[0]
    s = F32(0.0)
    while i > 0:
        i -= 1
        if x[i] > t:
            break
        s += x[i]
    else:
        s = -s
    return i, s


@loom.kernel
def returns_inside(x: MemRef[(N,), I32], y: MemRef[(1,), I32]) -> I32:
    for v in x:
        if v < 0:
            return v
    else:
        y[0] = 1
    return I32(0)


@loom.kernel
def else_without_break(x: MemRef[(N,), I32]) -> I32:
    s = I32(0)
    for v in x:
        s += v
    else:
        s *= 2
    return s


@loom.kernel
def break_in_else(x: MemRef[(N,), I32]) -> I32:
    s = I32(0)
    for i in range(3):
        for v in x:
            s += v
        else:
            break  # L:elsebreak
    return s


def test_loop_else_matches_python():
    for n in range(0, 40):
        assert is_prime(np.int32(n)) == is_prime.__wrapped__(np.int32(n)), n
    x, want = np.zeros(5, np.int32), np.zeros(5, np.int32)
    used = 0
    for v in (4, 7, 4, 9, 7):
        got = find_or_append(x, np.int32(v), used)
        assert got == find_or_append.__wrapped__(want, np.int32(v), used)
        used += got == used
    np.testing.assert_array_equal(x, want)
    np.testing.assert_array_equal(x, [4, 7, 9, 0, 0])
    f = np.array([0.5, 2.0, 0.25, 0.125], np.float32)
    for t in (1.0, 3.0):
        assert countdown_else(f, np.float32(t)) == countdown_else.__wrapped__(f, np.float32(t))
    for data in ([1, 2], [1, -3, 2]):
        a = np.array(data, np.int32)
        y, yw = np.zeros(1, np.int32), np.zeros(1, np.int32)
        assert returns_inside(a, y) == returns_inside.__wrapped__(a, yw)
        np.testing.assert_array_equal(y, yw)
    assert else_without_break(np.arange(4, dtype=np.int32)) == 12


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    for k in (is_prime, find_or_append, countdown_else, returns_inside):
        upstream_verify(k.module)
    assert [int(mlir.run(is_prime.module, "is_prime", [np.int32(n)]).results[0]) for n in (1, 2, 9, 13)] == \
        [is_prime.__wrapped__(np.int32(n)) for n in (1, 2, 9, 13)]


def test_a_break_in_an_else_clause_is_refused_at_its_line():
    with pytest.raises(LoomError) as info:
        break_in_else.module
    assert info.value.line == line_of(__file__, "# L:" + "elsebreak")
    assert "'break' in the else clause of a for loop" in info.value.message
