"""Pipeline expressions -> scalar arith/math ops, with ``evaluate``'s exact semantics.

Types map to signless MLIR integers of the same width (u8 and i8 are both
``i8``; signedness picks the op: divui vs floordivsi, extui vs extsi, ult vs
slt), f64 to ``f64``, f32 and bfloat16 to ``f32`` (bf16 values are f32 with zero low bits; every
bf16 add/sub/mul/div/mod is computed in f32 and rounded to nearest even on the
bits), bool to ``i1`` (stored as ``i8``).
Operations whose C translation could be undefined are made total here, as the
language defines them: x / 0 == 0 and x % 0 == 0 (guarded divisor), signed
division and modulo run in i64 (no INT_MIN / -1 overflow; i64 itself guards a
divisor of -1), shift amounts are
clamped (>= bits gives 0 or the sign fill, a negative amount shifts the other
way), float -> int truncates, maps NaN/inf to 0 and saturates at 2**63 as
numpy does on x86.
Ops are created in the current ``ImplicitBuilder`` block.
"""

from __future__ import annotations

import math as _math

from collections.abc import Callable
from contextvars import ContextVar

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from .bounds import finite_float, interval
from .expr import BinOp, Call, Cast, Const, RVar, Select, Unary, Var
from .mathfn import MathCall
from .param import Param
from .types import BFloat16, Bool, Float32, Float64, Type, UInt64

_IR = {"u8": i8, "u16": i16, "u32": i32, "u64": i64, "i8": i8, "i16": i16, "i32": i32, "i64": i64, "f32": f32,
       "f64": f64, "bf16": f32, "bool": i1}


def ir_type(t: Type) -> Attribute:
    """The SSA value type of a pipeline type."""
    return _IR[t.name]


def storage_type(t: Type) -> Attribute:
    """The memref element type (bool is kept as one byte, like numpy)."""
    return i8 if t == Bool else ir_type(t)


class ConstantPool:
    """While active (``with ConstantPool(block):``), each distinct constant is made once, at the top of ``block``
    (a function's entry, which dominates every use), instead of once per use: the lowered pipelines were
    a quarter constants, which every later pass then walked, hoisted and merged."""

    def __init__(self, block: Block):
        self.block = block
        self.values: dict[tuple, SSAValue] = {}
        self.last: Operation | None = None

    def get(self, key: tuple, make: Callable[[], arith.ConstantOp]) -> SSAValue:
        value = self.values.get(key)
        if value is None:
            op = make()
            op.detach()  # the builder put it where the lowering is; the pool keeps creation order
            if self.last is not None:
                self.block.insert_op_after(op, self.last)
            elif self.block.first_op is not None:
                self.block.insert_op_before(op, self.block.first_op)
            else:
                self.block.add_op(op)
            self.last = op
            value = self.values[key] = op.result
        return value

    def __enter__(self) -> ConstantPool:
        self._token = _POOL.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _POOL.reset(self._token)


_POOL: ContextVar[ConstantPool | None] = ContextVar("loom_constant_pool", default=None)


def _constant(attr: Attribute, key: tuple) -> SSAValue:
    pool = _POOL.get()
    if pool is None:
        return arith.ConstantOp(attr).result
    return pool.get(key, lambda: arith.ConstantOp(attr))


def const_int(value: int, ty: Attribute) -> SSAValue:
    if not isinstance(ty, IndexType):
        bits = ty.width.data
        value &= (1 << bits) - 1
        if bits > 1 and value >= 1 << (bits - 1):
            value -= 1 << bits  # signless attributes are written signed
        if bits == 1:
            value = -1 if value else 0
    return _constant(IntegerAttr(value, ty), ("int", value, ty))


def const_float(value: float, ty: Attribute = f32) -> SSAValue:
    return _constant(FloatAttr(float(value), ty), ("float", float(value).hex(), ty))


def const_index(value: int) -> SSAValue:
    return const_int(value, IndexType())


