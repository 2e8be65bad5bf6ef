"""Funcs, ImageParams and boundary conditions: the algorithm half of the language.

``f[x, y] = e`` gives ``f`` its pure definition (all arguments distinct Vars);
any later assignment, including ``f[x, y] += e`` and ``f[0, 1] = 2``, is an
update definition evaluated in order over its RDom (RVars innermost).
The schedule half lives in ``schedule.py``; Func exposes its primitives.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from loom.errors import LoomError

from .expr import Call, Cast, Expr, Invalid, RVar, Select, Var, cast, literal, walk
from .declarative import DeclarativeMixin
from .location import user_location as _user_location
from .schedule import FuncSchedule, StageSchedule, ScheduleMixin
from .types import Bool, Int32, Type

_REALIZER = None  # set by loom.jit.realize (a higher layer) through register_realizer


def register_realizer(fn) -> None:
    global _REALIZER
    _REALIZER = fn


class Definition:
    """One pure or update definition of a Func."""

    def __init__(self, func: "Func", index: int, args: tuple[Expr, ...], value: Expr, location, rdoms=()):
        self.func = func
        self.index = index  # 0 is the pure definition
        self.args = args
        self.value = value
        self.location = location
        rvars: dict[str, RVar] = {}
        for a in (*args, value):
            for e in walk(a):
                if isinstance(e, RVar):  # as in Halide, the update runs over every dimension of the RDom, used or not
                    for r in e.rdom.vars:
                        rvars.setdefault(r.name, r)
        for rdom in rdoms:  # a Tuple update's element runs over the RDoms of every element (tuples.py)
            for r in rdom.vars:
                rvars.setdefault(r.name, r)
        self.rvars = sorted(rvars.values(), key=lambda r: (r.rdom.name, r.index))
        loops = [r.name for r in self.rvars] + [a.name for a in args if isinstance(a, Var)]
        self.schedule = StageSchedule(self, loops)

    @property
    def is_pure(self) -> bool:
        return self.index == 0

    def calls(self):
        for a in (*self.args, self.value):
            for e in walk(a):
                if isinstance(e, Call):
                    yield e

    def __repr__(self):
        lhs = f"{self.func.name}[{', '.join(map(repr, self.args))}]"
        return f"{lhs} = {self.value!r}"


class Stage(ScheduleMixin):
    """Handle returned by ``f.update(i)`` to schedule one update definition."""

    def __init__(self, definition: Definition):
        self._definition = definition

    @property
    def _stage_schedule(self):
        return self._definition.schedule

    @property
    def _owner_name(self):
        return f"{self._definition.func.name}.update({self._definition.index - 1})"

    def rfactor(self, *pairs) -> "Func":
        """``rfactor(r.y, v)`` or ``rfactor([(r.y, v), ...])``: the intermediate Func (``rfactor.py``)."""
        from .rfactor import rfactor
        if len(pairs) == 2 and not isinstance(pairs[0], (list, tuple)):
            pairs = ([tuple(pairs)],)
        if len(pairs) != 1:
            raise self._sched_error("rfactor", f"takes (RVar, Var) pairs, got {pairs!r}")
        return rfactor(self, pairs[0], _user_location())


class Func(DeclarativeMixin, ScheduleMixin):
    _count = 0

    def __init__(self, name: str | None = None):
        Func._count += 1
        self.name = name or f"f{Func._count}"
        self.type: Type | None = None
        self.dims: list[Var] = []
        self.definitions: list[Definition] = []
        self.schedule = FuncSchedule(self)
        self.wrapper: Func | None = None  # set by in_()
        self.consumer_wrappers: dict[int, Func] = {}  # set by in_(consumer): id(consumer) -> its own copy
        self.wrapped: Func | None = None  # for a wrapper: the Func it copies
        self.components: list[Func] = []  # a Tuple-valued Func: one Func per element (tuples.py)

    # algorithm ----------------------------------------------------------
    @property
    def defined(self) -> bool:
        return bool(self.definitions)

    @property
    def pure(self) -> Definition:
        return self.definitions[0]

    @property
    def updates(self) -> list[Definition]:
        return self.definitions[1:]

    def _error(self, msg, location=None, construct=None):
        filename, line = location or (None, None)
        return LoomError(f"{msg}", filename=filename, line=line,
                         where=f"Func '{self.name}'", construct=construct)

    def __getitem__(self, key) -> Expr:
        args = key if isinstance(key, tuple) else (key,)
        if self.components:
            from .tuples import Tuple
            return Tuple([c[args] for c in self.components])
        if not self.defined:  # only an update operator may follow (f[x] += v): Halide's implicit pure definition
            return _UndefinedRef(self, args, _user_location())
        if len(args) != len(self.dims):
            raise self._error(f"called with {len(args)} arguments but it has {len(self.dims)} dimensions",
                              _user_location())
        return Call(self, tuple(_index_expr(self, a, _user_location()) for a in args))

    def __setitem__(self, key, value):
        location = _user_location()
        args = key if isinstance(key, tuple) else (key,)
        from .tuples import define_tuple, is_tuple_value
        if is_tuple_value(value) or self.components:
            if not is_tuple_value(value):
                raise self._error("Tuple update: the Func is Tuple-valued; give every element, e.g. f[x] = (a, b)", location, "Tuple update")
            define_tuple(self, args, value, location)
            return
        if isinstance(value, _ImplicitUpdate):  # f[x] += v on an undefined Func
            if value.ref.func is not self:  # g[x] = f[x] + v: f is read before it is defined
                raise value.ref.error()
            value.define(args, location)
            return
        if isinstance(value, _UndefinedRef):
            raise value.error()
        if isinstance(value, Expr):
            for e in walk(value):
                if isinstance(e, Invalid):
                    raise self._error(e.message, location)
        if not self.defined:
            self._define_pure(args, value, location)
        else:
            self._define_update(args, value, location)

    def _define_pure(self, args, value, location):
        if not all(isinstance(a, Var) for a in args):
            raise self._error("the first (pure) definition must have distinct Vars as arguments, got "
                              f"[{', '.join(map(repr, args))}]", location)
        if len({a.name for a in args}) != len(args):
            raise self._error("pure definition arguments must be distinct Vars", location)
        value = literal(value, None)
        if isinstance(value, Invalid):
            raise self._error(value.message, location)
        names = {a.name for a in args}
        for e in walk(value):
            if isinstance(e, RVar):
                raise self._error(f"pure definition uses RVar '{e.name}'; use an update definition", location)
            if isinstance(e, Var) and e.name not in names:
                raise self._error(f"Var '{e.name}' is not an argument of the definition", location)
        self.type = value.type
        self.dims = list(args)
        self.definitions.append(Definition(self, 0, tuple(args), value, location))

    def _define_update(self, args, value, location, rdoms=()):
        """``rdoms``: RDoms the update runs over beyond those it names (another element's, in a Tuple update)."""
        if len(args) != len(self.dims):
            raise self._error(f"update has {len(args)} arguments but the Func has {len(self.dims)} dimensions",
                              location)
        value = literal(value, self.type)
        if isinstance(value, Invalid):
            raise self._error(value.message, location)
        if value.type != self.type:
            raise self._error(f"update value has type {value.type.name} but the Func has type "
                              f"{self.type.name}; cast explicitly", location)
        idx = tuple(_index_expr(self, a, location) for a in args)
        value = _apply_where(self, idx, value, rdoms)  # before the checks: the predicate's Vars must be bound too
        lhs_vars = set()
        for a in idx:
            if isinstance(a, Var) and not isinstance(a, RVar):
                if a.name in lhs_vars:
                    raise self._error(f"Var '{a.name}' appears twice on the left-hand side", location)
                lhs_vars.add(a.name)
        for a in idx:  # a Var inside another index (h[inp[r, y] / 64, y]) must be bound bare in its own place
            if not (isinstance(a, Var) and not isinstance(a, RVar)):
                for e in walk(a):
                    if isinstance(e, Var) and not isinstance(e, RVar) and e.name not in lhs_vars:
                        raise self._error(f"Var '{e.name}' must appear bare on the left-hand side of an "
                                          f"update, not only inside '{a!r}'", location)
        for e in walk(value):
            if isinstance(e, Var) and not isinstance(e, RVar) and e.name not in lhs_vars:
                raise self._error(f"Var '{e.name}' is used in the update but is not bound on its "
                                  "left-hand side", location)
        self.definitions.append(Definition(self, len(self.definitions), idx, value, location, rdoms))

    def realize(self, sizes, inputs: dict | None = None, origin=None):
        """Halide's ``realize``: compute this Func over ``sizes`` (x first) through the CPU path and
        return a ``Buffer`` (see ``loom.jit.realize``; the CPU path registers itself when ``loom.jit``
        is imported, since the frontend may not import the layers above it)."""
        if _REALIZER is None:
            raise self._error("realize needs the CPU path: import loom.jit first", _user_location(), "realize")
        return _REALIZER(self, sizes, inputs, origin)

    def update(self, index: int = 0) -> Stage:
        if self.components:  # its definitions live in the elements (tuples.py)
            from .tuples import TupleStage

            return TupleStage(self, index)
        if index + 1 >= len(self.definitions):
            raise self._error(f"has no update definition {index}", _user_location(), "update")
        return Stage(self.definitions[index + 1])

    def __repr__(self):
        return f"Func({self.name})"

    @property
    def _stage_schedule(self):
        if self.components:
            raise self._error("is Tuple-valued: schedule its elements, e.g. "
                              f"{self.name}.components[0].compute_root()", _user_location(), "schedule")
        if not self.defined:
            raise self._error("cannot be scheduled before it is defined", _user_location())
        return self.pure.schedule

    @property
    def _owner_name(self):
        return self.name


# Halide schedules a Tuple-valued Func as one: each of these applies to every element (tuples.py)
TUPLE_WIDE = ("split", "fuse", "reorder", "tile", "unroll", "vectorize", "parallel", "bound", "compute_root",
              "compute_inline", "compute_at", "store_at", "store_root", "store_in")


def _tuple_wide(name: str):
    method = getattr(Func, name)

    def primitive(self, *args, **kwargs):
        if not self.components:
            return method(self, *args, **kwargs)
        for element in self.components:
            getattr(element, name)(*args, **kwargs)
        return self

    primitive.__name__, primitive.__doc__ = name, method.__doc__
    return primitive


for _name in TUPLE_WIDE:
    setattr(Func, _name, _tuple_wide(_name))


class _UndefinedRef:
    """``f[args]`` of a Func not yet defined. Only an update operator may use it (``f[x] += v``): Halide then
    gives ``f`` the pure definition that operator starts from (0 for + and -, 1 for * and /) in ``v``'s type."""

    _IDENTITY = {"add": 0, "sub": 0, "mul": 1, "div": 1}

    def __init__(self, func, args, location):
        self.func, self.args, self.location = func, args, location

    def error(self) -> LoomError:
        return self.func._error("used before it has a pure definition; write "
                                f"{self.func.name}[x, ...] = ... first (or update it: {self.func.name}[x] += ...)",
                                self.location)

    def _update(self, op, value):
        return _ImplicitUpdate(self, op, value)

    def __add__(self, v):
        return self._update("add", v)

    def __sub__(self, v):
        return self._update("sub", v)

    def __mul__(self, v):
        return self._update("mul", v)

    def __truediv__(self, v):
        return self._update("div", v)

    def _refuse(self, *_):
        raise self.error()

    __radd__ = __rsub__ = __rmul__ = __rtruediv__ = __neg__ = __lt__ = __gt__ = __le__ = __ge__ = _refuse

    def __getattr__(self, name):  # any other use of the undefined Func
        raise object.__getattribute__(self, "error")()


class _ImplicitUpdate:
    """``f[args] op v`` on an undefined Func: valid only as the value of ``f[args] op= v``."""

    def __init__(self, ref: _UndefinedRef, op: str, value):
        self.ref, self.op, self.value = ref, op, value

    def error(self) -> LoomError:
        return self.ref.error()

    def define(self, args, location):
        """The implicit pure definition (the update's bare Vars where it has them, fresh ones elsewhere), then
        the update itself."""
        from .expr import binop

        f = self.ref.func
        value = literal(self.value, None)
        if isinstance(value, Invalid):
            raise f._error(value.message, location)
        pure = tuple(a if isinstance(a, Var) and not isinstance(a, RVar) else Var(f"_{f.name}_{i}")
                     for i, a in enumerate(args))
        f._define_pure(pure, literal(_UndefinedRef._IDENTITY[self.op], value.type), location)
        f[args] = binop(self.op, f[args], value)


def _apply_where(func, idx, value, extra=()) -> Expr:
    """``select(p, value, func[idx])`` for the ``where`` predicate ``p`` of each RDom the update uses (and of
    ``extra``)."""
    rdoms = {id(r): r for r in extra if r.predicate is not None}
    for a in (*idx, value):
        for e in walk(a):
            if isinstance(e, RVar) and e.rdom.predicate is not None:
                rdoms.setdefault(id(e.rdom), e.rdom)
    for rdom in rdoms.values():
        value = Select(rdom.predicate, value, Call(func, idx))
    return value


def _index_expr(func, a, location) -> Expr:
    e = literal(a, Int32)
    if isinstance(e, Invalid):
        raise func._error(e.message, location)
    for sub in walk(e):
        if isinstance(sub, Invalid):
            raise func._error(sub.message, location)
    if not (e.type.is_int or e.type == Bool):
        raise func._error(f"index '{e!r}' has type {e.type.name}; indices must be integers", location)
    return e if e.type == Int32 else Cast(Int32, e)  # Halide casts every index to i32 (a u8 value reads lut[v])


class ImageParam:
    """An input buffer of a given element type and dimensionality."""

    def __init__(self, type_: Type, dimensions: int, name: str):
        self.type = type_
        self.dimensions = dimensions
        self.name = name
        self.streamed = False
        self.bound = None  # the array set() binds, read by realize()
        self.from_buffer = False  # a Buffer read in a definition: its contents are known when the pipeline is built

    def __getitem__(self, key) -> Expr:
        args = key if isinstance(key, tuple) else (key,)
        if len(args) != self.dimensions:
            filename, line = _user_location()
            raise LoomError(f"ImageParam '{self.name}' called with {len(args)} arguments but has "
                            f"{self.dimensions} dimensions", filename=filename, line=line,
                            where=f"ImageParam '{self.name}'")
        return Call(self, tuple(_index_expr_param(self, a) for a in args))

    def stream_to_accelerator(self):
        self.streamed = True
        return self

    def set(self, buffer):
        """Bind an input (a ``Buffer`` or a numpy array in loom's layout) for ``realize``."""
        from .buffer import Buffer
        arr = np.asarray(buffer.array if isinstance(buffer, Buffer) else buffer)
        if arr.ndim != self.dimensions or arr.dtype != self.type.dtype:
            raise LoomError(f"set: expected a {self.dimensions}-d {self.type.name} array, got {arr.ndim}-d {arr.dtype}",
                            where=f"ImageParam '{self.name}'", construct="set")
        self.bound = arr
        return self

    def __repr__(self):
        return f"ImageParam({self.name})"


def with_bound_inputs(params, inputs: dict | None) -> dict:
    """``inputs`` plus, for each ImageParam they do not name, the array ``set`` bound to it (a ``Buffer`` read
    in a definition is such an ImageParam)."""
    out = dict(inputs or {})
    for p in params:
        if p.name not in out and getattr(p, "bound", None) is not None:
            out[p.name] = p.bound
    return out


def _index_expr_param(param, a):
    e = literal(a, Int32)
    if isinstance(e, Invalid) or not (e.type.is_int or e.type == Bool):
        raise LoomError(f"bad index {a!r}", where=f"ImageParam '{param.name}'")
    return e if e.type == Int32 else Cast(Int32, e)


class BoundaryFunc(Func):
    """A Func reading ``source`` with a boundary condition (evaluated specially).

    ``kind`` is "repeat_edge" (clamp coordinates into the source), "mirror_image" /
    "mirror_interior" (reflect them), "repeat_image" (wrap them: ``mirror.py``) or
    "constant_exterior" (``value`` outside the source).
    """

    def __init__(self, source, kind: str, value=None, name: str | None = None, bounds=None):
        if name is not None and not isinstance(name, str):
            raise LoomError(f"{kind}: name must be a str, got {name!r} (the box is the bounds argument)",
                            where=f"{kind}({getattr(source, 'name', source)!r})", construct=kind)
        super().__init__(name or f"{source.name}_{kind}")
        self.source = source
        self.kind = kind
        ndim = source.dimensions if isinstance(source, ImageParam) else len(source.dims)
        self.bounds = _boundary_bounds(bounds, ndim, self.name, kind)
        self.type = source.type
        self.dims = [Var(f"_{self.name}_{i}") for i in range(ndim)]
        # Halide casts the exterior value to the source's type; it may be any scalar Expr (a Param too)
        # (a Python int is Halide's i32 constant, so one outside the source's range wraps: 300 is 44 in u8)
        self.value = cast(source.type, literal(value, _exterior_literal_type(value, source.type))) \
            if value is not None else None
        if isinstance(self.value, Invalid):
            raise self._error(self.value.message, _user_location())
        for e in walk(self.value) if self.value is not None else ():
            if isinstance(e, (Var, RVar, Call)):
                raise self._error(f"the exterior value '{self.value!r}' must not depend on coordinates or read a "
                                  "Func (a constant, a Param or an expression of them)", _user_location())
        # the definition documents the semantics; evaluation handles clipping
        self.definitions.append(Definition(self, 0, tuple(self.dims), Call(source, tuple(self.dims)),
                                           _user_location()))


    def source_box(self, input_shapes) -> list:
        """[lo, hi] per dimension the condition keeps reads inside: its ``bounds`` ((min, extent) pairs, as
        Halide's ``BoundaryConditions``), else the input's shape (``input_shapes``: name -> numpy shape) or
        the source Func's ``bound()``s."""
        if self.bounds is not None:  # a dimension given no bounds is unbounded: reads pass through
            return [(-math.inf, math.inf) if b is None else (b[0], b[0] + b[1] - 1) for b in self.bounds]
        src = self.source
        if isinstance(src, ImageParam):
            if src.name not in input_shapes:
                raise LoomError("no input array given", where=f"ImageParam '{src.name}'")
            return [(0, n - 1) for n in input_shapes[src.name][::-1]]
        bounds = src.schedule.bounds
        if len(bounds) != len(src.dims):
            raise LoomError("a boundary condition on a Func needs bound() on every dimension",
                            where=f"Func '{src.name}'", construct="bound")
        return [(bounds[d.name][0], bounds[d.name][0] + bounds[d.name][1] - 1) for d in src.dims]


def _exterior_literal_type(value, source_type):
    """The type ``constant_exterior`` reads a Python number in: an int as Halide's bindings do (i32, or
    i64 beyond it) before the cast to the source's type; anything else next to the source's type."""
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    return None if is_int and source_type.is_int else source_type


def _boundary_bounds(bounds, ndim: int, name: str, kind: str):
    """Halide's bounds argument checked: a (min, extent) pair of ints per dimension, extents positive, or None
    for a dimension left unbounded; dimensions past the list are unbounded too (Halide's Range())."""
    if bounds is None:
        return None
    pairs = list(bounds) if isinstance(bounds, (list, tuple)) else None
    ok = pairs is not None and 0 < len(pairs) <= ndim and all(
        b is None or isinstance(b, (list, tuple)) and len(b) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in b) and b[1] > 0 for b in pairs)
    if not ok:
        filename, line = _user_location()
        raise LoomError(f"{kind}: bounds must be up to {ndim} (min, extent) pairs of ints with positive extents "
                        f"(None: unbounded), one per dimension, got {bounds!r}", filename=filename, line=line,
                        where=f"Func '{name}'", construct=kind)
    pairs += [None] * (ndim - len(pairs))
    return tuple(None if b is None else (int(b[0]), int(b[1])) for b in pairs)


