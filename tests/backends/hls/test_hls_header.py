"""loom_hls.h on its own: ap_fixed quantisation/overflow and arithmetic, ap_int wrapping, hls::stream.

References are written here from the definitions (Python ``fractions``, ``math.floor``, ``round``'s
half-to-even), not from loom's Python model of the header.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
from fractions import Fraction

import pytest

from loom.backends.hls.csim import INCLUDE_DIR, WARNINGS, cxx
from loom.backends.hls.types import parse_hls_type

MODES_Q = ["AP_TRN", "AP_TRN_ZERO", "AP_RND", "AP_RND_ZERO", "AP_RND_MIN_INF", "AP_RND_INF", "AP_RND_CONV"]
MODES_O = ["AP_WRAP", "AP_SAT", "AP_SAT_ZERO", "AP_SAT_SYM"]
TYPES = [("ap_fixed", 8, 3), ("ap_ufixed", 8, 4), ("ap_fixed", 16, 8), ("ap_fixed", 12, -2), ("ap_ufixed", 10, 12)]


def build_and_run(tmp_path, source: str, expect_ok: bool = True, sanitize: bool | None = None
                  ) -> subprocess.CompletedProcess:
    (tmp_path / "t.cpp").write_text(source)
    if sanitize is None:
        sanitize = os.environ.get("LOOM_SANITIZE", "") not in ("", "0")
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"] if sanitize else ["-O0"]
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    built = subprocess.run([*cxx(), *WARNINGS, *flags, "-I", str(INCLUDE_DIR), str(tmp_path / "t.cpp"), "-o",
                            str(tmp_path / "t")], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, env=env, timeout=60)
    if expect_ok:
        assert ran.returncode == 0, ran.stderr
    return ran


def quantise(x: Fraction, q: str) -> int:
    """x rounded to an integer by the mode's definition."""
    sign = -1 if x < 0 else 1
    if q == "AP_TRN":
        return math.floor(x)
    if q == "AP_TRN_ZERO":
        return math.trunc(x)
    if q == "AP_RND":
        return math.floor(x + Fraction(1, 2))
    if q == "AP_RND_MIN_INF":
        return math.ceil(x - Fraction(1, 2))
    if q == "AP_RND_ZERO":
        return sign * math.ceil(abs(x) - Fraction(1, 2))
    if q == "AP_RND_INF":
        return sign * math.floor(abs(x) + Fraction(1, 2))
    return round(x)  # AP_RND_CONV: Python rounds halves to even


def overflow(raw: int, width: int, signed: bool, o: str) -> int:
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if o == "AP_SAT_SYM" and signed and raw == lo:
        return -hi  # symmetric: Vitis' C simulation maps the minimum itself to -max (ap_fixed_base's constructors)
    if lo <= raw <= hi:
        return raw
    if o == "AP_SAT":
        return max(lo, min(hi, raw))
    if o == "AP_SAT_ZERO":
        return 0
    if o == "AP_SAT_SYM":
        return (-hi if signed else 0) if raw < lo else hi
    raw %= 1 << width
    return raw - (1 << width) if signed and raw > hi else raw


def to_fixed(x: Fraction, kind: str, w: int, i: int, q: str, o: str) -> Fraction:
    raw = overflow(quantise(x * 2 ** (w - i), q), w, kind == "ap_fixed", o)
    return Fraction(raw, 1) / Fraction(2) ** (w - i)