def constant(value, t: Type) -> SSAValue:
    if t.is_float:
        return const_float(value, ir_type(t))
    return const_int(int(value), ir_type(t))


def round_to_bf16(v: SSAValue) -> SSAValue:
    """f32 -> nearest bfloat16 (ties to even) kept in f32; NaN stays a quiet NaN."""
    bits = arith.BitcastOp(v, i32).result
    lsb = arith.AndIOp(arith.ShRUIOp(bits, const_int(16, i32)), const_int(1, i32)).result
    rounded = arith.AddiOp(arith.AddiOp(bits, const_int(0x7FFF, i32)), lsb).result
    high = const_int(0xFFFF0000, i32)
    rounded = arith.AndIOp(rounded, high).result
    quiet = arith.AndIOp(arith.OrIOp(bits, const_int(0x00400000, i32)), high).result
    is_nan = arith.CmpfOp(v, v, "uno").result
    return arith.BitcastOp(arith.SelectOp(is_nan, quiet, rounded), f32).result


def to_index(v: SSAValue, t: Type) -> SSAValue:
    """An integer value as an ``index`` (sign- or zero-extended as numpy's int64 view of it)."""
    if t.is_signed or t.bits == 64:
        return arith.IndexCastOp(v, IndexType()).result
    return arith.IndexCastOp(arith.ExtUIOp(v, i64), IndexType()).result  # no index_castui in xDSL 0.74


def _extend(v: SSAValue, t: Type, ty=i64) -> SSAValue:
    if t.bits == ty.width.data:
        return v
    if t.is_signed:
        return arith.ExtSIOp(v, ty).result
    return arith.ExtUIOp(v, ty).result


def convert(v: SSAValue, src: Type, dst: Type) -> SSAValue:
    """``types.convert`` on one value."""
    if src == dst:
        return v
    if dst == Bool:
        if src.is_float:
            return arith.CmpfOp(v, const_float(0.0, ir_type(src)), "une").result
        return arith.CmpiOp(v, const_int(0, ir_type(src)), "ne").result
    if dst.is_int:
        if src.is_float:
            return _float_to_int(v, dst)
        sw, dw = (1 if src == Bool else src.bits), dst.bits
        if sw == dw:
            return v
        if sw > dw:
            return arith.TruncIOp(v, ir_type(dst)).result
        if src == Bool or not src.is_signed:
            return arith.ExtUIOp(v, ir_type(dst)).result
        return arith.ExtSIOp(v, ir_type(dst)).result
    # to a float: one rounding from an integer or f64 (bf16 through f32, as Halide)
    ty = ir_type(dst)
    if src.is_float:
        f = v if ir_type(src) == ty else (arith.ExtFOp if ty == f64 else arith.TruncFOp)(v, ty).result
    elif src.is_signed:
        f = arith.SIToFPOp(v, ty).result
    else:
        f = arith.UIToFPOp(v, ty).result
    return round_to_bf16(f) if dst == BFloat16 else f


def _float_to_int(v: SSAValue, dst: Type) -> SSAValue:
    """Truncation towards zero (fptosi's own), NaN and infinities 0, from 2**63 on -2**63 as numpy on x86; in
    the value's float type (its comparisons with 2**63 are exact): the guards keep fptosi's operand in i64's
    range, where C defines the conversion."""
    ft = v.type
    finite = arith.CmpfOp(math.AbsFOp(v), const_float(float("inf"), ft), "olt").result
    d = arith.SelectOp(finite, v, const_float(0.0, ft)).result
    big = arith.CmpfOp(d, const_float(2.0**63, ft), "oge").result
    safe = arith.SelectOp(big, const_float(0.0, ft), arith.MaximumfOp(d, const_float(-(2.0**63), ft))).result
    wide = arith.SelectOp(big, const_int(-(2**63), i64), arith.FPToSIOp(safe, i64)).result
    if dst == UInt64:  # [2**63, 2**64) is in u64's range: exact
        high = arith.AndIOp(big, arith.CmpfOp(d, const_float(2.0**64, ft), "olt")).result
        unsigned = arith.FPToUIOp(arith.SelectOp(high, d, const_float(0.0, ft)), i64).result
        return arith.SelectOp(high, unsigned, wide).result
    return wide if dst.bits == 64 else arith.TruncIOp(wide, ir_type(dst)).result


