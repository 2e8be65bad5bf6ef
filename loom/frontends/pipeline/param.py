"""``Param``: a scalar argument of the pipeline, given at run time (Halide's ``Param<T>``).

``Param(u8, "gain")`` is an expression of its type. Its value comes with the inputs
(``{"gain": 3}``; the default given with ``Param(..., value=...)`` or ``set`` is used when
absent), so one compiled pipeline serves every value: the CPU path passes it as a scalar
argument of the generated C function. The value is checked before any C runs: an int for an
integer Param, representable in its type; a real number for f32; a numpy scalar must have the
Param's dtype exactly. ``min`` / ``max`` (Halide's ``set_range``) bound the value, so bounds
inference can use a Param in an index; values outside the range are refused.
"""

from __future__ import annotations

import numbers

import numpy as np

from loom.errors import LoomError

from .expr import Expr, walk
from .types import Type


class Param(Expr):
    def __init__(self, type_: Type, name: str, value=None, min=None, max=None):  # noqa: A002
        if not name or not isinstance(name, str):
            raise LoomError(f"a Param needs a name, got {name!r}", where="Param")
        self.type = type_
        self.name = name
        self.range = (min, max)
        for bound in (min, max):
            if bound is not None:
                self.check(bound)
        self.value = None if value is None else self.check(value)

    @property
    def key(self) -> str:
        """The name the CPU lowering binds this Param's SSA value under (never a Var's name)."""
        return f"$param:{self.name}"

    def set(self, value) -> "Param":
        self.value = self.check(value)
        return self

    def set_range(self, min_, max_) -> "Param":
        self.range = (self.check(min_).item(), self.check(max_).item())
        return self

    def check(self, value) -> np.generic:
        """``value`` as a numpy scalar of the Param's dtype, or a LoomError naming the Param."""
        t = self.type
        where = f"Param '{self.name}'"
        if isinstance(value, np.ndarray) and value.shape == ():
            value = value[()]
        if isinstance(value, np.generic) and value.dtype != t.dtype:
            raise LoomError(f"expected a {t.name} value (dtype {t.dtype}), got {value.dtype}", where=where)
        if t.kind == "bool":
            ok = isinstance(value, (bool, np.bool_))
        elif t.is_int:
            ok = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
            if ok and not t.can_represent(int(value)):
                raise LoomError(f"value {int(value)} does not fit in {t.name}", where=where)
        else:
            ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
        if not ok:
            raise LoomError(f"expected a {t.name} scalar, got {type(value).__name__} {value!r}", where=where)
        v = np.array(value, dtype=t.dtype)[()]
        lo, hi = getattr(self, "range", (None, None))
        if (lo is not None and not v >= lo) or (hi is not None and not v <= hi):  # NaN is outside any range
            raise LoomError(f"value {v} is outside the Param's range [{lo}, {hi}]", where=where)
        return v

    def __repr__(self):
        return self.name


def params_of(funcs) -> list[Param]:
    """The Params the definitions of ``funcs`` read, in order of first use, one per name."""
    found: dict[str, Param] = {}
    for f in funcs:
        exterior = (f.value,) if getattr(f, "value", None) is not None else ()  # constant_exterior(..., p)
        for d in f.definitions:
            for a in (*d.args, d.value, *exterior):
                for e in walk(a):
                    if isinstance(e, Param):
                        other = found.setdefault(e.name, e)
                        if other is not e:
                            raise LoomError(f"two different Params are named '{e.name}'", where=f"Func '{f.name}'")
    return list(found.values())


def refuse_unknown_inputs(inputs: dict, images, scalars):
    """A name in ``inputs`` the pipeline does not read is ignored (one inputs dict may serve several outputs),
    unless a Param of the pipeline then takes its default: a misspelt Param would take it silently."""
    known = {p.name for p in images} | {p.name for p in scalars}
    unknown = sorted(k for k in inputs if k not in known)
    defaulted = sorted(p.name for p in scalars if p.name not in inputs and p.value is not None)
    if unknown and defaulted:
        raise LoomError(f"no ImageParam or Param named {', '.join(map(repr, unknown))} in the pipeline, and "
                        f"Param(s) {', '.join(defaulted)} would take their defaults: a misspelt name? (its inputs: "
                        f"{', '.join(sorted(known))})", where="inputs")


def param_values(params: list[Param], inputs: dict) -> dict[str, np.generic]:
    """Each Param's checked value: from ``inputs`` by name, else its default."""
    values = {}
    for p in params:
        if p.name in inputs:
            values[p.name] = p.check(inputs[p.name])
        elif p.value is not None:
            values[p.name] = p.value
        else:
            raise LoomError("no value given (pass it with the inputs or set a default)", where=f"Param '{p.name}'")
    return values