def boundary_condition(source, kind: str, value=None, name: str | None = None, bounds=None) -> Func:
    """A ``BoundaryFunc``; of a Tuple-valued Func, a Tuple-valued Func of one per element (as Halide's, whose
    ``constant_exterior`` then takes a Tuple of values, one per element)."""
    elements = getattr(source, "components", None)
    if not elements:
        return BoundaryFunc(source, kind, value, name=name, bounds=bounds)
    values = [None] * len(elements)
    if kind == "constant_exterior":
        from .tuples import is_tuple_value
        if not is_tuple_value(value) or len(value) != len(elements):
            filename, line = _user_location()
            raise LoomError(f"{kind} of a Tuple-valued Func takes a Tuple of {len(elements)} values, one per element, "
                            f"got {value!r}", filename=filename, line=line, where=f"Func '{source.name}'",
                            construct=kind)
        values = list(value)
    wrapper = Func(name or f"{source.name}_{kind}")
    wrapper.components = [BoundaryFunc(c, kind, v, name=f"{wrapper.name}_{i}", bounds=bounds)
                          for i, (c, v) in enumerate(zip(elements, values))]
    wrapper.dims = list(wrapper.components[0].dims)
    return wrapper


def repeat_edge(source, bounds=None, *, name: str | None = None) -> Func:
    """Clamp-to-edge boundary condition over ``bounds`` ((min, extent) per dimension), else the source's
    extent."""
    return boundary_condition(source, "repeat_edge", name=name, bounds=bounds)


def constant_exterior(source, value, bounds=None, *, name: str | None = None) -> Func:
    """``value`` outside ``bounds`` ((min, extent) per dimension), else outside the source's extent."""
    return boundary_condition(source, "constant_exterior", value, name=name, bounds=bounds)
