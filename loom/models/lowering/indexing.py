"""Layers that index by positions known when the model runs: embedding, gathers, scatter, top-k, running sums
and arg-reductions, as ``scf`` loop nests."""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerType, f32, f64, i64
from xdsl.ir import SSAValue

from loom.models.graph import Layer
from loom.models.lowering.ir import (add, alloc, compare, constant_of, copy_at, for_range, free, index_const,
                                     kept_shape, loop_nest, maximum, minimum, mul)


def emit_embedding(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[p..., f] = table[clamp(ids[p...]), f]: loops (a gather is not an affine access). The index
    is clamped so the C stays in bounds; the runtime refuses out-of-range ids before calling."""
    table, ids = ins
    rows, features = table.type.get_shape()
    positions = ids.type.get_shape()
    zero = index_const(0)

    def step(ivs: list[SSAValue]) -> None:
        raw = arith.IndexCastOp(memref.LoadOp.get(ids, ivs).res, IndexType()).result
        row = arith.MinSIOp(arith.MaxSIOp(raw, zero).result, index_const(rows - 1)).result
        for_range(index_const(features),
                  lambda f: memref.StoreOp.get(memref.LoadOp.get(table, [row, f]).res, out, [*ivs, f]))

    loop_nest(positions, step)


def emit_gather(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[..., i, ...] = x[..., positions[i], ...] along the layer's axis, in loops (a gather is not an affine
    access); the positions are a constant the import checked to lie in range."""
    x, positions = ins
    axis, shape = layer.attrs["axis"], out.type.get_shape()

    def step(ivs: list[SSAValue]) -> None:
        at = arith.IndexCastOp(memref.LoadOp.get(positions, [ivs[axis]]).res, IndexType()).result
        source = [at if k == axis else iv for k, iv in enumerate(ivs)]
        memref.StoreOp.get(memref.LoadOp.get(x, source).res, out, ivs)

    loop_nest(shape, step)


def _position(idx: SSAValue, ivs: list[SSAValue], size: int) -> SSAValue:
    """idx[ivs] as an index into an axis of ``size``: a negative one counted from the end, then clamped so the C
    stays in bounds (the runtime refuses positions out of range before calling)."""
    raw = arith.IndexCastOp(memref.LoadOp.get(idx, ivs).res, IndexType()).result
    raw = arith.SelectOp(arith.CmpiOp(raw, index_const(0), "slt").result, arith.AddiOp(raw, index_const(size)).result,
                         raw).result
    return arith.MinSIOp(arith.MaxSIOp(raw, index_const(0)).result, index_const(size - 1)).result


def emit_gather_elements(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[i...] = x[i... with i[axis] = idx[i...]], in loops over out."""
    (x, idx), axis = ins, layer.attrs["axis"]
    size = x.type.get_shape()[axis]

    def step(ivs: list[SSAValue]) -> None:
        at = _position(idx, ivs, size)
        memref.StoreOp.get(memref.LoadOp.get(x, [at if k == axis else iv for k, iv in enumerate(ivs)]).res, out, ivs)

    loop_nest(out.type.get_shape(), step)


def emit_take_positions(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[pre..., j..., post...] = x[pre..., idx[j...], post...], in loops over out."""
    (x, idx), axis = ins, layer.attrs["axis"]
    size, rank = x.type.get_shape()[axis], len(idx.type.get_shape())

    def step(ivs: list[SSAValue]) -> None:
        at = _position(idx, ivs[axis:axis + rank], size)
        memref.StoreOp.get(memref.LoadOp.get(x, [*ivs[:axis], at, *ivs[axis + rank:]]).res, out, ivs)

    loop_nest(out.type.get_shape(), step)


def emit_scatter_elements(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out = x, then for each position of idx (in order) out[i... with i[axis] = idx[i...]] = src[i...], or combined
    with the value there by the reduction."""
    (x, idx, src), axis, reduction = ins, layer.attrs["axis"], layer.attrs["reduction"]
    size = x.type.get_shape()[axis]
    copy_at(x, out, [0] * len(x.type.get_shape()))
    combine = {"add": add, "mul": mul, "max": maximum, "min": minimum}.get(reduction)

    def step(ivs: list[SSAValue]) -> None:
        target = [_position(idx, ivs, size) if k == axis else iv for k, iv in enumerate(ivs)]
        value = memref.LoadOp.get(src, ivs).res
        if combine is not None:
            value = combine(memref.LoadOp.get(out, target).res, value)
        memref.StoreOp.get(value, out, target)

    loop_nest(idx.type.get_shape(), step)


def emit_topk(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """The positions of the k best values along the axis, best first, in the order (value, then lower position
    first; NaN larger than every number, as torch takes it): scan j takes the best element that comes after scan
    j - 1's (none before the first), so no element is taken twice and equal values come out in position order."""
    (x,), axis, largest = ins, layer.attrs["axis"], layer.attrs["largest"]
    shape, k = x.type.get_shape(), out.type.get_shape()[axis]
    element = x.type.element_type
    floating = not isinstance(element, IntegerType)
    kept = [d for a, d in enumerate(shape) if a != axis]
    best_v, best_i = alloc([1], element), alloc([1], i64)
    prev_v, prev_i = alloc([1], element), alloc([1], i64)
    zero = index_const(0)

    def above(a, b):  # a strictly before b in the order (ties aside)
        strict = compare("gt" if largest else "lt", a, b)
        if floating:  # NaN is larger than every number: the best of the largest, the worst of the smallest
            nan, number = (a, b) if largest else (b, a)
            nan, number = arith.CmpfOp(nan, nan, "uno").result, arith.CmpfOp(number, number, "ord").result
            strict = arith.OrIOp(strict, arith.AndIOp(nan, number).result).result
        return strict

    def same(a, b):
        eq = compare("eq", a, b)
        if floating:
            both_nan = arith.AndIOp(arith.CmpfOp(a, a, "uno").result, arith.CmpfOp(b, b, "uno").result).result
            eq = arith.OrIOp(eq, both_nan).result
        return eq

    def row(outer: list[SSAValue]) -> None:
        def at(i):
            return [*outer[:axis], i, *outer[axis:]]

        def scan(j):
            memref.StoreOp.get(constant_of(i64, -1), best_i, [zero])

            def element_step(i):
                v = memref.LoadOp.get(x, at(i)).res
                position = arith.IndexCastOp(i, i64).result
                pv, pi = memref.LoadOp.get(prev_v, [zero]).res, memref.LoadOp.get(prev_i, [zero]).res
                # after the previous pick: below it, or equal and at a later position (any element for the first)
                after = arith.OrIOp(above(pv, v), arith.AndIOp(same(v, pv), compare("gt", position, pi)).result
                                    ).result
                after = arith.OrIOp(after, arith.CmpiOp(j, zero, "eq").result).result
                bv, bi = memref.LoadOp.get(best_v, [zero]).res, memref.LoadOp.get(best_i, [zero]).res
                empty = compare("lt", bi, constant_of(i64, 0))
                take = arith.AndIOp(after, arith.OrIOp(empty, above(v, bv)).result).result
                memref.StoreOp.get(arith.SelectOp(take, v, bv).result, best_v, [zero])
                memref.StoreOp.get(arith.SelectOp(take, position, bi).result, best_i, [zero])

            for_range(index_const(shape[axis]), element_step)
            memref.StoreOp.get(memref.LoadOp.get(best_v, [zero]).res, prev_v, [zero])
            chosen = memref.LoadOp.get(best_i, [zero]).res
            memref.StoreOp.get(chosen, prev_i, [zero])
            memref.StoreOp.get(chosen, out, at(j))

        for_range(index_const(k), scan)

    loop_nest(kept, row)
    free(best_v, best_i, prev_v, prev_i)


def emit_cumsum(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """acc[.., i, ..] = acc[.., i - 1, ..] + x[.., i, ..] in loops (a running sum is no linalg.generic):
    the loop along the axis encloses those of the later axes, so row i - 1 is complete when row i starts.
    float32 sums run in a float64 buffer, as PyTorch's CPU cumsum accumulates, and are rounded once."""
    (x,), axis = ins, layer.attrs["axis"]
    product = layer.attrs.get("op") == "mul"  # (cumprod: a running product, in float64 likewise)
    shape = out.type.get_shape()
    floating = out.type.element_type == f32  # (float64 sums run in the output itself)
    acc = alloc(shape, f64) if floating else out
    start = 1 if product else 0
    zero = arith.ConstantOp(FloatAttr(float(start), f64)).result if floating else constant_of(
        out.type.element_type, start)

    def step(ivs: list[SSAValue]) -> None:
        i = ivs[axis]
        first = arith.CmpiOp(i, index_const(0), "eq").result
        before = list(ivs)
        before[axis] = arith.SelectOp(first, i, arith.SubiOp(i, index_const(1)).result).result
        running = arith.SelectOp(first, zero, memref.LoadOp.get(acc, before).res).result
        value = memref.LoadOp.get(x, ivs).res
        total = (mul if product else add)(running, arith.ExtFOp(value, f64).result if floating else value)
        memref.StoreOp.get(total, acc, ivs)
        if floating:
            memref.StoreOp.get(arith.TruncFOp(total, f32).result, out, ivs)

    loop_nest(shape, step)
    if acc is not out:
        free(acc)


def emit_arg_reduce(layer: Layer, ins: list[SSAValue], out: SSAValue) -> None:
    """out[kept] = the position of the max / min along the axis, in loops over x (a best value per kept position
    in a buffer): position 0 is taken as it is, a later one replaces it when strictly better (or as good, for the
    last on ties); a NaN replaces any number and, for the first, is never replaced (numpy's and torch's)."""
    (x,), axis, last = ins, layer.attrs["axis"], layer.attrs["last"]
    shape = x.type.get_shape()
    best = alloc(kept_shape(shape, (axis,)), x.type.element_type)
    floating = not isinstance(x.type.element_type, IntegerType)
    better = {("argmax", False): "gt", ("argmax", True): "ge", ("argmin", False): "lt", ("argmin", True): "le"}[
        layer.attrs["op"], last]

    def step(ivs: list[SSAValue]) -> None:
        i, kept = ivs[axis], [iv for k, iv in enumerate(ivs) if k != axis]
        value, held = memref.LoadOp.get(x, ivs).res, memref.LoadOp.get(best, kept).res
        update = compare(better, value, held)
        if floating:
            is_nan = arith.CmpfOp(value, value, "uno").result
            # the first NaN wins over numbers and stays; for the last, every later NaN wins too
            wins = is_nan if last else arith.AndIOp(is_nan, arith.CmpfOp(held, held, "ord").result).result
            update = arith.OrIOp(update, wins).result
        update = arith.OrIOp(update, arith.CmpiOp(i, index_const(0), "eq").result).result
        memref.StoreOp.get(arith.SelectOp(update, value, held).result, best, kept)
        position = arith.IndexCastOp(i, i64).result
        memref.StoreOp.get(arith.SelectOp(update, position, memref.LoadOp.get(out, kept).res).result, out, kept)

    loop_nest(shape, step)
    free(best)
