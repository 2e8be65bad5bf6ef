"""With ``types={"f32": "ap_fixed<..>"}`` every f32 operation is computed in the ap_fixed type, constants
included: ``0.75 * 0.75`` is the product of two quantised constants, not 0.5625 folded in f32 by the
canonicalizer before the type was substituted (which gave ap_fixed<2, 1>'s 0.5 where the type computes 0).
Checked against Fractions and against the same kernel computed in the base2 format ``fixed<1, 1>``."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.jit.ekl_formats import in_format

SRC = "kernel e(c : f32[16], y : out& f32[16]) { out y[i] = (0.75 * 0.75 + 0.25) * c[i] + (1.5 - 0.75); }"


def q(v: Fr, width: int, integer: int) -> Fr:
    """Into ap_fixed<width, integer, AP_RND_CONV, AP_SAT>: half to even, saturate."""
    s = v * 2 ** (width - integer)
    n = math.floor(s)
    if s - n > Fr(1, 2) or (s - n == Fr(1, 2) and n % 2):
        n += 1
    n = min(max(n, -(2 ** (width - 1))), 2 ** (width - 1) - 1)
    return Fr(n, 2 ** (width - integer))


@pytest.mark.parametrize("width,integer", [(2, 1), (6, 2), (9, 3)])
def test_constant_arithmetic_is_computed_in_the_ap_fixed_type(width, integer):
    program = emit_hls(loom.ekl.load(SRC).kernel().ir("loops"),
                       types={"f32": f"ap_fixed<{width},{integer},AP_RND_CONV,AP_SAT>"})
    c = csim_inputs(program)["c"]
    got = simulate(program).arrays["y"].astype(np.float64)
    r = lambda v: q(Fr(v), width, integer)  # noqa: E731
    k = r(r(r(0.75) * r(0.75)) + r(0.25))
    want = [float(r(r(k * r(float(x))) + r(r(1.5) - r(0.75)))) for x in c]
    np.testing.assert_array_equal(got, want)
    y = np.zeros(16)
    in_format(loom.ekl.load(SRC.replace("f32", "f64")).kernel(), f"fixed<{integer}, {width - integer}>",
              overflow="saturate")(c.astype(np.float64), y)
    np.testing.assert_array_equal(got, y)


def test_without_an_ap_type_float_constants_still_fold():
    from loom.passes.recipes import lower_to_c

    lowered = str(lower_to_c(loom.ekl.load(SRC).kernel().ir("loops")))
    assert "8.125000e-01" in lowered  # 0.75 * 0.75 + 0.25, folded: the C backend computes in f32 anyway
