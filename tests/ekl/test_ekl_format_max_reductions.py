"""A max / min reduction computed in a float format without infinities (e4m3fn, e4m3fnuz). Its identity is the
constant -inf / +inf, which converted as a value is NaN in such a format (ml_dtypes' rule): every result was NaN,
on the CPU and in the HLS C++ alike (so the C simulation "matched"). The identity is now the format's extreme
finite value. References: ml_dtypes' own max / min and products."""

from __future__ import annotations

import numpy as np
import pytest

import loom.ekl
from loom.backends.hls import emit_hls, hls_type_of_format, simulate
from loom.jit.ekl_formats import in_format

ml_dtypes = pytest.importorskip("ml_dtypes")

SRC = """
kernel extremes(A : f64[5, 7], m : out& f64[5], n : out& f64[5]) {
    out m[i] = <max j< A[i, j];
    out n[i] = <min j< A[i, j] * 2.0;
}"""
FORMATS = {"e4m3fn": ml_dtypes.float8_e4m3fn, "e4m3fnuz": ml_dtypes.float8_e4m3fnuz}


def reference(A: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    q = A.astype(dtype)
    return q.astype(np.float64).max(1), (q * np.array(2.0, dtype)).astype(np.float64).min(1)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_max_and_min_reductions_in_a_format_without_infinities(fmt):
    A = np.random.default_rng(1).standard_normal((5, 7)) * 10
    A[0] = -np.abs(A[0]) - 1  # a row of negatives only: its max is far from the +0 a wrong identity might give
    m, n = np.zeros(5), np.zeros(5)
    in_format(loom.ekl.load(SRC).kernel(), fmt)(A, m, n)
    want_m, want_n = reference(A, FORMATS[fmt])
    assert np.array_equal(m, want_m) and np.array_equal(n, want_n)


def test_hls_cpp_of_the_reduction_in_e4m3fn_against_ml_dtypes():
    A = np.random.default_rng(2).standard_normal((5, 7)) * 10
    program = emit_hls(loom.ekl.load(SRC).kernel().ir("loops"), types={"f64": hls_type_of_format("e4m3fn")})
    run = simulate(program, inputs={"A": A.ravel().tolist()})
    want_m, want_n = reference(A, ml_dtypes.float8_e4m3fn)
    assert np.array_equal(run.arrays["m"], want_m) and np.array_equal(run.arrays["n"], want_n)


def test_hls_cpp_of_the_reduction_in_fixed_point_writes_no_infinity():
    """`(ap_fixed<16, 8>)(-INFINITY)` relied on a conversion Vitis does not define: the identity is written as
    the saturated value base2 gives it, -128 (and 128 - 2^-8 for the min). Reference: the 1/256 grid."""
    from loom.backends.hls.types import ap_type_of_format

    A = np.random.default_rng(3).uniform(-60, 60, (5, 7))
    A[0] = -np.abs(A[0]) - 1
    program = emit_hls(loom.ekl.load(SRC).kernel().ir("loops"), types={"f64": ap_type_of_format("fixed<8, 8>")})
    assert "INFINITY" not in program.source and "-0x1.0000000000000p+7" in program.source
    run = simulate(program, inputs={"A": A.ravel().tolist()})
    q = np.round(A * 256) / 256  # in range: no wrap; np.round is half-to-even, as AP_RND_CONV
    assert np.array_equal(run.arrays["m"], q.max(1)) and np.array_equal(run.arrays["n"], (2 * q).min(1))