def _finite_range(e) -> tuple[float, float] | None:
    """The range of float ``e`` when it is provably finite and inside i64 (a resize's ``floor((x + 0.5) * s)`` of
    an i32 Var, ``f32(u8 value) * 1.5``), so that its conversion needs none of ``_float_to_int``'s guards."""
    if not finite_float(e, {}):
        return None
    r = interval(e, {})
    return r if _in_i64(r) else None


def _in_i64(r) -> bool:
    return -2.0**62 <= r[0] and r[1] <= 2.0**62  # the margin covers f32 rounding the interval's doubles ignore


def _in_i32(r) -> bool:
    return -2.0**31 + 2.0**8 <= r[0] and r[1] <= 2.0**31 - 2.0**8


def _clamp_range(e) -> tuple[float, float] | None:
    """The range a chain of float min / max with constants keeps ``e`` in, NaN aside (loom's min / max
    propagate NaN and take an infinity to the constant); None when ``e`` is not such a chain."""
    if not (isinstance(e, BinOp) and e.op in ("min", "max")):
        return None
    for c, other in ((e.a, e.b), (e.b, e.a)):
        if isinstance(c, Const) and c.value == c.value:
            inner = _clamp_range(other) or (-float("inf"), float("inf"))
            pick = min if e.op == "min" else max
            return pick(inner[0], c.value), pick(inner[1], c.value)
    return None


def _float_in_range_to_int(v: SSAValue, dst: Type, narrow: bool = False) -> SSAValue:
    """``_float_to_int`` of a value proved in i64's range (``narrow``: in i32's), NaN aside: truncation, wrapped
    to ``dst`` through i64 (through i32 when ``narrow`` and ``dst`` is no wider: a conversion SSE vectorizes)."""
    through = i32 if narrow and dst.bits <= 32 else i64
    wide = arith.FPToSIOp(v, through).result
    if dst.bits == through.width.data:
        return wide
    return arith.TruncIOp(wide, ir_type(dst)).result


_CMP_SIGNED = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_CMP_UNSIGNED = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
_CMP_FLOAT = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}


def binary(op: str, a: SSAValue, b: SSAValue, t: Type) -> SSAValue:
    """``evaluate.binary`` on one pair of values of operand type ``t``."""
    if t == BFloat16 and op in ("add", "sub", "mul", "div", "mod"):
        return round_to_bf16(binary(op, a, b, Float32))
    if op in _CMP_FLOAT:
        if t.is_float:
            return arith.CmpfOp(a, b, _CMP_FLOAT[op]).result
        table = _CMP_SIGNED if t.is_signed else _CMP_UNSIGNED
        return arith.CmpiOp(a, b, table[op]).result
    if t.is_float:
        return _float_binary(op, a, b)
    if t == Bool:
        simple = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp, "min": arith.AndIOp,
                  "max": arith.OrIOp}
        return simple[op](a, b).result
    simple = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "and": arith.AndIOp,
              "or": arith.OrIOp, "xor": arith.XOrIOp}
    if op in simple:
        return simple[op](a, b).result
    if op in ("min", "max"):
        if t.is_signed:
            return (arith.MinSIOp if op == "min" else arith.MaxSIOp)(a, b).result
        return (arith.MinUIOp if op == "min" else arith.MaxUIOp)(a, b).result
    if op in ("div", "mod"):
        return _int_div_mod(op, a, b, t)
    if op in ("shl", "shr"):
        return _shift(op, a, b, t)
    raise TypeError(f"no lowering for operator {op!r} on {t.name}")


