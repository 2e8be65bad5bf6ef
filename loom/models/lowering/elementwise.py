"""Element-wise layers: binary (integer divisions guarded), unary, comparisons, selects, conversions, logic and
per-channel affine."""

from __future__ import annotations

import math as pymath

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from loom import linalg
from loom.dialects.arith_remf import RemFOp
from loom.models.bit_floats import FORMATS
from loom.models.graph import TRIG_OPS, UNSIGNED, Layer
from loom.models.lowering import bit_floats
from loom.models.lowering.ir import (add, compare, const_like, constant_of, dim_exprs, divide, elementwise,
                                     identity_map, maximum, minimum, mul, sub)


def _select(cond, a, b):
    return arith.SelectOp(cond, a, b).result


def _int_division(op: str):
    """An integer division op (graph.DIVISION_OPS) with C's undefined cases defined: the divisor 0 and -1 are
    replaced by 1 (no trap), then a zero divisor gives 0 and -1 gives 0 - a (wrapping: MIN / -1 is MIN) or the
    remainder 0, as numpy; floor rounding moves C's truncated quotient down (and the remainder up by b) when the
    remainder is non-zero and of the other sign than b."""
    def build(a, b):
        zero, one, minus = const_like(a, 0), const_like(a, 1), const_like(a, -1)
        by_zero, by_minus = compare("eq", b, zero), compare("eq", b, minus)
        safe = _select(arith.OrIOp(by_zero, by_minus).result, one, b)
        r = arith.RemSIOp(a, safe).result  # 0 for the divisors 0 and -1
        inexact = arith.AndIOp(compare("ne", r, zero),
                               compare("lt", arith.XOrIOp(r, b).result, zero)).result  # r and b of unlike signs
        if op in ("mod", "fmod"):
            return _select(inexact, add(r, b), r) if op == "mod" else r
        q = arith.DivSIOp(a, safe).result
        if op == "floordiv":
            q = _select(inexact, sub(q, one), q)
        return _select(by_zero, zero, _select(by_minus, sub(zero, a), q))
    return build


def _float_division(op: str):
    """Float division ops as numpy (and PyTorch) compute them: fmod is C's, mod fmod's remainder moved by b when it
    is non-zero and of the other sign than b, truncdiv trunc(a / b); floordiv numpy's npy_divmod: (a - fmod(a, b)) / b
    moved down as mod, then floored and rounded (a / b where b is 0, a signed 0 where the quotient is 0)."""
    def build(a, b):
        zero = const_like(a, 0.0)
        r = RemFOp(a, b).result
        if op == "fmod":
            return r
        if op == "truncdiv":
            return math.TruncOp(divide(a, b)).result
        unlike = arith.AndIOp(compare("ne", r, zero), arith.XOrIOp(compare("lt", r, zero),
                                                                    compare("lt", b, zero)).result).result
        if op == "mod":
            return _select(unlike, add(r, b), r)
        div = divide(sub(a, r), b)
        div = _select(unlike, sub(div, const_like(a, 1.0)), div)
        floor = math.FloorOp(div).result
        floor = _select(compare("gt", sub(div, floor), const_like(a, 0.5)), add(floor, const_like(a, 1.0)), floor)
        true = divide(a, b)
        floor = _select(compare("ne", div, zero), floor, math.CopySignOp(zero, true).result)
        return _select(compare("eq", b, zero), true, floor)
    return build


def _division(op: str):
    return lambda a, b: (_int_division if isinstance(a.type, IntegerType) else _float_division)(op)(a, b)


def _shift(kind: str):
    """A shift as numpy's: by the width or more (or a negative amount, an unsigned compare) 0, or -1 for a negative
    value shifted right arithmetically; C leaves those undefined."""
    def build(a, b):
        value = {"shl": arith.ShLIOp, "shr": arith.ShRSIOp, "shru": arith.ShRUIOp}[kind](a, b).result
        beyond = arith.CmpiOp(b, const_like(b, a.type.width.data), "uge").result
        spill = const_like(a, 0)
        if kind == "shr":
            spill = _select(arith.CmpiOp(a, spill, "slt").result, const_like(a, -1), spill)
        return _select(beyond, spill, value)
    return build


