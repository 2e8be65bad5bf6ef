"""Linalg builders for kernel code: ``matmul(A, B, C)``, ``conv_2d_nchw_fchw(...)``, ...

Each builder creates one xDSL linalg op at the current ``ImplicitBuilder``
insertion point, on memref ``SSAValue``s (buffer semantics: outputs are
written in place, reductions accumulate into the output's initial contents,
as in MLIR). Python numbers are accepted where a scalar is expected and are
materialised as ``arith.constant`` of the element type they combine with.

Statically known shapes and element types are checked here and reported as
``LoomError`` without a location (the kernel frontend adds file:line).
Named ops are used where xDSL 0.74 has them; the rest are ``linalg.generic``
with the indexing maps MLIR's named op of the same name would have.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.dialects.linalg import ops as lops
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap

from loom.core.affine import parse_affine_map as parse_linear_map
from loom.errors import LoomError

__all__ = [
    "matmul", "batch_matmul", "conv_2d_nchw_fchw", "conv_2d_nhwc_hwcf",
    "depthwise_conv_2d_nhwc_hwc", "pooling_nchw_max", "pooling_nchw_sum",
    "pooling_nhwc_max", "pooling_nhwc_sum", "fill", "copy", "add", "sub", "mul",
    "div", "max", "min", "exp", "log", "sqrt", "abs", "neg", "generic", "einsum",
]

# xDSL's marker for a dynamic dimension in a shape (not -1 in xDSL 0.74)
DYNAMIC = DYNAMIC_INDEX


def intrinsic(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a function as a loom intrinsic the kernel frontend may call."""
    fn.__loom_intrinsic__ = True  # type: ignore[attr-defined]
    return fn


# ---------------------------------------------------------------- helpers


def _memref(value: Any, what: str) -> SSAValue:
    if isinstance(value, SSAValue) and isinstance(value.type, MemRefType):
        return value
    got = value.type if isinstance(value, SSAValue) else type(value).__name__
    raise LoomError(f"{what} must be a memref, got {got}")


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())  # type: ignore[union-attr]


def _elt(value: SSAValue) -> Attribute:
    t = value.type
    return t.get_element_type() if isinstance(t, MemRefType | TensorType) else t


def _fmt(shape: Sequence[int]) -> str:
    return "x".join("?" if d == DYNAMIC else str(d) for d in shape) or "scalar"


def _check_rank(fn: str, name: str, value: SSAValue, rank: int) -> None:
    if len(_shape(value)) != rank:
        raise LoomError(
            f"{fn}: {name} must have rank {rank}, got {_fmt(_shape(value))} "
            f"(rank {len(_shape(value))})"
        )


def _check_dims(fn: str, pairs: Sequence[tuple[str, int, str, int]], why: str) -> None:
    """Raise if two statically known sizes that must agree differ."""
    for name_a, a, name_b, b in pairs:
        if a != DYNAMIC and b != DYNAMIC and a != b:
            raise LoomError(f"{fn}: {name_a} is {a} but {name_b} is {b}: {why}")


def _check_same_elt(fn: str, named: Sequence[tuple[str, SSAValue]]) -> Attribute:
    first_name, first = named[0]
    for name, value in named[1:]:
        if _elt(value) != _elt(first):
            raise LoomError(
                f"{fn}: element types differ: {first_name} has {_elt(first)}, "
                f"{name} has {_elt(value)}"
            )
    elt = _elt(first)
    if not isinstance(elt, AnyFloat | IntegerType):
        raise LoomError(f"{fn}: element type {elt} is not a float or integer type")
    return elt


def _check_float(fn: str, elt: Attribute) -> None:
    if not isinstance(elt, AnyFloat):
        raise LoomError(f"{fn}: needs a floating-point element type, got {elt}")


