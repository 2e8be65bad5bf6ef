"""SSA value wrappers with Python operator overloading, and the typing rules.

Type rules (the kernel language is statically typed, no implicit promotion):

* Both operands of a binary operator must have the same type.
* A Python ``int`` literal adopts the other operand's type (``x + 1`` with
  ``x: F32`` is fine); a Python ``float`` literal only mixes with float values
  (``n + 0.5`` with ``n: Index`` is an error).  Two Python constants fold at
  trace time with Python semantics.  An int literal must fit the type: any
  bit pattern for ``+ - * & | ^ <<`` and stores (``x & 0xF0`` on ``I8``), the
  signed range for ops that read a sign (comparisons, ``//``, ``%``, ``>>``,
  min/max: ``x > 200`` on ``I8`` is an error, not ``x > -56``).  A float
  literal that would round to inf in the type (``1e40`` with ``F32``) is an
  error; ``math.inf`` is fine.
* ``a if c else b`` of two literals under a traced ``c`` is a literal too: it takes the type of the value, store
  or return it meets (``y[i] = 255 if p else 0`` on ``U8``), else ints are ``index``, floats ``f64``
  (``LiteralChoice``).
* ``index`` and ``iN`` never mix without a cast (``Index(x)``, ``I32(i)``).
* ``/`` is float division only; on integers use ``//``.
* ``//`` on signed ints/index is ``arith.floordivsi`` (rounds toward -inf, like
  Python).
* ``%`` follows Python: the result has the sign of the divisor (``-7 % 3 == 2``);
  on ints it is ``arith.remsi`` plus a sign fix-up.  Float ``//`` and ``%`` are
  Python's and numpy's to the bit (``1.0 // 0.1 == 9.0``): built on the exact
  remainder ``arith.remf`` (``fmod``) as CPython's float divmod; a zero
  divisor gives numpy's NaN / inf rather than an exception.
* ``**``: float ** float -> ``math.powf``; float ** int literal 0..4 -> repeated
  multiplication, other int literals -> ``math.powf``; int ** int -> ``math.ipowi``.
* ``min``/``max`` on floats propagate NaN and order -0.0 < +0.0
  (``arith.minimumf``/``maximumf``: IEEE 754-2019 minimum/maximum; ``np.minimum``
  propagates NaN too but returns either zero, and Python's builtins depend on
  the argument order).
* Comparisons give ``i1``; float comparisons are ordered except ``!=``
  (unordered, so ``nan != nan`` like Python).  Integers compare signed.
* ``U8 U16 U32 U64`` are unsigned: signless ``iN`` in the IR, with the
  unsigned ops where the sign matters (``cmpi ult``, ``divui`` for ``//``,
  ``remui`` for ``%``, ``shrui`` for ``>>``, ``minui``/``maxui``, ``extui``,
  ``uitofp``/``fptoui``); ``I8(u)``/``U8(i)`` reinterpret the bits, as numpy's
  ``astype``.  They never mix with signed types without a cast.
* ``& | ^ << >>`` and ``~`` act on integers (``>>`` is arithmetic);
  ``& | ^`` and ``not`` also on ``i1``.
* Explicit casts: ``F32(x)``, ``I32(x)``, ``Index(x)``, ``cast(x, T)``;
  int -> float is signed (``i1`` is unsigned: True -> 1.0); float -> int
  truncates toward zero; ``I1(x)`` is ``x != 0``.
"""

from __future__ import annotations

import math as _pymath
import threading

import numpy as np

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnknownLoc,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from loom.core.affine import Affine
from loom.dialects.arith_remf import RemFOp
from loom.errors import LoomError
from loom.frontends.kernel.kernel_types import F64, I1, I64, Index, ScalarType, scalar_of

PY_CONST = (bool, int, float)


class EmitContext:
    """Per-trace state shared by value operations: location and constant pool."""

    def __init__(self, entry_block=None):
        self.loc = UnknownLoc()
        self.entry_block = entry_block
        self.hoist = entry_block is not None
        self._pool: dict = {}

    def emit(self, op: Operation) -> Operation:
        op.location = self.loc
        return op

    def constant(self, value, stype: ScalarType) -> SSAValue:
        """An arith.constant, hoisted to the function entry (cached) when allowed."""
        if stype.kind == "float":
            value = _float_literal(value, stype)
        key = (stype.name, float(value) if stype.kind == "float" else int(value))
        if self.hoist:
            hit = self._pool.get(key)
            if hit is not None:
                return hit
        if stype.kind == "float":
            attr = FloatAttr(float(value), stype.xdsl)
        elif stype.kind == "bool":
            attr = IntegerAttr(1 if value else 0, i1)
        else:
            ivalue = int(value)
            lo, hi = stype.core.literal_range
            if not lo <= ivalue <= hi:
                raise LoomError(f"constant {value} does not fit in {stype}")
            attr = IntegerAttr(ivalue, stype.xdsl)
        if not self.hoist:
            return self.emit(arith.ConstantOp(attr)).result
        with ImplicitBuilder(Builder(InsertPoint.at_start(self.entry_block))):
            res = self.emit(arith.ConstantOp(attr)).result
        self._pool[key] = res
        return res


