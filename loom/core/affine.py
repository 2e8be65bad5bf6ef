"""The one linear affine form and the one parser of affine-map text.

``Affine``: ``sum(coeff * var) + const`` with integer coefficients. A var is
any hashable: a dim name (``"oh"``, accelerator kernels, image pipelines), a
dim position (``2`` for ``d2``, what ``from_xdsl`` yields) or an SSA value (the
kernel frontend's index arithmetic). Terms keep their first-seen order (for
printing) and never hold a zero coefficient; equality ignores the order.

``parse_affine_map``: ``(m, n, k) -> (m, 2 * k + 1)``, optionally wrapped in
``affine_map<...>``, into a ``LinearMap`` over named dims; results are linear
sums (no ``floordiv``/``mod``/symbols: what accelerator descriptions and the
``linalg.generic`` builder take). Errors are ``LoomError``s with the column.
``LinearMap.to_xdsl()`` gives the xDSL ``AffineMap``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from loom.core.text import TextCursor, did_you_mean, memoized_parser


class Affine:
    """``sum(coeff * var) + const`` (immutable)."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: Mapping | Iterable[tuple[Hashable, int]] = (), const: int = 0):
        merged: dict = {}
        for v, c in terms.items() if isinstance(terms, Mapping) else terms:
            merged[v] = merged.get(v, 0) + int(c)
        self.terms: dict = {v: c for v, c in merged.items() if c}
        self.const = int(const)

    @staticmethod
    def var(v: Hashable, coeff: int = 1) -> Affine:
        return Affine({v: coeff})

    @staticmethod
    def constant(c: int) -> Affine:
        return Affine((), c)

    # ---------------------------------------------------------------- queries
    @property
    def is_const(self) -> bool:
        return not self.terms

    @property
    def vars(self) -> frozenset:
        return frozenset(self.terms)

    @property
    def single_var(self) -> Hashable | None:
        """The var when the form is exactly one var (a projection result), else None."""
        if self.const == 0 and len(self.terms) == 1:
            (v, c), = self.terms.items()
            return v if c == 1 else None
        return None

    def coef(self, v: Hashable) -> int:
        return self.terms.get(v, 0)

    # ---------------------------------------------------------------- algebra
    def __add__(self, other: Affine | int) -> Affine:
        other = _as_affine(other)
        return Affine([*self.terms.items(), *other.terms.items()], self.const + other.const)

    __radd__ = __add__

    def __sub__(self, other: Affine | int) -> Affine:
        return self + _as_affine(other).scale(-1)

    def __rsub__(self, other: int) -> Affine:
        return _as_affine(other) - self

    def __neg__(self) -> Affine:
        return self.scale(-1)

    def scale(self, k: int) -> Affine:
        return Affine({v: c * k for v, c in self.terms.items()}, self.const * k)

    def substitute(self, mapping: Mapping) -> Affine:
        """Replace vars by forms or ints (vars not in ``mapping`` stay)."""
        out = Affine((), self.const)
        for v, c in self.terms.items():
            out = out + (_as_affine(mapping[v]).scale(c) if v in mapping else Affine({v: c}))
        return out

    def evaluate(self, env: Mapping) -> int:
        """The value at a point: ``env`` gives every var an int (KeyError names a missing one)."""
        return self.const + sum(c * env[v] for v, c in self.terms.items())

    def rename(self, f: Callable[[Hashable], Hashable]) -> Affine:
        return Affine([(f(v), c) for v, c in self.terms.items()], self.const)

    # ---------------------------------------------------------------- xDSL
    @staticmethod
    def from_xdsl(expr: AffineExpr, symbol: Callable[[int], Hashable] | None = None) -> Affine | None:
        """``2*d2 + d5 + 1`` -> ``Affine({2: 2, 5: 1}, 1)``: dims become their positions,
        symbols ``symbol(position)`` (None: symbols are not linear here). None for
        ``mod``/``floordiv``/``ceildiv`` and products of vars."""
        def binary(kind: AffineBinaryOpKind, lhs: Affine | None, rhs: Affine | None) -> Affine | None:
            if lhs is None or rhs is None:
                return None
            if kind == AffineBinaryOpKind.Add:
                return lhs + rhs
            if kind == AffineBinaryOpKind.Mul:
                if rhs.is_const:
                    return lhs.scale(rhs.const)
                if lhs.is_const:
                    return rhs.scale(lhs.const)
            return None

        return fold_affine_expr(
            expr,
            dim=Affine.var,
            sym=lambda p: None if symbol is None else Affine.var(symbol(p)),
            const=Affine.constant,
            binary=binary,
        )

    def to_xdsl(self, dims: Sequence[Hashable] | None = None, symbols: Sequence[Hashable] = ()) -> AffineExpr:
        """The xDSL AffineExpr: var ``dims[i]`` is ``d{i}``, ``symbols[j]`` is ``s{j}``
        (``dims=None``: vars are dim positions already)."""
        expr: AffineExpr | None = None
        for v, c in self.terms.items():
            if dims is None:
                leaf = AffineExpr.dimension(v)
            elif v in dims:
                leaf = AffineExpr.dimension(list(dims).index(v))
            elif v in symbols:
                leaf = AffineExpr.symbol(list(symbols).index(v))
            else:
                raise KeyError(f"var {v!r} is neither a dim nor a symbol of the map")
            term = leaf if c == 1 else leaf * c
            expr = term if expr is None else expr + term
        if expr is None:
            return AffineExpr.constant(self.const)
        return expr + self.const if self.const else expr

    # ---------------------------------------------------------------- identity
    def __eq__(self, other) -> bool:
        return isinstance(other, Affine) and self.const == other.const and self.terms == other.terms

    def __hash__(self) -> int:
        return hash((frozenset(self.terms.items()), self.const))

    def __str__(self) -> str:
        parts = []
        for v, c in self.terms.items():
            term = str(v) if abs(c) == 1 else f"{abs(c)} * {v}"
            parts.append(("- " if c < 0 else "+ ") + term)
        if self.const or not parts:
            parts.append(("- " if self.const < 0 else "+ ") + str(abs(self.const)))
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    def __repr__(self) -> str:
        return f"Affine({self})"