def _float_binary(op, a, b):
    simple = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
              "min": arith.MinimumfOp, "max": arith.MaximumfOp}
    if op in simple:
        return simple[op](a, b).result
    if op == "mod":  # a - b * floor(a / b), the multiply-subtract fused (one rounding) as Halide's
        q = math.FloorOp(arith.DivfOp(a, b)).result
        return math.FmaOp(arith.NegfOp(b), q, a).result
    raise TypeError(f"no lowering for operator {op!r} on floats")


def _int_div_mod(op, a, b, t: Type) -> SSAValue:
    ty = ir_type(t)
    known = _constant_value(b, t)
    if known not in (None, 0) and (not t.is_signed or known != -1):
        return _div_mod_by_constant(op, a, b, known, t)
    zero = arith.CmpiOp(b, const_int(0, ty), "eq").result
    if not t.is_signed:
        safe = arith.SelectOp(zero, const_int(1, ty), b).result
        r = (arith.DivUIOp if op == "div" else arith.RemUIOp)(a, safe).result
        return arith.SelectOp(zero, const_int(0, ty), r).result
    a64, b64 = _extend(a, t), _extend(b, t)  # in i64: MIN / -1 does not overflow there
    safe = arith.SelectOp(zero, const_int(1, i64), b64).result
    if t.bits == 64:  # INT64_MIN / -1 overflows in C: divide by 1 and negate (wrapping) instead
        minus_one = arith.CmpiOp(b, const_int(-1, i64), "eq").result
        safe = arith.SelectOp(minus_one, const_int(1, i64), safe).result
    if op == "div":  # Euclidean, as Halide: towards -inf over a positive divisor, towards +inf over a negative one
        if known is not None:  # -1 (0 gives 0 below)
            r = arith.CeilDivSIOp(a64, safe).result
        else:
            negative = arith.CmpiOp(safe, const_int(0, i64), "slt").result
            r = arith.SelectOp(negative, arith.CeilDivSIOp(a64, safe), arith.FloorDivSIOp(a64, safe)).result
    else:  # Euclidean: the remainder is never negative
        r = arith.RemSIOp(a64, safe).result
        c0 = const_int(0, i64)
        magnitude = arith.SelectOp(arith.CmpiOp(safe, c0, "slt"), arith.SubiOp(c0, safe), safe).result
        r = arith.SelectOp(arith.CmpiOp(r, c0, "slt"), arith.AddiOp(r, magnitude), r).result
    if t.bits == 64:
        if op == "div":
            r = arith.SelectOp(minus_one, arith.SubiOp(const_int(0, i64), a64), r).result
        return arith.SelectOp(zero, const_int(0, ty), r).result
    r = arith.TruncIOp(r, ty).result
    return arith.SelectOp(zero, const_int(0, ty), r).result


def _constant_value(v: SSAValue, t: Type) -> int | None:
    """The value of a constant operand as type ``t`` reads it (attributes hold unsigned values signed)."""
    if not isinstance(v.owner, arith.ConstantOp):
        return None
    value = v.owner.value.value.data
    return value & ((1 << t.bits) - 1) if not t.is_signed else value


def _div_mod_by_constant(op, a, b, d: int, t: Type) -> SSAValue:
    """Division by a constant other than 0 and (signed) -1: no zero guard, and in the operand's width, where
    nothing overflows; the C backend then divides by a literal (a shift for a power of two)."""
    if not t.is_signed:
        return (arith.DivUIOp if op == "div" else arith.RemUIOp)(a, b).result
    if op == "div":  # Euclidean: towards -inf over a positive divisor, towards +inf over a negative one
        return (arith.FloorDivSIOp if d > 0 else arith.CeilDivSIOp)(a, b).result
    ty = ir_type(t)
    r = arith.RemSIOp(a, b).result
    negative = arith.CmpiOp(r, const_int(0, ty), "slt").result
    return arith.SelectOp(negative, arith.AddiOp(r, const_int(abs(d), ty)), r).result