def _float_literal(value, stype: ScalarType) -> float:
    """A finite literal that would round to inf in ``stype`` is refused (numpy would warn and give inf; a
    kernel's constant is written once, so the author hears it at trace time)."""
    try:
        v = float(value)
    except OverflowError:
        v = _pymath.inf
    limit = float(np.finfo(stype.dtype).max)
    if not _pymath.isinf(value if isinstance(value, float) else 0.0) and abs(v) > limit:
        # the nearest-even rounding of values just above the largest finite float is still finite
        with np.errstate(over="ignore"):
            rounded = stype.dtype.type(v) if _pymath.isfinite(v) else v
        if not _pymath.isfinite(rounded):
            raise LoomError(f"constant {value} is out of range for {stype} (largest finite value {limit:.8g}); "
                            "write math.inf for infinity, or use a wider type")
    return v


class _CurrentContext(threading.local):
    """The context of the trace running on this thread (like xDSL's implicit builder): kernels are traced on
    several threads at once (``loom build --threads``), and one module-level context let a trace hoist its
    constants into another thread's function (its ops then used values from outside their function)."""

    def __init__(self):
        self.ctx = EmitContext()


_CURRENT = _CurrentContext()


def set_context(ctx: EmitContext) -> EmitContext:
    """Make ``ctx`` this thread's context; returns the one it replaces."""
    old, _CURRENT.ctx = _CURRENT.ctx, ctx
    return old


def emit(op: Operation) -> Operation:
    return _CURRENT.ctx.emit(op)


class AffineForm(Affine):
    """The core ``Affine`` over SSA leaves, plus whether every leaf is a valid affine dim/symbol
    (else the form only folds slice sizes, it never becomes an affine map)."""

    __slots__ = ("valid",)

    def __init__(self, terms: dict, const: int = 0, valid: bool = True):
        super().__init__(terms, const)
        self.valid = valid

    def add(self, other: AffineForm, sign: int = 1) -> AffineForm:
        form = self + other.scale(sign)
        return AffineForm(form.terms, form.const, self.valid and other.valid)

    def scale(self, k: int) -> AffineForm:
        form = Affine.scale(self, k)
        return AffineForm(form.terms, form.const, self.valid)


class Value:
    """A typed SSA value inside a kernel; Python operators emit arith/math ops."""

    __slots__ = ("ssa", "stype", "affine")

    def __init__(self, ssa: SSAValue, stype: ScalarType | None = None, affine: AffineForm | None = None):
        self.ssa = ssa
        self.stype = stype if stype is not None else scalar_of(ssa.type)
        self.affine = affine

    @property
    def type(self) -> Attribute:
        return self.ssa.type

    def __repr__(self) -> str:
        return f"Value({self.stype})"

    def __bool__(self):
        raise LoomError(
            "a traced value has no Python truth value here (use it in an if/while condition or a comparison)"
        )

    # arithmetic
    def __add__(self, o):
        return binary("+", self, o)

    def __radd__(self, o):
        return binary("+", o, self)

    def __sub__(self, o):
        return binary("-", self, o)

    def __rsub__(self, o):
        return binary("-", o, self)

    def __mul__(self, o):
        return binary("*", self, o)

    def __rmul__(self, o):
        return binary("*", o, self)

    def __truediv__(self, o):
        return binary("/", self, o)

    def __rtruediv__(self, o):
        return binary("/", o, self)

    def __floordiv__(self, o):
        return binary("//", self, o)

    def __rfloordiv__(self, o):
        return binary("//", o, self)

    def __mod__(self, o):
        return binary("%", self, o)

    def __rmod__(self, o):
        return binary("%", o, self)

    def __pow__(self, o):
        return binary("**", self, o)

    def __rpow__(self, o):
        return binary("**", o, self)

    def __and__(self, o):
        return binary("&", self, o)

    def __rand__(self, o):
        return binary("&", o, self)

    def __or__(self, o):
        return binary("|", self, o)

    def __ror__(self, o):
        return binary("|", o, self)

    def __xor__(self, o):
        return binary("^", self, o)

    def __rxor__(self, o):
        return binary("^", o, self)

    def __lshift__(self, o):
        return binary("<<", self, o)

    def __rlshift__(self, o):
        return binary("<<", o, self)

    def __rshift__(self, o):
        return binary(">>", self, o)

    def __rrshift__(self, o):
        return binary(">>", o, self)

    def __neg__(self):
        return unary("-", self)

    def __pos__(self):
        return self

    def __invert__(self):
        return unary("~", self)

    # comparisons (emit i1 values)
    def __lt__(self, o):
        return compare("<", self, o)

    def __le__(self, o):
        return compare("<=", self, o)

    def __gt__(self, o):
        return compare(">", self, o)

    def __ge__(self, o):
        return compare(">=", self, o)

    def __eq__(self, o):  # noqa: D105 - traced equality
        return compare("==", self, o)

    def __ne__(self, o):
        return compare("!=", self, o)

    __hash__ = object.__hash__


