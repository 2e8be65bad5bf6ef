"""Expression trees of the pipeline language.

Expressions are immutable nodes built by operator overloading. A type error
(mixing u8 with u16, a float literal with an integer) does not raise at once:
it becomes an ``Invalid`` node, and the Func definition that receives it raises
a ``LoomError`` naming the Func (the Func is not known where the error happens).
"""

from __future__ import annotations

import numbers

from .types import (BFloat16, Bool, Float32, Float64, Int8, Int16, Int32, Int64, Type, UInt8, UInt16, UInt32, UInt64,
                    integer_type)

_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "min": "min", "max": "max",
          "and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>"}
_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


class Expr:
    type: Type | None = None
    __hash__ = object.__hash__

    # arithmetic ---------------------------------------------------------
    def __add__(self, o): return binop("add", self, o)
    def __radd__(self, o): return binop("add", o, self)
    def __sub__(self, o): return binop("sub", self, o)
    def __rsub__(self, o): return binop("sub", o, self)
    def __mul__(self, o): return binop("mul", self, o)
    def __rmul__(self, o): return binop("mul", o, self)
    def __truediv__(self, o): return binop("div", self, o)
    def __rtruediv__(self, o): return binop("div", o, self)
    def __floordiv__(self, o): return binop("div", self, o)
    def __rfloordiv__(self, o): return binop("div", o, self)
    def __mod__(self, o): return binop("mod", self, o)
    def __rmod__(self, o): return binop("mod", o, self)
    def __lshift__(self, o): return binop("shl", self, o)
    def __rlshift__(self, o): return binop("shl", o, self)
    def __rshift__(self, o): return binop("shr", self, o)
    def __rrshift__(self, o): return binop("shr", o, self)
    def __and__(self, o): return binop("and", self, o)
    def __rand__(self, o): return binop("and", o, self)
    def __or__(self, o): return binop("or", self, o)
    def __ror__(self, o): return binop("or", o, self)
    def __xor__(self, o): return binop("xor", self, o)
    def __rxor__(self, o): return binop("xor", o, self)
    def __neg__(self):
        if self.type is not None and self.type.is_float:
            return binop("mul", self, -1.0)
        return binop("sub", 0, self)
    def __invert__(self): return self if isinstance(self, Invalid) else Unary("not", self)
    def __abs__(self): return absolute(self)
    # comparisons ----------------------------------------------------------
    def __lt__(self, o): return binop("lt", self, o)
    def __le__(self, o): return binop("le", self, o)
    def __gt__(self, o): return binop("gt", self, o)
    def __ge__(self, o): return binop("ge", self, o)
    def __eq__(self, o): return binop("eq", self, o)  # type: ignore[override]
    def __ne__(self, o): return binop("ne", self, o)  # type: ignore[override]

    def __bool__(self):
        raise TypeError("a pipeline Expr has no truth value; use select(cond, a, b)")

    def children(self) -> tuple["Expr", ...]:
        return ()


class Invalid(Expr):
    """A type error carried until a Func definition can report it."""

    def __bool__(self):
        return True

    def __init__(self, message: str):
        self.message = message
        self.type = None


class Const(Expr):
    def __init__(self, value, type_: Type):
        self.value = value
        self.type = type_

    def __repr__(self):
        return f"{self.type.name}({self.value})" if self.type not in (Int32,) else repr(self.value)


class Var(Expr):
    """A pure loop variable (i32)."""

    type = Int32

    def __init__(self, name: str | None = None):
        Var._count += 1
        self.name = name or f"v{Var._count}"

    _count = 0

    def __repr__(self):
        return self.name


class RVar(Expr):
    type = Int32

    def __new__(cls, *args, **kwargs):
        # Halide's RVar("ro") names a loop a split of a reduction variable makes; loom's splits name their loops
        # with Vars, so RVar(name) alone is Var(name)
        if len(args) <= 1 and not kwargs and (not args or isinstance(args[0], str)):
            return Var(*args)
        return super().__new__(cls)

    def __init__(self, rdom: "RDom", index: int, min_: int, extent: int):
        self.rdom = rdom
        self.index = index
        self.min = min_
        self.extent = extent
        self.name = f"{rdom.name}.{'xyzw'[index] if index < 4 else index}"

    def __repr__(self):
        return self.name


