"""Reducing layers: softmax, layer norm, reductions over axes and 2-d pooling."""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from loom import linalg
from loom.models.graph import Layer
from loom.models.lowering.ir import (add, alloc, const_like, copy_at, dim_exprs, divide, elementwise, fill_for,
                                     float_const, free, identity_map, kept_shape, maximum, minimum, mul, pad_buffer,
                                     reduce_into, sub)


def _stat_map(rank: int, axes: Sequence[int]) -> AffineMap:
    d = dim_exprs(rank)
    return AffineMap(rank, 0, tuple(d[k] for k in range(rank) if k not in axes))


def emit_softmax(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    (x,), axis = ins, layer.attrs["axis"]
    shape = x.type.get_shape()
    rank, axes = len(shape), (axis,)
    element = x.type.element_type
    top, total = alloc(kept_shape(shape, axes), element), alloc(kept_shape(shape, axes), element)
    linalg.fill(float("-inf"), top)
    reduce_into(x, top, axes, maximum)  # subtracting the maximum keeps exp in range
    linalg.fill(0.0, total)
    reduce_into(x, total, axes, add, lambda v, m: math.ExpOp(sub(v, m)).result, extra=[top])
    stat, ident = _stat_map(rank, axes), identity_map(rank)
    if layer.attrs["log"]:
        body = lambda v, m, s, _o: sub(sub(v, m), math.LogOp(s).result)  # noqa: E731
    else:
        body = lambda v, m, s, _o: divide(math.ExpOp(sub(v, m)).result, s)  # noqa: E731
    linalg.generic([x, top, total], [out], [ident, stat, stat, ident], ["parallel"] * rank, body)
    free(top, total)


def emit_layer_norm(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    x, params = ins[0], ins[1:]
    shape = x.type.get_shape()
    rank, k = len(shape), layer.attrs["normalized"]
    axes = tuple(range(rank - k, rank))
    inv_count = 1.0 / pymath.prod(shape[rank - k:])
    element = x.type.element_type
    total, sq = alloc(kept_shape(shape, axes), element), alloc(kept_shape(shape, axes), element)
    linalg.fill(0.0, total)
    reduce_into(x, total, axes, add)
    linalg.fill(0.0, sq)  # variance from the centred values: no cancellation as with E[x^2] - E[x]^2

    def centred_square(v, s):
        c = sub(v, mul(s, float_const(inv_count, element)))
        return mul(c, c)

    reduce_into(x, sq, axes, add, centred_square, extra=[total])
    stat, ident = _stat_map(rank, axes), identity_map(rank)
    d = dim_exprs(rank)
    tail = AffineMap(rank, 0, tuple(d[rank - k:]))
    eps = layer.attrs["eps"]

    def body(v, s, q, *rest):
        rest = rest[:-1]
        norm = mul(sub(v, mul(s, float_const(inv_count, element))),
                     math.RsqrtOp(add(mul(q, float_const(inv_count, element)), float_const(eps, element))).result)
        if layer.attrs["weight"]:
            norm, rest = mul(norm, rest[0]), rest[1:]
        if layer.attrs["bias"]:
            norm = add(norm, rest[0])
        return norm

    linalg.generic([x, total, sq, *params], [out], [ident, stat, stat, *([tail] * len(params)), ident],
                   ["parallel"] * rank, body)
    free(total, sq)


_REDUCE_COMBINE = {"sum": add, "mean": add, "max": maximum, "min": minimum, "prod": mul,
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
    kept = kept_shape(shape, axes)
    acc = alloc(kept, out.type.element_type) if layer.attrs["keepdim"] and len(axes) else out
    linalg.fill(fill_for(acc, _reduce_init(op, layer.output.dtype)), acc)
    reduce_into(x, acc, axes, _REDUCE_COMBINE[op])
    scale = 1.0 / pymath.prod(shape[k] for k in axes) if op == "mean" else 1.0
    if acc is not out:  # keepdim: the same values with unit dims put back
        out_rank = len(shape)
        d = dim_exprs(out_rank)
        acc_map = AffineMap(out_rank, 0, tuple(d[k] for k in range(out_rank) if k not in axes))
        linalg.generic([acc], [out], [acc_map, identity_map(out_rank)], ["parallel"] * out_rank,
                       lambda v, _o: mul(v, const_like(v, scale)) if scale != 1.0 else v)
        free(acc)
    elif scale != 1.0:
        rank = len(kept)
        linalg.generic([out], [out], [identity_map(rank)] * 2, ["parallel"] * rank,
                       lambda v, _o: mul(v, const_like(v, scale)))


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
    src = pad_buffer(x, (ph, pw), after, identity) if any((ph, pw, *after)) else x
    linalg.fill(identity, out)
    if kind == "max":
        linalg.pooling_nchw_max(src, (kh, kw), out, strides=(sh, sw), dilations=(dh, dw))
    else:
        linalg.pooling_nchw_sum(src, (kh, kw), out, strides=(sh, sw), dilations=(dh, dw))
        _average(out, (h, w), (kh, kw), (sh, sw), (ph, pw), after, (dh, dw), a["count_include_pad"])
    if src is not x:
        free(src)


def _average(out: SSAValue, size, kernel, stride, before, after, dilation, include_pad: bool) -> None:
    """Divide window sums by the number of elements each window covers: the window size when no
    window reaches past the counted region, else counts pooled from a buffer of ones (PyTorch/ONNX
    count the padding but not ceil_mode's overhang when ``include_pad``)."""
    (h, w), (ph, pw) = size, before
    if not any((*before, *after)) or (include_pad and after == before):
        linalg.generic([out], [out], [identity_map(4)] * 2, ["parallel"] * 4,
                       lambda v, _o: mul(v, const_like(v, 1.0 / (kernel[0] * kernel[1]))))
        return
    counted = (h + 2 * ph, w + 2 * pw) if include_pad else (h, w)
    offset = (0, 0) if include_pad else (ph, pw)
    element = out.type.element_type
    ones = alloc([1, 1, h + ph + after[0], w + pw + after[1]], element)
    linalg.fill(0.0, ones)
    region = alloc([1, 1, *counted], element)
    linalg.fill(1.0, region)
    copy_at(region, ones, [0, 0, *offset])
    counts = alloc([1, 1, *out.type.get_shape()[2:]], element)
    linalg.fill(0.0, counts)
    linalg.pooling_nchw_sum(ones, kernel, counts, strides=stride, dilations=dilation)
    elementwise([out, counts], out, divide)
    free(ones, region, counts)