def _shift(op, a, b, t: Type) -> SSAValue:
    ty, bits = ir_type(t), t.bits
    b_def = b.owner if isinstance(b.owner, arith.ConstantOp) else None
    if b_def is not None:  # the common case: a constant amount, resolved here
        amount = b_def.value.value.data
        if not t.is_signed and bits < 64:  # a u64 amount reads as i64, as the variable case below
            amount &= (1 << bits) - 1
        amount = -amount if op == "shr" else amount
        if amount >= bits:
            return const_int(0, ty)
        if amount >= 0:
            return arith.ShLIOp(a, const_int(amount, ty)).result
        right = min(-amount, bits - 1)
        if t.is_signed:
            return arith.ShRSIOp(a, const_int(right, ty)).result
        return const_int(0, ty) if -amount >= bits else arith.ShRUIOp(a, const_int(right, ty)).result
    wide, amount = _extend(a, t), _extend(b, t)
    c0 = const_int(0, i64)
    if op == "shr":
        amount = arith.SubiOp(c0, amount).result
    top = const_int(bits - 1, i64)
    left = arith.MinSIOp(arith.MaxSIOp(amount, c0), top).result
    neg = arith.SubiOp(c0, amount).result
    right = arith.MinSIOp(arith.MaxSIOp(neg, c0), top).result
    shift_right = arith.ShRSIOp if t.is_signed else arith.ShRUIOp  # u64 is not zero-extended: logical
    shifted = arith.SelectOp(arith.CmpiOp(amount, c0, "sge"), arith.ShLIOp(wide, left),
                             shift_right(wide, right)).result
    fill = arith.ShRSIOp(wide, const_int(63, i64)).result if t.is_signed else c0
    cbits = const_int(bits, i64)
    shifted = arith.SelectOp(arith.CmpiOp(neg, cbits, "sge"), fill, shifted).result
    shifted = arith.SelectOp(arith.CmpiOp(amount, cbits, "sge"), c0, shifted).result
    return shifted if bits == 64 else arith.TruncIOp(shifted, ty).result


# Halide's float functions as math ops (the C backend calls libm's float versions, as Halide does)
MATH_OPS = {"sqrt": math.SqrtOp, "exp": math.ExpOp, "log": math.LogOp, "sin": math.SinOp, "cos": math.CosOp,
             "tan": math.TanOp, "tanh": math.TanhOp, "floor": math.FloorOp, "ceil": math.CeilOp,
             "round": math.RoundEvenOp, "trunc": math.TruncOp, "pow": math.PowFOp, "atan2": math.Atan2Op,
             "fma": math.FmaOp}


def _bounded_operand(e: BinOp):
    """The operand ``min(a, c)`` / ``max(a, c)`` equals when ``a``'s interval lies below / above the constant."""
    for a, c in ((e.a, e.b), (e.b, e.a)):
        if isinstance(c, Const) and not a.type.is_float:
            lo, hi = interval(a, {})
            if (e.op == "min" and hi <= c.value) or (e.op == "max" and lo >= c.value):
                return a
    return None


