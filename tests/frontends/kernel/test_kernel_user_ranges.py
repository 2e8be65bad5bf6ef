"""``range()`` with any step, as in Python: counting down (was refused), a run-time step of either sign (a
negative one ran no iteration: a silently wrong result), a zero step (refused at trace time when constant; a
run-time one hung forever, it now raises at the loop's line). Checked against Python's own ``range``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, upstream_verify
from tests.fuzz.accel_mutator import FUZZ_SCALE

SRC = U.__file__
X7 = np.arange(10, 17, dtype=np.float32)


@pytest.mark.sanitize
@pytest.mark.parametrize("kernel", [U.reverse_copy, U.reverse_copy_affine], ids=["scf", "affine"])
def test_counting_down(kernel):
    y = np.zeros_like(X7)
    kernel(X7, y)
    np.testing.assert_array_equal(y, X7[::-1])
    kernel(np.zeros(0, np.float32), np.zeros(0, np.float32))  # an empty range


def test_counting_down_static_bounds():
    y = np.zeros_like(X7)
    U.every_other_down(X7, y)
    np.testing.assert_array_equal(y, [16, 14, 12, 0, 0, 0, 0])


def _expected(x, a, b, s):
    picked = x[list(range(a, b, s))]
    y = np.zeros_like(x)
    y[:len(picked)] = picked
    return y, len(picked)


@pytest.mark.sanitize
@pytest.mark.parametrize("kernel", [U.gather_range_scf, U.gather_range_affine], ids=["scf", "affine"])
@pytest.mark.parametrize("a,b,s", [(6, -1, -2), (0, 7, 3), (6, 0, -1), (0, 7, -1), (3, 3, 1), (5, 1, 2), (6, 2, -3)])
def test_run_time_step_of_either_sign(kernel, a, b, s):
    x = np.arange(1, 8, dtype=np.int32)
    y = np.zeros_like(x)
    n = kernel(x, y, a, b, s)
    want, count = _expected(x, a, b, s)
    assert n == count
    np.testing.assert_array_equal(y, want)


@pytest.mark.mlir
@pytest.mark.parametrize("kernel", [U.reverse_copy, U.reverse_copy_affine, U.gather_range_scf,
                                    U.gather_range_affine], ids=lambda k: k.name)
def test_upstream_mlir_agrees(kernel):
    upstream_verify(kernel.module)
    x = np.arange(1, 8, dtype=np.int32)
    if kernel.name.startswith("gather"):
        ran = mlir.run(kernel.module, kernel.name, [x, np.zeros_like(x), 6, -1, -2])
        want, count = _expected(x, 6, -1, -2)
        assert ran.results[0] == count
        np.testing.assert_array_equal(ran.memrefs[1], want)
    else:
        ran = mlir.run(kernel.module, kernel.name, [X7, np.zeros_like(X7)])
        np.testing.assert_array_equal(ran.memrefs[1], X7[::-1])


@pytest.mark.parametrize("kernel", [U.gather_range_scf, U.gather_range_affine], ids=["scf", "affine"])
def test_run_time_zero_step_raises_at_the_loop(kernel):
    x = np.arange(7, dtype=np.int32)
    with pytest.raises(LoomError) as info:
        kernel(x, np.zeros_like(x), 0, 5, 0)
    assert info.value.filename == SRC and info.value.line == line_of(SRC, "# U:dynstep")
    assert "range() step is zero" in info.value.message


def test_constant_zero_step_is_refused_at_trace_time():
    with pytest.raises(LoomError) as info:
        U.zero_step.module
    assert info.value.line == line_of(SRC, "# U:zerostep") and "must not be zero" in info.value.message


@settings(max_examples=60 * FUZZ_SCALE, derandomize=True, deadline=None, database=None)
@given(a=st.integers(-3, 12), b=st.integers(-3, 12), s=st.integers(-5, 5).filter(bool))
def test_fuzz_trip_count_matches_python(a, b, s):
    """Any (start, stop, step) whose visited indices stay inside the array: Python's range visits the same ones."""
    x = np.arange(100, 110, dtype=np.int32)
    if any(not 0 <= i < len(x) for i in range(a, b, s)):
        return
    for kernel in (U.gather_range_scf, U.gather_range_affine):
        y = np.zeros_like(x)
        n = kernel(x, y, a, b, s)
        want, count = _expected(x, a, b, s)
        assert n == count, (kernel.name, a, b, s)
        np.testing.assert_array_equal(y, want)
