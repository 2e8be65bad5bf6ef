"""Model layers as loom IR: one ``func.func`` per distinct layer, built with ``loom.linalg``'s builders.

A layer's function takes its inputs then its output as static memrefs (weights are arguments, not IR
constants, so the C stays small and one function serves every layer of the same shape). Temporaries
(padded inputs, softmax/normalisation statistics) are ``memref.alloc``'d inside and freed at the end.
Views (reshapes) have no function: the runtime shares the buffer, as ``memref.expand_shape`` would.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (Float16Type, FloatAttr, IndexType, IntegerAttr, IntegerType, MemRefType, ModuleOp,
                                   f32, f64, i1, i8, i16, i32, i64)
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from loom import linalg
from loom.errors import LoomError
from loom.dialects.arith_remf import RemFOp
from loom.models.graph import BOOL, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, UNSIGNED, Layer

# bool: one byte (C's bool, numpy's); unsigned integers are the signed type of their width, converted as unsigned
# (the runtime passes a uint8 array as int8, ...)
_ELEMENT = {np.dtype(np.float32): f32, F64: f64, I64: i64, I32: i32, BOOL: i1, F16: Float16Type(), I8: i8, U8: i8,
            I16: i16, U16: i16, U32: i32, U64: i64}


def memref_type(shape: Sequence[int], dtype) -> MemRefType:
    return MemRefType(_ELEMENT[np.dtype(dtype)], list(shape))


def layer_key(layer: Layer) -> tuple:
    """Layers with equal keys share one function."""
    return (layer.kind, tuple(sorted(layer.attrs.items())),
            tuple((t.shape, str(t.dtype)) for t in layer.inputs), layer.output.shape, str(layer.output.dtype))


def build_module(layers: Sequence[Layer]) -> tuple[ModuleOp, dict[int, str]]:
    """The module of every distinct non-view layer and, per layer index, its function's name."""
    funcs: list[func.FuncOp] = []
    by_key: dict[tuple, str] = {}
    names: dict[int, str] = {}
    for index, layer in enumerate(layers):
        if layer.is_view:
            continue
        key = layer_key(layer)
        if key not in by_key:
            by_key[key] = f"{layer.kind}_{len(by_key)}"
            funcs.append(layer_function(by_key[key], layer))
        names[index] = by_key[key]
    module = ModuleOp(funcs)
    module.verify()
    return module, names


def layer_function(name: str, layer: Layer) -> func.FuncOp:
    types = [memref_type(t.shape, t.dtype) for t in (*layer.inputs, layer.output)]
    f = func.FuncOp(name, (types, []))
    with ImplicitBuilder(f.body) as args:
        try:
            EMITTERS[layer.kind](layer, list(args[:-1]), args[-1])
        except LoomError as e:
            raise LoomError(f"{layer.kind}: {e.message}", where=layer.where or None) from None
        func.ReturnOp()
    return f


# ---------------------------------------------------------------- small IR helpers


def _f(value: float, element=f32) -> SSAValue:
    return arith.ConstantOp(FloatAttr(float(value), element)).result


def _like(x: SSAValue, value: float) -> SSAValue:
    """A constant of ``x``'s type: f32 or f64, or an integer (int32 layers: ``value`` is integral)."""
    if isinstance(x.type, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), x.type)).result
    return _f(value, x.type)


def _fill_value(buffer: SSAValue, value: float) -> float | int:
    """``value`` as ``linalg.fill`` takes it for the buffer's element type."""
    return int(value) if isinstance(buffer.type.element_type, IntegerType) else value


def _idx(value: int) -> SSAValue:
    return arith.ConstantOp.from_int_and_width(value, IndexType()).result


def _dims(n: int) -> list[AffineExpr]:
    return [AffineDimExpr(i) for i in range(n)]


def _identity(rank: int) -> AffineMap:
    return AffineMap(rank, 0, tuple(_dims(rank)))


def _broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> AffineMap:
    """numpy broadcasting as an indexing map: leading dims dropped, size-1 dims read at 0."""
    rank, lead = len(out_shape), len(out_shape) - len(in_shape)
    d = _dims(rank)
    results = tuple(AffineConstantExpr(0) if size == 1 and out_shape[lead + k] != 1 else d[lead + k]
                    for k, size in enumerate(in_shape))
    return AffineMap(rank, 0, results)


def _alloc(shape: Sequence[int], element=f32) -> SSAValue:
    return memref.AllocOp.get(element, shape=list(shape)).memref


def _free(*buffers: SSAValue) -> None:
    for b in buffers:
        memref.DeallocOp.get(b)


def _elementwise(ins: Sequence[SSAValue], out: SSAValue, body: Callable[..., SSAValue]) -> None:
    """out[...] = body(ins broadcast to out's shape...)."""
    out_shape = out.type.get_shape()
    maps = [_broadcast_map(v.type.get_shape(), out_shape) for v in ins] + [_identity(len(out_shape))]
    linalg.generic(list(ins), [out], maps, ["parallel"] * len(out_shape), lambda *a: body(*a[:-1]))


def _reduce_into(x: SSAValue, acc: SSAValue, axes: Sequence[int], combine: Callable[..., SSAValue],
                 value: Callable[..., SSAValue] | None = None, extra: Sequence[SSAValue] = ()) -> None:
    """acc[kept dims] = combine(acc, value(x, *extra)) over ``axes`` of x; ``extra`` operands have
    acc's shape (statistics computed earlier)."""
    rank = len(x.type.get_shape())
    d = _dims(rank)
    kept = tuple(d[k] for k in range(rank) if k not in axes)
    acc_map = AffineMap(rank, 0, kept)
    iterators = ["reduction" if k in axes else "parallel" for k in range(rank)]

    def body(*a):
        xv, rest, accv = a[0], a[1:-1], a[-1]
        return combine(accv, value(xv, *rest) if value else xv)

    linalg.generic([x, *extra], [acc], [_identity(rank), *([acc_map] * len(extra)), acc_map], iterators, body)