def _scalar(value: Any, elt: Attribute, fn: str, what: str) -> SSAValue:
    """An SSA scalar of type ``elt`` for a python number or an SSA scalar."""
    if isinstance(value, SSAValue):
        if isinstance(value.type, MemRefType | TensorType):
            raise LoomError(f"{fn}: {what} must be a scalar, got {value.type}")
        if value.type != elt:
            raise LoomError(f"{fn}: {what} has type {value.type}, expected {elt}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LoomError(f"{fn}: {what} must be a number or scalar value, got {value!r}")
    if isinstance(elt, AnyFloat):
        return arith.ConstantOp(FloatAttr(float(value), elt)).result
    if isinstance(elt, IntegerType | IndexType):
        if isinstance(value, float) and not value.is_integer():
            raise LoomError(f"{fn}: {what} is {value}, not an integer as {elt} needs")
        return arith.ConstantOp(IntegerAttr(int(value), elt)).result
    raise LoomError(f"{fn}: cannot make a constant of type {elt}")


def _pair(fn: str, name: str, value: Any) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    try:
        a, b = (int(v) for v in value)
    except (TypeError, ValueError):
        raise LoomError(f"{fn}: {name} must be an int or a pair of ints, got {value!r}")
    if a < 1 or b < 1:
        raise LoomError(f"{fn}: {name} must be positive, got ({a}, {b})")
    return a, b


def _dense_i64(values: tuple[int, int]) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), list(values))


def _window_out(in_size: int, window: int, stride: int, dilation: int) -> int:
    """Output size of a valid (unpadded) sliding window."""
    return (in_size - dilation * (window - 1) - 1) // stride + 1


def _check_window(
    fn: str, what: str, in_size: int, window: int, out_size: int, stride: int, dilation: int
) -> None:
    if DYNAMIC in (in_size, window, out_size):
        return
    expected = _window_out(in_size, window, stride, dilation)
    if expected < 1:
        raise LoomError(
            f"{fn}: {what} window {window} (dilation {dilation}) does not fit in "
            f"input size {in_size}"
        )
    if out_size != expected:
        raise LoomError(
            f"{fn}: output {what} is {out_size} but input {in_size}, window {window}, "
            f"stride {stride}, dilation {dilation} give {expected}"
        )


def _generic(
    ins: Sequence[SSAValue],
    outs: Sequence[SSAValue],
    maps: Sequence[AffineMap],
    iterators: Sequence[str],
    body: Callable[..., Any],
) -> lops.GenericOp:
    """Create a linalg.generic whose region is written by ``body(*scalars)``."""
    arg_types = [_elt(v) for v in (*ins, *outs)]
    block = Block(arg_types=arg_types)
    with ImplicitBuilder(block):
        result = body(*block.args)
        results = list(result) if isinstance(result, tuple | list) else [result]
        lops.YieldOp(*results)
    return lops.GenericOp(
        list(ins),
        list(outs),
        Region(block),
        [AffineMapAttr(m) for m in maps],
        [IteratorTypeAttr.parallel() if it == "parallel" else IteratorTypeAttr.reduction()
         for it in iterators],
    )


def _dims(n: int) -> list[AffineExpr]:
    return [AffineDimExpr(i) for i in range(n)]


# ---------------------------------------------------------------- contractions


@intrinsic
def matmul(A: SSAValue, B: SSAValue, C: SSAValue) -> None:
    """C[i, j] += A[i, k] * B[k, j]."""
    fn = "matmul"
    A, B, C = _memref(A, "matmul: A"), _memref(B, "matmul: B"), _memref(C, "matmul: C")
    for name, v in (("A", A), ("B", B), ("C", C)):
        _check_rank(fn, name, v, 2)
    _check_same_elt(fn, [("A", A), ("B", B), ("C", C)])
    (m, k), (k2, n), (cm, cn) = _shape(A), _shape(B), _shape(C)
    if DYNAMIC not in (k, k2) and k != k2:
        raise LoomError(
            f"matmul: A is {_fmt(_shape(A))} but B is {_fmt(_shape(B))}: inner dimensions differ"
        )
    _check_dims(fn, [("C rows", cm, "A rows", m), ("C columns", cn, "B columns", n)],
                "output shape must be rows of A by columns of B")
    lops.MatmulOp([A, B], [C])


