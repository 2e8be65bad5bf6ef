"""An energy researcher's kernels in custom number formats, against ml_dtypes (floats, every operation rounded
in the source's order: factorized=False) and exact Fractions (fixed point, every rounding and overflow mode)."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import loom.ekl
from loom.jit.ekl_formats import in_format

POWER = """kernel flow(G : f32[4, 4], V : f32[4], P : out& f32[4], loss : out& f32) {
    out P[i] = <+ j< G[i, j] * (V[i] * V[j]);
    out loss = <+ i, j< G[i, j] * ((V[i] - V[j]) * (V[i] - V[j]));
}"""


@pytest.mark.parametrize("fmt, dtype", [("e4m3fn", ml_dtypes.float8_e4m3fn)])
def test_power_flow_in_a_float_format_rounds_every_operation_as_ml_dtypes(fmt, dtype):
    rng = np.random.default_rng(3)
    G = rng.standard_normal((4, 4)).astype(np.float32)
    V = (1 + 0.1 * rng.standard_normal(4)).astype(np.float32)
    P, loss = np.zeros(4, np.float32), np.zeros((), np.float32)
    in_format(loom.ekl.load(POWER, factorized=False).flow, fmt)(G, V, P, loss)

    def r(x):
        return np.float32(dtype(np.float32(x)))

    Gq, Vq = [[r(g) for g in row] for row in G], [r(v) for v in V]
    want_p = []
    for i in range(4):
        acc = np.float32(0)
        for j in range(4):
            acc = r(acc + r(Gq[i][j] * r(Vq[i] * Vq[j])))
        want_p.append(acc)
    want_loss = np.float32(0)
    for i in range(4):
        for j in range(4):
            d = r(Vq[i] - Vq[j])
            want_loss = r(want_loss + r(Gq[i][j] * r(d * d)))
    np.testing.assert_array_equal(P, want_p)
    assert loss == want_loss


def _quantise(x, int_bits: int, frac_bits: int, rounding: str, overflow: str) -> Fraction:
    scaled = Fraction(x) * 2 ** frac_bits
    if rounding == "truncate":
        raw = math.floor(scaled)
    elif rounding == "nearest_even":
        raw = round(scaled)
    else:
        raw = math.floor(abs(scaled) + Fraction(1, 2)) * (1 if scaled >= 0 else -1)
    width = int_bits + frac_bits
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    raw = min(max(raw, lo), hi) if overflow == "saturate" else (raw - lo) % (1 << width) + lo
    return Fraction(raw, 2 ** frac_bits)


@pytest.mark.parametrize("rounding, overflow", [("truncate", "saturate"), ("nearest_away", "wrap")])
def test_a_fused_update_in_fixed_point_equals_fractions(rounding, overflow):
    kernel = loom.ekl.load("kernel f(a : f64[64], b : f64[64], c : f64[64], y : out& f64[64]) "
                           "{ out y[i] = (a[i] * b[i]) + c[i]; }").f
    rng = np.random.default_rng(5)
    a, b, c = (rng.uniform(-40, 40, 64) for _ in range(3))
    y = np.zeros(64)
    in_format(kernel, "fixed<6, 10>", rounding=rounding, overflow=overflow)(a, b, c, y)

    def q(x):
        return _quantise(x, 6, 10, rounding, overflow)

    want = [q(q(q(x) * q(w)) + q(z)) for x, w, z in zip(a, b, c)]
    assert [Fraction(v) for v in y] == want
