"""HLS C++ in loom's custom float formats (``loom_float<...>``, include/loom_float.h; ``loom hls --format e4m3fn``).

The C simulation is checked bit for bit against an independent model written with Fractions
(``float_reference``), against ml_dtypes / numpy where they have the format (nearest-even rounding, overflow to
inf), and against loom's CPU kernel compiled in the same base2 format. Seeded fuzz over formats, modes and
values: ties, overflow to inf / NaN / saturation, subnormals, NaN and infinite operands, signed zeros."""

from __future__ import annotations

import math
import random
import re
import subprocess
from fractions import Fraction

import numpy as np
import pytest

import loom
from loom.backends.hls import HlsFloat, csim_inputs, emit_hls, hls_type_of_format, simulate
from loom.backends.hls.csim import INCLUDE_DIR, WARNINGS, cxx
from loom.cli import main
from loom.core.numformats import FloatFormat, float_op
from loom.errors import LoomError

from tests.backends.hls.float_reference import Fmt

ml_dtypes = pytest.importorskip("ml_dtypes")

OPS = ("add", "sub", "mul", "div", "fma")
SPECIAL_ENUM = {"ieee": "LOOM_IEEE", "fn": "LOOM_FN", "fnuz": "LOOM_FNUZ"}


def _random_formats(rng: random.Random, n: int) -> list[tuple[FloatFormat, str, str]]:
    out = []
    while len(out) < n:
        e, m = rng.randint(1, 8), rng.randint(1, 23)
        special = rng.choice(("ieee", "fn", "fnuz"))
        if special == "ieee" and e == 1:
            continue
        bias = rng.randrange(1 << e) if rng.random() < 0.4 else None
        out.append((FloatFormat(e, m, bias, special), rng.choice(("nearest_even", "truncate", "nearest_away")),
                    rng.choice(("inf", "saturate"))))
    return out