class LiteralChoice(Value):
    """``a if c else b`` of two Python literals under a traced condition: an ``arith.select`` in the literals'
    default type (``default_type``), which takes the type of the value it meets instead, as a lone literal does
    (``y[i] = 255 if p else 0`` stores a U8, ``n + (1 if p else 0)`` adds to an i32): ``retyped`` selects the
    same literals in that type where it is used (the condition dominates every use, the first select is dead)."""

    __slots__ = ("cond", "choices")

    def __init__(self, cond: Value, a, b):
        kinds = {type(a), type(b)}
        stype = I1 if kinds == {bool} else F64 if float in kinds else Index
        x, y = _literal_for(a, stype, "conditional expression"), _literal_for(b, stype, "conditional expression")
        super().__init__(emit(arith.SelectOp(cond.ssa, x.ssa, y.ssa)).result, stype)
        self.cond, self.choices = cond, (a, b)

    def retyped(self, stype: ScalarType, what: str = "conditional expression", signed: bool = False) -> Value:
        if stype is self.stype:
            return self
        x, y = (_literal_for(v, stype, what, signed) for v in self.choices)
        return Value(emit(arith.SelectOp(self.cond.ssa, x.ssa, y.ssa)).result, stype)


def adopt_literal_choice(v, stype: ScalarType, what: str, signed: bool = False):
    """``v`` in ``stype`` if it is a ``LiteralChoice`` (else ``v`` as it is)."""
    return v.retyped(stype, what, signed) if isinstance(v, LiteralChoice) else v


class MemRefValue:
    """A memref inside a kernel (parameter, subview or allocation)."""

    __slots__ = ("ssa", "type", "element", "dim_cache", "read_only")

    def __init__(self, ssa: SSAValue, dim_cache: dict | None = None, read_only: str | None = None,
                 element: ScalarType | None = None):
        self.ssa = ssa
        self.read_only = read_only  # the Python name of a constant table (``tables``), else None
        self.type: MemRefType = ssa.type
        # given for unsigned elements (U8...): the xDSL type, a signless iN, reads as signed
        self.element = element if element is not None else scalar_of(self.type.element_type)
        # axis -> Value, only for values whose dims may be hoisted (parameters)
        self.dim_cache = dim_cache

    @property
    def rank(self) -> int:
        return self.type.get_num_dims()

    @property
    def shape(self) -> tuple:
        return tuple(self.type.get_shape())

    def __repr__(self) -> str:
        return f"MemRefValue({self.type})"


# ---------------------------------------------------------------- helpers


def type_name(x) -> str:
    if isinstance(x, Value):
        return str(x.stype.xdsl)
    if isinstance(x, MemRefValue):
        return str(x.type)
    if isinstance(x, bool):
        return "a Python bool"
    if isinstance(x, int):
        return "a Python int"
    if isinstance(x, float):
        return "a Python float"
    return type(x).__name__


def const_value(value, stype: ScalarType) -> Value:
    """Materialize a Python constant as a Value of ``stype`` (checking the literal kind)."""
    if isinstance(value, float) and not stype.is_float:
        raise LoomError(f"float literal {value!r} used with an {stype.xdsl} value (cast explicitly)")
    ssa = _CURRENT.ctx.constant(value, stype)
    aff = AffineForm({}, int(value)) if stype.kind == "index" else None
    return Value(ssa, stype, aff)


def default_type(value) -> ScalarType:
    """The type a lone Python constant takes when it must become SSA."""
    if isinstance(value, bool):
        return I1
    if isinstance(value, int):
        return Index
    return F64