_BINARY = {
    "add": add, "sub": sub, "mul": mul, "div": divide, "max": maximum, "min": minimum,
    "pow": lambda a, b: math.PowFOp(a, b).result,
    **{op: _division(op) for op in ("truncdiv", "floordiv", "mod", "fmod")},
    "bitand": lambda a, b: arith.AndIOp(a, b).result, "bitor": lambda a, b: arith.OrIOp(a, b).result,
    "bitxor": lambda a, b: arith.XOrIOp(a, b).result, "shl": _shift("shl"), "shr": _shift("shr"),
}


def _unsigned_division(op: str):
    """A division of uint64 bits held as int64: C's unsigned / and %, a zero divisor replaced by 1 and giving 0
    (numpy's); both roundings are the same for unsigned values."""
    def build(a, b):
        zero = const_like(a, 0)
        by_zero = compare("eq", b, zero)
        safe = _select(by_zero, const_like(a, 1), b)
        value = (arith.RemUIOp if op in ("mod", "fmod") else arith.DivUIOp)(a, safe).result
        return _select(by_zero, zero, value)
    return build


def emit_binary(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    op = layer.attrs["op"]
    combine = _BINARY[op] if not layer.attrs.get("unsigned") else _shift("shru") if op == "shr" else \
        _unsigned_division(op)
    scalars = layer.attrs["scalars"]
    if scalars[0] is None and scalars[1] is None:
        elementwise(ins, out, combine)
    elif scalars[0] is None:
        elementwise(ins, out, lambda a: combine(a, const_like(a, scalars[1])))
    else:
        elementwise(ins, out, lambda b: combine(const_like(b, scalars[0]), b))


def emit_select(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out = (lhs cmp rhs) ? a : b, where each of rhs, a, b is a tensor or a scalar of the layer."""
    op, scalars = layer.attrs["compare"], layer.attrs["scalars"]
    element = out.type.element_type

    def body(lhs, *tensors):
        rest = iter(tensors)
        rhs, a, b = (next(rest) if s is None else None for s in scalars)
        rhs = rhs if rhs is not None else const_like(lhs, scalars[0])
        a = a if a is not None else constant_of(element, scalars[1])
        b = b if b is not None else constant_of(element, scalars[2])
        return arith.SelectOp(compare(op, lhs, rhs), a, b).result

    elementwise(ins, out, body)


def emit_compare(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """A comparison's result as a bool tensor: out = lhs cmp rhs (a tensor or the layer's scalar)."""
    op, scalar = layer.attrs["compare"], layer.attrs["scalar"]
    if scalar is None:
        elementwise(ins, out, lambda lhs, rhs: compare(op, lhs, rhs))
    else:
        elementwise(ins, out, lambda lhs: compare(op, lhs, const_like(lhs, scalar)))


def emit_convert(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """An integer tensor to a float (round to nearest) or to another integer width (extend / wrap), a float to
    another float width (extend / round to nearest); uint8 sources convert as unsigned."""
    element = out.type.element_type
    unsigned = layer.inputs[0].dtype in UNSIGNED
    if layer.inputs[0].dtype in FORMATS:  # (graph.cast: bfloat16 / float8 convert from and to float32 only)
        elementwise(ins, out, lambda x: bit_floats.decode(x, FORMATS[layer.inputs[0].dtype]))
        return
    if layer.output.dtype in FORMATS:
        fmt, saturate = FORMATS[layer.output.dtype], bool(layer.attrs.get("saturate"))
        elementwise(ins, out, lambda x: bit_floats.encode(x, fmt, saturate))
        return

    def width(t) -> int:
        return t.width.data if isinstance(t, IntegerType) else t.bitwidth

    def body(x):
        if not isinstance(x.type, IntegerType) and isinstance(element, IntegerType):
            # float to int32 / int64, truncated: values out of range and NaN (undefined in C) give MIN, x86's
            # answer, which numpy and PyTorch give on it
            bits = width(element)
            valid = arith.AndIOp(arith.CmpfOp(x, const_like(x, -2.0 ** (bits - 1)), "oge").result,
                                 arith.CmpfOp(x, const_like(x, 2.0 ** (bits - 1)), "olt").result).result
            converted = arith.FPToSIOp(arith.SelectOp(valid, x, const_like(x, 0.0)).result, element).result
            return arith.SelectOp(valid, converted, constant_of(element, -2 ** (bits - 1))).result
        if not isinstance(x.type, IntegerType):  # float to float
            return (arith.ExtFOp if width(element) > width(x.type) else arith.TruncFOp)(x, element).result
        if not isinstance(element, IntegerType):
            return (arith.UIToFPOp if unsigned else arith.SIToFPOp)(x, element).result
        if width(element) > width(x.type):
            return (arith.ExtUIOp if unsigned else arith.ExtSIOp)(x, element).result
        if width(element) == width(x.type):  # uint64 <-> int64, ...: the same bits
            return x
        return arith.TruncIOp(x, element).result

    elementwise(ins, out, body)


_LOGICAL = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}


def emit_logical(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """and / or / xor of two bool tensors, or not of one (xor with true)."""
    op = layer.attrs["op"]
    if op == "not":
        elementwise(ins, out, lambda x: arith.XOrIOp(x, const_like(x, 1)).result)
    else:
        elementwise(ins, out, lambda a, b: _LOGICAL[op](a, b).result)


def _gelu(x):
    # 0.5 x (1 + erf(x / sqrt 2)): PyTorch's and ONNX's exact GELU
    e = math.ErfOp(mul(x, const_like(x, 1 / pymath.sqrt(2.0)))).result
    return mul(mul(const_like(x, 0.5), x), add(const_like(x, 1.0), e))


def _gelu_tanh(x):
    inner = mul(const_like(x, pymath.sqrt(2 / pymath.pi)), add(x, mul(const_like(x, 0.044715), mul(x, mul(x, x)))))
    return mul(mul(const_like(x, 0.5), x), add(const_like(x, 1.0), math.TanhOp(inner).result))


_UNARY = {
    "relu": lambda x: maximum(x, const_like(x, 0.0)),
    "gelu": _gelu,
    "gelu_tanh": _gelu_tanh,
    "tanh": lambda x: math.TanhOp(x).result,
    "sigmoid": lambda x: divide(const_like(x, 1.0), add(const_like(x, 1.0), math.ExpOp(arith.NegfOp(x).result).result)),
    "exp": lambda x: math.ExpOp(x).result,
    "log": lambda x: math.LogOp(x).result,
    "sqrt": lambda x: math.SqrtOp(x).result,
    "rsqrt": lambda x: math.RsqrtOp(x).result,
    "neg": lambda x: sub(const_like(x, 0), x) if isinstance(x.type, IntegerType) else arith.NegfOp(x).result,
    "abs": lambda x: (math.AbsIOp if isinstance(x.type, IntegerType) else math.AbsFOp)(x).result,
    "erf": lambda x: math.ErfOp(x).result,
    "reciprocal": lambda x: divide(const_like(x, 1.0), x),
    "log1p": lambda x: math.Log1pOp(x).result, "sin": lambda x: math.SinOp(x).result,
    "cos": lambda x: math.CosOp(x).result,
    "expm1": lambda x: math.ExpM1Op(x).result,
    "floor": lambda x: math.FloorOp(x).result, "ceil": lambda x: math.CeilOp(x).result,
    "round": lambda x: math.RoundEvenOp(x).result, "trunc": lambda x: math.TruncOp(x).result,
    **{name: (lambda op: lambda x: op(x).result)(getattr(math, f"{name.capitalize()}Op")) for name in TRIG_OPS},
    "bitnot": lambda x: arith.XOrIOp(x, const_like(x, -1)).result,
}


def emit_unary(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    elementwise(ins, out, _UNARY[layer.attrs["op"]])


def emit_channel_affine(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    x, scale, shift = ins
    rank = len(out.type.get_shape())
    d = dim_exprs(rank)
    channel = AffineMap(rank, 0, (d[1],))
    linalg.generic([x, scale, shift], [out], [identity_map(rank), channel, channel, identity_map(rank)],
                   ["parallel"] * rank, lambda v, s, h, _o: add(mul(v, s), h))
