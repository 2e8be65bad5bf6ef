"""arith.* and math.* ops as C expressions.

Integer add/sub/mul/shl go through the unsigned twin type so that wrapping is
defined (MLIR integers wrap; C signed overflow is undefined behaviour). The
``index`` type stays signed: it is used for addresses, where overflow is a bug
anyway and signedness lets gcc vectorise.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from loom.backends.c.c_types import ScalarType, scalar_type
from loom.backends.c.emitter import FunctionEmitter, handles, op_error

# ---- constants ------------------------------------------------------------------------------


def int_literal(value: int, st: ScalarType) -> str:
    if st.is_bool:
        return "1" if value & 1 else "0"
    bits = st.bits
    value &= (1 << bits) - 1
    if value >= 1 << (bits - 1):
        value -= 1 << bits  # signless constants are stored signed
    if -(2**31) < value < 2**31:
        return str(value)  # an int literal converts exactly wherever it is used
    if value == -(2**63):
        return f"(({st.ctype})INT64_MIN)"
    return f"(({st.ctype})INT64_C({value}))"


def float_literal(value: float, st: ScalarType) -> str:
    if math.isnan(value):
        text = "NAN"
    elif math.isinf(value):
        text = "INFINITY" if value > 0 else "(-INFINITY)"
    else:
        text = float.hex(value)
    return f"(({st.ctype}){text})"


@handles("arith.constant")
def constant(em: FunctionEmitter, op: Operation) -> None:
    attr = op.properties.get("value")
    if attr is None:
        attr = op.attributes.get("value")
    result = op.results[0]
    st = em.stype(result, op)
    if isinstance(attr, IntegerAttr):
        em.names[result] = int_literal(attr.value.data, st)
    elif isinstance(attr, FloatAttr):
        em.names[result] = float_literal(attr.value.data, st)
    else:
        raise op_error(op, f"unsupported constant '{attr}' in C backend (only scalar constants)")


# ---- integer arithmetic ----------------------------------------------------------------------


def _operands(em: FunctionEmitter, op: Operation) -> list[str]:
    return [em.val(v) for v in op.operands]


def _wrap(st: ScalarType, a: str, sym: str, b: str) -> str:
    if st.mlir == "index":
        return f"({a} {sym} {b})"
    if st.is_bool:
        bool_sym = {"+": "^", "-": "^", "*": "&"}[sym]
        return f"(bool)({a} {bool_sym} {b})"
    return f"(({st.ctype})(({st.utype}){a} {sym} ({st.utype}){b}))"


@handles("arith.addi", "arith.subi", "arith.muli")
def int_wrapping(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    sym = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}[op.name]
    em.define(op.results[0], _wrap(st, a, sym, b))


@handles("arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui")
def int_division(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    if em.checked and not _is_nonzero_literal(b):  # a zero divisor raises LoomError at the op
        em.check("loomh_check_divisor", em.site(op), f"{b} != 0")
    t, u = st.ctype, st.utype
    d = parse_int_literal(b)
    if op.name in ("arith.floordivsi", "arith.ceildivsi") and d not in (None, 0, -1):
        em.define(op.results[0], f"({t}){_rounded_division(op.name, a, d)}")
        return
    expr = {
        "arith.divsi": f"({t})({a} / {b})",
        "arith.remsi": f"({t})({a} % {b})",
        "arith.divui": f"({t})(({u}){a} / ({u}){b})",
        "arith.remui": f"({t})(({u}){a} % ({u}){b})",
        "arith.floordivsi": f"({t})loomh_floordiv({a}, {b})",  # the helper wraps MIN / -1 itself
        "arith.ceildivsi": f"({t})loomh_ceildiv({a}, {b})",
        "arith.ceildivui": f"({t})(({u}){a} / ({u}){b} + (({u}){a} % ({u}){b} != 0))",
    }[op.name]
    if op.name in ("arith.divsi", "arith.remsi") and st.bits >= 32 and not st.is_bool and d in (None, -1):
        expr = _wrapping_minus_one(op.name, st, a, b, d, expr)
    em.define(op.results[0], expr)


def _wrapping_minus_one(name: str, st: ScalarType, a: str, b: str, d: int | None, expr: str) -> str:
    """Signed division by -1 as numpy computes it: MIN / -1 wraps to MIN, MIN % -1 is 0 (C's ``/`` and ``%``
    are undefined there; MLIR's divsi too). Narrower types are promoted to int by C, where it cannot overflow."""
    wrapped = f"({st.ctype})(0u - ({st.utype}){a})" if name == "arith.divsi" else "0"
    return wrapped if d == -1 else f"({b} == -1 ? {wrapped} : {expr})"


def _rounded_division(name: str, a: str, d: int) -> str:
    """Floor or ceiling division by a literal (not 0 or -1: nothing overflows) without the helper's branch: C's
    truncating quotient corrected by the remainder's sign, a power of two as an arithmetic shift (gcc's)."""
    if name == "arith.floordivsi" and d > 0 and d & (d - 1) == 0:
        return f"({a} >> {d.bit_length() - 1})"
    q, r = f"{a} / {d}", f"{a} % {d}"
    if name == "arith.floordivsi":
        return f"({q} - ({r} {'<' if d > 0 else '>'} 0))"
    return f"({q} + ({r} {'>' if d > 0 else '<'} 0))"


def parse_int_literal(text: str) -> int | None:
    """The integer an emitted C operand spells, or None when it is not a literal."""
    try:
        return int(text)
    except ValueError:
        return None


def _is_nonzero_literal(text: str) -> bool:
    value = parse_int_literal(text)
    return value is not None and value != 0


@handles("arith.andi", "arith.ori", "arith.xori")
def int_bitwise(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    sym = {"arith.andi": "&", "arith.ori": "|", "arith.xori": "^"}[op.name]
    em.define(op.results[0], f"({st.ctype})({a} {sym} {b})")


@handles("arith.shli", "arith.shrsi", "arith.shrui")
def int_shift(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    t, u = st.ctype, st.utype
    # numpy's results for every amount (see the package docstring): the amount is unsigned; one
    # >= the width shifts everything out (shli, shrui: 0; shrsi: the sign fill). No C UB is left:
    # shifts happen in the unsigned type, by less than its width.
    width = 64 if st.mlir == "index" else st.bits
    literal = parse_int_literal(b)
    if literal is not None and 0 <= literal < width and not st.is_bool:
        # a constant amount in range: plain shifts in an unsigned type at least as wide as int (no
        # promotion to signed int), no wider than needed (a 64-bit detour keeps gcc from vectorising)
        wide = "uint64_t" if width > 32 else "uint32_t"
        bits = f"(({wide})({u}){a})"
        if op.name == "arith.shrsi" and literal > 0:  # branch-free sign fill: the copies of the sign bit
            fill = f"((({wide})0 - ({bits} >> {width - 1})) << {width - literal})"
            em.define(op.results[0], f"(({t})({u})(({bits} >> {literal}) | {fill}))")
            return
        sym = "<<" if op.name == "arith.shli" else ">>"
        em.define(op.results[0], f"(({t})({u})({bits} {sym} {literal}))")
        return
    amount = em.fresh("sh")
    em.line(f"{u} {amount} = ({u}){b};")
    in_range = f"{amount} < {width}u"
    expr = {
        "arith.shli": f"({in_range} ? ({t})({u})((uint64_t)({u}){a} << {amount}) : ({t})0)",
        # a negative value shifts as ~(~a >> n): the sign fill without right-shifting a negative int
        "arith.shrsi": f"({t})({in_range} ? ({a} < 0 ? ({u})~({u})(({u})~({u}){a} >> {amount}) "
                       f": ({u})(({u}){a} >> {amount})) : ({a} < 0 ? ({u})~({u})0 : ({u})0))",
        "arith.shrui": f"({in_range} ? ({t})(({u}){a} >> {amount}) : ({t})0)",
    }[op.name]
    em.define(op.results[0], expr)


@handles("arith.minsi", "arith.maxsi", "arith.minui", "arith.maxui")
def int_min_max(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    cmp = "<" if "min" in op.name else ">"
    if op.name.endswith("ui"):
        em.define(op.results[0], f"(({st.utype}){a} {cmp} ({st.utype}){b} ? {a} : {b})")
    else:
        em.define(op.results[0], f"({a} {cmp} {b} ? {a} : {b})")


_CMPI = {
    "eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
    "ult": "<", "ule": "<=", "ugt": ">", "uge": ">=",
}
_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


@handles("arith.cmpi")
def cmpi(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    pred = _CMPI_NAMES[op.properties["predicate"].value.data]  # type: ignore[attr-defined]
    st = em.stype(op.operands[0], op)
    if pred.startswith("u"):
        a, b = f"({st.utype}){a}", f"({st.utype}){b}"
    em.define(op.results[0], f"({a} {_CMPI[pred]} {b})")


# ---- floating point -------------------------------------------------------------------------


@handles("arith.addf", "arith.subf", "arith.mulf", "arith.divf")
def float_binary(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    sym = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}[op.name]
    em.define(op.results[0], f"({a} {sym} {b})")


def _libm(st: ScalarType, name: str) -> str:
    """libm name for the type: sqrtf for f32, sqrt for f64."""
    return name + "f" if st.mlir in ("f32", "f16") else name


@handles("arith.negf")
def negf(em: FunctionEmitter, op: Operation) -> None:
    em.define(op.results[0], f"(-{em.val(op.operands[0])})")


@handles("arith.minimumf", "arith.maximumf", "arith.minnumf", "arith.maxnumf")
def float_min_max(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    suffix = "f32" if st.mlir != "f64" else "f64"
    fn = {
        "arith.minimumf": f"loomh_minimumf_{suffix}",
        "arith.maximumf": f"loomh_maximumf_{suffix}",
        "arith.minnumf": _libm(st, "fmin"),
        "arith.maxnumf": _libm(st, "fmax"),
    }[op.name]
    em.define(op.results[0], f"{fn}({a}, {b})")


_CMPF_NAMES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
               "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def cmpf_expr(pred: str, a: str, b: str) -> str:
    """C comparison with MLIR's ordered/unordered NaN semantics (C's <,>,== are ordered, != unordered)."""
    return {
        "false": "0",
        "oeq": f"({a} == {b})",
        "ogt": f"({a} > {b})",
        "oge": f"({a} >= {b})",
        "olt": f"({a} < {b})",
        "ole": f"({a} <= {b})",
        "one": f"({a} < {b} || {a} > {b})",
        "ord": f"(!isnan({a}) && !isnan({b}))",
        "ueq": f"!({a} < {b} || {a} > {b})",
        "ugt": f"!({a} <= {b})",
        "uge": f"!({a} < {b})",
        "ult": f"!({a} >= {b})",
        "ule": f"!({a} > {b})",
        "une": f"({a} != {b})",
        "uno": f"(isnan({a}) || isnan({b}))",
        "true": "1",
    }[pred]


@handles("arith.cmpf")
def cmpf(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    pred = _CMPF_NAMES[op.properties["predicate"].value.data]  # type: ignore[attr-defined]
    em.define(op.results[0], f"(bool){cmpf_expr(pred, a, b)}")


@handles("arith.select")
def select(em: FunctionEmitter, op: Operation) -> None:
    if op.results[0] in em.views or not _is_scalar(em, op.results[0].type):
        raise op_error(op, "arith.select on memrefs is not supported by the C backend")
    c, a, b = _operands(em, op)
    em.define(op.results[0], f"({c} ? {a} : {b})")


def _is_scalar(em: FunctionEmitter, ty) -> bool:
    try:
        em.scalar(ty)
        return True
    except Exception:
        return False


# ---- casts ----------------------------------------------------------------------------------


@handles(
    "arith.index_cast", "arith.index_castui", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui",
    "arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci",
)
def cast(em: FunctionEmitter, op: Operation) -> None:
    x = em.val(op.operands[0])
    src = em.stype(op.operands[0], op)
    dst = em.stype(op.results[0], op)
    t = dst.ctype
    name = op.name
    if name in ("arith.extsi", "arith.sitofp", "arith.index_cast") and src.is_bool:
        expr = f"({t})(-(int)({x}))"  # i1 true is -1 when read as signed
    elif name in ("arith.uitofp", "arith.extui", "arith.index_castui"):
        expr = f"({t})({src.utype}){x}"
    elif name == "arith.fptoui":
        expr = f"({t})({dst.utype}){x}"
    elif name in ("arith.trunci", "arith.index_cast") and dst.is_bool:
        expr = f"(bool)({x} & 1)"
    elif name == "arith.trunci":
        expr = f"({t})({dst.utype}){x}"
    else:
        expr = f"({t}){x}"
    em.define(op.results[0], expr)


@handles("arith.bitcast")
def bitcast(em: FunctionEmitter, op: Operation) -> None:
    x = em.val(op.operands[0])
    dst = em.stype(op.results[0], op)
    src = em.stype(op.operands[0], op)
    tmp = em.fresh("b")
    em.line(f"{src.ctype} {tmp} = {x};")
    name = em.fresh("v")
    em.line(f"{dst.ctype} {name};")
    em.line(f"memcpy(&{name}, &{tmp}, sizeof {name});")
    em.names[op.results[0]] = name


# ---- math -----------------------------------------------------------------------------------

# ops that are one libm call on their operands (the name gets an ``f`` suffix for f32)
_LIBM_CALLS = {
    "arith.remf": "fmod",
    "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.log10": "log10",
    "math.sqrt": "sqrt", "math.tanh": "tanh", "math.sin": "sin", "math.cos": "cos", "math.tan": "tan",
    "math.atan": "atan", "math.erf": "erf", "math.absf": "fabs", "math.floor": "floor", "math.ceil": "ceil",
    "math.round": "round", "math.roundeven": "rint", "math.trunc": "trunc", "math.expm1": "expm1",
    "math.log1p": "log1p", "math.cbrt": "cbrt", "math.sinh": "sinh", "math.cosh": "cosh",
    "math.asin": "asin", "math.acos": "acos", "math.atanh": "atanh", "math.asinh": "asinh", "math.acosh": "acosh",
    "math.atan2": "atan2", "math.powf": "pow", "math.copysign": "copysign",
    "math.fma": "fma",
}


@handles(*_LIBM_CALLS)
def libm_call(em: FunctionEmitter, op: Operation) -> None:
    args = _operands(em, op)
    st = em.stype(op.results[0], op)
    em.define(op.results[0], f"{_libm(st, _LIBM_CALLS[op.name])}({', '.join(args)})")


@handles("math.rsqrt")
def rsqrt(em: FunctionEmitter, op: Operation) -> None:
    st = em.stype(op.results[0], op)
    em.define(op.results[0], f"(({st.ctype})1 / {_libm(st, 'sqrt')}({em.val(op.operands[0])}))")


@handles("math.absi")
def absi(em: FunctionEmitter, op: Operation) -> None:
    x = em.val(op.operands[0])
    st = em.stype(op.results[0], op)
    # both arms of one type (an ap_uint difference is an unsigned long long in HLS C++)
    em.define(op.results[0], f"(({st.ctype})({x} < 0 ? ({st.utype})(({st.utype})0 - ({st.utype}){x}) : ({st.utype}){x}))")


@handles("math.ipowi")
def ipowi(em: FunctionEmitter, op: Operation) -> None:
    a, b = _operands(em, op)
    st = em.stype(op.results[0], op)
    em.define(op.results[0], f"(({st.ctype})({st.utype})loomh_ipowi((int64_t){a}, (int64_t){b}))")