class RDom:
    """A reduction domain: RDom(min0, extent0, min1, extent1, ...), RDom([(min, extent), ...]), or RDom(buffer)
    over a Buffer's extents (Halide's ``RDom(Buffer)``); the name may also come last, as Halide's Python
    bindings take it (``RDom([(0, 3)], "r")``)."""

    _count = 0

    def __init__(self, *bounds, name: str | None = None):
        RDom._count += 1
        if bounds and isinstance(bounds[-1], str):
            self.name = bounds[-1]
            if name is not None:
                raise self._error(f"RDom given two names, {bounds[-1]!r} and {name!r}")
            bounds, name = bounds[:-1], bounds[-1]
        self.name = name or f"r{RDom._count}"
        if len(bounds) == 1 and hasattr(bounds[0], "extents") and hasattr(bounds[0], "array"):  # a Buffer
            bounds = ([(0, int(e)) for e in bounds[0].extents],)
        if len(bounds) == 1 and isinstance(bounds[0], (list, tuple)):
            if not all(isinstance(b, (list, tuple)) and len(b) == 2 for b in bounds[0]):
                raise self._error(f"RDom([(min, extent), ...]) takes pairs, got {bounds[0]!r}")
            pairs = [tuple(b) for b in bounds[0]]
        else:
            if len(bounds) % 2:
                raise self._error(f"RDom takes (min, extent) pairs, got {len(bounds)} bound(s)")
            pairs = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
        if not pairs:
            raise self._error("RDom needs at least one (min, extent) pair")
        for lo, ext in pairs:
            if isinstance(lo, bool) or isinstance(ext, bool) or not isinstance(lo, int) or not isinstance(ext, int) \
                    or ext <= 0:
                raise self._error(f"RDom bounds must be constant ints with extent > 0, got ({lo!r}, {ext!r})")
        self.vars = [RVar(self, i, lo, ext) for i, (lo, ext) in enumerate(pairs)]
        self.predicate: Expr | None = None

    def where(self, predicate) -> "RDom":
        """Restrict the domain to the points where ``predicate`` (a bool Expr) holds (Halide's
        ``RDom::where``; several calls are and-ed). An update over the RDom leaves its Func unchanged
        at the other points; bounds are still inferred over the RDom's whole box."""
        pred = literal(predicate, Bool)
        if isinstance(pred, Invalid):
            raise self._error(f"where: {pred.message}")
        for e in walk(pred):
            if isinstance(e, Invalid):
                raise self._error(f"where: {e.message}")
        if pred.type != Bool:
            raise self._error(f"where takes a bool condition, got {pred.type.name} '{pred!r}'")
        self.predicate = pred if self.predicate is None else BinOp("and", self.predicate, pred, Bool)
        return self

    def _error(self, message: str):
        from loom.errors import LoomError

        from .location import user_location

        filename, line = user_location()
        return LoomError(message, filename=filename, line=line, where=f"RDom '{self.name}'")

    def __getitem__(self, i):
        if isinstance(i, bool) or not isinstance(i, int) or not -len(self.vars) <= i < len(self.vars):
            raise self._error(f"RDom has {len(self.vars)} dimension(s); no dimension {i!r}")
        return self.vars[i]

    def __len__(self):
        return len(self.vars)

    x = property(lambda self: self[0])
    y = property(lambda self: self[1])
    z = property(lambda self: self[2])
    w = property(lambda self: self[3])


class Call(Expr):
    """A read of a Func or ImageParam at index expressions."""

    def __init__(self, target, args: tuple[Expr, ...]):
        self.target = target
        self.args = args
        self.type = target.type

    def children(self):
        return self.args

    def __repr__(self):
        return f"{self.target.name}[{', '.join(map(repr, self.args))}]"


class Cast(Expr):
    def __init__(self, type_: Type, value: Expr):
        self.type = type_
        self.value = value

    def children(self):
        return (self.value,)

    def __repr__(self):
        return f"{self.type.name}({self.value!r})"


class BinOp(Expr):
    def __init__(self, op: str, a: Expr, b: Expr, type_: Type):
        self.op = op
        self.a = a
        self.b = b
        self.type = type_

    def children(self):
        return (self.a, self.b)

    def __repr__(self):
        if self.op in ("min", "max"):
            return f"{self.op}({self.a!r}, {self.b!r})"
        sym = _ARITH.get(self.op) or _COMPARE[self.op]
        return f"({self.a!r} {sym} {self.b!r})"


