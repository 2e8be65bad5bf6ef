"""Tuple-valued Funcs: ``f[x, y] = (a, b)`` (Halide's ``Tuple``).

A Tuple-valued Func is held as one scalar Func per element, ``f.components[i]`` (named
``f_0``, ``f_1``...), sharing the Func's dimensions; ``f[x, y]`` returns a ``Tuple`` of
reads, ``f[x, y][i]`` one element. Each element may have its own type. An update
``f[x] = (f[x][0] + a, max(f[x][1], b))`` updates every element at each point of the RDom;
as the elements are realised separately, an element's update may read only its own old
value, not another element's (Halide updates them together): such an update is refused with a
LoomError (``argmax`` / ``argmin`` do not need it, see ``inline_reductions.py``). A schedule primitive on
``f`` (``f.compute_root()``, ``f.tile(...)``, ``f.update(0).parallel(y)``) applies to every element, as Halide
schedules the Tuple's one loop nest; each element may also be scheduled on its own (``f.components[i]``). A
loop of ``f`` as another Func's compute or store level is refused (name an element's loop), as is ``rfactor``
of ``f``'s update (rfactor an element's).
``loom.jit.realize`` of a Tuple-valued Func returns one Buffer per element.
"""

from __future__ import annotations

from loom.errors import LoomError

from .expr import Call, Expr, Invalid, RVar, walk
from .location import user_location


class Tuple:
    """A fixed-length sequence of Exprs: ``Tuple(a, b)`` or ``Tuple([a, b])``."""

    def __init__(self, *values):
        if len(values) == 1 and isinstance(values[0], (list, tuple, Tuple)):
            values = tuple(values[0])
        self.values = tuple(values)

    def __getitem__(self, i):
        if isinstance(i, bool) or not isinstance(i, int) or not -len(self.values) <= i < len(self.values):
            raise LoomError(f"Tuple has {len(self.values)} elements; no element {i!r}", where="Tuple")
        return self.values[i]

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __repr__(self):
        return f"Tuple({', '.join(map(repr, self.values))})"

    def _no_arithmetic(self, *_):
        raise LoomError(f"a Tuple ({len(self.values)} elements) has no arithmetic or comparison; read an element, "
                        "e.g. f[x][0]", where="Tuple")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no_arithmetic
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _no_arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __and__ = __or__ = __xor__ = _no_arithmetic
    __lshift__ = __rshift__ = __invert__ = _no_arithmetic


class TupleStage:
    """``f.update(i)`` of a Tuple-valued Func: its loop primitives apply to update ``i`` of every element."""

    def __init__(self, func, index: int):
        if index + 1 >= len(func.components[0].definitions):
            raise func._error(f"has no update definition {index}", user_location(), "update")
        self._func, self._index = func, index
        self._stages = [c.update(index) for c in func.components]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in ("split", "fuse", "reorder", "tile", "unroll", "vectorize", "parallel"):
            def primitive(*args, **kwargs):
                for stage in self._stages:
                    getattr(stage, name)(*args, **kwargs)
                return self
            return primitive
        f, i = self._func.name, self._index
        if name == "rfactor":
            raise LoomError(f"rfactor: {f} is Tuple-valued: rfactor the update of one element, e.g. "
                            f"{f}.components[0].update({i}).rfactor(...)", where=f"Func '{f}'", construct="rfactor")
        return getattr(self._stages[0], name)  # an unknown primitive: the Stage's located error


def is_tuple_value(value) -> bool:
    return isinstance(value, (tuple, Tuple))


def define_tuple(func, args, value, location) -> None:
    from .func import Func

    values = tuple(value)
    if not values:
        raise func._error("a Tuple needs at least one element", location)
    if func.defined and not func.components:
        raise func._error("has a scalar pure definition; an update cannot give it a Tuple", location)
    if not func.components:
        func.components = [Func(f"{func.name}_{i}") for i in range(len(values))]
        for comp, v in zip(func.components, values):
            comp.__setitem__(args, v)
        func.dims = list(func.components[0].dims)
        return
    if len(values) != len(func.components):
        raise func._error(f"Tuple update: gives {len(values)} Tuple elements but the Func has {len(func.components)}",
                          location, "Tuple update")
    for i, v in enumerate(values):
        if isinstance(v, Expr):
            for e in walk(v):
                if isinstance(e, Call) and e.target in func.components and e.target is not func.components[i]:
                    j = func.components.index(e.target)
                    raise func._error(f"Tuple update: element {i} of the update reads element {j}; elements are "
                                      "realised separately, so an element may read only its own old value",
                                      location, "Tuple update")
    # as in Halide, every element updates once per point of every RDom the update uses, named in it or not
    # (f[x] = (f[x][0] + r, f[x][1] * 2) doubles element 1 at each r), under every where predicate of those
    rdoms = {}
    for e in (*args, *values):
        for sub in walk(e) if isinstance(e, Expr) else ():
            if isinstance(sub, RVar):
                rdoms.setdefault(id(sub.rdom), sub.rdom)
    for comp, v in zip(func.components, values):
        if isinstance(v, Expr):
            for e in walk(v):
                if isinstance(e, Invalid):
                    raise func._error(e.message, location)
        comp._define_update(args, v, location, tuple(rdoms.values()))