def sample_values(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    values = [0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 127.96875, -128.0, 300.0, -300.0, 1e-9, -1e-9]
    while len(values) < n:
        scale = rng.choice([2.0 ** -10, 2.0 ** -6, 2.0 ** -3, 1.0])
        values.append(rng.randint(-40000, 40000) * scale / 16)
    return values


@pytest.mark.sanitize
def test_conversion_from_double_every_mode(tmp_path):
    values = sample_values(300, seed=1)
    lines = ['#include "ap_fixed.h"', "#include <cstdio>", f"static const double X[{len(values)}] = {{"
             + ", ".join(float.hex(v) for v in values) + "};", "int main() {"]
    cases = []
    for kind, w, i in TYPES:
        for q in MODES_Q:
            for o in MODES_O:
                cases.append((kind, w, i, q, o))
                lines.append(f"  for (double x : X) std::printf(\"%a\\n\", {kind}<{w}, {i}, {q}, {o}>(x).to_double());")
    lines += ["  return 0;", "}"]
    out = build_and_run(tmp_path, "\n".join(lines)).stdout.split()
    assert len(out) == len(cases) * len(values)
    for c, (kind, w, i, q, o) in enumerate(cases):
        for k, v in enumerate(values):
            got = float.fromhex(out[c * len(values) + k])
            want = to_fixed(Fraction(v), kind, w, i, q, o)
            assert Fraction(got) == want, (kind, w, i, q, o, v, got, float(want))


@pytest.mark.sanitize
def test_fixed_arithmetic_is_exact_then_quantised_on_assignment(tmp_path):
    rng = random.Random(2)
    pairs = [(rng.randint(-2**15, 2**15 - 1) / 256, rng.randint(-2**15, 2**15 - 1) / 256) for _ in range(200)]
    targets = [("ap_fixed", 16, 8, "AP_TRN", "AP_WRAP"), ("ap_fixed", 16, 8, "AP_RND_CONV", "AP_SAT"),
               ("ap_fixed", 10, 6, "AP_RND", "AP_SAT_SYM"), ("ap_ufixed", 12, 6, "AP_RND_INF", "AP_SAT")]
    src = ['#include "ap_fixed.h"', "#include <cstdio>", "typedef ap_fixed<16, 8> in_t;",
           f"static const double A[{len(pairs)}] = {{" + ", ".join(float.hex(a) for a, _ in pairs) + "};",
           f"static const double B[{len(pairs)}] = {{" + ", ".join(float.hex(b) for _, b in pairs) + "};",
           "int main() {", f"  for (int k = 0; k < {len(pairs)}; k++) {{", "    in_t a = A[k], b = B[k];"]
    for kind, w, i, q, o in targets:
        t = f"{kind}<{w}, {i}, {q}, {o}>"
        src.append(f"    {{ {t} s = a + b, d = a - b, p = a * b, n = -a;"
                   f" std::printf(\"%a %a %a %a %d %d\\n\", s.to_double(), d.to_double(), p.to_double(),"
                   f" n.to_double(), (int)(a < b), (int)(a == b)); }}")
    src += ["  }", "  return 0;", "}"]
    rows = build_and_run(tmp_path, "\n".join(src)).stdout.splitlines()
    assert len(rows) == len(pairs) * len(targets)
    r = 0
    for a, b in pairs:
        fa, fb = Fraction(a), Fraction(b)
        for kind, w, i, q, o in targets:
            s, d, p, n, lt, eq = rows[r].split()
            r += 1
            conv = lambda x: to_fixed(x, kind, w, i, q, o)  # noqa: E731
            assert Fraction(float.fromhex(s)) == conv(fa + fb)
            assert Fraction(float.fromhex(d)) == conv(fa - fb)
            assert Fraction(float.fromhex(p)) == conv(fa * fb)
            assert Fraction(float.fromhex(n)) == conv(-fa)
            assert (lt, eq) == (str(int(fa < fb)), str(int(fa == fb)))


EXTREME = [("ap_fixed", 8, 100), ("ap_fixed", 8, -100), ("ap_ufixed", 64, 1), ("ap_fixed", 64, 64),
           ("ap_fixed", 16, -60), ("ap_fixed", 64, 1)]


def test_extreme_integer_bits_convert_and_compare_exactly(tmp_path):
    """Formats whose integer bits are far outside their width, and doubles beyond 2^100: conversions between
    them shifted an __int128 by 200 bits (undefined; built with UBSan here), and AP_WRAP of a huge double
    dropped its true low bits."""
    values = [3.0e29, -3.0e29, 1e-31, -1e-31, 5.0, -5.0, 0.75, 2.0 ** 100 + 2.0 ** 48, -(2.0 ** 70 + 2.0 ** 20),
              2.0 ** 63, 1.5 * 2.0 ** 62, 0.0]
    types = [f"{kind}<{w}, {i}>" for kind, w, i in EXTREME]
    src = ['#include "ap_fixed.h"', "#include <cstdio>",
           f"static const double X[{len(values)}] = {{" + ", ".join(float.hex(v) for v in values) + "};",
           "int main() {", "  for (double x : X) {"]
    for k, t in enumerate(types):
        src.append(f"    {t} v{k} = x;")
    for k, t in enumerate(types):
        src.append(f'    std::printf("%llu %d\\n", v{k}.range({EXTREME[k][1] - 1}, 0).to_uint64(), v{k}.to_int());')
        for m, u in enumerate(types):
            src.append(f'    std::printf("%llu %d %d\\n", {u}(v{k}).range({EXTREME[m][1] - 1}, 0).to_uint64(),'
                       f' (int)(v{k} < v{m}), (int)(v{k} == v{m}));')
    src += ["  }", "  return 0;", "}"]
    rows = iter(build_and_run(tmp_path, "\n".join(src), sanitize=True).stdout.splitlines())
    exact = lambda x, kind, w, i: to_fixed(Fraction(x), kind, w, i, "AP_TRN", "AP_WRAP")  # noqa: E731
    pattern = lambda v, kind, w, i: int(v * Fraction(2) ** (w - i)) % 2 ** w  # noqa: E731  (the raw W bits)
    for x in values:
        held = [exact(x, *fmt) for fmt in EXTREME]
        for k, fmt in enumerate(EXTREME):
            value, as_int = next(rows).split()
            assert int(value) == pattern(held[k], *fmt), (x, fmt)
            want_int = (math.trunc(held[k]) + 2 ** 31) % 2 ** 32 - 2 ** 31
            assert int(as_int) == want_int, (x, fmt)
            for m, other in enumerate(EXTREME):
                value, less, equal = next(rows).split()
                assert int(value) == pattern(exact(held[k], *other), *other), (x, fmt, other)
                assert (less, equal) == (str(int(held[k] < held[m])), str(int(held[k] == held[m]))), (x, fmt, other)


@pytest.mark.sanitize
def test_ap_int_wraps_to_its_width(tmp_path):
    rng = random.Random(3)
    pairs = [(rng.randint(-5000, 5000), rng.randint(-5000, 5000)) for _ in range(200)]
    src = ['#include "ap_int.h"', "#include <cstdio>", "int main() {"]
    for a, b in pairs:
        src.append(f"  {{ ap_int<5> x = {a}; ap_uint<7> y = {b}; ap_int<12> s = x + y, p = x * y;"
                   f" ap_int<5> acc = x; acc += y; ap_uint<3> low = y;"
                   f" std::printf(\"%lld %llu %lld %lld %lld %llu %d\\n\", (long long)x, (unsigned long long)y,"
                   f" (long long)s, (long long)p, (long long)acc, (unsigned long long)low, (int)y[0]); }}")
    src += ["  return 0;", "}"]
    rows = build_and_run(tmp_path, "\n".join(src)).stdout.splitlines()

    def wrap(v: int, bits: int, signed: bool) -> int:
        v %= 1 << bits
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v

    for (a, b), row in zip(pairs, rows):
        x, y = wrap(a, 5, True), wrap(b, 7, False)
        want = [x, y, wrap(x + y, 12, True), wrap(x * y, 12, True), wrap(x + y, 5, True), y % 8, y & 1]
        assert [int(t) for t in row.split()] == want


@pytest.mark.sanitize
def test_stream_fifo_order_and_depth(tmp_path):
    src = r"""#include "hls_stream.h"
#include <cstdio>
int main() {
  hls::stream<int> s("s");
  for (int i = 0; i < 5; i++) s.write(i * i);
  int first; s >> first;
  std::printf("%d %d %d\n", first, (int)s.size(), (int)s.empty());
  int v; int got = 0;
  while (s.read_nb(v)) got += v;
  std::printf("%d %d\n", got, (int)s.empty());
  hls::stream<int, 2> bounded("b");
  bounded.write(1); bounded.write(2);
  std::printf("%d %d\n", (int)bounded.full(), (int)bounded.write_nb(3));
  return 0;
}
"""
    out = build_and_run(tmp_path, src).stdout.split()
    assert out == ["0", "4", "0", str(1 + 4 + 9 + 16), "1", "1", "0"]


def test_reading_an_empty_stream_is_reported(tmp_path):
    src = r"""#include "hls_stream.h"
int main() { hls::stream<float> s("pixels"); return (int)s.read(); }
"""
    ran = build_and_run(tmp_path, src, expect_ok=False)
    assert ran.returncode != 0
    assert "hls::stream 'pixels': read from an empty stream" in ran.stderr


# ---------------------------------------------------------------- division

# raw values of the ap_fixed<60, 30> operands: the smallest steps, 1.0 and its neighbours, the extremes, long patterns
DIVISION_RAWS = [1, -1, 2, 3, -3, 7, 2**29, -2**29, 2**29 + 1, 3 * 2**29, 2**30 - 1, 2**58, 2**59 - 1, -2**59,
                 -(2**59 - 1), 12345678901234567, -98765432109876]
# targets up to 64 bits, every quantisation and overflow mode, an unsigned one, integer bits outside the width
DIVISION_TARGETS = [f"ap_fixed<60, 30, {q}, {o}>" for q in MODES_Q for o in ("AP_WRAP", "AP_SAT")] + [
    "ap_fixed<64, 32, AP_RND_CONV, AP_SAT_SYM>", "ap_fixed<64, 2, AP_RND, AP_SAT_ZERO>", "ap_ufixed<64, 40, AP_RND_INF, AP_SAT>",
    "ap_ufixed<64, 33>", "ap_fixed<16, -60, AP_RND_ZERO, AP_WRAP>", "ap_fixed<8, 100>", "ap_fixed<12, 4, AP_RND_MIN_INF, AP_WRAP>"]


def _division_program(operand: str, raws: list[int], targets: list[str]) -> str:
    src = ['#include "ap_fixed.h"', "#include <cstdio>", f"typedef {operand} in_t;",
           f"static const long long R[{len(raws)}] = {{" + ", ".join(f"(long long){r % 2**64}ULL" for r in raws) + "};",
           "int main() {", f"  for (int i = 0; i < {len(raws)}; i++)", f"    for (int j = 0; j < {len(raws)}; j++) {{",
           "      in_t a, b; a.raw = R[i]; b.raw = R[j];"]
    for k, t in enumerate(targets):
        width = parse_hls_type(t).width
        src.append(f"      {{ {t} q = a / b; std::printf(\"%llu\\n\", q.range({width - 1}, 0).to_uint64()); }}")
    src += ["    }", "  return 0;", "}"]
    return "\n".join(src)


def _raw_pattern(value: Fraction, t) -> int:
    return int(value * Fraction(2) ** t.frac_bits) % 2 ** t.width


WIDEST_RAWS = [1, -1, 5, 2**32, -2**32, 2**63 - 1, -2**63, -(2**63 - 1), 0x5DEECE66DF00D, -0x7A3B9C1D2E4F5A6B]


@pytest.mark.sanitize
@pytest.mark.parametrize("operand, raws", [("ap_fixed<60, 30>", DIVISION_RAWS), ("ap_fixed<64, 32>", WIDEST_RAWS)])
def test_fixed_division_is_exact_then_quantised_once(tmp_path, operand, raws):
    """a / b went through double: 53 bits of a 60-bit quotient, 1 bit off on 23 of the 289 pairs at
    ap_fixed<60, 30>. Checked against loom's model of the conversion (quantise_fraction) of the exact quotient."""
    from loom.backends.hls.types import quantise_fraction

    rows = iter(build_and_run(tmp_path, _division_program(operand, raws, DIVISION_TARGETS),
                              sanitize=True).stdout.split())
    types = [parse_hls_type(t) for t in DIVISION_TARGETS]
    wrong = []
    for ra in raws:
        for rb in raws:
            exact = Fraction(ra, rb)  # the operands share their scale
            for t in types:
                got, want = int(next(rows)), _raw_pattern(quantise_fraction(exact, t), t)
                if got != want:
                    wrong.append((ra, rb, t.ctype, got, want))
    assert not wrong, f"{len(wrong)} quotients differ, e.g. {wrong[:3]}"


def test_fixed_division_of_mixed_formats_and_by_zero(tmp_path):
    """Operands of other formats (64-bit unsigned, fractions beyond the width) and a zero divisor: x / 0 is the
    largest value of x's sign, 0 / 0 is 0 (as the double quotient's +-inf and NaN converted)."""
    from loom.backends.hls.types import quantise_fraction

    src = r"""#include "ap_fixed.h"
#include <cstdio>
int main() {
  ap_ufixed<64, 1> u; u.raw = (long long)0xB504F333F9DE6485ULL;       // about sqrt(2), 64 significant bits
  ap_fixed<20, -10> tiny; tiny.raw = -345677;                          // about -3.2e-4
  ap_fixed<16, 8> zero = 0, three = 3;
  ap_fixed<64, 40, AP_RND_CONV, AP_SAT> q1 = u / tiny;
  ap_fixed<64, -8, AP_RND_INF, AP_WRAP> q2 = tiny / u;                 // 72 fraction bits: more than a double's 53
  ap_fixed<64, 40, AP_RND_CONV, AP_SAT> z1 = three / zero, z2 = (-three) / zero, z3 = zero / zero;
  ap_int<40> i1 = u / tiny;
  std::printf("%llu %llu %llu %llu %llu %lld\n", q1.range(63, 0).to_uint64(), q2.range(63, 0).to_uint64(),
              z1.range(63, 0).to_uint64(), z2.range(63, 0).to_uint64(), z3.range(63, 0).to_uint64(), (long long)i1);
  return 0;
}
"""
    got = [int(v) for v in build_and_run(tmp_path, src, sanitize=True).stdout.split()]
    t = parse_hls_type("ap_fixed<64, 40, AP_RND_CONV, AP_SAT>")
    u, tiny = Fraction(0xB504F333F9DE6485, 2**63), Fraction(-345677, 2**30)
    t2 = parse_hls_type("ap_fixed<64, -8, AP_RND_INF, AP_WRAP>")
    want = [_raw_pattern(quantise_fraction(u / tiny, t), t), _raw_pattern(quantise_fraction(tiny / u, t2), t2),
            2**63 - 1, 2**63, 0, math.trunc(u / tiny)]
    assert got == want
