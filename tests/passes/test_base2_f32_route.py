"""The f32 route of lower-base2-to-arith (``loom.passes.base2_f32_route``): compiled code equal to the exact
Python reference (``loom.core.numformats``, Fractions) bit for bit where double rounding could go wrong:
every pair (and every fma triple) of small formats, bf16 results in f32's subnormal range and on ties,
and f32 -> bf16 conversions of the patterns around every tie."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from loom.core import numformats as nf
from loom.dialects import context
from loom.jit.formats import Base2Module
from loom.passes.base2_f32_route import uses_f32_route

OPS = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3}


def _kernels(fmt, overflow: str, ops) -> Base2Module:
    ty = fmt.mlir
    funcs = []
    for op in ops:
        arity = OPS[op]
        params = ", ".join(f'%m{k}: memref<?x{ty}> {{loom.dims = ["N"]}}' for k in range(arity + 1))
        loads = "\n".join(f"    %v{k} = memref.load %m{k}[%i] : memref<?x{ty}>" for k in range(arity))
        operands = ", ".join(f"%v{k}" for k in range(arity))
        funcs.append(f"""
func.func @{op}({params}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m0, %c0 : memref<?x{ty}>
  scf.for %i = %c0 to %n step %c1 {{
{loads}
    %r = base2.{op} {operands} {{rounding = "nearest_even", overflow = "{overflow}"}} : {ty}
    memref.store %r, %m{arity}[%i] : memref<?x{ty}>
  }}
  func.return
}}""")
    return Base2Module(Parser(context(), "\n".join(funcs)).parse_module())


def _check(module, fmt, op: str, overflow: str, operands: list[np.ndarray]) -> None:
    bits = fmt.storage_bits
    stored = [np.asarray(x, np.int64).astype(f"uint{bits}").view(f"int{bits}") for x in operands]
    out = np.zeros_like(stored[0])
    module.function(op)(*stored, out)
    got = out.view(f"uint{bits}").tolist()
    columns = [s.view(f"uint{bits}").tolist() for s in stored]
    for k, args in enumerate(zip(*columns)):
        want = nf.float_op(fmt, op, list(args), "nearest_even", overflow)
        assert got[k] == want, (str(fmt), op, overflow, [hex(a) for a in args], hex(got[k]), hex(want))


SMALL = [nf.FloatFormat(3, 2), nf.FloatFormat(3, 2, special="fn"), nf.FloatFormat(2, 3, special="fnuz"),
         nf.FloatFormat(3, 1, bias=1)]


@pytest.mark.parametrize("fmt", SMALL, ids=str)
@pytest.mark.parametrize("overflow", ["inf", "saturate"])
def test_every_pair_and_every_fma_triple_of_small_formats(fmt, overflow):
    """6-bit formats: subnormals, ties, overflow and NaN in every combination (fma: all triples of every
    third magnitude with both signs, the largest and NaN)."""
    module = _kernels(fmt, overflow, OPS)
    n = 1 << fmt.width
    a, b = (g.ravel() for g in np.meshgrid(np.arange(n), np.arange(n)))
    for op in ("add", "sub", "mul", "div"):
        assert uses_f32_route(fmt, op, "nearest_even", overflow)
        _check(module, fmt, op, overflow, [a, b])
    magnitudes = np.arange(0, fmt.sign_bit, 3)
    some = np.concatenate([magnitudes, magnitudes | fmt.sign_bit, [fmt.max_magnitude, fmt.nan_bits()]])
    x, y, z = (g.ravel() for g in np.meshgrid(some, some, some))
    assert uses_f32_route(fmt, "fma", "nearest_even", overflow)
    _check(module, fmt, "fma", overflow, [x, y, z])


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    """Patterns of f32 values that are bf16 values."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    assert not (bits & 0xFFFF).any()
    return (bits >> 16).astype(np.int64)