def as_value(x, stype: ScalarType | None = None) -> Value:
    if isinstance(x, Value):
        return x
    if isinstance(x, PY_CONST):
        return const_value(x, stype if stype is not None else default_type(x))
    raise LoomError(f"expected a scalar value, got {type_name(x)}")


def unify(a, b, what: str, signed: bool = False) -> tuple[Value, Value]:
    """Bring two operands (at least one a Value) to the same type, or raise.

    ``signed``: the op reads its operands as signed numbers (comparisons, ``//``, ``%``, ``>>``, min/max), so an
    int literal must lie in the type's signed range: ``x > 200`` on an i8 would otherwise compare with -56.
    """
    if isinstance(a, MemRefValue) or isinstance(b, MemRefValue):
        raise LoomError(f"operator {what} is not defined on memrefs (index it first)")
    if isinstance(a, Value) and isinstance(b, Value) and a.stype is not b.stype:
        if isinstance(a, LiteralChoice) and not isinstance(b, LiteralChoice):
            a = a.retyped(b.stype, what, signed)
        elif isinstance(b, LiteralChoice) and not isinstance(a, LiteralChoice):
            b = b.retyped(a.stype, what, signed)
    if isinstance(a, Value) and isinstance(b, Value):
        if a.stype is not b.stype:
            hint = ""
            if {a.stype.kind, b.stype.kind} == {"index", "int"}:
                hint = " (index and integer values do not mix: cast with Index(x) or I32(i))"
            elif "bool" in (a.stype.kind, b.stype.kind):
                other = b.stype if a.stype.kind == "bool" else a.stype
                hint = (f" (a comparison is i1, not a number: convert it with {other}(c), or write "
                        "'1 if c else 0')")
            raise LoomError(f"type mismatch in {what}: {a.stype.xdsl} and {b.stype.xdsl}{hint}")
        return a, b
    if isinstance(a, Value):
        return a, _literal_for(b, a.stype, what, signed)
    if isinstance(b, Value):
        return _literal_for(a, b.stype, what, signed), b
    raise LoomError(f"unsupported operands for {what}: {type_name(a)} and {type_name(b)}")


def _literal_for(x, stype: ScalarType, what: str, signed: bool = False) -> Value:
    if not isinstance(x, PY_CONST):
        raise LoomError(f"unsupported operand for {what}: {type_name(x)}")
    if signed and stype.kind == "int" and not isinstance(x, (bool, float)) \
            and not stype.core.min_value <= x <= stype.core.max_value:
        raise LoomError(f"constant {x} is outside the range of {stype} ({stype.core.min_value}.."
                        f"{stype.core.max_value}) in {what}: {stype} values are signed, so it would wrap to "
                        f"{_wrapped(x, stype.width)}")
    if isinstance(x, float) and not stype.is_float:
        raise LoomError(
            f"float literal {x!r} mixed with an {stype.xdsl} value in {what} (cast explicitly, e.g. F32(x))"
        )
    return const_value(x, stype)


def _wrapped(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


_PY_BIN = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
}

_INT_OPS = {
    "+": arith.AddiOp,
    "-": arith.SubiOp,
    "*": arith.MuliOp,
    "//": arith.FloorDivSIOp,
    "&": arith.AndIOp,
    "|": arith.OrIOp,
    "^": arith.XOrIOp,
    "<<": arith.ShLIOp,
    ">>": arith.ShRSIOp,
}
_FLOAT_OPS = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp}