def _cases(fmt: FloatFormat, ref: Fmt, rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    """Operand triples: specials, extremes, ties of sums and products, overflows, subnormals, random."""
    sign = 1 << (fmt.exp_bits + fmt.man_bits)
    full = (1 << fmt.width) - 1
    special = [0, sign, 1, sign | 1, fmt.max_magnitude, sign | fmt.max_magnitude, 1 << fmt.man_bits,
               (1 << fmt.man_bits) - 1, fmt.nan_bits(), fmt.nan_bits(True)]
    if fmt.has_inf:
        special += [fmt.inf_bits(), fmt.inf_bits(True)]
    cases = [(a, b, rng.choice(special)) for a in special for b in special]
    for _ in range(n // 4):  # a + b exactly halfway between two neighbours of a (a tie), and its neighbours
        a = rng.randrange(1 << fmt.man_bits, fmt.max_magnitude + 1)
        value = ref.value(a)[0]
        field = max(a >> fmt.man_bits, 1)
        half = Fraction(2) ** (field - fmt.bias - fmt.man_bits - 1)
        for quarter in (half, half / 2, half * 3 / 2):
            try:
                b = ref.pattern_of(quarter)
            except (AssertionError, ValueError):
                continue
            if not isinstance(ref.value(b)[0], Fraction) or ref.value(b)[0] != quarter or quarter > ref.max:
                continue
            cases.append((a | rng.choice((0, sign)), b | rng.choice((0, sign)), rng.randrange(full + 1)))
        del value
    for _ in range(n // 4):  # products near the top and the bottom of the range, fma of those
        big = fmt.max_magnitude - rng.randrange(min(8, fmt.max_magnitude))
        small = rng.randrange(1, 1 << (fmt.man_bits + 1))
        cases.append((big, rng.randrange(1 << fmt.man_bits, fmt.max_magnitude + 1), small | rng.choice((0, sign))))
        cases.append((small, rng.randrange(1, 2 << fmt.man_bits), big | rng.choice((0, sign))))
    while len(cases) < len(special) ** 2 + n:
        cases.append(tuple(rng.randrange(full + 1) for _ in range(3)))
    return cases


def _harness(configs, cases) -> str:
    lines = ['#include "loom_float.h"', "#include <cstdio>", "#include <cstdint>", "",
             "template <class T> void run(int id, const uint32_t *x, int n) {",
             "  for (int k = 0; k < n; k++) {",
             "    T a = T::from_bits(x[3 * k]), b = T::from_bits(x[3 * k + 1]), c = T::from_bits(x[3 * k + 2]);",
             '    std::printf("%d %u %u %u %u %u\\n", id, (a + b).to_bits(), (a - b).to_bits(), (a * b).to_bits(),',
             "                (a / b).to_bits(), loom_fma(a, b, c).to_bits());", "  }", "}", ""]
    for k, triples in enumerate(cases):
        flat = ", ".join(f"{v}u" for t in triples for v in t)
        lines.append(f"static const uint32_t in{k}[] = {{{flat}}};")
    lines.append("int main() {")
    for k, ((fmt, rounding, overflow), triples) in enumerate(zip(configs, cases)):
        ctype = HlsFloat(fmt, rounding, overflow).template
        lines.append(f"  run<{ctype}>({k}, in{k}, {len(triples)});")
    lines += ["  return 0;", "}"]
    return "\n".join(lines)


def _run_harness(tmp_path, configs, cases) -> list[list[list[int]]]:
    src = tmp_path / "harness.cpp"
    src.write_text(_harness(configs, cases))
    exe = tmp_path / "harness"
    subprocess.run([*cxx(), *WARNINGS, "-O1", "-I", str(INCLUDE_DIR), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    results: list[list[list[int]]] = [[] for _ in configs]
    for line in out.splitlines():
        k, *values = map(int, line.split())
        results[k].append(values)
    return results


def _ml_dtype_check(fmt, name, triples, got):
    """ml_dtypes' +, -, *, / (f32 arithmetic rounded into the type: correct for these precisions); NaN's sign
    is not ml_dtypes' business (loom's arithmetic NaN is positive)."""
    dtype = np.float16 if name == "float16" else getattr(ml_dtypes, name)
    width = np.uint8 if fmt.width == 8 else np.uint16
    a = np.array([t[0] for t in triples], width).view(dtype).astype(np.float32)
    b = np.array([t[1] for t in triples], width).view(dtype).astype(np.float32)
    with np.errstate(all="ignore"):
        want = [(a + b), (a - b), (a * b), (a / b)]
    for j, w in enumerate(want):
        with np.errstate(all="ignore"):
            expected = w.astype(dtype).astype(np.float64)
        values = np.array([fmt.decode(g[j]) for g in got])
        same = (np.isnan(values) & np.isnan(expected)) | ((values == expected)
                                                           & (np.signbit(values) == np.signbit(expected)))
        assert same.all(), f"{name} {OPS[j]}: {np.count_nonzero(~same)} differ from ml_dtypes"


def test_header_arithmetic_fuzz_against_fractions_and_ml_dtypes(tmp_path):
    rng = random.Random(20261129)
    named = [(FloatFormat(4, 3, special="fn"), "float8_e4m3fn"), (FloatFormat(5, 2), "float8_e5m2"),
             (FloatFormat(8, 7), "bfloat16"), (FloatFormat(5, 10), "float16"),
             (FloatFormat(4, 3, special="fnuz"), "float8_e4m3fnuz")]
    configs = [(fmt, "nearest_even", "inf") for fmt, _ in named]
    configs += [(FloatFormat(8, 23), "nearest_even", "inf"), (FloatFormat(2, 1), "nearest_away", "saturate"),
                (FloatFormat(1, 2, special="fn"), "truncate", "inf"), (FloatFormat(8, 3, bias=0), "nearest_even", "inf"),
                (FloatFormat(3, 4, bias=7, special="fnuz"), "truncate", "saturate")]
    configs += _random_formats(rng, 12)
    cases = [_cases(fmt, Fmt(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.special), rng, 100)
             for fmt, _, _ in configs]
    results = _run_harness(tmp_path, configs, cases)
    for (fmt, rounding, overflow), triples, got in zip(configs, cases, results):
        ref = Fmt(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.special)
        assert len(got) == len(triples)
        for t, g in zip(triples, got):
            for j, op in enumerate(OPS):
                operands = list(t if op == "fma" else t[:2])
                want = ref.op(op, operands, rounding, overflow)
                assert ref.same(fmt.decode(g[j]), want), (
                    f"{fmt} {rounding} {overflow}: {op}{tuple(hex(p) for p in operands)} = {hex(g[j])} "
                    f"({fmt.decode(g[j])!r}), the Fraction model says {want}")
                # and the very pattern loom's base2 definition computes (NaN payloads, fnuz's one NaN)
                assert g[j] == float_op(fmt, op, operands, rounding, overflow)
    for (fmt, name), got, triples in zip(named, results, cases):
        _ml_dtype_check(fmt, name, triples, got)
    # float<8, 23> is f32: numpy's correctly rounded float32 arithmetic
    f32 = configs[len(named)][0]
    a = np.array([t[0] for t in cases[len(named)]], np.uint32).view(np.float32)
    b = np.array([t[1] for t in cases[len(named)]], np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        for j, w in enumerate((a + b, a - b, a * b, a / b)):
            g = np.array([r[j] for r in results[len(named)]], np.uint32).view(np.float32)
            assert np.array_equal(g, w, equal_nan=True) and np.array_equal(np.signbit(g[~np.isnan(g)]),
                                                                           np.signbit(w[~np.isnan(w)]))
    assert f32 == FloatFormat(8, 23)


def test_conversions_from_double_and_integers_round_once(tmp_path):
    """(T)double and (T)integer: every rounding mode at ties, overflow, subnormals, NaN signs."""
    rng = random.Random(7)
    configs = [(FloatFormat(4, 3, special="fn"), "nearest_even", "inf"), (FloatFormat(5, 2), "truncate", "saturate"),
               (FloatFormat(3, 2, special="fnuz"), "nearest_away", "inf"), (FloatFormat(8, 7), "nearest_away", "inf")]
    values = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 1e300, -1e300, 5e-324, -2.5e-300]
    values += [rng.uniform(-300, 300) for _ in range(40)] + [k / 16 for k in range(-80, 81)]
    values += [float(n) for n in (3, 17, 1000001, -(2**40) - 1, 2**62 + 2**40)]
    body = ['#include "loom_float.h"', "#include <cstdio>", "#include <cmath>", "int main() {"]
    doubles = ", ".join("NAN" if math.isnan(v) and math.copysign(1, v) > 0 else "-NAN" if math.isnan(v)
                        else "INFINITY" if v == math.inf else "-INFINITY" if v == -math.inf else float.hex(v)
                        for v in values)
    ints = [3, -3, 17, 1000001, -(2**40) - 1, 2**62 + 2**40, 0, -1]
    body.append(f"  static const double d[] = {{{doubles}}};")
    body.append(f"  static const long long n[] = {{{', '.join(f'{v}LL' for v in ints)}}};")
    for fmt, rounding, overflow in configs:
        t = HlsFloat(fmt, rounding, overflow).template
        body.append(f"  for (double x : d) std::printf(\"%u\\n\", ({t}(x)).to_bits());")
        body.append(f"  for (long long x : n) std::printf(\"%u\\n\", ({t}(x)).to_bits());")
    body += ["  return 0;", "}"]
    src = tmp_path / "conv.cpp"
    src.write_text("\n".join(body))
    # __SYNTHESIS__: the header's synthesizable leading-one search, not the C simulation's __builtin_clzll
    subprocess.run([*cxx(), *WARNINGS, "-O1", "-D__SYNTHESIS__", "-I", str(INCLUDE_DIR), str(src), "-o",
                    str(tmp_path / "conv")], check=True)
    out = list(map(int, subprocess.run([str(tmp_path / "conv")], capture_output=True, text=True,
                                       check=True).stdout.split()))
    k = 0
    for fmt, rounding, overflow in configs:
        ref = Fmt(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.special)
        for v in values + ints:
            if isinstance(v, float) and math.isnan(v):
                want = ("nan", math.copysign(1, v) < 0)
            elif isinstance(v, float) and math.isinf(v):
                want = ref.infinite(v < 0)
            else:
                want = ref.round(Fraction(v), rounding, overflow, zero_negative=math.copysign(1, v) < 0)
            assert ref.same(fmt.decode(out[k]), want), f"{fmt} {rounding} {overflow}: ({v!r}) -> {hex(out[k])}"
            k += 1


KERNEL = """kernel ops(a : f32[N], b : f32[N], s : out& f32[N], d : out& f32[N], p : out& f32[N], q : out& f32[N],
                      mx : out& f32[N], ng : out& f32[N], mn : out& f32[N], ab : out& f32[N], c : out& f32[N]) {
    out s[i] = a[i] + b[i];
    out d[i] = a[i] - b[i];
    out p[i] = a[i] * b[i];
    out q[i] = a[i] / b[i];
    out mx[i] = max(a[i], b[i]);
    out ng[i] = -a[i] * 0.5;
    out mn[i] = min(a[i], b[i]);
    out ab[i] = abs(a[i]);
    out c[i] = a[i] < b[i] ? 1.0 : (a[i] == b[i] ? 0.5 : (a[i] ~= b[i] ? -1.0 : 0.25));
}"""


def _cpu_in_format(program, fmt_text, rounding, overflow):
    from loom.backends.c import compile_module
    from loom.jit.formats import lower_in_format
    from loom.passes.convert_float_to_base2 import ConvertFloatToBase2Pass

    convert = ConvertFloatToBase2Pass(format=fmt_text, rounding=rounding, overflow=overflow)
    return compile_module(lower_in_format(program.module, convert)).function(program.top_mlir)


@pytest.mark.parametrize("fmt_text,rounding,overflow", [
    ("e4m3fn", "nearest_even", "inf"), ("float<5, 9, fnuz, bias = 20>", "nearest_away", "saturate"),
])
def test_kernel_csim_equals_cpu_kernel_and_fractions(fmt_text, rounding, overflow):
    """A kernel over given operands (NaN, inf, extremes, subnormals, random patterns): the C simulation equals
    the CPU kernel compiled in the format, pattern for pattern, and the Fraction model."""
    t = hls_type_of_format(fmt_text, rounding, overflow)
    fmt = t.format
    ref = Fmt(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.special)
    rng = random.Random(fmt_text)
    pairs = [(a, b) for a, b, _ in _cases(fmt, ref, rng, 40)]
    n = len(pairs)
    program = emit_hls(loom.ekl.load(KERNEL.replace("N", str(n))).kernel().ir("loops"),
                       types={"f32": t, "f64": t})
    # sign, min / max and comparisons on the patterns (no float unit); nothing else converts to float
    for call in ("loom_neg(", "loom_abs(", "loom_maximum(", "loom_minimum(", "loom_cmp<1>(", "loom_cmp<4>(",
                 "loom_cmp<13>("):
        assert call in program.source
    assert re.search(r"\(\(float\)\((v|p)\d+\)\)", program.source) is None
    given = {"a": [fmt.decode(a) for a, _ in pairs], "b": [fmt.decode(b) for _, b in pairs]}
    run = simulate(program, inputs=given)
    x = csim_inputs(program, inputs=given)
    outs = {name: np.zeros(n, np.float32) for name in ("s", "d", "p", "q", "mx", "ng", "mn", "ab", "c")}
    _cpu_in_format(program, fmt_text, rounding, overflow)(x["a"].astype(np.float32), x["b"].astype(np.float32),
                                                          *outs.values())
    for name, want in outs.items():
        got = [t.encode(v) for v in run.arrays[name]]
        assert got == [t.encode(v) for v in want.astype(np.float64)], f"{fmt_text}: {name} differs from the CPU"
    half = ref.pattern_of(Fraction(1, 2)) if Fraction(1, 2) <= ref.max else None
    for k, (a, b) in enumerate(pairs):
        for name, op in (("s", "add"), ("d", "sub"), ("p", "mul"), ("q", "div")):
            assert ref.same(run.arrays[name][k], ref.op(op, [a, b], rounding, overflow)), (name, hex(a), hex(b))
        va, vb = fmt.decode(a), fmt.decode(b)
        want_max = math.nan if math.isnan(va) or math.isnan(vb) else max(va, vb)
        if va == vb == 0:
            want_max = 0.0 if math.copysign(1, va) > 0 or math.copysign(1, vb) > 0 else -0.0
        got = run.arrays["mx"][k]
        assert (math.isnan(got) and math.isnan(want_max)) or (got == want_max and
                                                              math.copysign(1, got) == math.copysign(1, want_max))
        if half is not None:  # -a rounded into the format, times 0.5
            neg = ref.value(fmt.encode(-va, rounding, overflow))
            want = ("nan", False) if neg[0] == "nan" else ref.op("mul", [fmt.encode(-va), half], rounding, overflow)
            assert ref.same(run.arrays["ng"][k], want), (hex(a), run.arrays["ng"][k], want)


def test_fma_in_a_kernel(tmp_path):
    """math.fma of a kernel is the format's fma (one rounding), as the CPU kernel in the format computes it; the
    arrays are AXI streams of the format's values."""
    src = tmp_path / "fma.mlir"
    src.write_text("""func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %u = memref.load %b[%i] : memref<8xf32>
    %v = memref.load %c[%i] : memref<8xf32>
    %r = math.fma %x, %u, %v : f32
    memref.store %r, %y[%i] : memref<8xf32>
  }
  return
}""")
    from tests.backends.hls.hls_helpers import parse

    module = parse(src.read_text())
    t = hls_type_of_format("e5m2")
    program = emit_hls(module, types={"f32": t}, interface="axis")  # (m_axi: the kernel tests above)
    assert "loom_fma(" in program.source and f"hls::stream<{t.ctype}> &a_in" in program.source
    # 1.25 * 1.25 + 2^-5 is exactly between two e5m2 values only after one rounding of the product
    given = {"a": [1.25, 1.75, 3.0, -1.5, 0.0, math.inf, 448.0, 2.0 ** -16],
             "b": [1.25, 1.75, 3.0, 1.5, -0.0, 0.0, 448.0, 0.5],
             "c": [2.0 ** -5, -3.0, 0.5, 2.25, -0.0, 1.0, -57344.0, 0.0]}
    run = simulate(program, inputs=given)
    x = csim_inputs(program, inputs=given)
    y = np.zeros(8, np.float32)
    _cpu_in_format(program, "e5m2", "nearest_even", "inf")(*(x[n].astype(np.float32) for n in "abc"), y)
    ref = Fmt(5, 2)
    for k in range(8):
        ops = [t.encode(x[n][k]) for n in "abc"]
        assert ref.same(run.arrays["y"][k], ref.op("fma", ops, "nearest_even", "inf")), k
        assert t.encode(run.arrays["y"][k]) == t.encode(float(y[k])), k


def test_cli_format_csim_bit_exact(tmp_path, capsys):
    """An f64 kernel in a format whose values are not all f32 values (f32's are refused, checked below)."""
    f = tmp_path / "k.ekl"
    f.write_text("const C = [0.1, 3.7];\nkernel f(a : f64[16], b : f64[16], y : out& f64[16]) "
                 "{ out y[i] = max(a[i] * b[i] - 0.75, -a[i]) / (abs(b[i]) + C[_1]) + exp(a[i]); }")
    for fmt, rounding, overflow in (("float<8, 20, bias = 3>", "truncate", "saturate"),):
        out_dir = tmp_path / fmt.replace("<", "").replace(">", "").replace(",", "").replace(" ", "")
        assert main(["hls", str(f), "--format", fmt, "--rounding", rounding, "--overflow", overflow, "--csim",
                     "-o", str(out_dir), "--range", "a=-100:1000"]) == 0
        text = capsys.readouterr().out
        assert f"vs the kernel compiled in {fmt}: bit-exact" in text
        assert (out_dir / "loom_float.h").exists()
        cpp = (out_dir / "f.cpp").read_text()
        t = hls_type_of_format(fmt, rounding, overflow)
        assert f"typedef {t.template} {t.ctype};" in cpp
        # the ROM and the constants hold patterns, rounded when the C++ was written
        assert re.search(rf"static const {t.ctype} loom_g_\w+\[2\] = \{{{t.ctype}::from_bits\(\d+u\), ", cpp)
        assert f"{t.ctype}::from_bits({t.encode(0.75)}u)" in cpp
    # the files compile as they were written out, with the include folder only; exp(a > 709) is an exact
    # infinity, which stays one in saturate mode
    subprocess.run([*cxx(), *WARNINGS, "-I", str(out_dir), str(out_dir / "f.cpp"), str(out_dir / "f_tb.cpp"),
                    "-o", str(tmp_path / "tb")], check=True)
    printed = subprocess.run([str(tmp_path / "tb")], capture_output=True, text=True, check=True).stdout.split()
    fmt = hls_type_of_format(fmt).format
    assert str(fmt.inf_bits()) in printed and any(w.isdigit() and fmt.decode(int(w)) > 1 for w in printed)


def test_cli_format_of_a_kernel_without_floats_is_refused(tmp_path, capsys):
    """It compiled the integer kernel unchanged and called the C simulation bit-exact 'in e4m3fn'."""
    f = tmp_path / "k.ekl"
    f.write_text("kernel f(a : index[4], y : out& index[4]) { out y[i] = a[i] * _2; }")
    out_dir = tmp_path / "out"
    assert main(["hls", str(f), "--format", "e4m3fn", "--csim", "-o", str(out_dir)]) != 0
    assert f"--format: {f} computes in no f32 or f64 value: nothing to compute in e4m3fn" in capsys.readouterr().err
    assert main(["hls", "collatz_steps", "--format", "fixed<8, 8>"]) != 0
    assert "--format: collatz_steps computes in no f32 or f64 value: nothing to compute in fixed<8, 8>" in \
        capsys.readouterr().err
    assert not out_dir.exists()


def test_cli_range_names_an_array_or_is_refused_before_writing(tmp_path, capsys):
    f = tmp_path / "k.ekl"
    f.write_text("kernel f(a : f32[4], y : out& f32[4]) { out y[i] = a[i] * a[i]; }")
    out_dir = tmp_path / "out"
    assert main(["hls", str(f), "--format", "e4m3fn", "--range", "q=0:1", "-o", str(out_dir)]) != 0
    assert "--range: no integer or float array argument 'q'; the top function's are a" in capsys.readouterr().err
    assert not out_dir.exists()


@pytest.mark.parametrize("args,match", [
    (["--format", "e4m3fn", "--overflow", "wrap"], "overflow for"),
    (["--format", "fixed<4, 4>", "--overflow", "inf"], "overflow for"),
    (["--format", "float<9, 3>"], "exponent bits must be 1..8"),
    (["--format", "float<8, 23, bias = 0>"], "func @f: !base2.float<8, 23, bias = 0> values are not all exact in f32"),
])
def test_cli_refusals(tmp_path, capsys, args, match):
    f = tmp_path / "k.ekl"
    f.write_text("kernel f(a : f32[4], y : out& f32[4]) { out y[i] = a[i] * a[i]; }")
    assert main(["hls", str(f), *args]) != 0
    assert match in capsys.readouterr().err


def test_types_refuse_formats_where_they_do_not_fit():
    t = hls_type_of_format("bf16")
    src = "kernel f(a : f32[4], y : out& f32[4]) { out y[i] = a[i] * a[i]; }"
    module = loom.ekl.load(src).kernel().ir("loops")
    with pytest.raises(LoomError, match="computes f32 or f64 values, not i32"):
        emit_hls(module, types={"i32": t})


def test_a_csim_that_does_not_end_names_the_remedy():
    """collatz_steps loops for ever on negative inputs (the testbench's default draw of i32 arrays)."""
    from loom.backends.hls import emit_testbench
    from loom.backends.hls.csim import compile_and_run
    from loom.examples.kernels import collatz_steps

    program = emit_hls(collatz_steps.module, dims={"N": 4})
    with pytest.raises(LoomError, match=r"did not finish in 0.5 s .*--range NAME=LO:HI"):
        compile_and_run(program, emit_testbench(program), timeout=0.5)
    assert compile_and_run(program, emit_testbench(program, ranges={"x": (1, 30)})).arrays["steps"].min() >= 0


def _model_sign_ops(fmt: FloatFormat, x: int, y: int):
    """-x, |x|, maximum, minimum (NaN-propagating, -0 < +0) and the 16 cmpf predicates, from the values."""
    a, b = fmt.decode(x), fmt.decode(y)
    nan = ("nan", False)

    def back(v):  # a float value rounded into the format (exact here)
        if math.isnan(v):
            return ("nan", None if fmt.special == "fnuz" else math.copysign(1, v) < 0)
        if math.isinf(v):
            return ("inf", v < 0)
        return (Fraction(abs(v)), math.copysign(1, v) < 0 and (v != 0 or fmt.special != "fnuz"))

    unordered = math.isnan(a) or math.isnan(b)
    if unordered:
        mx = mn = nan
    elif a == b:
        mx = back(b if math.copysign(1, a) < 0 else a)
        mn = back(a if math.copysign(1, a) < 0 else b)
    else:
        mx, mn = back(max(a, b)), back(min(a, b))
    lt, gt, eq = (not unordered and a < b), (not unordered and a > b), (not unordered and a == b)
    preds = [False, eq, gt, gt or eq, lt, lt or eq, lt or gt, not unordered, unordered or eq, unordered or gt,
             unordered or gt or eq, unordered or lt, unordered or lt or eq, unordered or not eq, unordered, True]
    return back(-a), back(abs(a)) if not math.isnan(a) else nan, mx, mn, sum(int(p) << k for k, p in enumerate(preds))


def test_sign_min_max_and_comparisons_on_every_pattern_pair(tmp_path):
    """loom_neg / loom_abs / loom_maximum / loom_minimum / loom_cmp<P> (integer operations) on every pair of
    patterns of four small formats, against the IEEE meaning of the decoded values."""
    configs = [FloatFormat(3, 2), FloatFormat(3, 2, special="fn"), FloatFormat(2, 3, special="fnuz"),
               FloatFormat(2, 1, bias=0)]
    lines = ['#include "loom_float.h"', "#include <cstdio>", "template <class T> void run(int n) {",
             "  for (int x = 0; x < n; x++) for (int y = 0; y < n; y++) {",
             "    T a = T::from_bits(x), b = T::from_bits(y);", "    unsigned m = 0;"]
    lines += [f"    m |= (unsigned)loom_cmp<{p}>(a, b) << {p};" for p in range(16)]
    lines += ['    std::printf("%u %u %u %u %u\\n", loom_neg(a).to_bits(), loom_abs(a).to_bits(), '
              "loom_maximum(a, b).to_bits(), loom_minimum(a, b).to_bits(), m);", "  }", "}", "int main() {"]
    lines += [f"  run<{HlsFloat(f).template}>({1 << f.width});" for f in configs] + ["}"]
    src = tmp_path / "sign.cpp"
    src.write_text("\n".join(lines))
    subprocess.run([*cxx(), *WARNINGS, "-O1", "-I", str(INCLUDE_DIR), str(src), "-o", str(tmp_path / "sign")],
                   check=True)
    rows = iter(subprocess.run([str(tmp_path / "sign")], capture_output=True, text=True,
                               check=True).stdout.splitlines())
    for fmt in configs:
        ref = Fmt(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.special)
        for x in range(1 << fmt.width):
            for y in range(1 << fmt.width):
                got = list(map(int, next(rows).split()))
                want = _model_sign_ops(fmt, x, y)
                for name, g, w in zip(("neg", "abs", "maximum", "minimum"), got, want):
                    assert ref.same(fmt.decode(g), w), f"{fmt}: {name}({hex(x)}, {hex(y)}) = {hex(g)}, want {w}"
                assert got[4] == want[4], f"{fmt}: cmpf({hex(x)}, {hex(y)}) predicates {got[4]:016b} != {want[4]:016b}"


@pytest.mark.parametrize("inputs,match", [
    ({"q": [1.0] * 4}, r"inputs\['q'\].*no array argument 'q'; the top function's arrays are a, y"),
    ({"a": [1.0] * 3}, r"inputs\['a'\].*expected 4 numbers \(shape \[4\]\) for f32, got 3"),
    ({"a": ["x"] * 4}, r"inputs\['a'\].*expected 4 numbers"),
])
def test_given_inputs_are_checked(inputs, match):
    program = emit_hls(loom.ekl.load("kernel f(a : f32[4], y : out& f32[4]) { out y[i] = a[i] * a[i]; }")
                       .kernel().ir("loops"), types={"f32": hls_type_of_format("e4m3fn")})
    with pytest.raises(LoomError, match=match):
        csim_inputs(program, inputs=inputs)
    with pytest.raises(LoomError, match=match):
        simulate(program, inputs=inputs)


def test_a_format_spelled_as_an_hls_type_names_the_way_to_give_it():
    src = "kernel f(a : f32[4], y : out& f32[4]) { out y[i] = a[i] * a[i] + 0.1; }"
    module = loom.ekl.load(src).kernel().ir("loops")
    with pytest.raises(LoomError, match=r"types\['f32'\]: 'float<5, 6>' is a loom number format, not an HLS type: "
                                         r"give it as hls_type_of_format\('float<5, 6>', rounding, overflow\)"):
        emit_hls(module, types={"f32": "float<5, 6>"})
    with pytest.raises(LoomError, match=r"not an HLS type: 'e4m3x'; expected ap_int"):
        emit_hls(module, types={"f32": "e4m3x"})


def _random_expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(["a[i]", "b[i]", "c[i]", repr(rng.choice([0.5, -1.75, 3.0, 1e-3, 100.0, 0.1]))])
    x, y = _random_expression(rng, depth - 1), _random_expression(rng, depth - 1)
    return rng.choice([f"({x} + {y})", f"({x} - {y})", f"({x} * {y})", f"({x} / {y})", f"max({x}, {y})",
                       f"min({x}, {y})", f"abs({x})", f"(-{x})", f"({x} < {y} ? {x} : {y} * 0.5)",
                       f"exp({x} * 0.01)"])


@pytest.mark.slow
def test_random_kernels_csim_equals_the_cpu_kernel():
    """Seeded random EKL expressions (arithmetic, max/min/abs/-x, selects, exp, constants) over random formats,
    modes and input ranges wide enough to overflow: the C simulation equals the CPU kernel in the format."""
    from loom.build.hls_unit import check_against_cpu

    rng = random.Random(31)
    formats = ["e4m3fn", "e5m2", "bf16", "fp16", "e4m3fnuz", "float<3, 2>", "float<2, 5, fn>", "float<6, 11>",
               "float<4, 4, fnuz, bias = 3>", "float<8, 1>"]
    for _ in range(4):
        src = (f"kernel f(a : f32[16], b : f32[16], c : f32[16], y : out& f32[16]) "
               f"{{ out y[i] = {_random_expression(rng, 4)}; }}")
        fmt, rounding, overflow = (rng.choice(formats), rng.choice(("nearest_even", "truncate", "nearest_away")),
                                   rng.choice(("inf", "saturate")))
        ranges = {n: (-(10 ** rng.randint(0, 4)), 10 ** rng.randint(0, 4)) for n in "abc"}
        t = hls_type_of_format(fmt, rounding, overflow)
        program = emit_hls(loom.ekl.load(src).kernel().ir("loops"), types={"f32": t, "f64": t})
        assert "bit-exact" in check_against_cpu(program, program.top, ranges, in_format=(fmt, rounding, overflow))


def test_base2_ir_is_refused_with_the_way_to_a_format(tmp_path, capsys):
    """lower_to_c's message pointed at compile_base2, a CPU path."""
    f = tmp_path / "b2.mlir"
    t = "memref<8x!base2.float<4, 3, fn>>"
    f.write_text(f"""func.func @f(%a: {t}, %y: {t}) {{
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : {t}
  %r = base2.mul %x, %x : !base2.float<4, 3, fn>
  memref.store %r, %y[%c0] : {t}
  return
}}""")
    assert main(["hls", str(f)]) != 0
    err = capsys.readouterr().err
    assert "cannot lower base2.mul in HLS C++: base2 ops are lowered by lower-base2-to-arith first" in err
    assert "(loom hls --format e4m3fn)" in err
