"""Convolutions and matrix products: ``linalg.generic``s with the named ops' indexing maps, reduction loops
innermost over contiguous data."""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from loom import linalg
from loom.models.graph import Layer
from loom.models.lowering.ir import add, dim_exprs, elementwise, fill_for, free, identity_map, mul, pad_buffer


def emit_conv2d(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    x, w, *bias = ins
    ph, pw = layer.attrs["padding"]
    src = pad_buffer(x, (ph, pw), (ph, pw), 0.0) if ph or pw else x
    if bias:  # out[n, f, h, w] = bias[f]
        d = dim_exprs(4)
        linalg.generic([bias[0]], [out], [AffineMap(4, 0, (d[1],)), identity_map(4)], ["parallel"] * 4,
                       lambda b, _o: b)
    else:
        linalg.fill(fill_for(out, 0.0), out)
    (sh, sw), (dh, dw) = layer.attrs["stride"], layer.attrs["dilation"]
    # linalg.conv_2d_nchw_fchw's maps, loops ordered (f, n, c, kh, kw, oh, ow): the outer loop owns
    # output channels (one OpenMP thread each), the inner one walks rows contiguously
    f, n, c, kh, kw, oh, ow = dim_exprs(7)
    maps = [AffineMap(7, 0, (n, c, oh * sh + kh * dh, ow * sw + kw * dw)), AffineMap(7, 0, (f, c, kh, kw)),
            AffineMap(7, 0, (n, f, oh, ow))]
    linalg.generic([src, w], [out], maps, ["parallel", "parallel"] + ["reduction"] * 3 + ["parallel"] * 2,
                   _mac)
    if src is not x:
        free(src)


def emit_grouped_conv2d(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """O[n, g, f, oh, ow] += I[n, g, c, oh*sh + kh*dh, ow*sw + kw*dw] * W[g, f, c, kh, kw]."""
    x, w, *bias = ins
    ph, pw = layer.attrs["padding"]
    src = pad_buffer(x, (ph, pw), (ph, pw), 0.0) if ph or pw else x
    g, n, f, c, kh, kw, oh, ow = dim_exprs(8)  # loops: groups outermost, output rows innermost
    if bias:
        linalg.generic([bias[0]], [out], [AffineMap(5, 0, (AffineDimExpr(1), AffineDimExpr(2))), identity_map(5)],
                       ["parallel"] * 5, lambda v, _o: v)
    else:
        linalg.fill(fill_for(out, 0.0), out)
    (sh, sw), (dh, dw) = layer.attrs["stride"], layer.attrs["dilation"]
    maps = [AffineMap(8, 0, (n, g, c, oh * sh + kh * dh, ow * sw + kw * dw)), AffineMap(8, 0, (g, f, c, kh, kw)),
            AffineMap(8, 0, (n, g, f, oh, ow))]
    linalg.generic([src, w], [out], maps, ["parallel"] * 3 + ["reduction"] * 3 + ["parallel"] * 2, _mac)
    if src is not x:
        free(src)


def _mac(a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
    return add(acc, mul(a, b))


def emit_matmul(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    a, b, *bias = ins
    if bias:
        elementwise([bias[0]], out, lambda v: v)
    else:
        linalg.fill(fill_for(out, 0.0), out)
    # linalg.matmul's maps with loops (i, k, j): the innermost loop runs along rows of B and C
    i, k, j = dim_exprs(3)
    maps = [AffineMap(3, 0, (i, k)), AffineMap(3, 0, (k, j)), AffineMap(3, 0, (i, j))]
    linalg.generic([a, b], [out], maps, ["parallel", "reduction", "parallel"], _mac)


def emit_batch_matmul(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    linalg.fill(fill_for(out, 0.0), out)
    b, i, k, j = dim_exprs(4)
    maps = [AffineMap(4, 0, (b, i, k)), AffineMap(4, 0, (b, k, j)), AffineMap(4, 0, (b, i, j))]
    linalg.generic(ins, [out], maps, ["parallel", "parallel", "reduction", "parallel"], _mac)
