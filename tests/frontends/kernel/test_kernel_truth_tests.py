"""Python's truth test on numbers: ``if x[i]:``, ``while v:``, ``not n``, ``if a and b:`` with ints and floats (all
were "condition must be an i1 value"). A number is true when it is not zero; a float nan is true, ``not nan``
false. ``a and b`` used as a value keeps i1 operands (Python would return an operand). References: the kernels as
plain Python, numpy, upstream mlir-runner."""

import math

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F32, I32, U32, Dim, Index, MemRef
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import upstream_verify

N = Dim("N")


@loom.kernel
def count_truthy(x: MemRef[(N,), I32], f: MemRef[(N,), F32]) -> tuple[I32, I32, I32, I32]:
    nz = I32(0)
    zero = I32(0)
    both = I32(0)
    fl = I32(0)
    for i in range(x.shape[0]):
        if x[i]:
            nz += 1
        if not x[i]:
            zero += 1
        if x[i] and f[i] or not f[i]:
            both += 1
        fl += 1 if f[i] else 0
    return nz, zero, both, fl


@loom.kernel
def popcount_while(v: U32) -> I32:
    c = I32(0)
    while v:
        v &= v - 1
        c += 1
    return c


@loom.kernel
def first_zero(x: MemRef[(N,), I32]) -> Index:
    i = 0
    while i < x.shape[0] and x[i]:
        i += 1
    return i


@loom.kernel
def or_as_value(x: MemRef[(N,), I32]) -> I32:
    c = I32(0)
    for v in x:
        c += v or 5  # T:orvalue
    return c


def test_truth_tests_match_python():
    rng = np.random.default_rng(6)
    for _ in range(3):
        x = rng.integers(-2, 3, 9).astype(np.int32)
        f = rng.choice(np.array([0.0, -0.0, 1.5, math.nan, -2.0], np.float32), 9)
        assert count_truthy(x, f) == count_truthy.__wrapped__(x, f)
        assert first_zero(x) == first_zero.__wrapped__(x)
    for v in (0, 1, 0xF0F0, 2**32 - 1):
        assert popcount_while(np.uint32(v)) == bin(v).count("1")


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    x = np.array([0, 3, 0, -1], np.int32)
    f = np.array([math.nan, 0.0, -0.0, 2.0], np.float32)
    upstream_verify(count_truthy.module)
    ran = mlir.run(count_truthy.module, "count_truthy", [x, f])
    assert tuple(int(r) for r in ran.results) == count_truthy.__wrapped__(x, f)
    assert mlir.run(popcount_while.module, "popcount_while", [np.uint32(0xF0F0)]).results[0] == 8


def test_and_or_as_a_value_is_refused_at_its_line():
    with pytest.raises(LoomError) as info:
        or_as_value.module
    from tests.frontends.kernel.kernel_frontend_helpers import line_of
    assert info.value.line == line_of(__file__, "# T:" + "orvalue")
    assert "'and'/'or' used as a value takes i1 operands" in info.value.message
