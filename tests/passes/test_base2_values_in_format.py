"""convert-float-to-base2 rounds every float value that other ops read (stores, max/min, abs, comparisons)
into the format, so a kernel "in fixed<1, 4>" stores only fixed<1, 4> values, as its ap_fixed HLS C++ does.
Before, only values entering format arithmetic were rounded: a copy ``y = x``, a constant store ``y = 1.5``
or ``max(x, 0)`` stored values outside the format (1.5 from a fixed<1, 4> kernel, whose range is
[-1, 0.9375]). References: Fractions by hand, and the HLS C++ (loom_hls.h's ap_fixed) on the same inputs."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.jit.ekl_formats import in_format

X = np.array([1.2, -1.3, 0.5, -0.03125, 0.97, -1.0, 0.0, 0.6])


def q(v, i_bits, f_bits, overflow, rounding="nearest_even") -> float:
    s = Fr(v) * 2 ** f_bits
    n = math.floor(s)
    if rounding == "nearest_even" and (s - n > Fr(1, 2) or (s - n == Fr(1, 2) and n % 2)):
        n += 1
    w = i_bits + f_bits
    lo, hi = -(2 ** (w - 1)), 2 ** (w - 1) - 1
    n = min(max(n, lo), hi) if overflow == "saturate" else (n - lo) % 2 ** w + lo
    return float(Fr(n, 2 ** f_bits))


def run(body: str, fmt: str, overflow: str, x=X) -> np.ndarray:
    src = f"kernel k(x : f64[{len(x)}], y : out& f64[{len(x)}]) {{ out y[i] = {body}; }}"
    y = np.zeros(len(x))
    in_format(loom.ekl.load(src).kernel(), fmt, overflow=overflow)(np.asarray(x, np.float64), y)
    return y


@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_copies_constants_and_max_store_format_values(overflow):
    r = lambda v: q(v, 1, 4, overflow)  # noqa: E731
    np.testing.assert_array_equal(run("x[i]", "fixed<1, 4>", overflow), [r(v) for v in X])
    np.testing.assert_array_equal(run("1.5", "fixed<1, 4>", overflow), [r(1.5)] * len(X))
    np.testing.assert_array_equal(run("max(x[i], 0.0)", "fixed<1, 4>", overflow), [max(r(v), 0.0) for v in X])
    got = run("abs(x[i])", "fixed<1, 4>", overflow)
    np.testing.assert_array_equal(got, [r(abs(r(v))) for v in X])  # |-1| = 1 wraps to -1 or saturates
    assert ((got >= -1) & (got <= 0.9375)).all()


def test_float_format_copies_round_like_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.random.default_rng(0).uniform(-400, 400, 64)  # inside e4m3fn's range (448): no overflow
    want = np.array([float(np.float64(v).astype(ml_dtypes.float8_e4m3fn)) for v in x])
    np.testing.assert_array_equal(run("x[i]", "e4m3fn", "saturate", x), want)
    np.testing.assert_array_equal(run("max(x[i], -100.0)", "e4m3fn", "saturate", x), np.maximum(want, -96.0))


@pytest.mark.parametrize("body", [
    "x[i]", "1.5", "max(x[i], 0.0) - min(x[i], -x[i])", "abs(-(0.75 - x[i]))", "(x[i] < 0.25 ? x[i] : 2.0 * x[i])",
])
@pytest.mark.parametrize("i_bits,f_bits,overflow", [(1, 4, "wrap"), (2, 6, "saturate"), (3, 3, "wrap")])
def test_same_values_as_the_ap_fixed_hls_kernel(body, i_bits, f_bits, overflow):
    src = f"kernel k(x : f32[16], y : out& f32[16]) {{ out y[i] = {body}; }}"
    o = "AP_WRAP" if overflow == "wrap" else "AP_SAT"
    program = emit_hls(loom.ekl.load(src).kernel().ir("loops"),
                       types={"f32": f"ap_fixed<{i_bits + f_bits},{i_bits},AP_RND_CONV,{o}>"})
    got = run(body, f"fixed<{i_bits}, {f_bits}>", overflow, csim_inputs(program)["x"].astype(np.float64))
    np.testing.assert_array_equal(simulate(program).arrays["y"].astype(np.float64), got)


def test_format_arithmetic_alone_gets_no_extra_casts():
    src = "kernel d(a : f64[8], b : f64[8], s : out& f64) { out s = <+ i< a[i] * b[i]; }"
    module = loom.ekl.load(src).kernel().ir("loops")
    from loom.passes import Pipeline

    out = Pipeline.parse('convert-float-to-base2{format="fixed<8, 8>"}').run(module)
    casts = [op for op in out.walk() if op.name == "base2.cast"]
    into = [c for c in casts if str(c.results[0].type).startswith("!base2")]
    # a[i], b[i], the accumulator at the loop body's start: nothing else needs rounding
    assert len(into) == 3, str(out)
