"""Negation in a fixed-point format is a format operation (``0 - x``): the most negative value wraps to
itself or saturates to the largest, as ``ap_fixed`` and hardware do. It was an exact float negation whose
``+2^(I-1)`` (outside the format) reached the next ``max``: ``max(-x, 0)`` of x = -2 in fixed<2, 6> wrap gave
-2 (the 2 wrapped when stored) where the HLS C++ with ``ap_fixed<8, 2, AP_TRN, AP_WRAP>`` gives 0. Float
formats negate exactly (and keep -0)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.jit.ekl_formats import in_format

RELU_NEG = "kernel r(x : f64[6], y : out& f64[6]) { out y[i] = max(-x[i], 0.0) + min(x[i], -x[i]) * 0.5; }"
X = np.array([-2.0, -1.984375, -0.5, 0.0, 0.5, 1.984375])


def fixed_2_6(v: float, overflow: str) -> float:
    """v (a multiple of 1/64) into fixed<2, 6>: 8 bits, range [-2, 2 - 1/64]."""
    n = math.floor(v * 64)
    n = min(max(n, -128), 127) if overflow == "saturate" else (n + 128) % 256 - 128
    return n / 64


@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_negation_of_the_most_negative_fixed_value(overflow):
    y = np.zeros(6)
    in_format(loom.ekl.load(RELU_NEG).kernel(), "fixed<2, 6>", rounding="truncate", overflow=overflow)(X, y)
    q = lambda v: fixed_2_6(v, overflow)  # noqa: E731
    want = [q(q(max(q(-x), 0.0)) + q(q(min(x, q(-x))) * 0.5)) for x in X]
    np.testing.assert_array_equal(y, want)
    assert y[0] == (-1.0 if overflow == "wrap" else 0.984375)  # x = -2: -x is -2 (wrap) or 2 - 1/64


def test_fixed_negation_agrees_with_the_hls_ap_fixed_kernel():
    k32 = loom.ekl.load(RELU_NEG.replace("f64", "f32")).kernel()
    program = emit_hls(k32.ir("loops"), types={"f32": "ap_fixed<8,2,AP_TRN,AP_WRAP>"})
    inputs = csim_inputs(program)
    got = simulate(program).arrays["y"].astype(np.float64)
    y = np.zeros(6)
    in_format(loom.ekl.load(RELU_NEG).kernel(), "fixed<2, 6>", rounding="truncate", overflow="wrap")(
        inputs["x"].astype(np.float64), y)
    np.testing.assert_array_equal(got, y)


def test_float_formats_negate_exactly_and_keep_negative_zero():
    src = "kernel n(x : f64[4], y : out& f64[4]) { out y[i] = -x[i]; }"
    y = np.zeros(4)
    in_format(loom.ekl.load(src).kernel(), "e5m2")(np.array([0.0, 57344.0, -1.5, 2.0**-16]), y)
    np.testing.assert_array_equal(y, [-0.0, -57344.0, 1.5, -(2.0**-16)])
    assert math.copysign(1.0, y[0]) == -1.0
