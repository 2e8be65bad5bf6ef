"""Affine forms of index expressions (the only addressing unified buffers take; CPU tile regions use them too).

``to_affine`` rewrites an index expression as ``sum(coef * var) + const`` (a
``loom.core.affine.Affine`` over Var names)
given affine forms for the Vars, constants for unrolled RVars and, where the caller binds a Param's key, its
value (the streaming accelerator's configuration constants). Integer
division of an affine expression by a positive constant (``x / 2``, Halide's
floor division: up-sampling; a signed ``x >> 1`` is the same) gives a quasi-affine ``FloorDiv`` (isl writes it
``floor((x)/2)``); an affine expression added to it stays quasi-affine (``x / 2 + y`` is
``(x + 2 * y) / 2``). What does not fit raises ``NotAffine`` with ``kind`` "non-affine" (x*x, min, a sum of
two divisions, ...) or "data-dependent" (the index reads another Func).
"""

from __future__ import annotations

from loom.core.affine import Affine  # the core form; re-exported for the streaming modules and CPU regions
from .expr import BinOp, Call, Cast, Const, RVar, Select, Unary, Var
from .param import Param


class FloorDiv:
    """``floor(num / div)``: a quasi-affine index (``div`` > 1; exact divisions stay ``Affine``)."""

    __slots__ = ("num", "div")

    def __init__(self, num: Affine, div: int):
        self.num, self.div = num, int(div)

    @property
    def is_const(self) -> bool:
        return False

    @property
    def terms(self) -> dict:
        return self.num.terms

    def coef(self, v) -> int:
        return self.num.coef(v)

    def __eq__(self, other):
        return isinstance(other, FloorDiv) and (self.num, self.div) == (other.num, other.div)

    def __hash__(self):
        return hash((self.num, self.div))

    def __repr__(self):
        return f"floor(({self.num!r})/{self.div})"


def floor_div(a: Affine, d: int) -> "Affine | FloorDiv":
    """``floor(a / d)`` for d > 0: an Affine when d divides every coefficient and the constant."""
    if d == 1 or (all(c % d == 0 for c in a.terms.values()) and a.const % d == 0):
        return Affine({v: c // d for v, c in a.terms.items()}, a.const // d)
    return FloorDiv(a, d)


def _add(a, b):
    """a + b where at most one side is a FloorDiv: floor(n / d) + b is floor((n + d b) / d) for an affine b
    (``x / 2 + y`` is ``(x + 2 * y) / 2``); None for two FloorDivs."""
    if isinstance(a, FloorDiv) and isinstance(b, Affine):
        return FloorDiv(a.num + b.scale(a.div), a.div)
    if isinstance(b, FloorDiv):
        return None if isinstance(a, FloorDiv) else _add(b, a)
    return a + b


class NotAffine(Exception):
    def __init__(self, kind: str, expr):
        self.kind = kind
        self.expr = expr
        super().__init__(f"{kind} index '{expr!r}'")


def to_affine(e, env: dict) -> Affine:
    if isinstance(e, Const):
        if not e.type.is_int:
            raise NotAffine("non-affine", e)
        return Affine.constant(e.value)
    if isinstance(e, (Var, RVar)):
        v = env.get(e.name)
        if v is None:
            raise NotAffine("non-affine", e)
        return v if isinstance(v, (Affine, FloorDiv)) else Affine.constant(v)
    if isinstance(e, Param):  # a constant only where ``env`` binds its key (the accelerator's configured value)
        v = env.get(e.key)
        if v is None:
            raise NotAffine("non-affine", e)
        return Affine.constant(v)
    if isinstance(e, Call):
        raise NotAffine("data-dependent", e)
    if isinstance(e, Cast):
        src, dst = e.value.type, e.type
        if not dst.is_int or not src.is_int or src.min_value < dst.min_value or src.max_value > dst.max_value:
            raise NotAffine("non-affine", e)  # a narrowing cast wraps: u8(x) is not x
        return to_affine(e.value, env)
    if isinstance(e, BinOp):
        if _has_call(e):
            raise NotAffine("data-dependent", e)
        a, b = to_affine(e.a, env), to_affine(e.b, env)
        if isinstance(a, FloorDiv) or isinstance(b, FloorDiv):
            total = _add(a, b) if e.op == "add" else _add(a, b.scale(-1)) \
                if e.op == "sub" and not isinstance(b, FloorDiv) else None
            if total is None:
                raise NotAffine("non-affine", e)  # two divisions, a - x / 2 (a ceiling), x / 2 * 3
            return total
        if e.op == "add":
            return a + b
        if e.op == "sub":
            return a + b.scale(-1)
        if e.op == "div" and e.type.is_int and b.is_const and b.const > 0:
            return floor_div(a, b.const)
        if e.op == "mul":
            if a.is_const:
                return b.scale(a.const)
            if b.is_const:
                return a.scale(b.const)
        if e.op == "shl" and b.is_const and 0 <= b.const < 31:
            return a.scale(1 << b.const)
        if e.op == "shr" and e.type.is_int and e.type.is_signed and b.is_const and 0 <= b.const < 31:
            return floor_div(a, 1 << b.const)  # an arithmetic shift floors: x >> 1 is x / 2
        if a.is_const and b.is_const:
            from .evaluate import binary
            import numpy as np
            v = binary(e.op, np.array(a.const, e.a.type.dtype), np.array(b.const, e.b.type.dtype), e.a.type)
            return Affine.constant(int(v))
        raise NotAffine("non-affine", e)
    if isinstance(e, (Select, Unary)):
        if _has_call(e):
            raise NotAffine("data-dependent", e)
        raise NotAffine("non-affine", e)
    raise NotAffine("non-affine", e)


def _has_call(e):
    from .expr import walk
    return any(isinstance(s, Call) for s in walk(e))
