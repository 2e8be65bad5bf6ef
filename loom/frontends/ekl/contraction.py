"""A let as a matrix product: ``T[bound] = <+ K< X[..] * Y[..]`` read as ``C[M, N] = A[M, K] . B[K, N]``.

This is what lets a matmul accelerator run an Einstein contraction of any rank:
the indices of the one operand that holds the result's first axis are the rows
(M), the other operand's bound indices the columns (N), the reduction indices
the inner dimension (K). Each operand is then a matrix after a transpose
(``perm``; the identity when its axes are already in that order) and a reshape;
the result is one when its bound indices are M followed by N (``output_is_view``).

Only plain contractions qualify: a ``+`` reduction of the product of exactly two
direct, repetition-free reads of the let's element type, where every reduction
index appears in both operands and no bound index in both (that would be a
batch dimension). ``matmul_form`` returns the reason otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.frontends.ekl import form as F


@dataclass(frozen=True)
class MatmulForm:
    let: F.Let
    a: F.Read  # the operand holding M and K
    b: F.Read  # the operand holding K and N
    m: tuple[F.Index, ...]
    n: tuple[F.Index, ...]
    k: tuple[F.Index, ...]

    @staticmethod
    def _perm(read: F.Read, order: tuple[F.Index, ...]) -> tuple[int, ...]:
        axes = [s.index for s in read.subscripts]  # type: ignore[attr-defined]
        return tuple(next(p for p, i in enumerate(axes) if i is index) for index in order)

    @property
    def a_perm(self) -> tuple[int, ...]:
        """Axes of A's array in (M..., K...) order."""
        return self._perm(self.a, self.m + self.k)

    @property
    def b_perm(self) -> tuple[int, ...]:
        """Axes of B's array in (K..., N...) order."""
        return self._perm(self.b, self.k + self.n)

    @property
    def output_perm(self) -> tuple[int, ...]:
        """Axes of the (M..., N...) product in the result's bound order."""
        mn = self.m + self.n
        return tuple(next(p for p, i in enumerate(mn) if i is index) for index in self.let.bound)

    @property
    def output_is_view(self) -> bool:
        return list(self.m + self.n) == list(self.let.bound) and all(
            a is b for a, b in zip(self.m + self.n, self.let.bound))

    def describe(self) -> str:
        names = lambda ix: ",".join(i.name for i in ix) or "-"  # noqa: E731
        return (f"{self.let.target.name}[{names(self.let.bound)}] = {self.a.tensor.name} . {self.b.tensor.name}: "
                f"M=({names(self.m)}) N=({names(self.n)}) K=({names(self.k)})")


def matmul_form(let: F.Let) -> MatmulForm | str:
    """The let as a matrix product, or the reason it is not one."""
    if let.op != "+" or not let.reductions:
        return "not a sum reduction"
    factors = F.product_factors(let.body)
    if len(factors) != 2 or not all(isinstance(f, F.Read) for f in factors):
        return f"a product of {len(factors)} factors, not of two arrays" if len(factors) != 2 else \
            "a factor is not an array read"
    x, y = factors  # type: ignore[misc]
    for r in (x, y):
        if not r.is_direct():
            return f"'{r.tensor.name}' is read through computed subscripts (a gather)"
        if len({id(s.index) for s in r.subscripts}) != len(r.subscripts):
            return f"'{r.tensor.name}' repeats an index (a diagonal)"
        if r.tensor.dtype != let.target.dtype:
            return f"'{r.tensor.name}' is {r.tensor.dtype}, the result {let.target.dtype}"
    in_x = {id(s.index) for s in x.subscripts}
    in_y = {id(s.index) for s in y.subscripts}
    for index in let.reductions:
        if id(index) not in in_x or id(index) not in in_y:
            return f"reduction index '{index.name}' is not in both operands"
    for index in let.bound:
        if id(index) in in_x and id(index) in in_y:
            return f"bound index '{index.name}' is in both operands (a batch dimension)"
        if id(index) not in in_x and id(index) not in in_y:
            return f"bound index '{index.name}' is in neither operand (a broadcast)"
    first = id(let.bound[0]) if let.bound else None
    a, b = (y, x) if first is not None and first in in_y else (x, y)
    in_a = in_x if a is x else in_y
    m = tuple(i for i in let.bound if id(i) in in_a)
    n = tuple(i for i in let.bound if id(i) not in in_a)
    reductions = {id(i) for i in let.reductions}
    k = tuple(s.index for s in a.subscripts if id(s.index) in reductions)  # type: ignore[attr-defined]
    return MatmulForm(let, a, b, m, n, k)
