"""Hostile call-time inputs: every wrong argument is refused with a LoomError naming the parameter and what it
expects, never passed on changed (numpy casts a float64 1e300 to a float32 inf with only a RuntimeWarning)."""

import warnings

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F32, F64, Dim, Index, MemRef, I32

N = Dim("N")


@loom.kernel
def axpy(a: F32, x: MemRef[(N,), F32], y: MemRef[(N,), F32]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@loom.kernel
def twice(b: F64) -> F64:
    return b * 2.0


def _axpy(a):
    x, y = np.ones(3, np.float32), np.zeros(3, np.float32)
    axpy(a, x, y)
    return y


@pytest.mark.parametrize("a, words", [
    (np.float64(1e300), "'a' expects F32, whose largest magnitude is 3.4028234663852886e+38; np.float64(1e+300)"),
    (-1e39, "-1e+39 would become inf"),
    (10**40, "would become inf"),
    (10**400, "(401 digits) would become inf"),
])
def test_a_finite_scalar_a_float_type_cannot_hold_is_refused(a, words):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way
        with pytest.raises(LoomError) as info:
            _axpy(a)
    assert words in info.value.message


def test_float_scalars_that_fit_pass_unchanged():
    np.testing.assert_array_equal(_axpy(3.4e38), np.full(3, np.float32(3.4e38)))
    np.testing.assert_array_equal(_axpy(np.inf), np.full(3, np.inf, np.float32))
    assert np.isnan(_axpy(np.nan)).all()
    assert twice(1e308) == np.inf  # the overflow happens in the kernel, as in numpy
    assert twice(True) == 2.0
    with pytest.raises(LoomError, match="'b' expects F64, whose largest magnitude"):
        twice(10**400)


@loom.kernel
def scaled_sum(x: MemRef[(N,), F32], w: F32) -> F32:
    s = F32(0.0)
    for v in x:
        s += v * w
    return s


def test_keyword_arguments_bind_as_in_python():
    # they were a TypeError ("__call__() got an unexpected keyword argument")
    x = np.arange(4, dtype=np.float32)
    want = scaled_sum.__wrapped__(x, np.float32(2))
    assert scaled_sum(x, w=2.0) == scaled_sum(w=2.0, x=x) == scaled_sum(x, 2.0) == want
    y = np.zeros(4, np.float32)
    axpy(2.0, x, y=y)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("call, words", [
    (lambda x: scaled_sum(x, v=1.0), "kernel 'scaled_sum' has no parameter 'v' (its parameters: x, w)"),
    (lambda x: scaled_sum(x, x=x), "got parameter 'x' twice"),
    (lambda x: scaled_sum(w=1.0), "is missing argument(s): x"),
    (lambda x: scaled_sum(x, 1.0, 2.0, w=1.0), "takes 2 argument(s), got 4"),
    (lambda x: scaled_sum(x, w=np.ones(2)), "'w' expects a F32 scalar, got ndarray"),
])
def test_bad_keyword_calls_are_refused(call, words):
    with pytest.raises(LoomError) as info:
        call(np.zeros(3, np.float32))
    assert words in info.value.message


def test_a_builtin_is_not_a_kernel():
    with pytest.raises(LoomError, match="a kernel must be a Python 'def' function, got builtin_function_or_method"):
        loom.kernel(len).module  # it was inspect's TypeError


@loom.kernel
def weighted(a: F32, w: F32) -> F32:
    return a * w


@loom.kernel
def calls_with_keywords(x: MemRef[(N,), F32]) -> F32:
    s = F32(0.0)
    for i in range(x.shape[0]):
        s += weighted(w=F32(2.0), a=x[i]) + weighted(x[i], w=F32(0.5))
    return s


@loom.kernel
def calls_a_scalar(n: Index) -> Index:
    return n(1)  # H:callscalar


@loom.kernel
def calls_with_a_wrong_keyword(x: F32) -> F32:
    return weighted(x, weight=x)  # H:wrongkw


def test_kernel_to_kernel_calls_take_keywords():
    # they were refused: "keyword arguments are not supported in calls to kernels"
    x = np.arange(5, dtype=np.float32)
    assert calls_with_keywords(x) == calls_with_keywords.__wrapped__(x) == np.float32(2.5 * x.sum())


@pytest.mark.parametrize("kernel, marker, words", [
    (calls_a_scalar, "callscalar", "'n' (index) is not callable"),  # was "unsupported operand for '=='"
    (calls_with_a_wrong_keyword, "wrongkw", "kernel 'weighted' has no parameter 'weight' (its parameters: a, w)"),
])
def test_bad_calls_inside_kernels_are_refused_at_their_line(kernel, marker, words):
    from tests.frontends.kernel.kernel_frontend_helpers import line_of

    with pytest.raises(LoomError) as info:
        kernel.module
    assert info.value.line == line_of(__file__, "# H:" + marker) and words in info.value.message


@loom.kernel
def two_params(
    x: MemRef[(N,), F32],  # H:paramx
    k: I32,  # H:paramk
) -> F32:
    return x[0] * F32(k)


@pytest.mark.parametrize("args, marker, words", [
    ((np.zeros(2), np.int32(1)), "paramx", "parameter 'x' expects dtype float32, got float64"),
    ((np.zeros((2, 2), np.float32), np.int32(1)), "paramx", "expects rank 1, got an array of rank 2"),
    ((np.zeros(2, np.float32), 2**40), "paramk", "'k' expects I32 in [-2147483648, 2147483647]"),
    ((np.zeros(2, np.float32),), "def", "takes 2 argument(s), got 1"),
])
def test_call_time_errors_name_the_declaration(args, marker, words):
    # a wrong argument is reported at the line declaring what the parameter expects (they named the kernel only)
    from tests.frontends.kernel.kernel_frontend_helpers import line_of

    with pytest.raises(LoomError) as info:
        two_params(*args)
    e = info.value
    want = line_of(__file__, "def two_" + "params(") if marker == "def" else line_of(__file__, "# H:" + marker)
    assert e.filename == __file__ and e.line == want and words in e.message
    assert str(e).startswith(f"{__file__}:{e.line} two_params: ")
