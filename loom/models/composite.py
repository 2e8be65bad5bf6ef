"""Ops both importers build from ``GraphBuilder``'s existing layers, not layers of their own: vector norms and
Lp-normalisation (reductions and element-wise ops), rolls (a gather of the rotated positions per axis) and padding
by the input's own elements (a gather of numpy's pad positions per axis)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from loom.models.graph import FLOATS, GraphBuilder, Tensor


def vector_norm(b: GraphBuilder, x: Tensor, p: float, axes: Sequence[int] | None, keepdim: bool,
                op: str = "vector_norm") -> Tensor:
    """(sum |x|^p)^(1/p) over ``axes`` (all when None or empty), as torch.linalg.vector_norm: p = inf / -inf are
    the max / min of |x|, p = 0 counts the non-zeros, p = 1 and 2 avoid pow (sum of |x|, sqrt of the sum of
    squares)."""
    p = float(p)
    if x.dtype not in FLOATS:
        raise b.error(op, f"{x.name} has dtype {x.dtype}; norms compute in float32 or float64")
    if math.isinf(p):
        return b.reduce("max" if p > 0 else "min", b.unary("abs", x), axes, keepdim)
    if p == 0:
        return b.reduce("sum", b.cast(b.compare("ne", x, 0.0), x.dtype, op), axes, keepdim)
    if p == 1:
        return b.reduce("sum", b.unary("abs", x), axes, keepdim)
    if p == 2:
        return b.unary("sqrt", b.reduce("sum", b.binary("mul", x, x), axes, keepdim))
    powered = b.binary("pow", b.unary("abs", x), p)
    return b.binary("pow", b.reduce("sum", powered, axes, keepdim), 1.0 / p)


def lp_normalize(b: GraphBuilder, x: Tensor, p: float, axis: int) -> Tensor:
    """ONNX's LpNormalization: x divided by its Lp norm along ``axis`` (of |x|, as the spec and node tests have
    it; onnx's reference raises x itself to p), a zero norm giving 0 as the reference's. (torch's F.normalize
    arrives decomposed: a vector norm, clamp_min(eps) and a division.)"""
    norm = vector_norm(b, x, p, [b.axis("LpNormalization", axis, len(x.shape))], True, "LpNormalization")
    return b.select(b.compare("eq", norm, 0.0), 0.0, b.binary("div", x, norm))


def roll(b: GraphBuilder, x: Tensor, shifts: Sequence[int], axes: Sequence[int]) -> Tensor:
    """torch.roll: element i of each axis moves to (i + shift) mod size, so out[j] = x[(j - shift) mod size], a
    gather of constant positions per axis; without axes, the flattened x rolled by the one shift."""
    shifts, axes = [int(s) for s in np.atleast_1d(shifts)], [int(a) for a in np.atleast_1d(axes)]
    if not axes:
        if len(shifts) != 1:
            raise b.error("roll", f"without dims takes one shift, got {shifts}")
        return b.view(roll(b, b.view(x, (x.size,)), shifts, [0]), x.shape)
    if len(shifts) != len(axes):
        raise b.error("roll", f"needs one shift per dim, got shifts {shifts} and dims {list(axes)}")
    for shift, axis in zip(shifts, axes):
        axis = b.axis("roll", int(axis), len(x.shape))
        size = x.shape[axis]
        if shift % size:
            x = b.take(x, (np.arange(size) - shift) % size, axis, "roll")
    return x


def pad_by_positions(b: GraphBuilder, x: Tensor, before, after, mode: str, op: str) -> Tensor:
    """Padding that repeats the input's own elements: ``mode`` "reflect" (mirrored without the edge), "edge" (the
    edge repeated) or "wrap" (circular), as numpy's pad (onnx's reference; torch's reflect / replicate / circular):
    per padded axis, a take of the positions ``np.pad(arange(n), (before, after), mode)``."""
    if len(before) != len(x.shape) or len(after) != len(x.shape) or min((*before, *after), default=0) < 0:
        raise b.error(op, f"needs one non-negative pad before and after each of the {len(x.shape)} axes, got "
                          f"{list(before)} / {list(after)}")
    for axis, (lo, hi) in enumerate(zip(before, after)):
        if lo or hi:
            if mode == "reflect" and x.shape[axis] == 1:
                raise b.error(op, f"axis {axis} of size 1 cannot be reflected")
            positions = np.pad(np.arange(x.shape[axis]), (int(lo), int(hi)), mode=mode)
            x = b.take(x, positions, axis, op)
    return x


def einsum(b: GraphBuilder, equation: str, operands: Sequence[Tensor], op: str = "einsum") -> Tensor:
    """An einsum of letters (no "...", no letter twice in one operand) as transposes, sums and batched
    matrix products: operands are combined left to right, each pair as (batch, left, contracted) @ (batch,
    contracted, right), a letter summed as soon as no later operand nor the output has it."""
    equation = equation.replace(" ", "")
    if "..." in equation:
        raise b.error(op, f"equation {equation!r}: '...' is not supported (name every axis: 'bij,bjk->bik')")
    if "->" not in equation:  # implicit: the letters that appear once, in alphabetical order
        letters = equation.replace(",", "")
        equation += "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    given, output = equation.split("->")
    terms = given.split(",")
    if len(terms) != len(operands):
        raise b.error(op, f"equation {equation!r} has {len(terms)} operands, {len(operands)} given")
    sizes: dict[str, int] = {}
    for term, t in zip(terms, operands):
        if len(term) != len(t.shape) or len(set(term)) != len(term):
            raise b.error(op, f"term {term!r} does not name the {len(t.shape)} axes of {list(t.shape)} once each")
        for letter, d in zip(term, t.shape):
            if sizes.setdefault(letter, d) != d:
                raise b.error(op, f"letter {letter!r} is {sizes[letter]} long in one operand and {d} in another")
    if set(output) - set(sizes) or len(set(output)) != len(output):
        raise b.error(op, f"output {output!r} must name each of its letters once, from the operands")

    def reduce_unused(t: Tensor, term: str, keep: set) -> tuple[Tensor, str]:
        summed = [k for k, letter in enumerate(term) if letter not in keep]
        if summed:
            t = b.reduce("sum", t, summed, False)
            term = "".join(letter for letter in term if letter in keep)
        return t, term

    acc, term = operands[0], terms[0]
    for k in range(1, len(operands)):
        later = set(output).union(*terms[k + 1:])
        other, other_term = operands[k], terms[k]
        acc, term = reduce_unused(acc, term, later | set(other_term))
        other, other_term = reduce_unused(other, other_term, later | set(term))
        batch = [c for c in term if c in other_term and c in later]
        contracted = [c for c in term if c in other_term and c not in later]
        left = [c for c in term if c not in other_term]
        right = [c for c in other_term if c not in term]

        def arranged(t, t_term, groups):
            t = b.transpose(t, [t_term.index(c) for g in groups for c in g])
            return b.view(t, [math.prod(sizes[c] for c in g) for g in groups])

        product = b.matmul(arranged(acc, term, (batch, left, contracted)),
                           arranged(other, other_term, (batch, contracted, right)))
        acc, term = b.view(product, [sizes[c] for c in (*batch, *left, *right)]), "".join((*batch, *left, *right))
    acc, term = reduce_unused(acc, term, set(output))
    return b.transpose(acc, [term.index(c) for c in output])