def binary(op: str, a, b):
    """``a <op> b`` for Values / Python constants."""
    if isinstance(a, PY_CONST) and isinstance(b, PY_CONST):
        try:
            return _PY_BIN[op](a, b)
        except Exception as e:  # e.g. ZeroDivisionError at trace time
            raise LoomError(f"constant expression failed: {e}") from None
    if op == "**" and isinstance(a, Value) and a.stype.is_float and isinstance(b, int) and not isinstance(b, bool):
        return _float_int_pow(a, b)
    if op == "**" and isinstance(a, Value) and not a.stype.is_float and isinstance(b, int) and b < 0:
        # Python gives a float (5 ** -1 == 0.2) and numpy refuses; math.ipowi would truncate it to 0
        raise LoomError(f"{a.stype} ** {b}: a negative literal exponent has no integer result (Python gives a "
                        "float); cast the base to a float type (F64(x) ** -1)")
    x, y = unify(a, b, f"'{op}'", signed=op in ("//", "%", ">>"))
    st = x.stype
    if st.is_float:
        if op in _FLOAT_OPS:
            return Value(emit(_FLOAT_OPS[op](x.ssa, y.ssa)).result, st)
        if op in ("//", "%"):
            return _float_divmod(op, x, y)
        if op == "**":
            return Value(emit(mathd.PowFOp(x.ssa, y.ssa)).result, st)
        raise LoomError(f"operator '{op}' is not defined on {st.xdsl} values")
    # integer-like
    if op == "/":
        raise LoomError(f"'/' is float division; on {st.xdsl} values use '//' (or cast to a float type)")
    if st.kind == "bool" and op not in ("&", "|", "^"):
        raise LoomError(f"operator '{op}' is not defined on i1 values (cast with I32(x) first)")
    if op == "%":
        if st.kind == "uint":
            return Value(emit(arith.RemUIOp(x.ssa, y.ssa)).result, st)
        return _int_mod(x, y)
    if op == "**":
        if st.kind == "index":
            raise LoomError("'**' is not defined on index values (cast to I64 first)")
        return Value(emit(mathd.IPowIOp(x.ssa, y.ssa)).result, st)
    cls = _UNSIGNED_OPS.get(op, _INT_OPS[op]) if st.kind == "uint" else _INT_OPS[op]
    res = Value(emit(cls(x.ssa, y.ssa)).result, st)
    if st.kind == "index" and x.affine is not None and y.affine is not None:
        if op == "+":
            res.affine = x.affine.add(y.affine)
        elif op == "-":
            res.affine = x.affine.add(y.affine, -1)
        elif op == "*" and not x.affine.terms:
            res.affine = y.affine.scale(x.affine.const)
        elif op == "*" and not y.affine.terms:
            res.affine = x.affine.scale(y.affine.const)
    return res


def _float_int_pow(a: Value, n: int) -> Value:
    if 0 <= n <= 4:
        if n == 0:
            return const_value(1.0, a.stype)
        r = a
        for _ in range(n - 1):
            r = Value(emit(arith.MulfOp(r.ssa, a.ssa)).result, a.stype)
        return r
    e = const_value(float(n), a.stype)  # powf rather than fpowi: every backend has pow()
    return Value(emit(mathd.PowFOp(a.ssa, e.ssa)).result, a.stype)


def _int_mod(x: Value, y: Value) -> Value:
    # Python remainder: r = a rem b; if r != 0 and sign(r) != sign(b): r += b
    st = x.stype
    r = emit(arith.RemSIOp(x.ssa, y.ssa)).result
    zero = _CURRENT.ctx.constant(0, st)
    r_nz = emit(arith.CmpiOp(r, zero, "ne")).result
    r_neg = emit(arith.CmpiOp(r, zero, "slt")).result
    b_neg = emit(arith.CmpiOp(y.ssa, zero, "slt")).result
    differ = emit(arith.XOrIOp(r_neg, b_neg)).result
    fix = emit(arith.AndIOp(r_nz, differ)).result
    adj = emit(arith.AddiOp(r, y.ssa)).result
    return Value(emit(arith.SelectOp(fix, adj, r)).result, st)


def _float_divmod(op: str, x: Value, y: Value) -> Value:
    """Python's (and numpy's) float ``//`` or ``%``: from the exact remainder ``fmod``, its sign moved to the
    divisor's, the quotient snapped to an integer (CPython's float_divmod, numpy's npy_divmod). A zero divisor
    gives numpy's values: ``a % 0`` is NaN, ``a // 0`` is ``a / 0``."""
    st = x.stype

    def f(o) -> SSAValue:
        return emit(o).result

    zero = _CURRENT.ctx.constant(0.0, st)
    mod = f(RemFOp(x.ssa, y.ssa))
    # the remainder (NaN included, as C's `if (mod)`) has the sign of x; Python wants the sign of y
    adjust = f(arith.AndIOp(f(arith.CmpfOp(mod, zero, "une")),
                            f(arith.XOrIOp(f(arith.CmpfOp(y.ssa, zero, "olt")), f(arith.CmpfOp(mod, zero, "olt"))))))
    if op == "%":
        moved = f(arith.SelectOp(adjust, f(arith.AddfOp(mod, y.ssa)), mod))
        signed_zero = f(mathd.CopySignOp(zero, y.ssa))
        return Value(f(arith.SelectOp(f(arith.CmpfOp(mod, zero, "oeq")), signed_zero, moved)), st)
    one, half = _CURRENT.ctx.constant(1.0, st), _CURRENT.ctx.constant(0.5, st)
    div = f(arith.DivfOp(f(arith.SubfOp(x.ssa, mod)), y.ssa))
    div = f(arith.SelectOp(adjust, f(arith.SubfOp(div, one)), div))
    floor = f(mathd.FloorOp(div))
    snapped = f(arith.SelectOp(f(arith.CmpfOp(f(arith.SubfOp(div, floor)), half, "ogt")),
                               f(arith.AddfOp(floor, one)), floor))
    quotient = f(arith.DivfOp(x.ssa, y.ssa))
    q = f(arith.SelectOp(f(arith.CmpfOp(div, zero, "une")), snapped, f(mathd.CopySignOp(zero, quotient))))
    return Value(f(arith.SelectOp(f(arith.CmpfOp(y.ssa, zero, "oeq")), quotient, q)), st)


