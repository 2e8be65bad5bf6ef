"""Affine forms of index expressions (the only addressing unified buffers take).

``to_affine`` rewrites an index expression as ``sum(coef * var) + const`` (a
``loom.core.affine.Affine`` over Var names)
given affine forms for the Vars and constants for unrolled RVars. What does
not fit raises ``NotAffine`` with ``kind`` "non-affine" (x*x, x/2, min, ...)
or "data-dependent" (the index reads another Func).
"""

from __future__ import annotations

from loom.core.affine import Affine  # the core form; re-exported for the streaming modules
from loom.frontends.pipeline.expr import BinOp, Call, Cast, Const, RVar, Select, Unary, Var


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
        return v if isinstance(v, Affine) else Affine.constant(v)
    if isinstance(e, Call):
        raise NotAffine("data-dependent", e)
    if isinstance(e, Cast):
        if not e.type.is_int or not e.value.type.is_int:
            raise NotAffine("non-affine", e)
        return to_affine(e.value, env)
    if isinstance(e, BinOp):
        if _has_call(e):
            raise NotAffine("data-dependent", e)
        a, b = to_affine(e.a, env), to_affine(e.b, env)
        if e.op == "add":
            return a + b
        if e.op == "sub":
            return a + b.scale(-1)
        if e.op == "mul":
            if a.is_const:
                return b.scale(a.const)
            if b.is_const:
                return a.scale(b.const)
        if e.op == "shl" and b.is_const and 0 <= b.const < 31:
            return a.scale(1 << b.const)
        if a.is_const and b.is_const:
            from loom.frontends.pipeline.evaluate import binary
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
    from loom.frontends.pipeline.expr import walk
    return any(isinstance(s, Call) for s in walk(e))
