"""Bad EKL sources: each gives a LoomError located at file:line:col (elaboration and run time)."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.errors import LoomError

HEAD = "kernel k(A : f64[4, 3], B : f64[3, 5], x : f32[4], C : out& f64[4, 5])\n{\n"


@pytest.mark.parametrize(
    "body, line, column, fragment",
    [
        ("    out C[i, j] = <+ k< A[i, k] * B[k, j]\n", 4, 1, "expected ';'"),                       # syntax
        ("    out C[i, j] = <+ k< A[i, k] * Q[k, j];\n", 3, 35, "unknown name 'Q'"),                   # unknown name
        ("    out C[i, j] = <+ k< A[i, k] * B[j, k];\n", 3, 35, "must be congruent"),                  # non-congruent
        ("    let t = A[i, k] * B[k, j] * A[i, k];\n    out C[i, j] = t[i, j];\n", 3, 38, "used 3 times"),
        ("    out C[i, j] = <+ k< A[i, k + _1] * B[k, j];\n", 3, 32, "index arithmetic"),
        ("    out C[i, j] = <+ k< A[i, k] * x[i];\n", 3, 33, "type mismatch"),                          # f64 * f32
        ("    out C = A;\n", 3, 5, "not congruent"),                                                    # shape
        ("    out A = A;\n", 3, 5, "not an out& parameter"),
        ("    let y = <+ k< A[_0, k];\n", 1, 1, "never written"),
        ("    out C[i, j] = <+ k< A[i, k] * B[k, j];\n    out C = C;\n", 4, 5, "written twice"),
        ("    out C[i, j] = A[i, _7] * B[_0, j];\n", 3, 19, "out of range"),                         # static range
        ("    out C[i, j] = x[i] ? 1.0 : 2.0;\n", 3, 20, "condition must be a bool"),
        ("    out C[i, j] = 1.0 + (<+ k< A[k]);\n", 3, 26, "body of a nested reduction must be a scalar"),
        ("    out C[i, j] = sum(A[i, _0], _0, _2);\n", 3, 19, "sum(...) takes an array"),
        ("    out C[i, j] = foo(A[i, _0]);\n", 3, 19, "unknown function 'foo'"),
        ("    out C = A ~ [_4, _5];\n", 3, 15, "broadcast '~'"),
        ("    let z[q] = 1.0;\n    out C[i, j] = A[i, _0];\n", 3, 11, "cannot infer the domain"),
        ("    out C[i, j] = A[i, j, _0];\n", 3, 20, "too many subscripts"),
        ("    out C[i, j] = A[i, _0] * m;\n", 3, 30, "unknown name 'm'"),
        ("    out C[i, j] = A[i, _0] ^ 2.0 && 1.0;\n", 3, 34, "'&&' needs bool"),
    ],
)
def test_bad_source_is_located(body, line, column, fragment):
    text = HEAD + body + "}\n"
    with pytest.raises(LoomError) as info:
        loom.ekl.load(text)
    error = info.value
    assert fragment in error.message, error.message
    assert (error.filename, error.line) == ("<ekl>", line), str(error)
    if column is not None:
        assert error.column == column, str(error)
    assert "^" in str(error).splitlines()[-1]


def test_unsupported_scalar_type_is_named():
    with pytest.raises(LoomError) as info:
        loom.ekl.load("kernel k(a : bf16[2], b : out& bf16[2]) { out b = a; }")
    assert info.value.construct == "bf16" and info.value.column == 14


DYNAMIC = """
kernel mm(A : f64[8, ?], B : f64[3, ?], C : out& f64[8, ?])
{
    out C[i, j] = <+ k< A[i, k] * B[k, j];
}
"""


def test_dynamic_congruence_checked_at_call_time():
    kernel = loom.ekl.load(DYNAMIC).mm
    rng = np.random.default_rng(0)
    A, B = rng.random((8, 3)), rng.random((3, 5))
    C = np.zeros((8, 5))
    kernel(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-13)
    with pytest.raises(LoomError) as info:
        kernel(rng.random((8, 4)), B, C)
    assert info.value.line == 4 and "dim(A, 1) = 4 disagrees with 3" in info.value.message


GATHER = """
kernel g(j : index[4], a : f64[6], y : out& f64[4])
{
    out y[x] = a[j[x] + _2];
}
"""


@pytest.mark.sanitize
def test_out_of_range_gather_is_located_at_run_time():
    kernel = loom.ekl.load(GATHER).g
    a = np.arange(6.0)
    y = np.zeros(4)
    kernel(np.array([0, 1, 2, 3]), a, y)
    np.testing.assert_array_equal(y, a[[2, 3, 4, 5]])
    with pytest.raises(LoomError) as info:
        kernel(np.array([0, 1, 2, 4]), a, y)
    assert (info.value.filename, info.value.line) == ("<ekl>", 4) and "out of range" in info.value.message
    with pytest.raises(LoomError):
        kernel.reference(np.array([0, 1, 2, 4]), a)