def unary(op: str, a):
    if isinstance(a, PY_CONST):
        return {"-": lambda v: -v, "+": lambda v: +v, "~": lambda v: ~v, "not": lambda v: not v}[op](a)
    if not isinstance(a, Value):
        raise LoomError(f"unary '{op}' is not defined on {type_name(a)}")
    st = a.stype
    if op == "+":
        return a
    if op == "-":
        if st.is_float:
            return Value(emit(arith.NegfOp(a.ssa)).result, st)
        if st.kind == "bool":
            raise LoomError("unary '-' is not defined on i1 values")
        return binary("-", 0, a)
    if op == "not" and st.kind != "bool":  # Python's truth test: not n is n == 0 (not nan is False)
        return compare("==", a, 0)
    if op in ("~", "not"):
        if st.is_float:
            raise LoomError(f"'{op}' is not defined on {st.xdsl} values")
        # all ones: -1 reads as such in a signed type; an unsigned one has only non-negative literals
        ones = _CURRENT.ctx.constant(st.core.max_value if st.kind in ("bool", "uint") else -1, st)
        return Value(emit(arith.XOrIOp(a.ssa, ones)).result, st)
    raise LoomError(f"unsupported unary operator {op}")


_CMPI = {"<": "slt", "<=": "sle", ">": "sgt", ">=": "sge", "==": "eq", "!=": "ne"}
_CMPUI = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "eq", "!=": "ne"}
# unsigned types (U8...): the ops that read a sign have unsigned twins; floor division is plain division
_UNSIGNED_OPS = {"//": arith.DivUIOp, ">>": arith.ShRUIOp}
_CMPF = {"<": "olt", "<=": "ole", ">": "ogt", ">=": "oge", "==": "oeq", "!=": "une"}
_PY_CMP = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def compare(op: str, a, b):
    if isinstance(a, PY_CONST) and isinstance(b, PY_CONST):
        return _PY_CMP[op](a, b)
    x, y = unify(a, b, f"'{op}'", signed=True)
    if x.stype.is_float:
        r = emit(arith.CmpfOp(x.ssa, y.ssa, _CMPF[op])).result
    else:
        r = emit(arith.CmpiOp(x.ssa, y.ssa, (_CMPUI if x.stype.kind == "uint" else _CMPI)[op])).result
    return Value(r, I1)


def logical(op: str, a, b):
    """Non-short-circuit ``and``/``or`` on i1 values (the tracer decides when this is safe)."""
    x, y = unify(a, b, f"'{op}'")
    if x.stype.kind != "bool":
        raise LoomError(f"'{op}' needs i1 conditions, got {x.stype.xdsl} (compare explicitly, e.g. x != 0)")
    cls = arith.AndIOp if op == "and" else arith.OrIOp
    return Value(emit(cls(x.ssa, y.ssa)).result, I1)


def select(cond, a, b) -> Value:
    c = as_value(cond)
    if c.stype.kind != "bool":
        raise LoomError(f"condition must be i1, got {c.stype.xdsl}")
    if isinstance(a, PY_CONST) and isinstance(b, PY_CONST):
        return LiteralChoice(c, a, b)
    x, y = unify(a, b, "conditional expression")
    return Value(emit(arith.SelectOp(c.ssa, x.ssa, y.ssa)).result, x.stype)


# ---------------------------------------------------------------- casts