def fold_affine_expr(expr: AffineExpr, *, dim: Callable, sym: Callable, const: Callable, binary: Callable):
    """The one bottom-up walk of an xDSL ``AffineExpr``: leaves go through ``dim(position)``,
    ``sym(position)`` and ``const(value)``, each binary node through ``binary(kind, lhs, rhs)``
    with its folded operands (``Affine.from_xdsl`` and the C backend's index expressions)."""
    if isinstance(expr, AffineDimExpr):
        return dim(expr.position)
    if isinstance(expr, AffineSymExpr):
        return sym(expr.position)
    if isinstance(expr, AffineConstantExpr):
        return const(expr.value)
    assert isinstance(expr, AffineBinaryOpExpr), expr
    return binary(expr.kind, fold_affine_expr(expr.lhs, dim=dim, sym=sym, const=const, binary=binary),
                  fold_affine_expr(expr.rhs, dim=dim, sym=sym, const=const, binary=binary))


def _as_affine(x: Affine | int) -> Affine:
    return x if isinstance(x, Affine) else Affine.constant(x)


@dataclass(frozen=True)
class LinearMap:
    """``(d0, d1, ...) -> (result, ...)`` with named dims and linear results."""

    dims: tuple[str, ...]
    results: tuple[Affine, ...]

    @property
    def rank(self) -> int:
        return len(self.results)

    @property
    def used_dims(self) -> frozenset[str]:
        return frozenset().union(*(r.vars for r in self.results)) if self.results else frozenset()

    def to_xdsl(self) -> AffineMap:
        return AffineMap(len(self.dims), 0, tuple(r.to_xdsl(self.dims) for r in self.results))

    def __str__(self) -> str:
        return f"({', '.join(self.dims)}) -> ({', '.join(str(r) for r in self.results)})"


# ------------------------------------------------------------------- parsing
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTEGER = re.compile(r"[0-9]+")


def _dim_list(r: TextCursor) -> tuple[str, ...]:
    r.expect("(", "'(' to open the list of loop dims")
    dims: list[str] = []
    if r.accept(")"):
        return ()
    while True:
        r.peek()  # the error points at the name, not the space before it
        start = r.pos
        name = r.match(_NAME)
        if name is None:
            raise r.fail(f"expected a dim name but found {r.found()}")
        if name in dims:
            raise r.fail(f"dim {name!r} is listed twice", start)
        dims.append(name)
        if r.accept(")"):
            return tuple(dims)
        r.expect(",", "',' or ')'")


def _integer(r: TextCursor) -> int | None:
    r.peek()
    start = r.pos
    digits = r.match(_INTEGER)
    if digits is not None and len(digits) > 10:  # coefficients and offsets live in 32-bit index math
        raise r.fail(f"expected an integer of at most 10 digits, found {len(digits)} digits", start)
    return None if digits is None else int(digits)


def _term(r: TextCursor, dims: tuple[str, ...]) -> Affine:
    r.peek()
    start = r.pos
    coef = _integer(r)
    if coef is not None:
        if not r.accept("*"):
            return Affine.constant(coef)
        r.peek()
        start = r.pos
    name = r.match(_NAME)
    if name is None:
        raise r.fail(f"expected a dim name or an integer but found {r.found()}")
    if name not in dims:
        raise r.fail(f"unknown dim {name!r}; the map's dims are ({', '.join(dims)}){did_you_mean(name, dims)}", start)
    if coef is None and r.accept("*"):
        coef = _integer(r)
        if coef is None:
            raise r.fail(f"expected an integer after '*' but found {r.found()}")
    return Affine.var(name, 1 if coef is None else coef)


def _sum(r: TextCursor, dims: tuple[str, ...]) -> Affine:
    sign = -1 if r.accept("-") else 1
    total = Affine()
    while True:
        total = total + _term(r, dims).scale(sign)
        if r.accept("+"):
            sign = 1
        elif r.accept("-"):
            sign = -1
        else:
            return total


@memoized_parser
def parse_affine_map(text: str, *, where: str | None = None, filename: str | None = None) -> LinearMap:
    """Parse ``(d0, d1) -> (expr, ...)``, ``affine_map<...>`` wrapper optional."""
    r = TextCursor(text, where, filename)
    wrapped = r.accept("affine_map")
    if wrapped:
        r.expect("<")
    dims = _dim_list(r)
    r.expect("->", "'->' after the list of loop dims")
    r.expect("(", "'(' to open the list of results")
    results: list[Affine] = []
    if not r.accept(")"):
        while True:
            results.append(_sum(r, dims))
            if r.accept(")"):
                break
            r.expect(",", "',' or ')'")
    if wrapped:
        r.expect(">")
    if not r.at_end():
        raise r.fail(f"expected the end of the map but found {r.found()}")
    return LinearMap(dims, tuple(results))