@intrinsic
def batch_matmul(A: SSAValue, B: SSAValue, C: SSAValue) -> None:
    """C[b, i, j] += A[b, i, k] * B[b, k, j] (a linalg.generic)."""
    fn = "batch_matmul"
    A, B, C = (_memref(v, f"{fn}: {n}") for v, n in ((A, "A"), (B, "B"), (C, "C")))
    for name, v in (("A", A), ("B", B), ("C", C)):
        _check_rank(fn, name, v, 3)
    elt = _check_same_elt(fn, [("A", A), ("B", B), ("C", C)])
    (ba, m, k), (bb, k2, n), (bc, cm, cn) = _shape(A), _shape(B), _shape(C)
    if DYNAMIC not in (k, k2) and k != k2:
        raise LoomError(
            f"{fn}: A is {_fmt(_shape(A))} but B is {_fmt(_shape(B))}: inner dimensions differ"
        )
    _check_dims(fn, [("A batch", ba, "B batch", bb), ("C batch", bc, "A batch", ba)],
                "batch sizes must agree")
    _check_dims(fn, [("C rows", cm, "A rows", m), ("C columns", cn, "B columns", n)],
                "output shape must be rows of A by columns of B")
    b, i, j, kk = _dims(4)
    maps = [AffineMap(4, 0, (b, i, kk)), AffineMap(4, 0, (b, kk, j)), AffineMap(4, 0, (b, i, j))]
    _generic([A, B], [C], maps, ["parallel"] * 3 + ["reduction"], _mac_body(elt))


