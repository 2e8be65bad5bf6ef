"""``return`` from inside loops and before the end of a kernel (was "return must be the last statement"). The
reference is each kernel run as plain Python; upstream mlir-runner must agree."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify

SRC = U.__file__
RNG = np.random.default_rng(21)


@pytest.mark.sanitize
@pytest.mark.parametrize("trial", range(6))
def test_early_returns_match_python(trial):
    x = RNG.integers(0, 6, 8).astype(np.int32)
    for v in (x[trial], 99):
        assert U.find_first(x, np.int32(v)) == U.find_first.__wrapped__(x, np.int32(v))
    a = RNG.random((3, 4)).astype(np.float32)
    for target in (np.float32(0.5), np.float32(2.0)):
        got = U.find_pair(a, target)
        want = U.find_pair.__wrapped__(a, target)
        assert tuple(float(g) for g in got) == tuple(float(w) for w in want)
    assert U.find_pair(np.zeros((0, 4), np.float32), np.float32(0.0)) == (0, 0, -1.0)
    for value in (0.0, -3.0, 2.0, 1e6):
        assert U.newton_sqrt(value) == U.newton_sqrt.__wrapped__(value)
    f = RNG.standard_normal(7).astype(np.float32)
    got, want = f.copy(), f.copy()
    U.zero_until_negative(got)
    U.zero_until_negative.__wrapped__(want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    x = np.array([4, 1, 3, 1, 0], np.int32)
    for kernel in (U.find_first, U.find_pair, U.newton_sqrt):
        upstream_verify(kernel.module)
    assert mlir.run(U.find_first.module, "find_first", [x, np.int32(3)]).results[0] == 2
    a = np.array([[0.1, 0.2], [0.9, 0.3]], np.float32)
    res = mlir.run(U.find_pair.module, "find_pair", [a, np.float32(0.5)]).results
    assert [float(r) for r in res] == pytest.approx([1, 0, 0.9])
    assert mlir.run(U.newton_sqrt.module, "newton_sqrt", [2.0]).results[0] == U.newton_sqrt.__wrapped__(2.0)


def test_unannotated_kernel_returning_from_a_loop_is_refused():
    with pytest.raises(LoomError) as info:
        U.early_unannotated.module
    assert info.value.line == line_of(SRC, "# U:earlyunann") and "annotate them" in info.value.message


def test_falling_off_the_end_is_refused():
    # Python would return None when no element is negative: the kernel has no value to give
    with pytest.raises(LoomError) as info:
        U.may_fall_off.module
    assert info.value.line == line_of(SRC, "# U:falloff") and "without a return" in info.value.message


def test_return_inside_a_parallel_loop_is_refused():
    with pytest.raises(LoomError) as info:
        U.returns_from_parallel.module
    assert info.value.line == line_of(SRC, "# U:parret") and "inside a parallel loop" in info.value.message