class ScalarEmitter:
    """Emits one expression tree; Vars come from ``env``, Func reads from ``load``.

    ``load(call, indices)`` gets the Call and its index values (already emitted)
    and returns the loaded value. Sub-expressions are emitted once per emitter
    (keyed by object identity), so use one emitter per loop body.
    """

    def __init__(self, env: dict[str, SSAValue], load: Callable[[Call, list[SSAValue]], SSAValue],
                 fold_bounded: bool = False):
        self.env = env
        self.load = load
        self.memo: dict[int, SSAValue] = {}
        # a min / max with a constant that the other operand's interval already satisfies is that operand (a
        # clamp of a u8 value to [0, 255]); the CPU path folds them, the accelerator's kernels keep the
        # operators the schedule places (their PE counts follow the thesis's)
        self.fold_bounded = fold_bounded

    def emit(self, e) -> SSAValue:
        key = id(e)
        if key not in self.memo:
            self.memo[key] = self._emit(e)
        return self.memo[key]

    def _emit(self, e) -> SSAValue:
        if isinstance(e, Const):
            return constant(e.value, e.type)
        if isinstance(e, (Var, RVar)):
            return self.env[e.name]
        if isinstance(e, Call):
            return self.load(e, [self.emit(a) for a in e.args])
        if isinstance(e, Cast):
            if self.fold_bounded and e.type.is_int and e.value.type.is_float:
                r = _finite_range(e.value)
                if r is not None:
                    return _float_in_range_to_int(self.emit(e.value), e.type, narrow=_in_i32(r))
                r = _clamp_range(e.value)
                if r is not None and _in_i64(r):  # u8(clamp(v, 0.0, 255.0)) of data: only NaN needs a guard
                    v = self.emit(e.value)
                    nan = arith.CmpfOp(v, v, "une").result  # v != v: one comparison, vectorizable
                    whole = _float_in_range_to_int(v, e.type, narrow=_in_i32(r))
                    return arith.SelectOp(nan, const_int(0, ir_type(e.type)), whole).result
            return convert(self.emit(e.value), e.value.type, e.type)
        if isinstance(e, Select):
            return arith.SelectOp(self.emit(e.cond), self.emit(e.t), self.emit(e.f)).result
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, BinOp):
            if self.fold_bounded and e.op in ("min", "max"):
                kept = _bounded_operand(e)
                if kept is not None:
                    return self.emit(kept)
                if e.a.type.is_float:
                    selected = self._float_min_max_constant(e)
                    if selected is not None:
                        return selected
            return binary(e.op, self.emit(e.a), self.emit(e.b), e.a.type)
        if isinstance(e, Param):  # the function's scalar argument, bound by the lowering
            return self.env[e.key]
        if isinstance(e, MathCall):
            return MATH_OPS[e.name](*(self.emit(a) for a in e.args)).result
        raise TypeError(f"cannot lower expression {e!r}")

    def _float_min_max_constant(self, e: BinOp) -> SSAValue | None:
        """A float min / max with a constant c (a clamp's bound) as one select, the value NaN-propagating and
        -0 < +0 as ``arith.minimumf``: min is ``c < v ? c : v`` (``<=`` for c = -0), max ``c > v ? c : v``
        (``>=`` unless c is negative or -0), which C compiles to minss / maxss and vectorizes (the branchy
        NaN-propagating helper made a u8(clamp(f32 value * 1.5, 0, 255)) of random pixels 4x slower)."""
        for c, v in ((e.a, e.b), (e.b, e.a)):
            if isinstance(c, Const) and c.value == c.value:
                negative = _math.copysign(1.0, float(c.value)) < 0
                pred = ("ole" if negative else "olt") if e.op == "min" else ("ogt" if negative else "oge")
                cv, vv = self.emit(c), self.emit(v)
                return arith.SelectOp(arith.CmpfOp(cv, vv, pred), cv, vv).result
        return None

    def _unary(self, e: Unary) -> SSAValue:
        v = self.emit(e.value)
        t = e.value.type
        if e.op == "abs":
            if t.is_float:
                return math.AbsFOp(v).result
            if not t.is_signed:
                return v
            return math.AbsIOp(v).result  # abs of the minimum wraps to itself, as Halide's
        if t.is_float:
            raise TypeError(f"bitwise not of a {t.name} value in {e!r}")
        return arith.XOrIOp(v, const_int(-1, ir_type(t))).result


__all__ = ["ScalarEmitter", "ConstantPool", "ir_type", "storage_type", "const_int", "const_index", "const_float", "convert",
           "binary", "round_to_bf16", "to_index", "constant"]