def cast(x, target: ScalarType):
    """Explicit conversion of a Value or Python constant to ``target``."""
    if not isinstance(target, ScalarType):
        raise LoomError(f"cast target must be a loom scalar type, got {target!r}")
    if isinstance(x, PY_CONST):
        if target.is_float:
            return const_value(float(x), target)
        if target.kind == "bool":
            return const_value(bool(x), target)
        return const_value(int(x), target)
    if not isinstance(x, Value):
        raise LoomError(f"cannot cast {type_name(x)} to {target}")
    src = x.stype
    if src is target:
        return x
    t = target.xdsl
    if src.is_float and target.is_float:
        cls = arith.ExtFOp if target.width > src.width else arith.TruncFOp
        return Value(emit(cls(x.ssa, t)).result, target)
    if target.kind == "bool":
        zero = 0.0 if src.is_float else 0
        return compare("!=", x, zero)
    zero_extends = src.kind in ("bool", "uint")  # its value is its bits read as unsigned
    if src.is_float:  # float -> int / index
        if target.kind == "index":
            tmp = emit(arith.FPToSIOp(x.ssa, i64)).result
            return Value(emit(arith.IndexCastOp(tmp, IndexType())).result, target)
        cls = arith.FPToUIOp if target.kind == "uint" else arith.FPToSIOp
        return Value(emit(cls(x.ssa, t)).result, target)
    if target.is_float:  # int-like -> float
        v = x.ssa
        if src.kind == "index":
            v = emit(arith.IndexCastOp(v, i64)).result
        cls = arith.UIToFPOp if zero_extends else arith.SIToFPOp
        return Value(emit(cls(v, t)).result, target)
    # int-like -> int-like
    if src.kind == "index" or target.kind == "index":
        if zero_extends and src.width < 64:
            x = cast(x, I64)  # zero-extended first: index_cast sign-extends
        return Value(emit(arith.IndexCastOp(x.ssa, t)).result, target)
    if target.width > src.width:
        cls = arith.ExtUIOp if zero_extends else arith.ExtSIOp
        return Value(emit(cls(x.ssa, t)).result, target)
    if target.width == src.width:  # I8 <-> U8: the same bits, read differently
        return Value(x.ssa, target)
    return Value(emit(arith.TruncIOp(x.ssa, t)).result, target)


# ---------------------------------------------------------------- math


MATH_UNARY = {
    "exp": mathd.ExpOp,
    "exp2": mathd.Exp2Op,
    "expm1": mathd.ExpM1Op,
    "log": mathd.LogOp,
    "log2": mathd.Log2Op,
    "log10": mathd.Log10Op,
    "log1p": mathd.Log1pOp,
    "sqrt": mathd.SqrtOp,
    "tanh": mathd.TanhOp,
    "sinh": mathd.SinhOp,
    "cosh": mathd.CoshOp,
    "sin": mathd.SinOp,
    "cos": mathd.CosOp,
    "tan": mathd.TanOp,
    "atan": mathd.AtanOp,
    "asin": mathd.AsinOp,
    "acos": mathd.AcosOp,
    "erf": mathd.ErfOp,
    "floor": mathd.FloorOp,
    "ceil": mathd.CeilOp,
    "trunc": mathd.TruncOp,
    "fabs": mathd.AbsFOp,
    "cbrt": mathd.CbrtOp,
    "rsqrt": mathd.RsqrtOp,
    "asinh": mathd.AsinhOp,
    "acosh": mathd.AcoshOp,
    "atanh": mathd.AtanhOp,
}
MATH_BINARY = ("pow", "atan2", "copysign", "fmod")
MATH_PREDICATES = ("isnan", "isinf", "isfinite")


def math_call(name: str, args: list):
    """Emit the math-dialect op for ``math.<name>(*args)`` (Python constants fold, and so does each arm of a
    ``LiteralChoice``: ``math.sqrt(4.0 if c else 9.0)`` is ``2.0 if c else 3.0``, a literal as ``math.sqrt(4.0)``)."""
    choices = [a for a in args if isinstance(a, LiteralChoice)]
    if choices and all(isinstance(a, PY_CONST) or a is choices[0] for a in args):
        arms = [_math_call_folded(name, [a.choices[k] if a is choices[0] else a for a in args]) for k in (0, 1)]
        if all(isinstance(r, PY_CONST) for r in arms):
            return LiteralChoice(choices[0].cond, *arms)
    if all(isinstance(a, PY_CONST) for a in args):
        return _math_call_folded(name, args)
    return _math_call(name, args)


def _math_call_folded(name: str, args: list):
    """``math.<name>`` of Python constants, at trace time; Python's domain errors are the kernel's errors."""
    try:
        return _math_call(name, args)
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        raise LoomError(f"math.{name}({', '.join(repr(a) for a in args)}) of constants fails in Python ({e}); "
                        "it is computed when the kernel is traced") from None


