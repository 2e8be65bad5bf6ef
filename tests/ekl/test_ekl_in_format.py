"""EKL kernels compiled with their arithmetic in a user's number format (``loom.jit.ekl_formats.in_format``,
``loom ekl explore --format``), against references written here with ``fractions.Fraction`` (a grid of the
format's values, round half to even, wrap / saturate by hand) and ml_dtypes. Before, an EKL kernel could only
be *emulated* in bf16 or in ``fixed<W,F>`` with W total bits, which is not what ``fixed<W,F>`` means in the
rest of loom (W integer bits): ``--fixed fixed<10,4>`` ran a 10-bit format where ``compile_in_format`` runs a
14-bit one."""

from __future__ import annotations

import bisect
import math
import os
from fractions import Fraction as Fr

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loom
from loom.errors import LoomError
from loom.jit.ekl_formats import in_format

FUZZ_SCALE = max(1, int(os.environ.get("LOOM_FUZZ_SCALE", "1") or "1"))

MATVEC = """
kernel mv(A : f64[4, 6], x : f64[6], y : out& f64[4]) {
    out y[i] = <+ k< A[i, k] * x[k];
}"""


# ---- independent references -----------------------------------------------------------------------

def float_grid(e_bits: int, m_bits: int) -> list[Fr]:
    """Every finite value of an IEEE-like float with e_bits / m_bits (bias 2^(E-1) - 1, subnormals)."""
    bias = 2 ** (e_bits - 1) - 1
    values = set()
    for e in range(2 ** e_bits - 1):
        for m in range(2 ** m_bits):
            v = Fr(m, 2 ** m_bits) * Fr(2) ** (1 - bias) if e == 0 else (1 + Fr(m, 2 ** m_bits)) * Fr(2) ** (e - bias)
            values.update((v, -v))
    return sorted(values)


def round_to_grid(x: Fr, grid: list[Fr], m_bits: int) -> Fr | float:
    """Nearest grid value, ties to the one with an even last mantissa bit; beyond max + half an ulp: inf."""
    top_ulp = (grid[-1] - grid[-2])
    if abs(x) >= grid[-1] + top_ulp / 2:
        return math.copysign(math.inf, x)
    i = bisect.bisect_left(grid, x)
    if grid[min(i, len(grid) - 1)] == x:
        return x
    lo, hi = grid[i - 1], grid[i]
    if x - lo != hi - x:
        return lo if x - lo < hi - x else hi
    ulp = hi - lo  # a tie: neighbours differ by one ulp; the even one is an even multiple of it
    return lo if (lo / ulp).numerator % 2 == 0 else hi


def fixed_round(x: Fr, i_bits: int, f_bits: int, overflow: str) -> Fr:
    """x into fixed<I, F> (I integer bits with the sign): half to even, then wrap or saturate."""
    s = x * 2 ** f_bits
    n = math.floor(s)
    if s - n > Fr(1, 2) or (s - n == Fr(1, 2) and n % 2):
        n += 1
    w = i_bits + f_bits
    lo, hi = -(2 ** (w - 1)), 2 ** (w - 1) - 1
    n = min(max(n, lo), hi) if overflow == "saturate" else (n - lo) % 2 ** w + lo
    return Fr(n, 2 ** f_bits)


def matvec_in(A, x, rnd):
    """y_i = sum_k A_ik x_k with every input, product and partial sum rounded by rnd, summed in k order."""
    out = []
    for i in range(A.shape[0]):
        acc = Fr(0)
        for k in range(A.shape[1]):
            acc = rnd(acc + rnd(rnd(Fr(A[i, k])) * rnd(Fr(x[k]))))
        out.append(float(acc))
    return np.array(out)


# ---- tests ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("e_bits,m_bits", [(5, 6), (4, 7), (3, 2)])
def test_a_matvec_in_a_user_float_format_rounds_every_step(e_bits, m_bits):
    grid = float_grid(e_bits, m_bits)
    rng = np.random.default_rng(e_bits * 10 + m_bits)
    A, x = rng.standard_normal((4, 6)) * 3, rng.standard_normal(6)
    y = np.zeros(4)
    in_format(loom.ekl.load(MATVEC).kernel(), f"float<{e_bits}, {m_bits}>")(A, x, y)
    np.testing.assert_array_equal(y, matvec_in(A, x, lambda v: round_to_grid(v, grid, m_bits)))


@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_a_matvec_in_fixed_10_4_wraps_or_saturates_its_sums(overflow):
    rng = np.random.default_rng(4)
    A, x = rng.uniform(-30, 30, (4, 6)), rng.uniform(-30, 30, 6)  # products up to 900: sums leave [-512, 512)
    y = np.zeros(4)
    in_format(loom.ekl.load(MATVEC).kernel(), "fixed<10, 4>", overflow=overflow)(A, x, y)
    want = matvec_in(A, x, lambda v: fixed_round(v, 10, 4, overflow))
    np.testing.assert_array_equal(y, want)
    exact = A @ x
    assert np.abs(exact).max() > 512  # the case overflows ...
    assert ((-512 <= y) & (y < 512)).all()  # ... and the 14-bit result stays in range (10 integer bits, not 10 in all)


