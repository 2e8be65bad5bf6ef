"""Two modules whose generated C is the same text but whose static shapes differ (an EKL transpose of a 4x1
array and a copy of a 1x4 one index the same flat elements) get separate loaded modules: each checks the
caller's arrays against its own shapes. The in-process cache was keyed by the C text only, so the second
kernel was refused its correctly shaped arrays ("dim 0 mismatch: expected 4, got 1")."""

from __future__ import annotations

import numpy as np

import loom
from loom.backends.c import compile_module
from loom.backends.c.emitter import lower_module

TRANSPOSE = "kernel k(T0 : f64[4, 1], Y : out& f64[1, 4]) { out Y[j, m] = T0[m, j]; }"
COPY = "kernel k(T0 : f64[1, 4], Y : out& f64[1, 4]) { out Y[j, m] = T0[j, m]; }"


def test_same_c_text_different_shapes_each_take_their_own_arrays():
    a, b = (loom.ekl.load(src).kernel() for src in (TRANSPOSE, COPY))
    c_a, c_b = (lower_module(k.ir("c"), checked=False, native=False) for k in (a, b))
    assert c_a.source == c_b.source  # the premise: only the signatures differ
    assert c_a.signatures != c_b.signatures
    x = np.arange(4.0)
    for k, shape in ((a, (4, 1)), (b, (1, 4)), (a, (4, 1))):  # each order, after the other is loaded
        y = np.zeros((1, 4))
        compile_module(k.ir("c")).function("k")(x.reshape(shape).copy(), y)
        np.testing.assert_array_equal(y, x.reshape(1, 4))
        y = np.zeros((1, 4))
        k(x.reshape(shape).copy(), y)
        np.testing.assert_array_equal(y, x.reshape(1, 4))
