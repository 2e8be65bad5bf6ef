"""Contraction order: split a sum over a product of three or more arrays into pairwise contractions.

``<+ a, b, c< S[i, a] * S[j, b] * S[k, c] * u[a, b, c]`` as one loop nest costs
11^6 points at 11^3; contracted one factor at a time (``u`` with ``S[k, c]`` over
``c``, then with ``S[j, b]`` over ``b``, then ``S[i, a]`` over ``a``) it is three
nests of 11^4. The order is chosen greedily: at each step the pair of operands
whose combined index space is smallest is contracted into a new let holding
only the indices still needed (by the result or another operand). Only lets that
are ``+``-reductions of products of direct subscripts are split; the others are
kept as they are. ``flops`` counts the arithmetic of a kernel (for reports).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from loom.frontends.ekl import form as F

_ASSUMED_DYNAMIC = 16  # extent used for cost estimates of dynamic sizes


def _size(index: F.Index) -> int:
    return index.extent if isinstance(index.extent, int) else _ASSUMED_DYNAMIC


def _splittable(let: F.Let) -> list[F.Read] | None:
    if let.op != "+" or not let.reductions:
        return None
    factors = F.product_factors(let.body)
    if len(factors) < 3 or not all(isinstance(f, F.Read) and f.is_direct() for f in factors):
        return None
    if any(len({id(s.index) for s in f.subscripts}) != len(f.subscripts) for f in factors):
        return None
    return factors  # type: ignore[return-value]


def _indices(read: F.Read) -> list[F.Index]:
    return [s.index for s in read.subscripts]  # type: ignore[attr-defined]


def _product(reads: list[F.Read]) -> F.SExpr:
    body: F.SExpr = reads[0]
    for r in reads[1:]:
        body = F.Bin(r.dtype, op="*", lhs=body, rhs=r)
    return body


def split(let: F.Let, counter: list[int]) -> list[F.Let]:
    operands = _splittable(let)
    if operands is None:
        return [let]
    keep = {id(i) for i in let.bound}
    lets: list[F.Let] = []
    operands = list(operands)
    while len(operands) > 2:
        best = None
        for p in range(len(operands)):
            for q in range(p + 1, len(operands)):
                union = {id(i): i for r in (operands[p], operands[q]) for i in _indices(r)}
                others = {id(i) for k, r in enumerate(operands) if k not in (p, q) for i in _indices(r)}
                result = [i for i in union.values() if id(i) in keep or id(i) in others]
                cost = math.prod(_size(i) for i in union.values())
                key = (cost, math.prod(_size(i) for i in result))
                if best is None or key < best[0]:
                    best = (key, p, q, union, result)
        _, p, q, union, result = best
        first, second = operands[p], operands[q]
        # the bigger operand's axis order first: it is then read contiguously
        ordered = sorted(result, key=lambda i: _order(i, second, first)) if len(_indices(second)) >= len(
            _indices(first)) else sorted(result, key=lambda i: _order(i, first, second))
        reductions = [i for i in union.values() if all(i is not r for r in result)]
        counter[0] += 1
        dtype = let.target.dtype
        temp = F.Tensor(f"{let.target.name}_c{counter[0]}", dtype, [i.extent for i in ordered], "let", let.loc)
        lets.append(F.Let(temp, ordered, reductions, "+" if reductions else None, _product([first, second]), let.loc))
        read = F.Read(dtype, tensor=temp, subscripts=[F.Idx("index", index=i) for i in ordered], loc=let.loc)
        operands = [r for k, r in enumerate(operands) if k not in (p, q)] + [read]
    used = {id(i) for r in operands for i in _indices(r)}
    reductions = [i for i in let.reductions if id(i) in used]
    lets.append(F.Let(let.target, let.bound, reductions, "+" if reductions else None, _product(operands), let.loc))
    return lets


def _order(index: F.Index, *reads: F.Read) -> int:
    position = 0
    for r in reads:
        for i in _indices(r):
            if i is index:
                return position
            position += 1
    return position


def factorize(kernel: F.Kernel) -> F.Kernel:
    """The same kernel with every splittable contraction split into pairwise contractions."""
    counter = [0]
    lets = [new for let in kernel.lets for new in split(let, counter)]
    return F.Kernel(kernel.name, kernel.params, kernel.consts, lets, kernel.checks, kernel.loc)


def flops(kernel: F.Kernel, size: Callable[[F.Index], int] = _size) -> int:
    """Floating-point operations of one call: per let, its index space times the body's arithmetic
    (plus one combine per point when it reduces). ``size`` gives an index's extent (by default a dynamic
    one is assumed 16, as the contraction order's cost model assumes)."""
    total = 0
    for let in kernel.lets:
        points = math.prod(size(i) for i in let.bound + let.reductions)
        ops = sum(1 for e in F.walk(let.body) if isinstance(e, F.Bin | F.Un | F.Fn) and e.dtype in F.FLOATS)
        total += points * (ops + (1 if let.reductions else 0))
    return total