def test_elementwise_products_in_e4m3fn_equal_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    src = "kernel p(a : f64[64], b : f64[64], c : out& f64[64]) { out c[i] = a[i] * b[i]; }"
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(64) * 8, rng.standard_normal(64) * 8
    c = np.zeros(64)
    in_format(loom.ekl.load(src).kernel(), "e4m3fn")(a, b, c)
    f8 = ml_dtypes.float8_e4m3fn
    want = (a.astype(f8).astype(np.float32) * b.astype(f8).astype(np.float32)).astype(f8).astype(np.float64)
    np.testing.assert_array_equal(c, want)


def test_a_gather_in_a_format_is_still_range_checked():
    src = "kernel g(X : f64[4], I : index[3], Y : out& f64[3]) { out Y[i] = X[I[i]] * 2.0; }"
    k = in_format(loom.ekl.load(src).kernel(), "fixed<8, 8>")
    y = np.zeros(3)
    k(np.array([1.0, 2.5, -3.0, 4.0]), np.array([3, 0, 2]), y)
    np.testing.assert_array_equal(y, [8.0, 2.0, -6.0])
    with pytest.raises(LoomError, match="out of range"):
        k(np.array([1.0, 2.5, -3.0, 4.0]), np.array([3, 7, 2]), y)


def test_bad_requests_are_loom_errors():
    with pytest.raises(LoomError, match="format"):
        in_format(loom.ekl.load(MATVEC).kernel(), "fixed<10>")
    with pytest.raises(LoomError, match="no float"):
        in_format(loom.ekl.load("kernel s(a : index[3], b : out& index[3]) { out b[i] = a[i] * _2; }").kernel(),
                  "fixed<8, 8>")
    with pytest.raises(LoomError, match=r"in_format\(kernel, 'bf16'\)"):  # a format in the source points here
        loom.ekl.load("type REAL = bf16;\n" + MATVEC.replace("f64", "REAL"))
    k = in_format(loom.ekl.load(MATVEC).kernel(), "bf16")
    with pytest.raises(LoomError, match="argument 'x'"):
        k(np.zeros((4, 6)), np.zeros(5), np.zeros(4))


def test_explore_adds_a_compiled_row_per_format(capsys):
    src = "type REAL = f64;\n" + MATVEC.replace("f64", "REAL")
    rows = {r.type: r for r in loom.ekl.explore(src, repeats=1, formats=["fixed<10, 4>", "float<5, 6>"])}
    assert list(rows) == ["f64", "f32", "bf16", "fixed32.16", "fixed<10, 4>", "float<5, 6>"]
    assert rows["float<5, 6>"].how == "compiled (base2)" and rows["float<5, 6>"].saturations is None
    # random_arrays draws [0, 1) inputs: relative error of a few units of 2^-7 (float<5, 6>)
    assert 1e-4 < rows["float<5, 6>"].max_rel_error < 0.05
    with pytest.raises(LoomError, match="exponent bits must be 1..8"):
        loom.ekl.explore(src, repeats=1, formats=["float<9, 30>"])


def test_explore_cli_format_flag(tmp_path, capsys):
    from loom.cli import main

    f = tmp_path / "mv.ekl"
    f.write_text("type REAL = f64;\n" + MATVEC.replace("f64", "REAL"))
    assert main(["ekl", "explore", str(f), "--repeats", "1", "--format", "ufixed<4, 12>", "--overflow",
                 "saturate"]) == 0
    out = capsys.readouterr().out
    assert "ufixed<4, 12>" in out and "compiled (base2)" in out and "fixed32.16" in out


@settings(max_examples=25 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(i_bits=st.integers(1, 12), f_bits=st.integers(0, 12), overflow=st.sampled_from(["wrap", "saturate"]),
       seed=st.integers(0, 2**16))
def test_fuzz_fixed_axpy_against_fractions(i_bits, f_bits, overflow, seed):
    """y = a * x + b element-wise in random fixed<I, F> formats and modes, inputs around the range's edge."""
    src = "kernel axpy(a : f64[16], x : f64[16], b : f64[16], y : out& f64[16]) { out y[i] = a[i] * x[i] + b[i]; }"
    rng = np.random.default_rng(seed)
    span = 2.0 ** (i_bits - 1)
    a, x, b = (rng.uniform(-1.5 * span, 1.5 * span, 16) for _ in range(3))
    y = np.zeros(16)
    in_format(loom.ekl.load(src).kernel(), f"fixed<{i_bits}, {f_bits}>", overflow=overflow)(a, x, b, y)
    r = lambda v: fixed_round(v, i_bits, f_bits, overflow)  # noqa: E731
    want = [float(r(r(r(Fr(p)) * r(Fr(q))) + r(Fr(s)))) for p, q, s in zip(a, x, b)]
    np.testing.assert_array_equal(y, want)