class Unary(Expr):
    """``not`` (bool not / bitwise not) and ``abs``."""

    def __init__(self, op: str, value: Expr):
        self.op = op
        self.value = value
        if isinstance(value, Invalid):
            self.type = None
        elif op == "abs" and value.type.is_signed:
            self.type = integer_type(False, value.type.bits)
        else:
            self.type = value.type

    def children(self):
        return (self.value,)

    def __repr__(self):
        return f"{self.op}({self.value!r})"


class Select(Expr):
    def __init__(self, cond: Expr, t: Expr, f: Expr):
        self.cond, self.t, self.f = cond, t, f
        self.type = t.type

    def children(self):
        return (self.cond, self.t, self.f)

    def __repr__(self):
        return f"select({self.cond!r}, {self.t!r}, {self.f!r})"


# construction helpers -------------------------------------------------------

def first_invalid(*exprs):
    for e in exprs:
        if isinstance(e, Invalid):
            return e
    return None


def literal(value, like: Type | None) -> Expr:
    """Turn a Python number into a Const, adopting ``like`` when given."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return Const(bool(value), Bool)
    if isinstance(value, numbers.Integral):
        if like == Bool and value in (0, 1):  # Halide's 1-bit arithmetic: (a > 3) + 1 stays a bool
            return Const(bool(value), Bool)
        # as Halide's Python bindings: an int beyond i32 is an i64 constant (which then promotes as any
        # operand), one beyond i64 a float
        if not Int32.can_represent(int(value)):
            if Int64.can_represent(int(value)):
                return Const(int(value), Int64)
            return literal(float(value), Float32)
        t = like if like is not None and like.kind != "bool" else Int32
        if not t.can_represent(int(value)):
            return Invalid(f"integer literal {value} does not fit in {t.name}; cast explicitly")
        return Const(int(value) if t.is_int else float(value), t)
    if isinstance(value, numbers.Real):
        if like is not None and not like.is_float:
            return Invalid(f"float literal {value} used with {like.name}; cast the other operand to f32 first")
        t = like or Float32
        if t == BFloat16:  # a bfloat16 constant holds the nearest bfloat16 value
            from .types import round_to_bf16
            value = float(round_to_bf16(value))
        return Const(float(value), t)
    if callable(getattr(type(value), "error", None)):  # a read of a Func not yet defined (func._UndefinedRef)
        return Invalid(str(value.error()))
    return Invalid(f"cannot use {type(value).__name__} value {value!r} in an expression")


def _literal_type(value, other: Type | None) -> Type | None:
    """The type a Python literal takes beside an expression of type ``other``: a float literal is f32 (Halide's
    Python float literals are: bf16 + 1.1 is f32, u8 * 0.5 too, and f64 * 0.1 multiplies by 0.1 rounded to f32);
    an int literal takes ``other`` (beside a bool, 0 and 1 are bools, as Halide's 1-bit arithmetic keeps them)."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and other is not None:
        return Float32
    return other


def promoted(ta: Type, tb: Type) -> Type | None:
    """Halide's type of an operator on ``ta`` and ``tb`` (``match_types``): a float wins over an integer (the
    wider float over the narrower), the wider of two integers of one signedness, and a signed and an unsigned
    integer give the signed type of the wider width (u8 + i16: i16; u32 + i16: i32; a Var is i32); a bool is a
    1-bit unsigned integer, so the other type wins."""
    if ta == tb:
        return ta
    if Bool in (ta, tb):
        return tb if ta == Bool else ta
    if ta.is_float or tb.is_float:
        if ta.is_float and tb.is_float:
            return ta if ta.bits > tb.bits else tb
        return ta if ta.is_float else tb
    bits = max(ta.bits, tb.bits)
    if ta.kind == tb.kind:
        return ta if ta.bits == bits else tb
    return integer_type(True, bits)


def shifted(ta: Type, tb: Type) -> Type | None:
    """Halide's type of ``a << b`` / ``a >> b`` on integers: ``a``'s signedness at the wider width (u8 << i32(1)
    is u32, i16 << u8 is i16, u8 << x is u32)."""
    if not (ta.is_int and tb.is_int):
        return None
    return integer_type(ta.is_signed, max(ta.bits, tb.bits))


def matched(a, b, describe, rule=promoted):
    """``a`` and ``b`` (Exprs or Python literals) cast to one type by ``rule`` (Halide's match_types), a literal
    first taking the other's type; an Invalid when they have none (``describe(a, b)`` names the construct)."""
    ta = a.type if isinstance(a, Expr) else None
    tb = b.type if isinstance(b, Expr) else None
    a = literal(a, _literal_type(a, tb))
    b = literal(b, _literal_type(b, ta))
    bad = first_invalid(a, b)
    if bad is not None:
        return bad
    if a.type != b.type:
        t = rule(a.type, b.type)
        if t is None:
            return Invalid(f"type mismatch in {describe(a, b)}: {a.type.name} vs {b.type.name}; "
                           f"cast one side explicitly (e.g. u16(...))")
        a, b = cast(t, a), cast(t, b)
    return a, b


def binop(op: str, a, b) -> Expr:
    sym = _ARITH.get(op) or _COMPARE.get(op)
    pair = matched(a, b, lambda a, b: f"'{a!r} {sym} {b!r}'", shifted if op in ("shl", "shr") else promoted)
    if isinstance(pair, Invalid):
        return pair
    a, b = pair
    if op in ("shl", "shr", "xor") and not a.type.is_int:
        return Invalid(f"operator '{_ARITH[op]}' needs integer operands, got {a.type.name}")
    if op == "mod" and not (a.type.is_int or a.type == Float32):  # f32: a - b * floor(a / b), as Halide
        return Invalid(f"operator '%' needs integer or f32 operands, got {a.type.name}")
    if op in ("and", "or") and a.type.is_float:
        return Invalid(f"operator '{_ARITH[op]}' needs integer or bool operands, got {a.type.name}")
    if op in _COMPARE:
        return BinOp(op, a, b, Bool)
    if a.type == Bool and op not in ("and", "or", "xor", "min", "max"):
        return Invalid(f"arithmetic '{_ARITH[op]}' on bool values; cast to an integer type first")
    return BinOp(op, a, b, a.type)


def cast(type_: Type, value) -> Expr:
    if isinstance(value, Expr):
        if isinstance(value, Invalid):
            return value
        return value if value.type == type_ else Cast(type_, value)
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if integral and type_.is_int and type_.can_represent(int(value)):
        return Const(int(value), type_)  # u64(2**64 - 1) exactly, not through an i64 or float literal
    # an int the type cannot hold is Halide's i32 (i64) constant cast with wrap-around: u16(-3) is 65533
    wraps = integral and type_.is_int
    e = literal(value, None if wraps else type_ if integral or type_.is_float else None)
    if isinstance(e, Invalid):
        return e
    return e if e.type == type_ else Cast(type_, e)


def _caster(t: Type):
    def f(value):
        return cast(t, value)
    f.__name__ = t.name
    f.__doc__ = f"Cast to {t.name}."
    return f


u8 = _caster(UInt8)
u16 = _caster(UInt16)
u32 = _caster(UInt32)
u64 = _caster(UInt64)
i8 = _caster(Int8)
i16 = _caster(Int16)
i32 = _caster(Int32)
i64 = _caster(Int64)
f32 = _caster(Float32)
f64 = _caster(Float64)
bf16 = bfloat16 = _caster(BFloat16)


def select(cond, t, f, *more) -> Expr:
    """``select(c, t, f)``; Halide's chain ``select(c1, a, c2, b, ..., default)`` is
    ``select(c1, a, select(c2, b, ...))``."""
    if more:
        if len(more) % 2:
            return Invalid(f"select takes a condition and a value per case and a default: an odd number of "
                           f"arguments, got {3 + len(more)}")
        f = select(f, *more)
    if _is_tuple(t) or _is_tuple(f):
        return _tuple_select(cond, t, f)
    tt = t.type if isinstance(t, Expr) else None
    tf = f.type if isinstance(f, Expr) else None
    t = literal(t, tf)
    f = literal(f, tt)
    cond = literal(cond, Bool)
    bad = first_invalid(cond, t, f)
    if bad is not None:
        return bad
    if cond.type != Bool:
        return Invalid(f"select condition must be bool, got {cond.type.name}")
    if t.type != f.type:
        return Invalid(f"select branches differ in type: {t.type.name} vs {f.type.name}")
    return Select(cond, t, f)


def _is_tuple(v) -> bool:
    return isinstance(v, tuple) or type(v).__name__ == "Tuple"  # tuples.Tuple (that module imports this one)


def _tuple_select(cond, t, f):
    """Halide's select of Tuples: element by element, the condition a scalar or a Tuple of one per element."""
    from .tuples import Tuple

    if not (_is_tuple(t) and _is_tuple(f)) or len(t) != len(f) or (_is_tuple(cond) and len(cond) != len(t)):
        return Invalid(f"select of Tuples needs Tuples of one size on both sides (and a condition per element "
                       f"if a Tuple), got {t!r} and {f!r}")
    conds = list(cond) if _is_tuple(cond) else [cond] * len(t)
    return Tuple([select(c, a, b) for c, a, b in zip(conds, t, f)])


def minimum(a, b) -> Expr:
    return binop("min", a, b)


def maximum(a, b) -> Expr:
    return binop("max", a, b)


def clamp(x, lo, hi) -> Expr:
    """Halide's ``clamp``: max(min(x, hi), lo), so ``lo`` wins when the bounds cross (lo > hi)."""
    return maximum(minimum(x, hi), lo)


def saturating_cast(type_: Type, value) -> Expr:
    """``value`` cast to ``type_`` with out-of-range values clamped to its range first (Halide's
    ``saturating_cast``): the bounds are the target's limits as the source type holds them (a float source
    rounds them inward, so 2^31 - 1 becomes the largest f32 below it)."""
    e = literal(value, None)
    if isinstance(e, Invalid) or e.type == type_ or type_.is_float:
        return cast(type_, e)
    src = e.type
    if not src.is_float:
        lo = type_.min_value if type_.min_value > src.min_value else None
        hi = type_.max_value if type_.max_value < src.max_value else None
        if lo is not None:
            e = maximum(e, Const(lo, src))
        if hi is not None:
            e = minimum(e, Const(hi, src))
        return cast(type_, e)
    lo = _inward_float(type_.min_value, src, up=True)
    hi = _inward_float(type_.max_value, src, up=False)
    out = cast(type_, minimum(maximum(e, Const(lo, src)), Const(hi, src)))
    # a limit the float cannot hold (2^31 - 1 in f32): values beyond the inward bound take the limit itself
    if hi != type_.max_value:
        out = select(binop("gt", e, Const(hi, src)), Const(type_.max_value, type_), out)
    if lo != type_.min_value:
        out = select(binop("lt", e, Const(lo, src)), Const(type_.min_value, type_), out)
    return out


def _inward_float(bound: int, t: Type, up: bool):
    """``bound`` as the nearest value of float type ``t`` not beyond it (towards zero)."""
    import numpy as np

    v = np.array(bound, dtype=t.dtype)
    if (int(v) > bound) if not up else (int(v) < bound):
        v = np.nextafter(v, np.array(0, dtype=t.dtype))
    return float(v)


def absolute(x) -> Expr:
    x = literal(x, None)
    if isinstance(x, Invalid):
        return x
    if x.type == Bool:
        return Invalid("abs of a bool")
    return Unary("abs", x)


def absd(a, b) -> Expr:
    """Halide's ``absd``: |a - b| without overflow, in the unsigned type of the operands' width (f32: f32)."""
    a, b = literal(a, b.type if isinstance(b, Expr) else None), literal(b, a.type if isinstance(a, Expr) else None)
    bad = first_invalid(a, b)
    if bad is not None:
        return bad
    if a.type != b.type:
        return Invalid(f"absd of {a.type.name} and {b.type.name}: cast one side")
    if a.type.is_float:
        return absolute(binop("sub", a, b))
    diff = select(binop("lt", a, b), binop("sub", b, a), binop("sub", a, b))  # wraps into the unsigned range
    return diff if a.type.kind == "uint" else cast(integer_type(False, a.type.bits), diff)


def mux(index, values) -> Expr:
    """Halide's ``mux``: ``values[index]``, the last value for an index out of range (below 0 or past the end)."""
    values = list(values)
    if not values:
        return Invalid("mux needs at least one value")
    index = literal(index, Int32)
    out = values[-1]
    for k in reversed(range(len(values) - 1)):
        out = select(binop("eq", index, literal(k, index.type)), values[k], out)
    return literal(out, None)


def walk(expr: Expr):
    """Pre-order traversal."""
    stack = [expr]
    while stack:
        e = stack.pop()
        yield e
        stack.extend(reversed(e.children()))