@pytest.mark.sanitize
def test_bf16_results_in_f32_subnormal_range_and_on_ties():
    """Products, quotients and fma results below 2**-126, where f32 itself rounds to a coarser grid,
    plus sums and products landing on bf16 midpoints, against the exact reference."""
    rng = np.random.default_rng(7)
    module = _kernels(nf.BF16, "inf", OPS)
    n = 4000
    mant = lambda: rng.integers(128, 256, n).astype(np.float64)  # noqa: E731
    sign = lambda: rng.choice([-1.0, 1.0], n)  # noqa: E731
    ea = rng.integers(-126, -1, n)
    target = rng.integers(-142, -124, n)  # log2 of the result
    a = sign() * mant() * 2.0 ** (ea - 7)
    b_mul = sign() * mant() * 2.0 ** (target - ea - 7)
    b_div = sign() * mant() * 2.0 ** (ea - target - 7)
    keep = (np.abs(b_mul) < 2.0 ** 127) & (np.abs(b_mul) >= 2.0 ** -126) & (np.abs(b_div) < 2.0 ** 127) & \
        (np.abs(b_div) >= 2.0 ** -126)
    a, b_mul, b_div = (_bf16_bits(v[keep]) for v in (a, b_mul, b_div))
    _check(module, nf.BF16, "mul", "inf", [a, b_mul])
    _check(module, nf.BF16, "div", "inf", [a, b_div])
    tiny = _bf16_bits(sign()[: len(a)] * mant()[: len(a)] * 2.0 ** rng.integers(-133, -120, len(a)))
    _check(module, nf.BF16, "fma", "inf", [a, b_mul, tiny])
    # ties: 1 + k*2**-8 (a bf16 midpoint) as a sum of a bf16 value and a power of two, and fma whose
    # product is a midpoint while the addend is tiny (the residual decides)
    ones = _bf16_bits(1.0 + rng.integers(0, 128, n) * 2.0 ** -7)
    halves = _bf16_bits(sign() * 2.0 ** -8)
    _check(module, nf.BF16, "add", "inf", [ones, halves])
    _check(module, nf.BF16, "sub", "inf", [ones, halves])
    # fma whose product is a bf16 midpoint (an odd 9-bit significand u * v) and whose addend is far below
    # it: f32 rounds the sum onto the midpoint, only the residual tells the side
    pairs = [(u, m // u) for m in range(257, 512, 2) for u in range(3, 256, 2) if m % u == 0 and m // u < 256]
    u, v = (np.array(c, np.float64) for c in zip(*pairs))
    k = len(u)
    scale = 2.0 ** rng.integers(-60, 60, (2, k))
    tiny = sign()[:k] * 2.0 ** np.maximum(np.floor(np.log2(u * v * scale[0] * scale[1])) - rng.integers(20, 60, k),
                                          -133)
    _check(module, nf.BF16, "fma", "inf", [_bf16_bits(u * scale[0]), _bf16_bits(sign()[:k] * v * scale[1]),
                                           _bf16_bits(tiny)])


def test_e5m2_fma_with_addends_below_the_f32_sum():
    """Products near 2**14 plus addends near 2**-16 (span > 24 bits): the f32 sum is inexact and lands on
    e5m2 midpoints, round-to-odd decides."""
    fmt = nf.FP8_E5M2
    module = _kernels(fmt, "inf", ["fma"])
    large = [p for p in range(256) if 2.0 ** 6 <= abs(fmt.decode(p)) < 2.0 ** 8]
    small = [fmt.encode(x) for x in (2.0 ** -16, -(2.0 ** -16), 2.0 ** -15, -(2.0 ** -15), 3 * 2.0 ** -16)]
    a, b, c = (g.ravel() for g in np.meshgrid(large, large, small))
    _check(module, fmt, "fma", "inf", [a, b, c])


@pytest.mark.sanitize
def test_f32_to_bf16_around_every_tie():
    """Every f32 exponent and sign with the low halves around the tie (0x7fff, 0x8000, 0x8001) and 0 / 1,
    for every high mantissa parity, through the compiled nearest-even cast, against the reference."""
    ty = nf.BF16.mlir
    text = f"""
func.func @cast(%x: memref<?xf32> {{loom.dims = ["N"]}}, %y: memref<?x{ty}> {{loom.dims = ["N"]}}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {{
    %v = memref.load %x[%i] : memref<?xf32>
    %r = base2.cast %v {{overflow = "saturate"}} : f32 to {ty}
    memref.store %r, %y[%i] : memref<?x{ty}>
  }}
  func.return
}}"""
    module = Base2Module(Parser(context(), text).parse_module())
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    x = (high[:, None] | lows[None, :]).ravel().view(np.float32)
    out = np.zeros(len(x), np.int16)
    module.function("cast")(x, out)
    want = [nf.BF16.encode(v, "nearest_even", "saturate") for v in x.tolist()]
    assert out.view(np.uint16).tolist() == want