def _math_call(name: str, args: list):
    if name in MATH_UNARY:
        if len(args) != 1:
            raise LoomError(f"math.{name} takes 1 argument, got {len(args)}")
        x = args[0]
        if isinstance(x, PY_CONST):
            if name == "rsqrt":
                return 1.0 / _pymath.sqrt(x)
            if name in ("floor", "ceil", "trunc"):
                return float(getattr(_pymath, name)(x))
            return getattr(_pymath, name)(x)
        if not isinstance(x, Value) or not x.stype.is_float:
            raise LoomError(f"math.{name} needs a float value, got {type_name(x)} (cast with F32(x)/F64(x))")
        return Value(emit(MATH_UNARY[name](x.ssa)).result, x.stype)
    if name in MATH_PREDICATES:
        return _math_predicate(name, args)
    if name in MATH_BINARY:
        if len(args) != 2:
            raise LoomError(f"math.{name} takes 2 arguments, got {len(args)}")
        a, b = args
        if isinstance(a, PY_CONST) and isinstance(b, PY_CONST):
            return getattr(_pymath, name)(a, b)
        x, y = unify(a, b, f"math.{name}")
        if not x.stype.is_float:
            raise LoomError(f"math.{name} needs float values, got {x.stype.xdsl}")
        cls = {"pow": mathd.PowFOp, "atan2": mathd.Atan2Op, "copysign": mathd.CopySignOp, "fmod": RemFOp}[name]
        return Value(emit(cls(x.ssa, y.ssa)).result, x.stype)
    if name == "fma":
        if len(args) != 3:
            raise LoomError(f"math.fma takes 3 arguments, got {len(args)}")
        vals = [a for a in args if isinstance(a, Value)]
        if not vals:
            return args[0] * args[1] + args[2]
        st = vals[0].stype
        a, b, c = (as_value(v, st) for v in args)
        if not (a.stype is b.stype is c.stype is st) or not st.is_float:
            raise LoomError("math.fma needs three float values of the same type")
        return Value(emit(mathd.FmaOp(a.ssa, b.ssa, c.ssa)).result, st)
    raise LoomError(f"math.{name} is not supported in kernels")


def _math_predicate(name: str, args: list):
    """``math.isnan/isinf/isfinite(x)``: an i1 (an integer is never nan or inf, as in Python)."""
    if len(args) != 1:
        raise LoomError(f"math.{name} takes 1 argument, got {len(args)}")
    x = args[0]
    if isinstance(x, PY_CONST):
        return getattr(_pymath, name)(x)
    if not isinstance(x, Value) or not x.stype.is_float and not x.stype.is_int_like:
        raise LoomError(f"math.{name} needs a number, got {type_name(x)}")
    if not x.stype.is_float:
        return name == "isfinite"
    if name == "isnan":  # unordered with itself
        return Value(emit(arith.CmpfOp(x.ssa, x.ssa, "uno")).result, I1)
    inf = const_value(_pymath.inf, x.stype)
    mag = emit(mathd.AbsFOp(x.ssa)).result
    pred = "oeq" if name == "isinf" else "olt"  # isfinite: |x| < inf, false for nan
    return Value(emit(arith.CmpfOp(mag, inf.ssa, pred)).result, I1)


def builtin_abs(x):
    if isinstance(x, PY_CONST):
        return abs(x)
    if not isinstance(x, Value):
        raise LoomError(f"abs() of {type_name(x)}")
    if x.stype.is_float:
        return Value(emit(mathd.AbsFOp(x.ssa)).result, x.stype)
    if x.stype.kind == "index":
        neg = binary("-", 0, x)
        return select(compare("<", x, 0), neg, x)
    if x.stype.kind in ("bool", "uint"):
        return x
    return Value(emit(mathd.AbsIOp(x.ssa)).result, x.stype)


def builtin_minmax(which: str, args: list):
    if len(args) == 1 and isinstance(args[0], tuple):
        args = list(args[0])
    if len(args) < 2:
        raise LoomError(f"{which}() needs at least 2 arguments in a kernel (for the {which} of a memref, loop: "
                        f"'m = X[0]' then 'for v in X: m = {which}(m, v)')")
    acc = args[0]
    for b in args[1:]:
        if isinstance(acc, PY_CONST) and isinstance(b, PY_CONST):
            acc = min(acc, b) if which == "min" else max(acc, b)
            continue
        x, y = unify(acc, b, f"{which}()", signed=True)
        if x.stype.is_float:
            cls = arith.MinimumfOp if which == "min" else arith.MaximumfOp
        elif x.stype.kind == "bool":
            cls = arith.AndIOp if which == "min" else arith.OrIOp
        elif x.stype.kind == "uint":
            cls = arith.MinUIOp if which == "min" else arith.MaxUIOp
        else:
            cls = arith.MinSIOp if which == "min" else arith.MaxSIOp
        acc = Value(emit(cls(x.ssa, y.ssa)).result, x.stype)
    return acc
