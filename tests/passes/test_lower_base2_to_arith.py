"""lower-base2-to-arith: IR in / IR out on textual MLIR, and the compiled code equal to the Python
reference (``loom.core.numformats``, itself checked against ml_dtypes and fractions) bit for bit:
exhaustively for conversions of 8/16-bit formats, on random + edge values for arithmetic in every
rounding and overflow mode."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.linalg.mlir_exec import HAVE_MLIR, MLIR_OPT
from xdsl.parser import Parser

from loom.core import numformats as nf
from loom.dialects import context
from loom.errors import LoomError
from loom.jit.formats import Base2Module, compile_base2, decode, encode
from loom.passes.base2_f32_route import uses_f32_route
from loom.passes.lower_base2_to_arith import LowerBase2ToArithPass


def parse(text: str):
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def lowered(text: str):
    module = parse(text)
    LowerBase2ToArithPass().apply(context(), module)
    module.verify()
    return module


def op_names(module) -> list[str]:
    return [op.name for op in module.walk() if op.name not in ("builtin.module", "func.func")]


# ---- IR in / IR out ----------------------------------------------------------------------------

FIXED_ADD = """
func.func @add(%a: !base2.fixed<8, 8>, %b: !base2.fixed<8, 8>) -> !base2.fixed<8, 8> {
  %c = base2.add %a, %b : !base2.fixed<8, 8>
  func.return %c : !base2.fixed<8, 8>
}
"""


def test_fixed_add_wrap_is_extend_add_truncate():
    out = lowered(FIXED_ADD)
    text = str(out)
    assert "base2" not in text
    assert "func.func @add(%a: i16, %b: i16) -> i16" in text
    # the 16-bit format fills its storage: truncating to i16 is the wrap (extended back for later ops)
    assert op_names(out) == ["arith.extsi", "arith.extsi", "arith.addi", "arith.trunci", "arith.extsi",
                             "arith.trunci", "func.return"]


def test_narrow_fixed_wrap_is_mask_and_sign_flip():
    out = lowered(FIXED_ADD.replace("fixed<8, 8>", "fixed<4, 8>"))
    names = op_names(out)
    assert names.count("arith.andi") == 3 and names.count("arith.xori") == 3  # 2 operands, 1 result
    consts = {op.value.value.data for op in out.walk() if op.name == "arith.constant"}
    assert consts == {0xFFF, 0x800}


def test_fixed_add_saturate_is_a_clamp():
    out = lowered(FIXED_ADD.replace("base2.add %a, %b", 'base2.add %a, %b {overflow = "saturate"}'))
    names = op_names(out)
    assert "arith.minsi" in names and "arith.maxsi" in names and "arith.shrsi" not in names
    consts = sorted(op.value.value.data for op in out.walk() if op.name == "arith.constant")
    assert consts == [-32768, 32767]


def test_fixed_mul_truncate_is_one_arithmetic_shift():
    out = lowered(FIXED_ADD.replace("base2.add %a, %b", 'base2.mul %a, %b {rounding = "truncate"}'))
    assert op_names(out) == ["arith.extsi", "arith.extsi", "arith.muli", "arith.constant", "arith.shrsi",
                             "arith.trunci", "arith.extsi", "arith.trunci", "func.return"]


def test_saturated_truncating_mul_of_negative_products_on_long_arrays():
    """Regression: a branch-free floor shift followed by the clamp was vectorised wrongly by gcc 12."""
    module = Base2Module(parse(_loop("mul", ["!base2.fixed<8, 8>"] * 2, "!base2.fixed<8, 8>",
                                     '%r = base2.mul %a, %b {rounding = "truncate", overflow = "saturate"} '
                                     ': !base2.fixed<8, 8>')))
    b = np.arange(-25032, -25032 + 1000, dtype=np.int16)
    out = np.zeros(1000, np.int16)
    module.function("mul")(np.ones(1000, np.int16), b, out)
    assert out.tolist() == [int(x) // 256 for x in b]  # floor


def test_memrefs_loops_and_identity_casts_become_storage_integers():
    out = lowered("""
    func.func @copy(%x: memref<4x!base2.float<4, 3, fn>>, %y: memref<4x!base2.float<4, 3, fn>>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      scf.for %i = %c0 to %c4 step %c1 {
        %v = memref.load %x[%i] : memref<4x!base2.float<4, 3, fn>>
        %w = base2.cast %v : !base2.float<4, 3, fn> to !base2.float<4, 3, fn>
        memref.store %w, %y[%i] : memref<4x!base2.float<4, 3, fn>>
      }
      func.return
    }""")
    text = str(out)
    assert "memref<4xi8>" in text and "base2" not in text and "unrealized" not in text
    assert op_names(out).count("arith.constant") == 3  # nothing but the loop


def test_truncating_float_add_uses_two_sum_and_integer_rounding():
    out = lowered("""
    func.func @add(%a: !base2.float<8, 7>, %b: !base2.float<8, 7>) -> !base2.float<8, 7> {
      %c = base2.add %a, %b {rounding = "truncate"} : !base2.float<8, 7>
      func.return %c : !base2.float<8, 7>
    }""")
    names = op_names(out)
    assert names.count("arith.addf") == 2 and names.count("arith.subf") == 5  # TwoSum (4), the fraction
    assert "arith.bitcast" in names and "arith.shrui" in names and "arith.fptosi" in names
    assert "func.func @add(%a: i16, %b: i16) -> i16" in str(out)


def _arithmetic_types(module) -> set[str]:
    """The result types of the float arithmetic ops in a module."""
    return {str(op.results[0].type) for op in module.walk() if op.name in ("arith.addf", "arith.mulf", "arith.divf")}


@pytest.mark.parametrize("fmt, op, rounding, overflow, f32_route", [
    ("bf16", "add", "nearest_even", "inf", True),
    ("bf16", "div", "nearest_even", "inf", True),
    ("e4m3fn", "mul", "nearest_even", "saturate", True),   # fp8 products cannot overflow f32
    ("bf16", "mul", "nearest_even", "saturate", False),    # an f32 infinity would not be saturated
    ("bf16", "add", "nearest_away", "inf", False),         # Figueroa's theorem is for nearest-even
    ("e5m2", "add", "truncate", "inf", False),
    ("float<5, 11>", "add", "nearest_even", "inf", False),  # p = 12: 2p + 2 > 24
    ("float<8, 8>", "mul", "nearest_even", "inf", False),   # tiny products round twice in f32's subnormals
    ("float<8, 3>", "mul", "nearest_even", "inf", True),    # its tiny products still round to zero
])
def test_f32_route_is_chosen_only_where_double_rounding_is_innocuous(fmt, op, rounding, overflow, f32_route):
    """The route decision, and that the lowered IR follows it: f32 arithmetic (no f64) on the f32 route,
    the exact f64 + residual sequence otherwise."""
    fmt = nf.parse_format(fmt)
    assert uses_f32_route(fmt, op, rounding, overflow) is f32_route
    ty = fmt.mlir
    out = lowered(f"""
    func.func @k(%a: {ty}, %b: {ty}) -> {ty} {{
      %c = base2.{op} %a, %b {{rounding = "{rounding}", overflow = "{overflow}"}} : {ty}
      func.return %c : {ty}
    }}""")
    assert _arithmetic_types(out) == ({"f32"} if f32_route else {"f64"})


@pytest.mark.mlir
@pytest.mark.skipif(not HAVE_MLIR, reason="needs mlir-opt")
def test_lowered_ir_verifies_with_upstream_mlir():
    import subprocess

    out = lowered(ALL_OPS)
    proc = subprocess.run([MLIR_OPT], input=str(out), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


ALL_OPS = """
func.func @all(%a: !base2.fixed<8, 8>, %b: !base2.float<5, 2>, %x: f32, %i: i32, %u: !base2.fixed<unsigned 8, 0>) -> (f32, i32, i8, f64) {
  %c = base2.div %a, %a {rounding = "nearest_away", overflow = "saturate"} : !base2.fixed<8, 8>
  %d = base2.fma %b, %b, %b {rounding = "truncate"} : !base2.float<5, 2>
  %e = base2.cast %d : !base2.float<5, 2> to !base2.fixed<8, 8>
  %f = base2.mul %c, %e : !base2.fixed<8, 8>
  %g = base2.cast %f : !base2.fixed<8, 8> to f32
  %h = base2.cast %x {overflow = "wrap"} : f32 to i32
  %j = base2.cast %i : i32 to !base2.float<5, 2>
  %k = base2.cast %j {overflow = "saturate"} : !base2.float<5, 2> to i8
  %l = base2.cast %u : !base2.fixed<unsigned 8, 0> to f64
  func.return %g, %h, %k, %l : f32, i32, i8, f64
}
"""


# ---- compiled == reference ---------------------------------------------------------------------


def _loop(name: str, ins: list[str], out: str, body: str) -> str:
    """An element-wise loop; every array has the extent N (``loom.dims``): the call checks the sizes."""
    params = ", ".join(f'%{chr(97 + k)}m: memref<?x{t}> {{loom.dims = ["N"]}}' for k, t in enumerate(ins))
    loads = "\n".join(f"        %{chr(97 + k)} = memref.load %{chr(97 + k)}m[%i] : memref<?x{t}>"
                      for k, t in enumerate(ins))
    return f"""
    func.func @{name}({params}, %om: memref<?x{out}> {{loom.dims = ["N"]}}) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.dim %am, %c0 : memref<?x{ins[0]}>
      scf.for %i = %c0 to %n step %c1 {{
{loads}
        {body}
        memref.store %r, %om[%i] : memref<?x{out}>
      }}
      func.return
    }}"""


def _props(rounding: str, overflow: str) -> str:
    return f'{{rounding = "{rounding}", overflow = "{overflow}"}}'


def _overflows(fmt) -> tuple[str, ...]:
    return nf.FIXED_OVERFLOW if isinstance(fmt, nf.FixedFormat) else nf.FLOAT_OVERFLOW


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(1234)


def _patterns(fmt, rng, count: int) -> np.ndarray:
    """Random patterns plus the edges (zeros, extremes, NaN/inf, smallest subnormals, ones)."""
    width = fmt.width
    edges = [0, 1, 2, (1 << width) - 1, (1 << (width - 1)) - 1, 1 << (width - 1), (1 << (width - 1)) + 1]
    if isinstance(fmt, nf.FloatFormat):
        one = fmt.encode(1.0)
        edges += [fmt.max_magnitude, fmt.max_magnitude | fmt.sign_bit, one, one | fmt.sign_bit, one + 1,
                  fmt.nan_bits(), 1 << fmt.man_bits, (1 << fmt.man_bits) - 1]
        if fmt.has_inf:
            edges += [fmt.inf_bits(), fmt.inf_bits(True)]
    else:
        edges += [1 << fmt.frac_bits, fmt.bits_of_raw(-(1 << fmt.frac_bits)) if fmt.signed else 3]
    edges = [fmt.bits_of_raw(fmt.raw_of_bits(e)) if isinstance(fmt, nf.FixedFormat) else e for e in edges]
    random = rng.integers(0, 1 << width, count)
    if isinstance(fmt, nf.FixedFormat):
        random = [fmt.bits_of_raw(fmt.raw_of_bits(int(r))) for r in random]
    return np.array([*edges, *random], dtype=np.int64)


def _storage(values, fmt) -> np.ndarray:
    bits = fmt.storage_bits
    return np.array([v & ((1 << bits) - 1) for v in values], dtype=f"uint{bits}").view(f"int{bits}")


def _unsigned(array: np.ndarray) -> list[int]:
    return array.view(f"uint{array.dtype.itemsize * 8}").tolist()


ARITH_FORMATS = [nf.FixedFormat(8, 8), nf.FixedFormat(16, 8), nf.FixedFormat(3, 12, signed=False),
                 nf.FixedFormat(2, 30), nf.FixedFormat(4, 4), nf.BF16, nf.FP8_E4M3FN, nf.FP8_E5M2,
                 nf.FP8_E5M2FNUZ, nf.FloatFormat(6, 9, bias=20)]


@pytest.mark.sanitize
@pytest.mark.parametrize("fmt", ARITH_FORMATS, ids=str)
def test_arithmetic_equals_reference(fmt, rng):
    """Every rounding x overflow mode for fixed<8, 8>, bf16 and e4m3fn; two mode pairs for the others."""
    ty = fmt.mlir
    funcs, cases = [], []
    full = fmt in (nf.FixedFormat(8, 8), nf.BF16, nf.FP8_E4M3FN)
    modes = [(r, o) for r in nf.ROUNDING for o in _overflows(fmt)] if full else \
        [("nearest_even", _overflows(fmt)[0]), ("truncate", "saturate")]
    for op in ("add", "sub", "mul", "div", "fma"):
        for rounding, overflow in modes:
            name = f"{op}_{rounding}_{overflow}"
            operands = "%a, %b, %c" if op == "fma" else "%a, %b"
            body = f"%r = base2.{op} {operands} {_props(rounding, overflow)} : {ty}"
            funcs.append(_loop(name, [ty] * (3 if op == "fma" else 2), ty, body))
            cases.append((name, op, rounding, overflow))
    module = Base2Module(parse("\n".join(funcs)))
    a = _patterns(fmt, rng, 150)
    b = np.roll(a, 7)
    c = np.roll(a, 3)
    grid = np.array(np.meshgrid(a[:20], a[:20])).reshape(2, -1)  # every pair of edge values
    a, b, c = np.concatenate([a, grid[0]]), np.concatenate([b, grid[1]]), np.concatenate([c, grid[1][::-1]])
    sa, sb, sc = _storage(a, fmt), _storage(b, fmt), _storage(c, fmt)
    for name, op, rounding, overflow in cases:
        fn = module.function(name)
        out = np.zeros_like(sa)
        args = (sa, sb, sc) if op == "fma" else (sa, sb)
        fn(*args, out)
        got = _unsigned(out)
        for k, (x, y, z) in enumerate(zip(_unsigned(sa), _unsigned(sb), _unsigned(sc))):
            operands = [x, y, z] if op == "fma" else [x, y]
            if isinstance(fmt, nf.FixedFormat):
                raws = [fmt.raw_of_bits(v) for v in operands]
                want = fmt.bits_of_raw(getattr(fmt, op)(*raws, rounding, overflow))
            else:
                want = nf.float_op(fmt, op, operands, rounding, overflow)
            assert got[k] == want, (name, [hex(v) for v in operands], hex(got[k]), hex(want))


EXHAUSTIVE = [nf.BF16, nf.FP16, nf.FP8_E4M3FN, nf.FP8_E5M2, nf.FP8_E4M3FNUZ, nf.FP8_E4M3B11FNUZ,
              nf.FixedFormat(8, 8), nf.FixedFormat(3, 5, signed=False), nf.FixedFormat(2, 10)]


@pytest.mark.sanitize
@pytest.mark.parametrize("fmt", EXHAUSTIVE, ids=str)
def test_conversions_of_every_pattern(fmt):
    """decode every pattern to f64 and f32; encode every f32 with zero low half (all bf16 values) from
    f32 with each rounding mode; both against the reference; and the numpy round trip."""
    patterns = np.arange(1 << fmt.width, dtype=np.int64)
    stored = _storage(patterns, fmt)
    values = decode(stored, fmt)
    for p, v in zip(patterns.tolist(), values.tolist()):
        want = fmt.decode(p)
        want = float(want)
        assert (math.isnan(v) and math.isnan(want)) or (v == want and math.copysign(1, v) == math.copysign(1, want)), \
            hex(p)
    back = encode(values, fmt)
    for p, b in zip(patterns.tolist(), _unsigned(back)):
        v = fmt.decode(p)
        assert b == fmt.encode(v), hex(p)
    f32 = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)
    ty = fmt.mlir
    overflow = _overflows(fmt)[1]  # saturate
    funcs = [_loop(f"from_f32_{r}", ["f32"], ty, f"%r = base2.cast %a {_props(r, overflow)} : f32 to {ty}")
             for r in nf.ROUNDING]
    module = Base2Module(parse("\n".join(funcs)))
    for rounding in nf.ROUNDING:
        out = np.zeros(len(f32), stored.dtype)
        module.function(f"from_f32_{rounding}")(f32, out)
        want = [fmt.encode(x, rounding, overflow) for x in f32.tolist()]
        assert _unsigned(out) == want, rounding


def test_numpy_round_trip_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(5000) * 10.0 ** rng.integers(-6, 6, 5000)).astype(np.float32)
    for fmt, name in nf.ML_DTYPES_NAMES.items():
        dt = getattr(ml_dtypes, name)
        with np.errstate(over="ignore", invalid="ignore"):
            want = x.astype(dt)
        got = encode(x.astype(np.float64), fmt)
        assert np.array_equal(got.view(want.dtype).view(np.uint8 if fmt.width <= 8 else np.uint16),
                              want.view(np.uint8 if fmt.width <= 8 else np.uint16)), name
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(decode(want, fmt), want.astype(np.float64))


CAST_PAIRS = [(nf.BF16, nf.FP8_E4M3FN), (nf.FP8_E5M2, nf.BF16), (nf.BF16, nf.FixedFormat(8, 8)),
              (nf.FixedFormat(16, 8), nf.FP8_E5M2FNUZ), (nf.FixedFormat(8, 8), nf.FixedFormat(4, 2)),
              (nf.FixedFormat(4, 12, signed=False), nf.FixedFormat(8, 8))]


@pytest.mark.sanitize
@pytest.mark.parametrize("src, dst", CAST_PAIRS, ids=lambda f: str(f))
def test_casts_between_formats(src, dst, rng):
    funcs = []
    for rounding in nf.ROUNDING:
        for overflow in _overflows(dst):
            body = f"%r = base2.cast %a {_props(rounding, overflow)} : {src.mlir} to {dst.mlir}"
            funcs.append(_loop(f"cast_{rounding}_{overflow}", [src.mlir], dst.mlir, body))
    module = Base2Module(parse("\n".join(funcs)))
    patterns = np.arange(1 << src.width) if src.width <= 16 else _patterns(src, rng, 3000)
    stored = _storage(patterns.tolist(), src)
    for rounding in nf.ROUNDING:
        for overflow in _overflows(dst):
            out = np.zeros(len(stored), f"int{dst.storage_bits}")
            module.function(f"cast_{rounding}_{overflow}")(stored, out)
            for p, got in zip(_unsigned(stored), _unsigned(out)):
                value = src.decode(p)
                want = dst.encode(value, rounding, overflow)
                assert got == want, (rounding, overflow, hex(p), hex(got), hex(want))


@pytest.mark.sanitize
def test_integer_and_float_casts(rng):
    fmt = nf.FixedFormat(8, 8)
    module = Base2Module(parse("\n".join([
        _loop("to_i8_sat", [fmt.mlir], "i8", f'%r = base2.cast %a {_props("nearest_even", "saturate")} : {fmt.mlir} to i8'),
        _loop("to_u8_wrap", [fmt.mlir], "!base2.fixed<unsigned 8, 0>",
              f'%r = base2.cast %a {_props("truncate", "wrap")} : {fmt.mlir} to !base2.fixed<unsigned 8, 0>'),
        _loop("from_i32", ["i32"], "!base2.float<4, 3, fn>", '%r = base2.cast %a : i32 to !base2.float<4, 3, fn>'),
        _loop("f64_to_i32", ["f64"], "i32", f'%r = base2.cast %a {_props("nearest_away", "wrap")} : f64 to i32'),
        _loop("to_f32", ["!base2.fixed<2, 30>"], "f32", '%r = base2.cast %a {rounding = "truncate"} : !base2.fixed<2, 30> to f32'),
    ])))
    raws = np.arange(-(1 << 15), 1 << 15, dtype=np.int16)
    out = np.zeros(len(raws), np.int8)
    module.function("to_i8_sat")(raws, out)
    i8 = nf.FixedFormat(8, 0)
    assert out.tolist() == [i8.quantize(fmt.value(int(r)), "nearest_even", "saturate") for r in raws]
    out = np.zeros(len(raws), np.uint8)
    module.function("to_u8_wrap")(raws, out)
    assert out.tolist() == [nf.FixedFormat(8, 0, False).quantize(fmt.value(int(r)), "truncate", "wrap") for r in raws]
    ints = np.concatenate([np.arange(-600, 600), rng.integers(-2**31, 2**31, 500)]).astype(np.int32)
    out = np.zeros(len(ints), np.int8)
    module.function("from_i32")(ints, out)
    assert _unsigned(out) == [nf.FP8_E4M3FN.encode(int(i)) for i in ints]
    big = np.array([0.5, -0.5, 1.5, -2.5, 2**31 + 0.5, -2**31 - 1.5, 1e300, -1e300, math.nan, math.inf, -math.inf,
                    2**40 + 7, 3 * 2**31], np.float64)
    out = np.zeros(len(big), np.int32)
    module.function("f64_to_i32")(big, out)
    assert out.tolist() == [nf.FixedFormat(32, 0).quantize(float(x), "nearest_away", "wrap") for x in big]
    wide = nf.FixedFormat(2, 30)
    raws = rng.integers(-2**31, 2**31, 2000).astype(np.int32)
    out = np.zeros(len(raws), np.float32)
    module.function("to_f32")(raws, out)
    assert _unsigned(out) == [nf.F32.encode(wide.value(int(r)), "truncate") for r in raws]


def test_base2_function_checks_its_arguments():
    from loom.errors import LoomError

    module = parse(_loop("neg", ["!base2.float<8, 7>"], "!base2.float<8, 7>",
                         '%r = base2.sub %a, %a : !base2.float<8, 7>'))
    fn = compile_base2(module, "neg")
    with pytest.raises(LoomError, match="expected an array of bfloat16 or int16"):
        fn(np.zeros(4, np.float32), np.zeros(4, np.int16))
    with pytest.raises(LoomError, match="takes 2 argument"):
        fn(np.zeros(4, np.int16))
    with pytest.raises(LoomError, match="rank"):
        fn(np.zeros(4, np.int16), np.zeros((2, 2), np.int16))
    with pytest.raises(LoomError, match="must be equal|N"):  # the extents named N differ: no overrun
        fn(np.zeros(4, np.int16), np.zeros(3, np.int16))


def test_base2_scalar_arguments_take_values_or_patterns_not_python_numbers():
    import ml_dtypes

    module = parse("""
    func.func @add(%x: !base2.float<8, 7>, %y: !base2.float<8, 7>) -> !base2.float<8, 7> {
      %z = base2.add %x, %y : !base2.float<8, 7>
      func.return %z : !base2.float<8, 7>
    }""")
    fn = compile_base2(module, "add")
    bf = ml_dtypes.bfloat16
    want = np.array(bf(1.5) + bf(2.25)).view(np.int16)  # bf16 sum by ml_dtypes, as its pattern
    assert fn(bf(1.5), bf(2.25)) == want
    assert fn(np.array(bf(1.5)).view(np.int16)[()], np.array(bf(2.25)).view(np.int16)[()]) == want
    with pytest.raises(LoomError, match=r"argument 0 of @add is a !base2.float<8, 7> scalar: expected an "
                                        r"ml_dtypes bfloat16 value or pattern as numpy int16, got int 1"):
        fn(1, 2)  # was passed as the pattern 1, a subnormal: a silent wrong answer


def test_a_module_that_does_not_verify_is_reported_as_such():
    text = ("func.func @f(%x: !base2.fixed<unsigned 32, 0>) {\n"
            "  %z = base2.mul %x, %x : !base2.fixed<unsigned 32, 0>\n  func.return\n}")
    with pytest.raises(LoomError, match="the module does not verify: .*too wide for mul/div/fma") as err:
        compile_base2(Parser(context(), text).parse_module(), "f")
    assert "pass" not in str(err.value)  # was 'pass loom-convert-linalg-to-loops: IR does not verify after the pass'


def test_encode_refuses_bad_modes_at_the_call():
    # not "pass loom-convert-linalg-to-loops: IR does not verify" from deep in the conversion module
    with pytest.raises(LoomError, match="rounding must be one of") as err:
        encode([1.0], "bf16", rounding="up")
    assert err.value.where == "encode"
    with pytest.raises(LoomError, match=r"overflow for !base2.float<8, 7> must be one of inf, saturate") as err:
        encode([1.0], "bf16", overflow="wrap")
    assert err.value.where == "encode"
