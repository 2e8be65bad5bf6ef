"""The elaborated (esn) form of an EKL kernel: what the esn dialect and the numpy reference are built from.

A kernel is a list of parameters and a sequence of ``Let``s. Each ``Let`` is one
Einstein-notation expression: bound indices (the result's axes, in order), reduction
indices, a reduction operator, and a scalar body over ``Read``s of tensors whose
subscripts are index variables (direct, esn subscripts), constants, or index values
computed from looked-up indices (gathers). Every index has one extent, checked
congruent with all its direct uses; extents are ints or ``Dim``s of parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from loom.frontends.ekl.source import Loc

FLOATS = ("f64", "f32")
NP_DTYPES = {"f64": np.float64, "f32": np.float32, "index": np.int64, "i1": np.bool_, "si32": np.int32,
             "si64": np.int64}


@dataclass(frozen=True)
class Dim:
    """The run-time size of axis ``axis`` of parameter ``param``."""

    param: str
    axis: int

    def __str__(self) -> str:
        return f"dim({self.param}, {self.axis})"


Extent = int | Dim


@dataclass(eq=False)
class Index:
    name: str
    loc: Loc
    extent: Extent | None = None
    role: str = "bound"  # bound | reduction


@dataclass(eq=False)
class Tensor:
    """A kernel parameter, a constant array or a let's result."""

    name: str
    dtype: str
    shape: list[Extent]
    kind: str  # param | const | let
    loc: Loc
    is_output: bool = False  # out& or inout&
    is_inout: bool = False  # inout&: also read (its value on entry until the kernel writes it)
    value: np.ndarray | None = None  # constant arrays


# ---- scalar expressions -------------------------------------------------------------


@dataclass(eq=False)
class SExpr:
    dtype: str


@dataclass(eq=False)
class Const(SExpr):
    value: float | int | bool = 0


@dataclass(eq=False)
class Idx(SExpr):
    index: Index = None  # type: ignore[assignment]


@dataclass(eq=False)
class Read(SExpr):
    tensor: Tensor = None  # type: ignore[assignment]
    subscripts: list[SExpr] = field(default_factory=list)
    loc: Loc = None  # type: ignore[assignment]

    def is_direct(self) -> bool:
        """Every subscript is an index variable (an esn subscript, no gather, no constant)."""
        return all(isinstance(s, Idx) for s in self.subscripts)


@dataclass(eq=False)
class Bin(SExpr):
    op: str = "+"  # + - * / % ^ min max == ~= < <= > >= && ||
    lhs: SExpr = None  # type: ignore[assignment]
    rhs: SExpr = None  # type: ignore[assignment]
    loc: Loc | None = None  # the operator's place: an index division by zero is reported there


@dataclass(eq=False)
class Un(SExpr):
    op: str = "-"  # - ~ (not)
    operand: SExpr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Fn(SExpr):
    name: str = ""  # log exp sqrt abs floor ...
    args: list[SExpr] = field(default_factory=list)


@dataclass(eq=False)
class Select(SExpr):
    cond: SExpr = None  # type: ignore[assignment]
    if_true: SExpr = None  # type: ignore[assignment]
    if_false: SExpr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Cast(SExpr):
    operand: SExpr = None  # type: ignore[assignment]


def children(e: SExpr) -> list[SExpr]:
    if isinstance(e, Read):
        return list(e.subscripts)
    if isinstance(e, Bin):
        return [e.lhs, e.rhs]
    if isinstance(e, Un | Cast):
        return [e.operand]
    if isinstance(e, Fn):
        return list(e.args)
    if isinstance(e, Select):
        return [e.cond, e.if_true, e.if_false]
    return []


def map_children(e: SExpr, f) -> SExpr:
    """A copy of ``e`` with ``f`` applied to its direct children (``e`` itself when it has none)."""
    if isinstance(e, Read):
        return Read(e.dtype, tensor=e.tensor, subscripts=[f(s) for s in e.subscripts], loc=e.loc)
    if isinstance(e, Bin):
        return Bin(e.dtype, op=e.op, lhs=f(e.lhs), rhs=f(e.rhs), loc=e.loc)
    if isinstance(e, Un):
        return Un(e.dtype, op=e.op, operand=f(e.operand))
    if isinstance(e, Cast):
        return Cast(e.dtype, operand=f(e.operand))
    if isinstance(e, Fn):
        return Fn(e.dtype, name=e.name, args=[f(a) for a in e.args])
    if isinstance(e, Select):
        return Select(e.dtype, cond=f(e.cond), if_true=f(e.if_true), if_false=f(e.if_false))
    return e


def walk(e: SExpr):
    yield e
    for c in children(e):
        yield from walk(c)


def reads(e: SExpr) -> list[Read]:
    return [x for x in walk(e) if isinstance(x, Read)]


def gathers(e: SExpr) -> bool:
    """``e`` reads an array at a computed subscript (a gather, which could be out of range)."""
    return any(isinstance(r, Read) and not all(isinstance(s, Idx | Const) for s in r.subscripts) for r in walk(e))


def product_factors(e: SExpr) -> list[SExpr]:
    """The factors of a (left- or right-nested) product ``a * b * c``."""
    if isinstance(e, Bin) and e.op == "*":
        return product_factors(e.lhs) + product_factors(e.rhs)
    return [e]


@dataclass(eq=False)
class Let:
    """``target[bound...] = <op reductions...< body``: one esn expression."""

    target: Tensor
    bound: list[Index]
    reductions: list[Index]
    op: str | None  # + * min max, None without reduction
    body: SExpr
    loc: Loc


@dataclass(frozen=True)
class Congruence:
    """Two extents of one index (or of one axis of a broadcast) that can only be compared at run time."""

    index: str  # the index's name, or for a broadcast the axis ("axis 0 of broadcast '~'")
    first: Extent
    second: Extent
    loc: Loc
    broadcast: bool = False  # the two extents of one axis of a numpy-style broadcast, not an esn index


@dataclass(eq=False)
class Kernel:
    name: str
    params: list[Tensor]
    consts: list[Tensor]
    lets: list[Let]
    checks: list[Congruence]
    loc: Loc

    @property
    def outputs(self) -> list[Tensor]:
        return [p for p in self.params if p.is_output]

    @property
    def has_gathers(self) -> bool:
        return any(not all(isinstance(s, Idx | Const) for s in r.subscripts)
                   for let in self.lets for r in reads(let.body))
