"""Affine expressions and maps as C index expressions.

Dims and symbols are replaced by the C expressions of the map operands;
floordiv/ceildiv/mod use the rounding helpers of the prelude (C's ``/`` and
``%`` truncate towards zero, affine ones do not).
"""

from __future__ import annotations

from xdsl.ir.affine import AffineBinaryOpKind, AffineExpr, AffineMap

from loom.backends.c.index_expr import Ix, ix_add, ix_mul
from loom.core.affine import fold_affine_expr

_ROUNDING_HELPERS = {
    AffineBinaryOpKind.FloorDiv: "loomh_floordiv",
    AffineBinaryOpKind.CeilDiv: "loomh_ceildiv",
    AffineBinaryOpKind.Mod: "loomh_mod",
}


def _binary_c(kind: AffineBinaryOpKind, lhs: Ix, rhs: Ix) -> Ix:
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
    return f"(intptr_t){_ROUNDING_HELPERS[kind]}({lhs}, {rhs})"


def affine_expr_c(expr: AffineExpr, dims: list[Ix], syms: list[Ix]) -> Ix:
    return fold_affine_expr(expr, dim=dims.__getitem__, sym=syms.__getitem__, const=lambda v: v, binary=_binary_c)


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