# add, mul, sub, max and min also take int32 layers' values (wrapping integer ops)
def _addf(a, b):
    return (arith.AddiOp if isinstance(a.type, IntegerType) else arith.AddfOp)(a, b).result


def _mulf(a, b):
    return (arith.MuliOp if isinstance(a.type, IntegerType) else arith.MulfOp)(a, b).result


def _subf(a, b):
    return (arith.SubiOp if isinstance(a.type, IntegerType) else arith.SubfOp)(a, b).result


def _divf(a, b):
    return arith.DivfOp(a, b).result


def _maxf(a, b):
    return (arith.MaxSIOp if isinstance(a.type, IntegerType) else arith.MaximumfOp)(a, b).result


def _minf(a, b):
    return (arith.MinSIOp if isinstance(a.type, IntegerType) else arith.MinimumfOp)(a, b).result


def _pad(x: SSAValue, before: Sequence[int], after: Sequence[int], fill_value: float) -> SSAValue:
    """A new buffer: x with ``before``/``after`` elements of ``fill_value`` around its last two dims."""
    shape = list(x.type.get_shape())
    lead = len(shape) - 2
    padded = _alloc([*shape[:lead], *(shape[lead + k] + before[k] + after[k] for k in range(2))],
                    x.type.element_type)
    linalg.fill(_fill_value(padded, fill_value), padded)
    _copy_at(x, padded, [0] * lead + list(before))
    return padded


def _copy_at(x: SSAValue, dst: SSAValue, offsets: Sequence[int]) -> None:
    """dst[i + offsets] = x[i] over x's shape: a copy into a subview (an offset indexing map would not
    verify where the offset is 0 and the dims differ)."""
    rank = len(offsets)
    window = memref.SubviewOp.from_static_parameters(dst, dst.type, list(offsets), list(x.type.get_shape()),
                                                     [1] * rank).result
    linalg.generic([x], [window], [_identity(rank)] * 2, ["parallel"] * rank, lambda v, _o: v)


# ---------------------------------------------------------------- layers


