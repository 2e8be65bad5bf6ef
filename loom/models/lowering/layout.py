"""Layout layers that copy: concatenation, padding, and transposes / broadcasts / slices as one strided copy."""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from loom import linalg
from loom.models.graph import Layer
from loom.models.lowering.ir import broadcast_map, copy_at, dim_exprs, fill_for, identity_map


def emit_concat(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    rank, axis, offset = len(out.type.get_shape()), layer.attrs["axis"], 0
    for x in ins:
        copy_at(x, out, [offset if k == axis else 0 for k in range(rank)])
        offset += x.type.get_shape()[axis]


def emit_pad(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    linalg.fill(fill_for(out, layer.attrs["value"]), out)
    copy_at(ins[0], out, layer.attrs["before"])


def emit_copy_like(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """transpose / expand / slice: out[...] = x[index map of the layer]."""
    (x,), out_shape = ins, out.type.get_shape()
    rank = len(out_shape)
    d = dim_exprs(rank)
    if layer.kind == "transpose":
        perm = layer.attrs["perm"]
        in_map = AffineMap(rank, 0, tuple(d[perm.index(j)] for j in range(rank)))
    elif layer.kind == "expand":
        in_map = broadcast_map(x.type.get_shape(), out_shape)
    else:  # slice: a strided subview of x, copied (an index map d*1+0 would not verify)
        axis, start, step = layer.attrs["axis"], layer.attrs["start"], layer.attrs["step"]
        x = memref.SubviewOp.from_static_parameters(
            x, x.type, [start if k == axis else 0 for k in range(rank)], list(out_shape),
            [step if k == axis else 1 for k in range(rank)]).result
        in_map = identity_map(rank)
    linalg.generic([x], [out], [in_map, identity_map(rank)], ["parallel"] * rank, lambda v, _o: v)