def _mac_body(elt: Attribute) -> Callable[..., SSAValue]:
    add, mul = (arith.AddfOp, arith.MulfOp) if isinstance(elt, AnyFloat) else (arith.AddiOp, arith.MuliOp)

    def body(a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
        return add(acc, mul(a, b).result).result

    return body


# ---------------------------------------------------------------- convolutions


def _conv_common(fn: str, I: Any, F: Any, O: Any) -> tuple[SSAValue, SSAValue, SSAValue, Attribute]:
    I, F, O = _memref(I, f"{fn}: input"), _memref(F, f"{fn}: filter"), _memref(O, f"{fn}: output")
    _check_rank(fn, "input", I, 4)
    _check_rank(fn, "output", O, 4)
    elt = _check_same_elt(fn, [("input", I), ("filter", F), ("output", O)])
    return I, F, O, elt


@intrinsic
def conv_2d_nchw_fchw(I, F, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, f, oh, ow] += I[n, c, oh*sh + kh*dh, ow*sw + kw*dw] * F[f, c, kh, kw]."""
    fn = "conv_2d_nchw_fchw"
    I, F, O, _ = _conv_common(fn, I, F, O)
    _check_rank(fn, "filter", F, 4)
    s, d = _pair(fn, "strides", strides), _pair(fn, "dilations", dilations)
    (n, c, h, w), (f, fc, kh, kw), (on, of, oh, ow) = _shape(I), _shape(F), _shape(O)
    _check_dims(fn, [("output batch", on, "input batch", n)], "batch sizes must agree")
    _check_dims(fn, [("filter channels", fc, "input channels", c)], "channel counts must agree")
    _check_dims(fn, [("output channels", of, "filter count", f)], "output channels must equal filter count")
    _check_window(fn, "height", h, kh, oh, s[0], d[0])
    _check_window(fn, "width", w, kw, ow, s[1], d[1])
    lops.Conv2DNchwFchwOp([I, F], [O], strides=_dense_i64(s), dilations=_dense_i64(d))


@intrinsic
def conv_2d_nhwc_hwcf(I, F, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, oh, ow, f] += I[n, oh*sh + kh*dh, ow*sw + kw*dw, c] * F[kh, kw, c, f]."""
    fn = "conv_2d_nhwc_hwcf"
    I, F, O, _ = _conv_common(fn, I, F, O)
    _check_rank(fn, "filter", F, 4)
    s, d = _pair(fn, "strides", strides), _pair(fn, "dilations", dilations)
    (n, h, w, c), (kh, kw, fc, f), (on, oh, ow, of) = _shape(I), _shape(F), _shape(O)
    _check_dims(fn, [("output batch", on, "input batch", n)], "batch sizes must agree")
    _check_dims(fn, [("filter channels", fc, "input channels", c)], "channel counts must agree")
    _check_dims(fn, [("output channels", of, "filter count", f)], "output channels must equal filter count")
    _check_window(fn, "height", h, kh, oh, s[0], d[0])
    _check_window(fn, "width", w, kw, ow, s[1], d[1])
    lops.Conv2DNhwc_HwcfOp([I, F], [O], strides=_dense_i64(s), dilations=_dense_i64(d))


@intrinsic
def depthwise_conv_2d_nhwc_hwc(I, F, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, oh, ow, c] += I[n, oh*sh + kh*dh, ow*sw + kw*dw, c] * F[kh, kw, c] (generic)."""
    fn = "depthwise_conv_2d_nhwc_hwc"
    I, F, O, elt = _conv_common(fn, I, F, O)
    _check_rank(fn, "filter", F, 3)
    s, d = _pair(fn, "strides", strides), _pair(fn, "dilations", dilations)
    (n, h, w, c), (kh, kw, fc), (on, oh, ow, oc) = _shape(I), _shape(F), _shape(O)
    _check_dims(fn, [("output batch", on, "input batch", n)], "batch sizes must agree")
    _check_dims(fn, [("filter channels", fc, "input channels", c),
                     ("output channels", oc, "input channels", c)], "channel counts must agree")
    _check_window(fn, "height", h, kh, oh, s[0], d[0])
    _check_window(fn, "width", w, kw, ow, s[1], d[1])
    N, OH, OW, C, KH, KW = _dims(6)
    maps = [
        AffineMap(6, 0, (N, OH * s[0] + KH * d[0], OW * s[1] + KW * d[1], C)),
        AffineMap(6, 0, (KH, KW, C)),
        AffineMap(6, 0, (N, OH, OW, C)),
    ]
    _generic([I, F], [O], maps, ["parallel"] * 4 + ["reduction"] * 2, _mac_body(elt))


# ---------------------------------------------------------------- pooling


def _window_buffer(fn: str, window_shape: Any, elt: Attribute) -> SSAValue:
    """Pooling ops take the window as a shape-only operand (never read)."""
    if isinstance(window_shape, SSAValue):
        w = _memref(window_shape, f"{fn}: window_shape")
        if len(_shape(w)) != 2:
            raise LoomError(f"{fn}: window must have rank 2, got {_fmt(_shape(w))}")
        return w
    kh, kw = _pair(fn, "window_shape", window_shape)
    return memref.AllocaOp.get(elt, shape=[kh, kw]).memref


def _pooling(fn: str, layout: str, kind: str, I, window_shape, O, strides, dilations) -> None:
    I, O = _memref(I, f"{fn}: input"), _memref(O, f"{fn}: output")
    _check_rank(fn, "input", I, 4)
    _check_rank(fn, "output", O, 4)
    elt = _check_same_elt(fn, [("input", I), ("output", O)])
    s, d = _pair(fn, "strides", strides), _pair(fn, "dilations", dilations)
    W = _window_buffer(fn, window_shape, elt)
    kh, kw = _shape(W)
    if layout == "nchw":
        (n, c, h, w), (on, oc, oh, ow) = _shape(I), _shape(O)
    else:
        (n, h, w, c), (on, oh, ow, oc) = _shape(I), _shape(O)
    _check_dims(fn, [("output batch", on, "input batch", n),
                     ("output channels", oc, "input channels", c)], "output must keep batch and channels")
    _check_window(fn, "height", h, kh, oh, s[0], d[0])
    _check_window(fn, "width", w, kw, ow, s[1], d[1])
    if layout == "nchw" and kind == "max":
        lops.PoolingNchwMaxOp([I, W], [O], strides=_dense_i64(s), dilations=_dense_i64(d))
        return
    if layout == "nchw":
        N, C, OH, OW, KH, KW = _dims(6)
        in_map = (N, C, OH * s[0] + KH * d[0], OW * s[1] + KW * d[1])
        out_map = (N, C, OH, OW)
    else:
        N, OH, OW, C, KH, KW = _dims(6)
        in_map = (N, OH * s[0] + KH * d[0], OW * s[1] + KW * d[1], C)
        out_map = (N, OH, OW, C)
    maps = [AffineMap(6, 0, in_map), AffineMap(6, 0, (KH, KW)), AffineMap(6, 0, out_map)]
    combine = _combiner(kind, elt)
    _generic([I, W], [O], maps, ["parallel"] * 4 + ["reduction"] * 2,
             lambda x, _window, acc: combine(acc, x))


def _combiner(kind: str, elt: Attribute) -> Callable[[SSAValue, SSAValue], SSAValue]:
    is_float = isinstance(elt, AnyFloat)
    op = {
        "sum": arith.AddfOp if is_float else arith.AddiOp,
        "max": arith.MaximumfOp if is_float else arith.MaxSIOp,
    }[kind]
    return lambda a, b: op(a, b).result


@intrinsic
def pooling_nchw_max(I, window_shape, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, c, oh, ow] = max(O[...], I[n, c, oh*sh + kh*dh, ow*sw + kw*dw]) over the window.

    ``window_shape`` is ``(kh, kw)`` (or a rank-2 memref giving it); fill O with
    the identity (-inf / most negative) first, as with MLIR's pooling ops."""
    _pooling("pooling_nchw_max", "nchw", "max", I, window_shape, O, strides, dilations)


@intrinsic
def pooling_nchw_sum(I, window_shape, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, c, oh, ow] += sum of I over the window (generic)."""
    _pooling("pooling_nchw_sum", "nchw", "sum", I, window_shape, O, strides, dilations)


@intrinsic
def pooling_nhwc_max(I, window_shape, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, oh, ow, c] = max(O[...], I over the window) (generic)."""
    _pooling("pooling_nhwc_max", "nhwc", "max", I, window_shape, O, strides, dilations)


@intrinsic
def pooling_nhwc_sum(I, window_shape, O, strides=(1, 1), dilations=(1, 1)) -> None:
    """O[n, oh, ow, c] += sum of I over the window (generic)."""
    _pooling("pooling_nhwc_sum", "nhwc", "sum", I, window_shape, O, strides, dilations)


# ---------------------------------------------------------------- fill / copy


@intrinsic
def fill(value: Any, out: SSAValue) -> None:
    """out[...] = value (a python number or an SSA scalar of out's element type)."""
    out = _memref(out, "fill: out")
    elt = _check_same_elt("fill", [("out", out)])
    lops.FillOp([_scalar(value, elt, "fill", "value")], [out], res=())


@intrinsic
def copy(src: SSAValue, dst: SSAValue) -> None:
    """dst[...] = src[...]; shapes and element types must match."""
    src, dst = _memref(src, "copy: src"), _memref(dst, "copy: dst")
    _same_shape("copy", [("src", src), ("dst", dst)])
    _check_same_elt("copy", [("src", src), ("dst", dst)])
    lops.CopyOp([src], [dst], res=())


def _same_shape(fn: str, named: Sequence[tuple[str, SSAValue]]) -> None:
    first_name, first = named[0]
    for name, value in named[1:]:
        a, b = _shape(first), _shape(value)
        if len(a) != len(b) or any(x != y and DYNAMIC not in (x, y) for x, y in zip(a, b)):
            raise LoomError(
                f"{fn}: {first_name} is {_fmt(a)} but {name} is {_fmt(b)}: shapes must match"
            )


# ---------------------------------------------------------------- element-wise


# Memref results are never created: the element-wise constructors would
# otherwise infer one result per output, which only tensors may have.
_BINARY_NAMED = {"add": lops.AddOp, "sub": lops.SubOp, "mul": lops.MulOp,
                 "max": lops.MaxOp, "min": lops.MinOp}


def _binary_scalar_op(name: str, elt: Attribute) -> Callable[[SSAValue, SSAValue], SSAValue]:
    f = isinstance(elt, AnyFloat)
    op = {
        "add": arith.AddfOp if f else arith.AddiOp,
        "sub": arith.SubfOp if f else arith.SubiOp,
        "mul": arith.MulfOp if f else arith.MuliOp,
        "div": arith.DivfOp if f else arith.DivSIOp,
        "max": arith.MaximumfOp if f else arith.MaxSIOp,
        "min": arith.MinimumfOp if f else arith.MinSIOp,
    }[name]
    return lambda a, b: op(a, b).result


def _binary(name: str, a: Any, b: Any, out: Any) -> None:
    out = _memref(out, f"{name}: out")
    elt = _check_same_elt(name, [("out", out)])
    rank = len(_shape(out))
    operands: list[SSAValue] = []
    for what, v in (("a", a), ("b", b)):
        if isinstance(v, SSAValue) and isinstance(v.type, MemRefType):
            _same_shape(name, [("out", out), (what, v)])
            _check_same_elt(name, [("out", out), (what, v)])
            operands.append(v)
        else:
            operands.append(_scalar(v, elt, name, what))
    all_memrefs = all(isinstance(v.type, MemRefType) for v in operands)
    if name in _BINARY_NAMED and all_memrefs:
        _BINARY_NAMED[name](operands, [out], res=())
        return
    ident = AffineMap.identity(rank)
    maps = [ident if isinstance(v.type, MemRefType) else AffineMap(rank, 0, ()) for v in operands]
    op = _binary_scalar_op(name, elt)
    _generic(operands, [out], [*maps, ident], ["parallel"] * rank, lambda x, y, _o: op(x, y))


def _unary(name: str, a: Any, out: Any) -> None:
    out = _memref(out, f"{name}: out")
    a = _memref(a, f"{name}: a")
    _same_shape(name, [("a", a), ("out", out)])
    elt = _check_same_elt(name, [("a", a), ("out", out)])
    named = {"exp": lops.ExpOp, "log": lops.LogOp, "sqrt": lops.SqrtOp}
    if name in named:
        _check_float(name, elt)
        named[name]([a], [out], res=())
        return
    rank = len(_shape(out))
    ident = AffineMap.identity(rank)
    f = isinstance(elt, AnyFloat)

    def body(x: SSAValue, _o: SSAValue) -> SSAValue:
        if name == "neg":
            if f:
                return arith.NegfOp(x).result
            return arith.SubiOp(arith.ConstantOp(IntegerAttr(0, elt)).result, x).result
        if f:  # abs
            return math.AbsFOp(x).result
        return math.AbsIOp(x).result

    _generic([a], [out], [ident, ident], ["parallel"] * rank, body)


@intrinsic
def add(a, b, out) -> None:
    """out = a + b (memrefs of out's shape, or scalars broadcast)."""
    _binary("add", a, b, out)


@intrinsic
def sub(a, b, out) -> None:
    """out = a - b."""
    _binary("sub", a, b, out)


@intrinsic
def mul(a, b, out) -> None:
    """out = a * b."""
    _binary("mul", a, b, out)


@intrinsic
def div(a, b, out) -> None:
    """out = a / b (divf, or signed divsi for integers)."""
    _binary("div", a, b, out)


@intrinsic
def max(a, b, out) -> None:  # noqa: A001 - linalg's name
    """out = max(a, b) (maximumf / maxsi)."""
    _binary("max", a, b, out)


@intrinsic
def min(a, b, out) -> None:  # noqa: A001 - linalg's name
    """out = min(a, b) (minimumf / minsi)."""
    _binary("min", a, b, out)


@intrinsic
def exp(a, out) -> None:
    """out = exp(a) (float)."""
    _unary("exp", a, out)


@intrinsic
def log(a, out) -> None:
    """out = log(a) (float)."""
    _unary("log", a, out)


@intrinsic
def sqrt(a, out) -> None:
    """out = sqrt(a) (float)."""
    _unary("sqrt", a, out)


@intrinsic
def abs(a, out) -> None:  # noqa: A001 - linalg's name
    """out = |a|."""
    _unary("abs", a, out)


@intrinsic
def neg(a, out) -> None:
    """out = -a."""
    _unary("neg", a, out)


# ---------------------------------------------------------------- generic / einsum


def parse_affine_map(text: str) -> AffineMap:
    """Parse ``"(i, j, k) -> (i, 2 * k + 1)"`` (any dim names, linear results) with the
    core parser (``loom.core.affine``) into an xDSL AffineMap."""
    try:
        return parse_linear_map(text).to_xdsl()
    except LoomError as e:
        raise LoomError(f"bad indexing map {text!r}: {e.message}", column=e.column) from None


@intrinsic
def generic(ins, outs, indexing_maps, iterator_types, body) -> None:
    """A linalg.generic over memrefs (and scalar ``ins`` with ``"(...) -> ()"`` maps).

    ``indexing_maps``: one per operand, strings like ``"(i, j, k) -> (i, k)"`` or
    ``AffineMap``s; ``iterator_types``: ``"parallel"`` / ``"reduction"`` per loop;
    ``body(*scalars)`` emits the scalar computation and returns one value per out.
    """
    fn = "generic"
    ins = list(ins) if isinstance(ins, list | tuple) else [ins]
    outs = list(outs) if isinstance(outs, list | tuple) else [outs]
    if not outs:
        raise LoomError(f"{fn}: needs at least one output")
    outs = [_memref(o, f"{fn}: output #{i}") for i, o in enumerate(outs)]
    out_elt = _elt(outs[0])
    operands = [
        v if isinstance(v, SSAValue) else _scalar(v, out_elt, fn, f"input #{i}")
        for i, v in enumerate(ins)
    ]
    for i, v in enumerate(operands):
        if isinstance(v.type, TensorType):
            raise LoomError(f"{fn}: input #{i} is a tensor ({v.type}); loom kernels use memrefs")
    if len(indexing_maps) != len(operands) + len(outs):
        raise LoomError(
            f"{fn}: got {len(indexing_maps)} indexing maps for "
            f"{len(operands) + len(outs)} operands (one map per input and output)"
        )
    maps = [m if isinstance(m, AffineMap) else parse_affine_map(m) for m in indexing_maps]
    iterators = list(iterator_types)
    for it in iterators:
        if it not in ("parallel", "reduction"):
            raise LoomError(f"{fn}: iterator type {it!r} is not 'parallel' or 'reduction'")
    for index, (value, m) in enumerate(zip([*operands, *outs], maps)):
        if m.num_dims != len(iterators):
            raise LoomError(
                f"{fn}: indexing map #{index} {m} has {m.num_dims} dims but there are "
                f"{len(iterators)} iterator types"
            )
        if m.num_symbols:
            raise LoomError(f"{fn}: indexing map #{index} {m} uses symbols")
        rank = len(_shape(value)) if isinstance(value.type, MemRefType) else 0
        if len(m.results) != rank:
            raise LoomError(
                f"{fn}: indexing map #{index} {m} has {len(m.results)} results but "
                f"operand #{index} has rank {rank}"
            )
    arity = len(operands) + len(outs)

    def checked_body(*args: SSAValue) -> Any:
        result = body(*args[:arity])
        results = list(result) if isinstance(result, tuple | list) else [result]
        if len(results) != len(outs):
            raise LoomError(f"{fn}: body returned {len(results)} values for {len(outs)} outputs")
        for i, (r, o) in enumerate(zip(results, outs)):
            if not isinstance(r, SSAValue) or r.type != _elt(o):
                got = r.type if isinstance(r, SSAValue) else repr(r)
                raise LoomError(f"{fn}: body result #{i} is {got}, output #{i} holds {_elt(o)}")
        return results

    op = _generic(operands, outs, maps, iterators, checked_body)
    try:
        op.verify_()  # linalg's own rules (maps vs ranks and shapes); not the enclosing block
    except Exception as e:  # the verifier's message names the failed rule
        if op.parent is not None:
            op.detach()
        op.erase()
        raise LoomError(f"{fn}: invalid linalg.generic: {e}") from None


_EINSUM_TERM = re.compile(r"^[a-zA-Z]*$")


@intrinsic
def einsum(spec: str, *inputs, out) -> None:
    """``einsum("ik,kj->ij", A, B, out=C)``: out[...] += product of inputs,
    summed over the indices that do not appear in the output (a linalg.generic)."""
    fn = f"einsum({spec!r})"
    if not isinstance(spec, str) or spec.count("->") != 1:
        raise LoomError(f"{fn}: spec must have the form 'ab,bc->ac'")
    lhs, rhs = (part.replace(" ", "") for part in spec.split("->"))
    terms = lhs.split(",")
    if not all(_EINSUM_TERM.match(t) for t in [*terms, rhs]):
        raise LoomError(f"{fn}: indices must be letters")
    if len(terms) != len(inputs):
        raise LoomError(f"{fn}: spec names {len(terms)} inputs but {len(inputs)} were given")
    if len(set(rhs)) != len(rhs):
        raise LoomError(f"{fn}: output index repeated in {rhs!r}")
    out = _memref(out, f"{fn}: out")
    named = [(f"input #{i}", _memref(v, f"{fn}: input #{i}")) for i, v in enumerate(inputs)]
    elt = _check_same_elt(fn, [*named, ("out", out)])
    sizes: dict[str, tuple[int, str]] = {}
    for (what, value), term in [*zip(named, terms), (("out", out), rhs)]:
        shape = _shape(value)
        if len(shape) != len(term):
            raise LoomError(f"{fn}: {what} has rank {len(shape)} but {term!r} has {len(term)} indices")
        for letter, size in zip(term, shape):
            if letter not in sizes or sizes[letter][0] == DYNAMIC:
                sizes[letter] = (size, what)
            elif size != DYNAMIC and sizes[letter][0] != size:
                raise LoomError(
                    f"{fn}: index {letter!r} is {sizes[letter][0]} in {sizes[letter][1]} "
                    f"but {size} in {what}"
                )
    for letter in rhs:
        if letter not in "".join(terms):
            raise LoomError(f"{fn}: output index {letter!r} does not appear in any input")
    reduced = [ch for ch in dict.fromkeys("".join(terms)) if ch not in rhs]
    order = list(rhs) + reduced
    pos = {ch: i for i, ch in enumerate(order)}
    dims = _dims(len(order))
    maps = [AffineMap(len(order), 0, tuple(dims[pos[ch]] for ch in t)) for t in [*terms, rhs]]
    iterators = ["parallel"] * len(rhs) + ["reduction"] * len(reduced)
    is_float = isinstance(elt, AnyFloat)
    mul_op, add_op = (arith.MulfOp, arith.AddfOp) if is_float else (arith.MuliOp, arith.AddiOp)

    def body(*args: SSAValue) -> SSAValue:
        *xs, acc = args
        prod = xs[0]
        for x in xs[1:]:
            prod = mul_op(prod, x).result
        return add_op(acc, prod).result

    _generic([v for _, v in named], [out], maps, iterators, body)


def op_module(name: str, shapes: Sequence[Sequence[int]], element: Attribute,
              body: Callable[..., Any]):
    """A module with one ``func.func @name`` over static memrefs of ``shapes`` whose body is
    ``body(*arguments)``, e.g. ``op_module("mm", [(4, 8), (8, 2), (4, 2)], i32, matmul)``."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import MemRefType, ModuleOp

    f = func.FuncOp(name, ([MemRefType(element, list(s)) for s in shapes], []))
    with ImplicitBuilder(f.body) as args:
        body(*args)
        func.ReturnOp()
    return ModuleOp([f])
