"""``loom hls KERNEL --format "fixed<I, F>" [--rounding R] [--overflow O]``: the kernel's f32/f64 computed in
the ap_fixed type of a loom fixed-point format (``ap_type_of_format``), and ``--csim`` checks the C simulation
bit for bit against the same kernel compiled in the base2 format. Values also against Fractions."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.backends.hls.types import ap_type_of_format
from loom.cli import main
from loom.errors import LoomError

KERNEL = ("kernel f(a : f32[16], b : f32[16], y : out& f32[16]) "
          "{ out y[i] = max(a[i] * b[i] - 0.75, -a[i]) / (abs(b[i]) + 0.5); }")


@pytest.mark.parametrize("text,rounding,overflow,want", [
    ("fixed<10, 4>", "nearest_even", None, "ap_fixed<14,10,AP_RND_CONV,AP_WRAP>"),
    ("fixed<3, 5>", "truncate", "saturate", "ap_fixed<8,3,AP_TRN,AP_SAT>"),
    ("ufixed<4, 12>", "nearest_away", "wrap", "ap_ufixed<16,4,AP_RND_INF,AP_WRAP>"),
])
def test_format_to_ap_type(text, rounding, overflow, want):
    assert ap_type_of_format(text, rounding, overflow) == want


@pytest.mark.parametrize("text,overflow,match", [
    ("bf16", None, "float format"), ("fixed<3, 5>", "inf", "overflow"), ("fixed<40, 4>", None, "1..32 bits"),
])
def test_bad_formats_are_refused(text, overflow, match):
    with pytest.raises(LoomError, match=match):
        ap_type_of_format(text, "nearest_even", overflow)


def test_against_fractions():
    src = "kernel g(a : f32[16], b : f32[16], y : out& f32[16]) { out y[i] = a[i] * b[i] + 0.3; }"
    program = emit_hls(loom.ekl.load(src).kernel().ir("loops"),
                       types={"f32": ap_type_of_format("fixed<3, 5>", "nearest_away", "saturate")})
    x = csim_inputs(program)

    def q(v):  # half away from zero, saturate to [-4, 4 - 1/32]
        s = Fr(v) * 32
        n = math.floor(abs(s) + Fr(1, 2)) * (1 if s >= 0 else -1)
        return Fr(min(max(n, -128), 127), 32)

    want = [float(q(q(Fr(float(a)) * Fr(float(b))) + q(0.3))) for a, b in zip(x["a"], x["b"])]
    np.testing.assert_array_equal(simulate(program).arrays["y"].astype(np.float64), want)


@pytest.mark.parametrize("fmt,rounding,overflow", [
    ("fixed<3, 5>", "nearest_even", "wrap"), ("fixed<3, 5>", "truncate", "saturate"),
    ("ufixed<2, 6>", "nearest_away", "saturate"), ("fixed<6, 10>", "nearest_even", "saturate"),
])
def test_cli_csim_is_bit_exact_with_the_base2_kernel(tmp_path, capsys, fmt, rounding, overflow):
    f = tmp_path / "f.ekl"
    f.write_text(KERNEL)
    assert main(["hls", str(f), "--format", fmt, "--rounding", rounding, "--overflow", overflow, "--csim"]) == 0
    assert f"vs the kernel compiled in {fmt}: bit-exact" in capsys.readouterr().out


def test_format_and_type_together_are_refused(tmp_path, capsys):
    f = tmp_path / "f.ekl"
    f.write_text(KERNEL)
    assert main(["hls", str(f), "--format", "fixed<3, 5>", "--type", "f32=ap_fixed<8,3>"]) != 0
    assert "either as --format" in capsys.readouterr().err
