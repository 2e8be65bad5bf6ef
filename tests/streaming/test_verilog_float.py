"""Floating point in the streaming RTL (``loom.streaming.verilog_float``): the IEEE functions against numpy on
the host's floats bit for bit, and float pipelines whose Verilated RTL gives the CPU path's pixels."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Float32, Func, ImageParam, IterLevel, Var, ceil, exp, f32, floor,
                                     i16, i32, sqrt)
from loom.frontends.pipeline import max as pmax
from loom.frontends.pipeline import min as pmin
from loom.jit.pipeline import run_cpu
from loom.runtime.rtl import verilator_binary
from loom.streaming import build_design
from loom.streaming.simulate import _design_ir, simulate
from loom.streaming.verilog import design_verilog
from loom.streaming.verilog_float import F32, float_functions
from tests.rtl.rtl_helpers import require_verilator

x, y = Var("x"), Var("y")


def _operands(rng, n=1500):
    """Pairs of special values (zeros, subnormals, extremes, infinities, NaN, integers' edges), random bit patterns,
    values over many decades, subnormal ones, near-equal ones (cancellation) and halves (ties)."""
    fdt = np.float32
    fi = np.finfo(fdt)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0, fi.tiny, -fi.tiny, fi.max, -fi.max,
                        fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny - fi.smallest_subnormal, np.inf,
                        -np.inf, np.nan, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63, -2.0 ** 63, 1e10, 0.3], dtype=fdt)
    raw = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(fdt)
    decades = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)).astype(fdt)
    tiny = (rng.standard_normal(n) * float(fi.tiny) * 4).astype(fdt)
    near = (decades * (1 + rng.standard_normal(n) * float(fi.eps) * 4)).astype(fdt)
    halves = (rng.integers(-20, 20, n) + 0.5).astype(fdt)
    a = np.concatenate([np.repeat(special, len(special)), raw, decades, tiny, decades, halves])
    b = np.concatenate([np.tile(special, len(special)), rng.permutation(raw), rng.permutation(decades),
                        rng.permutation(tiny), near, rng.permutation(halves)])
    return a, b


def _ieee_max(a, b, take_max):
    """IEEE 754-2019 maximum / minimum: NaN propagates, -0 < +0."""
    pick = np.maximum(a, b) if take_max else np.minimum(a, b)
    zeros = (a == 0) & (b == 0)
    signed = np.where(np.signbit(a) == take_max, b, a)
    return np.where(zeros, signed, pick)


def _cmpf(pred, a, b):
    uno = np.isnan(a) | np.isnan(b)
    ordered = {1: a == b, 2: a > b, 3: a >= b, 4: a < b, 5: a <= b, 6: (a < b) | (a > b)}
    if pred in (0, 15):
        return np.full(a.shape, pred == 15)
    if pred in (7, 14):
        return ~uno if pred == 7 else uno
    if pred == 13:
        return ~(a == b)
    return ordered[pred] if pred <= 6 else ordered[pred - 7] | uno


def _cases(a, b):
    """(name, SystemVerilog expression over A[i], B[i], numpy's answer as f32 or i32) for f32 operands."""
    ai = a.view(np.int32)
    with np.errstate(all="ignore"):
        cases = [("add", "f32_add(A[i], B[i])", a + b), ("sub", "f32_sub(A[i], B[i])", a - b),
                 ("mul", "f32_mul(A[i], B[i])", a * b), ("div", "f32_div(A[i], B[i])", a / b),
                 ("sqrt", "f32_sqrt(A[i])", np.sqrt(a)),
                 ("max", "f32_max(A[i], B[i])", _ieee_max(a, b, True)),
                 ("min", "f32_min(A[i], B[i])", _ieee_max(a, b, False)),
                 ("floor", "f32_integral(2'd0, A[i])", np.floor(a)), ("ceil", "f32_integral(2'd1, A[i])", np.ceil(a)),
                 ("trunc", "f32_integral(2'd2, A[i])", np.trunc(a)), ("rint", "f32_integral(2'd3, A[i])", np.rint(a)),
                 ("to_i32", "32'(f32_to_int(1'b0, A[i]))", a.astype(np.int32)),
                 ("to_i64 low half", "32'(f32_to_int(1'b1, A[i]))", a.astype(np.int64).astype(np.int32)),
                 ("from_signed", "f32_from_int(1'b1, {{32{A[i][31]}}, A[i]})", ai.astype(np.float32)),
                 ("from_signed 64", "f32_from_int(1'b1, {A[i], B[i]})",
                  ((ai.astype(np.int64) << 32) | b.view(np.uint32).astype(np.int64)).astype(np.float32)),
                 ("from_unsigned", "f32_from_int(1'b0, 64'(A[i]))", a.view(np.uint32).astype(np.float32))]
        cases += [(f"cmpf {k}", f"32'(f32_cmp(4'd{k}, A[i], B[i]))", _cmpf(k, a, b).astype(np.int32))
                  for k in range(16)]
    return cases


def _run_units(tmp_path, a, b, cases):
    W, N = 32, len(a)
    body = "\n".join(f"      R[{k * N} + i] = {expr};" for k, (_n, expr, _w) in enumerate(cases))
    sv = (f"module fptest;\n{float_functions(F32)}\n"
          f"  logic [{W - 1}:0] A [0:{N - 1}];\n  logic [{W - 1}:0] B [0:{N - 1}];\n"
          f"  logic [{W - 1}:0] R [0:{len(cases) * N - 1}];\n  integer i;\n  initial begin\n"
          f"    $readmemh(\"a.hex\", A);\n    $readmemh(\"b.hex\", B);\n"
          f"    for (i = 0; i < {N}; i = i + 1) begin\n{body}\n    end\n    $writememh(\"r.hex\", R);\n"
          "    $finish;\n  end\nendmodule\n")
    (tmp_path / "fptest.sv").write_text(sv)
    udt = np.uint32
    for name, v in (("a", a), ("b", b)):
        (tmp_path / f"{name}.hex").write_text("\n".join(f"{int(w):0{W // 4}x}" for w in v.view(udt)))
    binary = verilator_binary([tmp_path / "fptest.sv"], "fptest", tmp_path)
    subprocess.run([str(binary)], cwd=tmp_path, check=True, capture_output=True)
    words = [int(t, 16) for t in (tmp_path / "r.hex").read_text().split() if not t.startswith("//")]
    return np.array(words, dtype=np.uint64).astype(udt).reshape(len(cases), N)


def test_the_ieee_functions_give_numpy_s_bits(tmp_path):
    """Every operation's result bits equal numpy's (the host's SSE arithmetic) on 7,000+ operand pairs, NaN
    payloads included; IEEE maximum/minimum against their definition (numpy's ``maximum`` is not one on zeros)."""
    require_verilator()
    fdt = np.float32
    a, b = _operands(np.random.default_rng(7))
    cases = _cases(a, b)
    got = _run_units(tmp_path, a, b, cases)
    wrong = {}
    for (name, _expr, want), bits in zip(cases, got):
        want = np.asarray(want)
        want_bits = want.view(bits.dtype) if want.dtype.kind == "f" else want.astype(bits.dtype)
        same = want_bits == bits
        if name in ("max", "min"):  # which NaN comes back is not IEEE's business
            same |= np.isnan(want) & np.isnan(bits.view(fdt))
        if not same.all():
            k = int(np.flatnonzero(~same)[0])
            wrong[name] = (int((~same).sum()), a[k], b[k], hex(int(want_bits[k])), hex(int(bits[k])))
    assert wrong == {}


def _float_pipeline(tile=None):
    """A float pipeline of the kind an image-processing user writes: affine, a 3-tap row filter, division,
    square root, IEEE max/min, floor/ceil and casts to integers."""
    inp = ImageParam(Float32, 2, "input")
    hw, bx, out = Func("hw"), Func("bx"), Func("out")
    hw[x, y] = inp[x, y] * 1.5 - 0.25
    bx[x, y] = hw[x, y] + hw[x + 1, y] * 2.0 + hw[x + 2, y]
    ratio = bx[x, y] * bx[x, y + 1] / (bx[x, y + 2] + 3.0)
    wide = bx[x, y] * bx[x, y + 2]
    out[x, y] = (sqrt(pmax(ratio, 0.0)) + floor(bx[x, y]) - ceil(pmin(wide, 10.0))
                 + f32(i16(bx[x, y + 1] * 7.0)) + f32(i32(ratio)))
    if tile is not None:
        out.iteration_order([IterLevel("CGRA", [(x, tile[0]), (y, tile[1])]), IterLevel("host")]).accelerate("CGRA")
        level = out.get_looplevel("CGRA", x)
        out.create_memories([bx], level)
        hw.compute_at(level)
    return out


def _float_pipeline_numpy(img):
    """The same pipeline on numpy float32, IEEE max/min by definition."""
    with np.errstate(all="ignore"):
        hw = img * np.float32(1.5) - np.float32(0.25)
        bx = hw[:, :-2] + hw[:, 1:-1] * np.float32(2.0) + hw[:, 2:]
        b0, b1, b2 = bx[:-2], bx[1:-1], bx[2:]
        ratio = b0 * b1 / (b2 + np.float32(3.0))
        wide = b0 * b2
        return (np.sqrt(_ieee_max(ratio, np.float32(0.0), True)) + np.floor(b0)
                - np.ceil(_ieee_max(wide, np.float32(10.0), False))
                + (b1 * np.float32(7.0)).astype(np.int32).astype(np.int16).astype(np.float32)
                + ratio.astype(np.int32).astype(np.float32))


def test_a_float_pipeline_s_rtl_gives_the_cpu_path_s_and_numpy_s_bits():
    """12 x 7 over 4 x 3 tiles (tails overlap), values over decades with exact zeros and halves: the Verilated RTL,
    the value simulator, the CPU path and numpy agree bit for bit."""
    require_verilator()
    from loom.jit.streaming_rtl import simulate_rtl
    rng = np.random.default_rng(3)
    img = (rng.standard_normal((9, 14)) * 10.0 ** rng.integers(-2, 3, (9, 14))).astype(np.float32)
    img[0, :4] = [0.0, -0.0, 0.5, -2.5]
    size = (12, 7)
    want = _float_pipeline_numpy(img)
    got = simulate_rtl(_float_pipeline((4, 3)), {"input": img}, size)
    for result in (got, run_cpu(_float_pipeline(), {"input": img}, size),
                   simulate(_float_pipeline((4, 3)), {"input": img}, size)):
        assert result.dtype == np.float32 and np.array_equal(result.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("take_max", [True, False], ids=["max", "min"])
def test_the_value_simulator_takes_ieee_maximum_and_minimum_on_signed_zeros(take_max):
    """max(x, -x) is |x| and min(x, -x) is -|x|, +0 and -0 for zeros (arith.maximumf / minimumf, as the CPU
    path and the RTL compute them; numpy's maximum(+0, -0) is -0 and its minimum(-0, +0) is +0)."""
    inp = ImageParam(Float32, 2, "input")
    hw, out = Func("hw"), Func("out")
    hw[x, y] = inp[x, y]
    out[x, y] = (pmax if take_max else pmin)(hw[x, y], -hw[x, y])
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 2)]), IterLevel("host")]).accelerate("CGRA")
    hw.compute_at(out.get_looplevel("CGRA", x))
    img = np.array([[0.0, -0.0, 1.0, -2.0]] * 2, dtype=np.float32)
    want = np.abs(img) if take_max else -np.abs(img)
    got = simulate(out, {"input": img}, (4, 2))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_float_ops_without_an_rtl_form_are_refused_by_name():
    inp = ImageParam(Float32, 2, "input")
    hw, out = Func("hw"), Func("out")
    hw[x, y] = inp[x, y]
    out[x, y] = exp(hw[x, y])
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 3)]), IterLevel("host")]).accelerate("CGRA")
    hw.compute_at(out.get_looplevel("CGRA", x))
    d = build_design(out, (4, 3))
    with pytest.raises(LoomError, match=r"ubuf.kernel 'out', op \d+ \(math.exp\).*'math.exp' on f32 has no RTL form"):
        design_verilog(d, _design_ir(d))


def test_a_user_float_app_with_nan_inf_and_negative_zero_inputs_agrees_on_every_path(capsys):
    """``loom pipeline ./float_user_app.py --rtl``: the mapped simulation refused its NaN input as a wrong delay-line
    value, and every path was reported as differing from the reference at the NaN pixels (``!=``); NaNs now match
    any NaN and everything else bit for bit (``core.compare.bits_differ``)."""
    require_verilator()
    from pathlib import Path

    from loom.cli import main
    app = Path(__file__).with_name("float_user_app.py")
    assert main(["pipeline", str(app), "--size", "16x8", "--rtl"]) == 0
    out = capsys.readouterr().out
    assert out.count("yes (bit-exact)") == 4 and "NO" not in out


def test_bits_differ_tells_signed_zeros_apart_and_matches_nans():
    from loom.core.compare import bits_differ
    a = np.array([0.0, np.nan, 1.0, -np.nan, np.inf], np.float32)
    b = np.array([-0.0, -np.nan, 1.0, np.nan, np.inf], np.float32)
    assert bits_differ(a, b).tolist() == [True, False, False, False, False]
    assert bits_differ(np.array([1, 2]), np.array([1, 3])).tolist() == [False, True]
