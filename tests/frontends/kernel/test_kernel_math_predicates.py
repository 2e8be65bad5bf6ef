"""``math.isnan/isinf/isfinite``, ``math.fmod`` and ``math.asinh/acosh/atanh`` in kernels (all were "calling
unsupported Python function"): against Python's math on every value of a grid with nan, +-inf, +-0, subnormals
and huge ones, in F32 and F64, and against upstream mlir-runner."""

import math

import numpy as np
import pytest

import loom
from loom.frontends.kernel import F32, F64, I32, I64, Dim, MemRef
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import upstream_verify

N = Dim("N")
GRID = [math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, 1e-40, 0.5, -0.75, 1.0, 2.5, -3.0, 1e30, -1e300]


def _classify(ftype):
    @loom.kernel(name=f"classify_{ftype}")
    def classify(x: MemRef[(N,), ftype], y: MemRef[(N,), I32]):
        for i in range(x.shape[0]):
            code = I32(0)
            if math.isnan(x[i]):
                code = I32(1)
            elif math.isinf(x[i]):
                code = I32(2)
            if math.isfinite(x[i]):
                code += 10
            y[i] = code

    return classify


def _funcs(ftype):
    @loom.kernel(name=f"funcs_{ftype}")
    def funcs(x: MemRef[(N,), ftype], d: ftype, y: MemRef[(N, 4), ftype]):
        for i in range(x.shape[0]):
            y[i, 0] = math.fmod(x[i], d)
            y[i, 1] = math.asinh(x[i])
            y[i, 2] = math.acosh(x[i])
            y[i, 3] = math.atanh(x[i])

    return funcs


CLASSIFY = {t: _classify(t) for t in (F32, F64)}
FUNCS = {t: _funcs(t) for t in (F32, F64)}


@loom.kernel
def int_is_finite(n: I64) -> I32:
    return I32(1) if math.isfinite(n) and not math.isnan(n) and not math.isinf(n) else I32(0)


def _code(v):
    return (1 if math.isnan(v) else 2 if math.isinf(v) else 0) + (10 if math.isfinite(v) else 0)


def _py(f, *a):
    try:
        return f(*a)
    except (ValueError, OverflowError):  # Python raises where C and numpy give nan
        return math.nan


@pytest.mark.sanitize
@pytest.mark.parametrize("ftype", [F32, F64], ids=str)
def test_predicates_match_python(ftype):
    with np.errstate(over="ignore"):  # -1e300 is -inf in F32
        x = np.array(GRID, ftype.dtype)
    y = np.zeros(len(x), np.int32)
    CLASSIFY[ftype](x, y)
    np.testing.assert_array_equal(y, [_code(float(v)) for v in x])
    assert int_is_finite(np.int64(7)) == 1


@pytest.mark.sanitize
@pytest.mark.parametrize("ftype", [F32, F64], ids=str)
def test_fmod_and_inverse_hyperbolics_match_python(ftype):
    x = np.array([v for v in GRID if math.isfinite(v) and abs(v) < 1e38] + [0.999, 1.5, 7.25], ftype.dtype)
    for d in (0.75, -2.0, 1e-3):
        y = np.zeros((len(x), 4), ftype.dtype)
        FUNCS[ftype](x, ftype.dtype.type(d), y)
        dd = float(ftype.dtype.type(d))
        with np.errstate(all="ignore"):  # numpy where Python raises: atanh(1) is inf, acosh(0.5) nan
            want = np.stack([np.array([math.fmod(float(v), dd) for v in x]).astype(ftype.dtype),
                             np.arcsinh(x), np.arccosh(x), np.arctanh(x)], axis=1)
        np.testing.assert_array_equal(y[:, 0], want[:, 0])  # fmod is exact
        np.testing.assert_allclose(y[:, 1:], want[:, 1:], rtol=4 * np.finfo(ftype.dtype).eps, atol=0)


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    x = np.array(GRID, np.float64)
    upstream_verify(CLASSIFY[F64].module)
    ran = mlir.run(CLASSIFY[F64].module, "classify_F64", [x, np.zeros(len(x), np.int32)])
    np.testing.assert_array_equal(ran.memrefs[1], [_code(v) for v in GRID])
    xs = np.array([0.5, -0.75, 1.5, 7.25])
    ran = mlir.run(FUNCS[F64].module, "funcs_F64", [xs, 0.75, np.zeros((4, 4))])
    want = np.array([[_py(math.fmod, v, 0.75), _py(math.asinh, v), _py(math.acosh, v), _py(math.atanh, v)]
                     for v in xs])
    np.testing.assert_allclose(ran.memrefs[2], want, rtol=1e-15, atol=0)