def emit_conv2d(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    x, w, *bias = ins
    ph, pw = layer.attrs["padding"]
    src = _pad(x, (ph, pw), (ph, pw), 0.0) if ph or pw else x
    if bias:  # out[n, f, h, w] = bias[f]
        d = _dims(4)
        linalg.generic([bias[0]], [out], [AffineMap(4, 0, (d[1],)), _identity(4)], ["parallel"] * 4,
                       lambda b, _o: b)
    else:
        linalg.fill(_fill_value(out, 0.0), out)
    (sh, sw), (dh, dw) = layer.attrs["stride"], layer.attrs["dilation"]
    # linalg.conv_2d_nchw_fchw's maps, loops ordered (f, n, c, kh, kw, oh, ow): the outer loop owns
    # output channels (one OpenMP thread each), the inner one walks rows contiguously
    f, n, c, kh, kw, oh, ow = _dims(7)
    maps = [AffineMap(7, 0, (n, c, oh * sh + kh * dh, ow * sw + kw * dw)), AffineMap(7, 0, (f, c, kh, kw)),
            AffineMap(7, 0, (n, f, oh, ow))]
    linalg.generic([src, w], [out], maps, ["parallel", "parallel"] + ["reduction"] * 3 + ["parallel"] * 2,
                   _mac)
    if src is not x:
        _free(src)


def emit_grouped_conv2d(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """O[n, g, f, oh, ow] += I[n, g, c, oh*sh + kh*dh, ow*sw + kw*dw] * W[g, f, c, kh, kw]."""
    x, w, *bias = ins
    ph, pw = layer.attrs["padding"]
    src = _pad(x, (ph, pw), (ph, pw), 0.0) if ph or pw else x
    g, n, f, c, kh, kw, oh, ow = _dims(8)  # loops: groups outermost, output rows innermost
    if bias:
        linalg.generic([bias[0]], [out], [AffineMap(5, 0, (AffineDimExpr(1), AffineDimExpr(2))), _identity(5)],
                       ["parallel"] * 5, lambda v, _o: v)
    else:
        linalg.fill(_fill_value(out, 0.0), out)
    (sh, sw), (dh, dw) = layer.attrs["stride"], layer.attrs["dilation"]
    maps = [AffineMap(8, 0, (n, g, c, oh * sh + kh * dh, ow * sw + kw * dw)), AffineMap(8, 0, (g, f, c, kh, kw)),
            AffineMap(8, 0, (n, g, f, oh, ow))]
    linalg.generic([src, w], [out], maps, ["parallel"] * 3 + ["reduction"] * 3 + ["parallel"] * 2, _mac)
    if src is not x:
        _free(src)


def emit_concat(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    rank, axis, offset = len(out.type.get_shape()), layer.attrs["axis"], 0
    for x in ins:
        _copy_at(x, out, [offset if k == axis else 0 for k in range(rank)])
        offset += x.type.get_shape()[axis]


def emit_pad(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    linalg.fill(_fill_value(out, layer.attrs["value"]), out)
    _copy_at(ins[0], out, layer.attrs["before"])


def emit_matmul(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    a, b, *bias = ins
    if bias:
        _elementwise([bias[0]], out, lambda v: v)
    else:
        linalg.fill(_fill_value(out, 0.0), out)
    # linalg.matmul's maps with loops (i, k, j): the innermost loop runs along rows of B and C
    i, k, j = _dims(3)
    maps = [AffineMap(3, 0, (i, k)), AffineMap(3, 0, (k, j)), AffineMap(3, 0, (i, j))]
    linalg.generic([a, b], [out], maps, ["parallel", "reduction", "parallel"], _mac)


def emit_batch_matmul(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    linalg.fill(_fill_value(out, 0.0), out)
    b, i, k, j = _dims(4)
    maps = [AffineMap(4, 0, (b, i, k)), AffineMap(4, 0, (b, k, j)), AffineMap(4, 0, (b, i, j))]
    linalg.generic(ins, [out], maps, ["parallel", "parallel", "reduction", "parallel"], _mac)


def _mac(a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
    return _addf(acc, _mulf(a, b))


def _select(cond, a, b):
    return arith.SelectOp(cond, a, b).result


def _int_division(op: str):
    """An integer division op (graph.DIVISION_OPS) with C's undefined cases defined: the divisor 0 and -1 are
    replaced by 1 (no trap), then a zero divisor gives 0 and -1 gives 0 - a (wrapping: MIN / -1 is MIN) or the
    remainder 0, as numpy; floor rounding moves C's truncated quotient down (and the remainder up by b) when the
    remainder is non-zero and of the other sign than b."""
    def build(a, b):
        zero, one, minus = _like(a, 0), _like(a, 1), _like(a, -1)
        by_zero, by_minus = _compare("eq", b, zero), _compare("eq", b, minus)
        safe = _select(arith.OrIOp(by_zero, by_minus).result, one, b)
        r = arith.RemSIOp(a, safe).result  # 0 for the divisors 0 and -1
        inexact = arith.AndIOp(_compare("ne", r, zero),
                               _compare("lt", arith.XOrIOp(r, b).result, zero)).result  # r and b of unlike signs
        if op in ("mod", "fmod"):
            return _select(inexact, _addf(r, b), r) if op == "mod" else r
        q = arith.DivSIOp(a, safe).result
        if op == "floordiv":
            q = _select(inexact, _subf(q, one), q)
        return _select(by_zero, zero, _select(by_minus, _subf(zero, a), q))
    return build


def _float_division(op: str):
    """Float division ops as numpy (and PyTorch) compute them: fmod is C's, mod fmod's remainder moved by b when it
    is non-zero and of the other sign than b, truncdiv trunc(a / b); floordiv numpy's npy_divmod: (a - fmod(a, b)) / b
    moved down as mod, then floored and rounded (a / b where b is 0, a signed 0 where the quotient is 0)."""
    def build(a, b):
        zero = _like(a, 0.0)
        r = RemFOp(a, b).result
        if op == "fmod":
            return r
        if op == "truncdiv":
            return math.TruncOp(_divf(a, b)).result
        unlike = arith.AndIOp(_compare("ne", r, zero), arith.XOrIOp(_compare("lt", r, zero),
                                                                    _compare("lt", b, zero)).result).result
        if op == "mod":
            return _select(unlike, _addf(r, b), r)
        div = _divf(_subf(a, r), b)
        div = _select(unlike, _subf(div, _like(a, 1.0)), div)
        floor = math.FloorOp(div).result
        floor = _select(_compare("gt", _subf(div, floor), _like(a, 0.5)), _addf(floor, _like(a, 1.0)), floor)
        true = _divf(a, b)
        floor = _select(_compare("ne", div, zero), floor, math.CopySignOp(zero, true).result)
        return _select(_compare("eq", b, zero), true, floor)
    return build


def _division(op: str):
    return lambda a, b: (_int_division if isinstance(a.type, IntegerType) else _float_division)(op)(a, b)


_BINARY = {
    "add": _addf, "sub": _subf, "mul": _mulf, "div": _divf, "max": _maxf, "min": _minf,
    "pow": lambda a, b: math.PowFOp(a, b).result,
    **{op: _division(op) for op in ("truncdiv", "floordiv", "mod", "fmod")},
}


def _unsigned_division(op: str):
    """A division of uint64 bits held as int64: C's unsigned / and %, a zero divisor replaced by 1 and giving 0
    (numpy's); both roundings are the same for unsigned values."""
    def build(a, b):
        zero = _like(a, 0)
        by_zero = _compare("eq", b, zero)
        safe = _select(by_zero, _like(a, 1), b)
        value = (arith.RemUIOp if op in ("mod", "fmod") else arith.DivUIOp)(a, safe).result
        return _select(by_zero, zero, value)
    return build


def emit_binary(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    combine = _unsigned_division(layer.attrs["op"]) if layer.attrs.get("unsigned") else _BINARY[layer.attrs["op"]]
    scalars = layer.attrs["scalars"]
    if scalars[0] is None and scalars[1] is None:
        _elementwise(ins, out, combine)
    elif scalars[0] is None:
        _elementwise(ins, out, lambda a: combine(a, _like(a, scalars[1])))
    else:
        _elementwise(ins, out, lambda b: combine(_like(b, scalars[0]), b))


_FLOAT_COMPARE = {"gt": "ogt", "lt": "olt", "ge": "oge", "le": "ole", "eq": "oeq", "ne": "une"}  # NaN: only != holds
_INT_COMPARE = {"gt": "sgt", "lt": "slt", "ge": "sge", "le": "sle", "eq": "eq", "ne": "ne"}


def _compare(op: str, a: SSAValue, b: SSAValue) -> SSAValue:
    if isinstance(a.type, IntegerType):
        return arith.CmpiOp(a, b, _INT_COMPARE[op]).result
    return arith.CmpfOp(a, b, _FLOAT_COMPARE[op]).result


def _constant_of(element, value: float) -> SSAValue:
    if isinstance(element, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), element)).result
    return _f(value, element)


def emit_select(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out = (lhs cmp rhs) ? a : b, where each of rhs, a, b is a tensor or a scalar of the layer."""
    op, scalars = layer.attrs["compare"], layer.attrs["scalars"]
    element = out.type.element_type

    def body(lhs, *tensors):
        rest = iter(tensors)
        rhs, a, b = (next(rest) if s is None else None for s in scalars)
        rhs = rhs if rhs is not None else _like(lhs, scalars[0])
        a = a if a is not None else _constant_of(element, scalars[1])
        b = b if b is not None else _constant_of(element, scalars[2])
        return arith.SelectOp(_compare(op, lhs, rhs), a, b).result

    _elementwise(ins, out, body)


def emit_compare(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """A comparison's result as a bool tensor: out = lhs cmp rhs (a tensor or the layer's scalar)."""
    op, scalar = layer.attrs["compare"], layer.attrs["scalar"]
    if scalar is None:
        _elementwise(ins, out, lambda lhs, rhs: _compare(op, lhs, rhs))
    else:
        _elementwise(ins, out, lambda lhs: _compare(op, lhs, _like(lhs, scalar)))


def emit_convert(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """An integer tensor to a float (round to nearest) or to another integer width (extend / wrap), a float to
    another float width (extend / round to nearest); uint8 sources convert as unsigned."""
    element = out.type.element_type
    unsigned = layer.inputs[0].dtype in UNSIGNED

    def width(t) -> int:
        return t.width.data if isinstance(t, IntegerType) else t.bitwidth

    def body(x):
        if not isinstance(x.type, IntegerType) and isinstance(element, IntegerType):
            # float to int32 / int64, truncated: values out of range and NaN (undefined in C) give MIN, x86's
            # answer, which numpy and PyTorch give on it
            bits = width(element)
            valid = arith.AndIOp(arith.CmpfOp(x, _like(x, -2.0 ** (bits - 1)), "oge").result,
                                 arith.CmpfOp(x, _like(x, 2.0 ** (bits - 1)), "olt").result).result
            converted = arith.FPToSIOp(arith.SelectOp(valid, x, _like(x, 0.0)).result, element).result
            return arith.SelectOp(valid, converted, _constant_of(element, -2 ** (bits - 1))).result
        if not isinstance(x.type, IntegerType):  # float to float
            return (arith.ExtFOp if width(element) > width(x.type) else arith.TruncFOp)(x, element).result
        if not isinstance(element, IntegerType):
            return (arith.UIToFPOp if unsigned else arith.SIToFPOp)(x, element).result
        if width(element) > width(x.type):
            return (arith.ExtUIOp if unsigned else arith.ExtSIOp)(x, element).result
        if width(element) == width(x.type):  # uint64 <-> int64, ...: the same bits
            return x
        return arith.TruncIOp(x, element).result

    _elementwise(ins, out, body)


_LOGICAL = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}


def emit_logical(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """and / or / xor of two bool tensors, or not of one (xor with true)."""
    op = layer.attrs["op"]
    if op == "not":
        _elementwise(ins, out, lambda x: arith.XOrIOp(x, _like(x, 1)).result)
    else:
        _elementwise(ins, out, lambda a, b: _LOGICAL[op](a, b).result)


def _gelu(x):
    # 0.5 x (1 + erf(x / sqrt 2)): PyTorch's and ONNX's exact GELU
    e = math.ErfOp(_mulf(x, _like(x, 1 / pymath.sqrt(2.0)))).result
    return _mulf(_mulf(_like(x, 0.5), x), _addf(_like(x, 1.0), e))


def _gelu_tanh(x):
    inner = _mulf(_like(x, pymath.sqrt(2 / pymath.pi)), _addf(x, _mulf(_like(x, 0.044715), _mulf(x, _mulf(x, x)))))
    return _mulf(_mulf(_like(x, 0.5), x), _addf(_like(x, 1.0), math.TanhOp(inner).result))


_UNARY = {
    "relu": lambda x: _maxf(x, _like(x, 0.0)),
    "gelu": _gelu,
    "gelu_tanh": _gelu_tanh,
    "tanh": lambda x: math.TanhOp(x).result,
    "sigmoid": lambda x: _divf(_like(x, 1.0), _addf(_like(x, 1.0), math.ExpOp(arith.NegfOp(x).result).result)),
    "exp": lambda x: math.ExpOp(x).result,
    "log": lambda x: math.LogOp(x).result,
    "sqrt": lambda x: math.SqrtOp(x).result,
    "rsqrt": lambda x: math.RsqrtOp(x).result,
    "neg": lambda x: _subf(_like(x, 0), x) if isinstance(x.type, IntegerType) else arith.NegfOp(x).result,
    "abs": lambda x: (math.AbsIOp if isinstance(x.type, IntegerType) else math.AbsFOp)(x).result,
    "erf": lambda x: math.ErfOp(x).result,
    "reciprocal": lambda x: _divf(_like(x, 1.0), x),
    "log1p": lambda x: math.Log1pOp(x).result, "sin": lambda x: math.SinOp(x).result,
    "cos": lambda x: math.CosOp(x).result,
    "expm1": lambda x: math.ExpM1Op(x).result,
    "floor": lambda x: math.FloorOp(x).result, "ceil": lambda x: math.CeilOp(x).result,
    "round": lambda x: math.RoundEvenOp(x).result, "trunc": lambda x: math.TruncOp(x).result,
}


def emit_unary(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    _elementwise(ins, out, _UNARY[layer.attrs["op"]])


def emit_channel_affine(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    x, scale, shift = ins
    rank = len(out.type.get_shape())
    d = _dims(rank)
    channel = AffineMap(rank, 0, (d[1],))
    linalg.generic([x, scale, shift], [out], [_identity(rank), channel, channel, _identity(rank)],
                   ["parallel"] * rank, lambda v, s, h, _o: _addf(_mulf(v, s), h))


def _kept_shape(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    return [d for k, d in enumerate(shape) if k not in axes]


def _stat_map(rank: int, axes: Sequence[int]) -> AffineMap:
    d = _dims(rank)
    return AffineMap(rank, 0, tuple(d[k] for k in range(rank) if k not in axes))


def emit_softmax(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    (x,), axis = ins, layer.attrs["axis"]
    shape = x.type.get_shape()
    rank, axes = len(shape), (axis,)
    element = x.type.element_type
    top, total = _alloc(_kept_shape(shape, axes), element), _alloc(_kept_shape(shape, axes), element)
    linalg.fill(float("-inf"), top)
    _reduce_into(x, top, axes, _maxf)  # subtracting the maximum keeps exp in range
    linalg.fill(0.0, total)
    _reduce_into(x, total, axes, _addf, lambda v, m: math.ExpOp(_subf(v, m)).result, extra=[top])
    stat, ident = _stat_map(rank, axes), _identity(rank)
    if layer.attrs["log"]:
        body = lambda v, m, s, _o: _subf(_subf(v, m), math.LogOp(s).result)  # noqa: E731
    else:
        body = lambda v, m, s, _o: _divf(math.ExpOp(_subf(v, m)).result, s)  # noqa: E731
    linalg.generic([x, top, total], [out], [ident, stat, stat, ident], ["parallel"] * rank, body)
    _free(top, total)


def emit_layer_norm(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    x, params = ins[0], ins[1:]
    shape = x.type.get_shape()
    rank, k = len(shape), layer.attrs["normalized"]
    axes = tuple(range(rank - k, rank))
    inv_count = 1.0 / pymath.prod(shape[rank - k:])
    element = x.type.element_type
    total, sq = _alloc(_kept_shape(shape, axes), element), _alloc(_kept_shape(shape, axes), element)
    linalg.fill(0.0, total)
    _reduce_into(x, total, axes, _addf)
    linalg.fill(0.0, sq)  # variance from the centred values: no cancellation as with E[x^2] - E[x]^2

    def centred_square(v, s):
        c = _subf(v, _mulf(s, _f(inv_count, element)))
        return _mulf(c, c)

    _reduce_into(x, sq, axes, _addf, centred_square, extra=[total])
    stat, ident = _stat_map(rank, axes), _identity(rank)
    d = _dims(rank)
    tail = AffineMap(rank, 0, tuple(d[rank - k:]))
    eps = layer.attrs["eps"]

    def body(v, s, q, *rest):
        rest = rest[:-1]
        norm = _mulf(_subf(v, _mulf(s, _f(inv_count, element))),
                     math.RsqrtOp(_addf(_mulf(q, _f(inv_count, element)), _f(eps, element))).result)
        if layer.attrs["weight"]:
            norm, rest = _mulf(norm, rest[0]), rest[1:]
        if layer.attrs["bias"]:
            norm = _addf(norm, rest[0])
        return norm

    linalg.generic([x, total, sq, *params], [out], [ident, stat, stat, *([tail] * len(params)), ident],
                   ["parallel"] * rank, body)
    _free(total, sq)


_REDUCE_COMBINE = {"sum": _addf, "mean": _addf, "max": _maxf, "min": _minf, "prod": _mulf,
                   "any": lambda a, b: arith.OrIOp(a, b).result, "all": lambda a, b: arith.AndIOp(a, b).result}


def _reduce_init(op: str, dtype: np.dtype) -> float | int:
    """The identity of the reduction in ``dtype``: the extremes of an integer type for max / min."""
    if op in ("any", "all"):
        return int(op == "all")
    if op in ("sum", "mean"):
        return 0
    if op == "prod":
        return 1
    if dtype.kind == "f":
        return float("-inf") if op == "max" else float("inf")
    return int(np.iinfo(dtype).min if op == "max" else np.iinfo(dtype).max)


def emit_reduce(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    (x,), op, axes = ins, layer.attrs["op"], layer.attrs["axes"]
    shape = x.type.get_shape()
    kept = _kept_shape(shape, axes)
    acc = _alloc(kept, out.type.element_type) if layer.attrs["keepdim"] and len(axes) else out
    linalg.fill(_fill_value(acc, _reduce_init(op, layer.output.dtype)), acc)
    _reduce_into(x, acc, axes, _REDUCE_COMBINE[op])
    scale = 1.0 / pymath.prod(shape[k] for k in axes) if op == "mean" else 1.0
    if acc is not out:  # keepdim: the same values with unit dims put back
        out_rank = len(shape)
        d = _dims(out_rank)
        acc_map = AffineMap(out_rank, 0, tuple(d[k] for k in range(out_rank) if k not in axes))
        linalg.generic([acc], [out], [acc_map, _identity(out_rank)], ["parallel"] * out_rank,
                       lambda v, _o: _mulf(v, _like(v, scale)) if scale != 1.0 else v)
        _free(acc)
    elif scale != 1.0:
        rank = len(kept)
        linalg.generic([out], [out], [_identity(rank)] * 2, ["parallel"] * rank,
                       lambda v, _o: _mulf(v, _like(v, scale)))


def emit_pool2d(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    (x,), a = ins, layer.attrs
    kind = a["kind"]
    n, c, h, w = x.type.get_shape()
    oh, ow = out.type.get_shape()[2:]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = a["kernel"], a["stride"], a["padding"], a["dilation"]
    # ceil_mode may need more than the padding on the bottom/right: padded with the identity too
    extra = [max(0, (o - 1) * s + d * (k - 1) + 1 - (size + 2 * p))
             for o, s, d, k, size, p in ((oh, sh, dh, kh, h, ph), (ow, sw, dw, kw, w, pw))]
    after = (ph + extra[0], pw + extra[1])
    identity = float("-inf") if kind == "max" else 0.0
    src = _pad(x, (ph, pw), after, identity) if any((ph, pw, *after)) else x
    linalg.fill(identity, out)
    if kind == "max":
        linalg.pooling_nchw_max(src, (kh, kw), out, strides=(sh, sw), dilations=(dh, dw))
    else:
        linalg.pooling_nchw_sum(src, (kh, kw), out, strides=(sh, sw), dilations=(dh, dw))
        _average(out, (h, w), (kh, kw), (sh, sw), (ph, pw), after, (dh, dw), a["count_include_pad"])
    if src is not x:
        _free(src)


def _average(out: SSAValue, size, kernel, stride, before, after, dilation, include_pad: bool) -> None:
    """Divide window sums by the number of elements each window covers: the window size when no
    window reaches past the counted region, else counts pooled from a buffer of ones (PyTorch/ONNX
    count the padding but not ceil_mode's overhang when ``include_pad``)."""
    (h, w), (ph, pw) = size, before
    if not any((*before, *after)) or (include_pad and after == before):
        linalg.generic([out], [out], [_identity(4)] * 2, ["parallel"] * 4,
                       lambda v, _o: _mulf(v, _like(v, 1.0 / (kernel[0] * kernel[1]))))
        return
    counted = (h + 2 * ph, w + 2 * pw) if include_pad else (h, w)
    offset = (0, 0) if include_pad else (ph, pw)
    element = out.type.element_type
    ones = _alloc([1, 1, h + ph + after[0], w + pw + after[1]], element)
    linalg.fill(0.0, ones)
    region = _alloc([1, 1, *counted], element)
    linalg.fill(1.0, region)
    _copy_at(region, ones, [0, 0, *offset])
    counts = _alloc([1, 1, *out.type.get_shape()[2:]], element)
    linalg.fill(0.0, counts)
    linalg.pooling_nchw_sum(ones, kernel, counts, strides=stride, dilations=dilation)
    _elementwise([out, counts], out, _divf)
    _free(ones, region, counts)


def emit_copy_like(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """transpose / expand / slice: out[...] = x[index map of the layer]."""
    (x,), out_shape = ins, out.type.get_shape()
    rank = len(out_shape)
    d = _dims(rank)
    if layer.kind == "transpose":
        perm = layer.attrs["perm"]
        in_map = AffineMap(rank, 0, tuple(d[perm.index(j)] for j in range(rank)))
    elif layer.kind == "expand":
        in_map = _broadcast_map(x.type.get_shape(), out_shape)
    else:  # slice: a strided subview of x, copied (an index map d*1+0 would not verify)
        axis, start, step = layer.attrs["axis"], layer.attrs["start"], layer.attrs["step"]
        x = memref.SubviewOp.from_static_parameters(
            x, x.type, [start if k == axis else 0 for k in range(rank)], list(out_shape),
            [step if k == axis else 1 for k in range(rank)]).result
        in_map = _identity(rank)
    linalg.generic([x], [out], [in_map, _identity(rank)], ["parallel"] * rank, lambda v, _o: v)


def emit_embedding(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[p..., f] = table[clamp(ids[p...]), f]: loops (a gather is not an affine access). The index
    is clamped so the C stays in bounds; the runtime refuses out-of-range ids before calling."""
    table, ids = ins
    rows, features = table.type.get_shape()
    positions = ids.type.get_shape()
    zero = _idx(0)

    def step(ivs: list[SSAValue]) -> None:
        raw = arith.IndexCastOp(memref.LoadOp.get(ids, ivs).res, IndexType()).result
        row = arith.MinSIOp(arith.MaxSIOp(raw, zero).result, _idx(rows - 1)).result
        _for(_idx(features), lambda f: memref.StoreOp.get(memref.LoadOp.get(table, [row, f]).res, out, [*ivs, f]))

    _loop_nest(positions, step)


def emit_gather(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[..., i, ...] = x[..., positions[i], ...] along the layer's axis, in loops (a gather is not an affine
    access); the positions are a constant the import checked to lie in range."""
    x, positions = ins
    axis, shape = layer.attrs["axis"], out.type.get_shape()

    def step(ivs: list[SSAValue]) -> None:
        at = arith.IndexCastOp(memref.LoadOp.get(positions, [ivs[axis]]).res, IndexType()).result
        source = [at if k == axis else iv for k, iv in enumerate(ivs)]
        memref.StoreOp.get(memref.LoadOp.get(x, source).res, out, ivs)

    _loop_nest(shape, step)


def _position(idx: SSAValue, ivs: list[SSAValue], size: int) -> SSAValue:
    """idx[ivs] as an index into an axis of ``size``: a negative one counted from the end, then clamped so the C
    stays in bounds (the runtime refuses positions out of range before calling)."""
    raw = arith.IndexCastOp(memref.LoadOp.get(idx, ivs).res, IndexType()).result
    raw = arith.SelectOp(arith.CmpiOp(raw, _idx(0), "slt").result, arith.AddiOp(raw, _idx(size)).result, raw).result
    return arith.MinSIOp(arith.MaxSIOp(raw, _idx(0)).result, _idx(size - 1)).result


def emit_gather_elements(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[i...] = x[i... with i[axis] = idx[i...]], in loops over out."""
    (x, idx), axis = ins, layer.attrs["axis"]
    size = x.type.get_shape()[axis]

    def step(ivs: list[SSAValue]) -> None:
        at = _position(idx, ivs, size)
        memref.StoreOp.get(memref.LoadOp.get(x, [at if k == axis else iv for k, iv in enumerate(ivs)]).res, out, ivs)

    _loop_nest(out.type.get_shape(), step)


def emit_take_positions(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[pre..., j..., post...] = x[pre..., idx[j...], post...], in loops over out."""
    (x, idx), axis = ins, layer.attrs["axis"]
    size, rank = x.type.get_shape()[axis], len(idx.type.get_shape())

    def step(ivs: list[SSAValue]) -> None:
        at = _position(idx, ivs[axis:axis + rank], size)
        memref.StoreOp.get(memref.LoadOp.get(x, [*ivs[:axis], at, *ivs[axis + rank:]]).res, out, ivs)

    _loop_nest(out.type.get_shape(), step)


def emit_scatter_elements(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out = x, then for each position of idx (in order) out[i... with i[axis] = idx[i...]] = src[i...], or combined
    with the value there by the reduction."""
    (x, idx, src), axis, reduction = ins, layer.attrs["axis"], layer.attrs["reduction"]
    size = x.type.get_shape()[axis]
    _copy_at(x, out, [0] * len(x.type.get_shape()))
    combine = {"add": _addf, "mul": _mulf, "max": _maxf, "min": _minf}.get(reduction)

    def step(ivs: list[SSAValue]) -> None:
        target = [_position(idx, ivs, size) if k == axis else iv for k, iv in enumerate(ivs)]
        value = memref.LoadOp.get(src, ivs).res
        if combine is not None:
            value = combine(memref.LoadOp.get(out, target).res, value)
        memref.StoreOp.get(value, out, target)

    _loop_nest(idx.type.get_shape(), step)


def emit_topk(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """The positions of the k best values along the axis, best first, in the order (value, then lower position
    first; NaN larger than every number, as torch takes it): scan j takes the best element that comes after scan
    j - 1's (none before the first), so no element is taken twice and equal values come out in position order."""
    (x,), axis, largest = ins, layer.attrs["axis"], layer.attrs["largest"]
    shape, k = x.type.get_shape(), out.type.get_shape()[axis]
    element = x.type.element_type
    floating = not isinstance(element, IntegerType)
    kept = [d for a, d in enumerate(shape) if a != axis]
    best_v, best_i = _alloc([1], element), _alloc([1], i64)
    prev_v, prev_i = _alloc([1], element), _alloc([1], i64)
    zero = _idx(0)

    def above(a, b):  # a strictly before b in the order (ties aside)
        strict = _compare("gt" if largest else "lt", a, b)
        if floating:  # NaN is larger than every number: the best of the largest, the worst of the smallest
            nan, number = (a, b) if largest else (b, a)
            nan, number = arith.CmpfOp(nan, nan, "uno").result, arith.CmpfOp(number, number, "ord").result
            strict = arith.OrIOp(strict, arith.AndIOp(nan, number).result).result
        return strict

    def same(a, b):
        eq = _compare("eq", a, b)
        if floating:
            both_nan = arith.AndIOp(arith.CmpfOp(a, a, "uno").result, arith.CmpfOp(b, b, "uno").result).result
            eq = arith.OrIOp(eq, both_nan).result
        return eq

    def row(outer: list[SSAValue]) -> None:
        def at(i):
            return [*outer[:axis], i, *outer[axis:]]

        def scan(j):
            memref.StoreOp.get(_constant_of(i64, -1), best_i, [zero])

            def element_step(i):
                v = memref.LoadOp.get(x, at(i)).res
                position = arith.IndexCastOp(i, i64).result
                pv, pi = memref.LoadOp.get(prev_v, [zero]).res, memref.LoadOp.get(prev_i, [zero]).res
                # after the previous pick: below it, or equal and at a later position (any element for the first)
                after = arith.OrIOp(above(pv, v), arith.AndIOp(same(v, pv), _compare("gt", position, pi)).result
                                    ).result
                after = arith.OrIOp(after, arith.CmpiOp(j, zero, "eq").result).result
                bv, bi = memref.LoadOp.get(best_v, [zero]).res, memref.LoadOp.get(best_i, [zero]).res
                empty = _compare("lt", bi, _constant_of(i64, 0))
                take = arith.AndIOp(after, arith.OrIOp(empty, above(v, bv)).result).result
                memref.StoreOp.get(arith.SelectOp(take, v, bv).result, best_v, [zero])
                memref.StoreOp.get(arith.SelectOp(take, position, bi).result, best_i, [zero])

            _for(_idx(shape[axis]), element_step)
            memref.StoreOp.get(memref.LoadOp.get(best_v, [zero]).res, prev_v, [zero])
            chosen = memref.LoadOp.get(best_i, [zero]).res
            memref.StoreOp.get(chosen, prev_i, [zero])
            memref.StoreOp.get(chosen, out, at(j))

        _for(_idx(k), scan)

    _loop_nest(kept, row)
    _free(best_v, best_i, prev_v, prev_i)


def emit_cumsum(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """acc[.., i, ..] = acc[.., i - 1, ..] + x[.., i, ..] in loops (a running sum is no linalg.generic):
    the loop along the axis encloses those of the later axes, so row i - 1 is complete when row i starts.
    float32 sums run in a float64 buffer, as PyTorch's CPU cumsum accumulates, and are rounded once."""
    (x,), axis = ins, layer.attrs["axis"]
    product = layer.attrs.get("op") == "mul"  # (cumprod: a running product, in float64 likewise)
    shape = out.type.get_shape()
    floating = out.type.element_type == f32  # (float64 sums run in the output itself)
    acc = _alloc(shape, f64) if floating else out
    start = 1 if product else 0
    zero = arith.ConstantOp(FloatAttr(float(start), f64)).result if floating else _constant_of(
        out.type.element_type, start)

    def step(ivs: list[SSAValue]) -> None:
        i = ivs[axis]
        first = arith.CmpiOp(i, _idx(0), "eq").result
        before = list(ivs)
        before[axis] = arith.SelectOp(first, i, arith.SubiOp(i, _idx(1)).result).result
        running = arith.SelectOp(first, zero, memref.LoadOp.get(acc, before).res).result
        value = memref.LoadOp.get(x, ivs).res
        total = (_mulf if product else _addf)(running, arith.ExtFOp(value, f64).result if floating else value)
        memref.StoreOp.get(total, acc, ivs)
        if floating:
            memref.StoreOp.get(arith.TruncFOp(total, f32).result, out, ivs)

    _loop_nest(shape, step)
    if acc is not out:
        _free(acc)


def emit_arg_reduce(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[kept] = the position of the max / min along the axis, in loops over x (a best value per kept position
    in a buffer): position 0 is taken as it is, a later one replaces it when strictly better (or as good, for the
    last on ties); a NaN replaces any number and, for the first, is never replaced (numpy's and torch's)."""
    (x,), axis, last = ins, layer.attrs["axis"], layer.attrs["last"]
    shape = x.type.get_shape()
    best = _alloc(_kept_shape(shape, (axis,)), x.type.element_type)
    floating = not isinstance(x.type.element_type, IntegerType)
    better = {("argmax", False): "gt", ("argmax", True): "ge", ("argmin", False): "lt", ("argmin", True): "le"}[
        layer.attrs["op"], last]

    def step(ivs: list[SSAValue]) -> None:
        i, kept = ivs[axis], [iv for k, iv in enumerate(ivs) if k != axis]
        value, held = memref.LoadOp.get(x, ivs).res, memref.LoadOp.get(best, kept).res
        update = _compare(better, value, held)
        if floating:
            is_nan = arith.CmpfOp(value, value, "uno").result
            # the first NaN wins over numbers and stays; for the last, every later NaN wins too
            wins = is_nan if last else arith.AndIOp(is_nan, arith.CmpfOp(held, held, "ord").result).result
            update = arith.OrIOp(update, wins).result
        update = arith.OrIOp(update, arith.CmpiOp(i, _idx(0), "eq").result).result
        memref.StoreOp.get(arith.SelectOp(update, value, held).result, best, kept)
        position = arith.IndexCastOp(i, i64).result
        memref.StoreOp.get(arith.SelectOp(update, position, memref.LoadOp.get(out, kept).res).result, out, kept)

    _loop_nest(shape, step)
    _free(best)


def _loop_nest(shape, step: Callable[[list[SSAValue]], object]) -> None:
    """``step(ivs)`` inside loops over every index of ``shape`` (outermost first)."""
    def nest(depth: int, ivs: list[SSAValue]) -> None:
        if depth == len(shape):
            step(ivs)
            return
        _for(_idx(shape[depth]), lambda iv: nest(depth + 1, [*ivs, iv]))

    nest(0, [])


def _for(upper: SSAValue, body: Callable[[SSAValue], object]) -> None:
    block = Block(arg_types=[IndexType()])
    with ImplicitBuilder(block):
        body(block.args[0])
        scf.YieldOp()
    scf.ForOp(_idx(0), upper, _idx(1), [], block)


EMITTERS: dict[str, Callable[[Layer, list[SSAValue], SSAValue], None]] = {
    "conv2d": emit_conv2d,
    "grouped_conv2d": emit_grouped_conv2d,
    "concat": emit_concat,
    "pad": emit_pad,
    "matmul": emit_matmul,
    "batch_matmul": emit_batch_matmul,
    "binary": emit_binary,
    "select": emit_select,
    "compare": emit_compare,
    "logical": emit_logical,
    "convert": emit_convert,
    "unary": emit_unary,
    "channel_affine": emit_channel_affine,
    "softmax": emit_softmax,
    "layer_norm": emit_layer_norm,
    "reduce": emit_reduce,
    "pool2d": emit_pool2d,
    "transpose": emit_copy_like,
    "expand": emit_copy_like,
    "slice": emit_copy_like,
    "embedding": emit_embedding,
    "gather": emit_gather, "gather_elements": emit_gather_elements, "take_positions": emit_take_positions,
    "scatter_elements": emit_scatter_elements, "topk": emit_topk,
    "cumsum": emit_cumsum,
    "arg_reduce": emit_arg_reduce,
}
