"""Affine expressions and maps as C index expressions.

Dims and symbols are replaced by the C expressions of the map operands;
floordiv/ceildiv/mod use the rounding helpers of the prelude (C's ``/`` and
``%`` truncate towards zero, affine ones do not).
"""

from __future__ import annotations

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from loom.backends.c.index_expr import Ix, ix_add, ix_mul


def affine_expr_c(expr: AffineExpr, dims: list[Ix], syms: list[Ix]) -> Ix:
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineSymExpr):
        return syms[expr.position]
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs = affine_expr_c(expr.lhs, dims, syms)
    rhs = affine_expr_c(expr.rhs, dims, syms)
    kind = expr.kind
    if kind == AffineBinaryOpKind.Add:
        return ix_add(lhs, rhs)
    if kind == AffineBinaryOpKind.Mul:
        return ix_mul(lhs, rhs)
    if isinstance(lhs, int) and isinstance(rhs, int):
        if kind == AffineBinaryOpKind.FloorDiv:
            return lhs // rhs
        if kind == AffineBinaryOpKind.CeilDiv:
            return -((-lhs) // rhs)
        return lhs % rhs
    helper = {
        AffineBinaryOpKind.FloorDiv: "loomh_floordiv",
        AffineBinaryOpKind.CeilDiv: "loomh_ceildiv",
        AffineBinaryOpKind.Mod: "loomh_mod",
    }[kind]
    return f"(intptr_t){helper}({lhs}, {rhs})"


def affine_map_c(amap: AffineMap, operands: list[Ix]) -> list[Ix]:
    """One C expression per map result; operands are dims then symbols."""
    dims = operands[: amap.num_dims]
    syms = operands[amap.num_dims :]
    return [affine_expr_c(e, dims, syms) for e in amap.results]


def fold_min_max(values: list[Ix], helper: str) -> Ix:
    """Combine several bounds with loomh_min_idx / loomh_max_idx."""
    ints = [v for v in values if isinstance(v, int)]
    rest = [v for v in values if not isinstance(v, int)]
    if ints:
        rest.append(min(ints) if helper == "loomh_min_idx" else max(ints))
    result: Ix = rest[0]
    for v in rest[1:]:
        result = f"{helper}({result}, {v})"
    return result
