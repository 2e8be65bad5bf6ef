"""Integer ops in HLS C++: typed constants, total division, comparisons that the type's range decides.

- An integer constant of an ``ap_int``/``ap_uint`` type is written ``((ap_int<12>)5)``, not ``5``: a bare
  ``int`` beside an ``ap_int`` in ``c ? x : 5`` (a division's safe divisor, ``min(x, 0)``) is ambiguous in
  C++ (either side converts to the other), and the C++ did not compile.
- Division by a run-time divisor is total, as hardware dividers are: a zero divisor gives 0 and
  ``MIN / -1`` wraps (MLIR leaves both undefined).
- A comparison with a constant that the operand's range decides (``x <u 0``, ``x <=u 0xFF`` on i8,
  ``min(x, 0)`` unsigned) is folded to its value: g++ -Wextra calls it always true or false, and the
  testbench is built with -Werror.
"""

from __future__ import annotations

import re

from xdsl.ir import Operation

from loom.backends.c.emitter import HANDLERS
from loom.backends.hls.emitter import HlsFunctionEmitter, hls_handles
from loom.backends.hls.types import hls_type_of

# ((T)5), ((T)INT64_C(-5)), ((T)INT64_MIN): the C handlers' and typed_constant's spellings of a constant
_TYPED_LITERAL = re.compile(r"\(\([^()]+\)(?:INT64_C\((-?\d+)\)|(-?\d+)|(INT64_MIN))\)")


def int_literal_value(text: str) -> int | None:
    """The value of an integer constant as the emitter spells it, None for any other expression."""
    try:
        return int(text)
    except ValueError:
        pass
    m = _TYPED_LITERAL.fullmatch(text)
    if m is None:
        return None
    if m.group(3):
        return -(1 << 63)
    return int(m.group(1) or m.group(2))


@hls_handles("arith.constant")
def typed_constant(em: HlsFunctionEmitter, op: Operation) -> None:
    from loom.backends.hls.fixed_math import special_fixed_constant

    special = special_fixed_constant(em, op)
    if special is not None:
        em.define(op.results[0], special)
        return
    HANDLERS["arith.constant"](em, op)
    result = op.results[0]
    text = em.names.get(result)
    if text is None or hls_type_of(em.stype(result, op)) is None:
        return
    if re.fullmatch(r"-?\d+", text):  # ap_fixed constants are already ((T)0x1.8p+1)
        em.names[result] = f"(({em.stype(result, op).ctype}){text})"


_SIGNED = {"arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi"}


@hls_handles("arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi",
             "arith.ceildivui")
def total_division(em: HlsFunctionEmitter, op: Operation) -> None:
    """The C backend's division with the divisor made safe: 0 -> result 0, -1 (signed) -> wrapping negation."""
    a, b = em.val(op.operands[0]), em.val(op.operands[1])
    st = em.stype(op.results[0], op)
    literal = int_literal_value(b)
    signed = op.name in _SIGNED and not st.is_bool
    if literal is not None and literal != 0 and not (signed and literal == -1):
        HANDLERS[op.name](em, op)
        return
    safe = em.fresh("dv")
    bad = f"{b} == 0 || {b} == -1" if signed else f"{b} == 0"
    em.line(f"{st.ctype} {safe} = ({bad}) ? ({st.ctype})1 : ({st.ctype}){b};")
    divisor = op.operands[1]
    em.names[divisor] = safe
    HANDLERS[op.name](em, op)
    em.names[divisor] = b
    quotient = em.names[op.results[0]]
    if signed:
        minus_a = f"({st.ctype})(({st.utype})0 - ({st.utype}){a})"
        on_minus_one = f"({st.ctype})0" if op.name == "arith.remsi" else minus_a
        expr = f"({b} == 0 ? ({st.ctype})0 : {b} == -1 ? {on_minus_one} : {quotient})"
    else:
        expr = f"({b} == 0 ? ({st.ctype})0 : {quotient})"
    em.define(op.results[0], expr)


_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_ORDER = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}


def decided(pred: str, a: str, b: str, st) -> bool | None:
    """The value of ``a pred b`` when one side is a constant and the other's range decides it, else None.
    An ordered comparison is monotone in the variable, so its two extreme values tell."""
    if pred in ("eq", "ne") or st.is_bool:
        return None
    left, right = int_literal_value(a), int_literal_value(b)
    if (left is None) == (right is None):
        return None
    bits = 64 if st.mlir == "index" else st.bits
    unsigned = pred.startswith("u")
    lo, hi = (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    constant = (left if left is not None else right) % (1 << bits)  # type: ignore[operator]
    if not unsigned and constant > hi:
        constant -= 1 << bits
    test = _ORDER[pred[1:]]
    ends = [test(constant, x) if left is not None else test(x, constant) for x in (lo, hi)]
    return ends[0] if ends[0] == ends[1] else None


@hls_handles("arith.cmpi")
def cmpi(em: HlsFunctionEmitter, op: Operation) -> None:
    a, b = em.val(op.operands[0]), em.val(op.operands[1])
    pred = _CMPI_NAMES[op.properties["predicate"].value.data]  # type: ignore[attr-defined]
    value = decided(pred, a, b, em.stype(op.operands[0], op))
    if value is None:
        return HANDLERS["arith.cmpi"](em, op)
    variable = b if int_literal_value(a) is not None else a
    em.define(op.results[0], f"((void){variable}, {'true' if value else 'false'})")  # still read: no unused warning


@hls_handles("arith.minsi", "arith.maxsi", "arith.minui", "arith.maxui")
def int_min_max(em: HlsFunctionEmitter, op: Operation) -> None:
    a, b = em.val(op.operands[0]), em.val(op.operands[1])
    st = em.stype(op.results[0], op)
    pred = ("u" if op.name.endswith("ui") else "s") + ("lt" if "min" in op.name else "gt")
    value = decided(pred, a, b, st)
    if value is None:
        return HANDLERS[op.name](em, op)
    chosen, other = (a, b) if value else (b, a)
    em.define(op.results[0], chosen if int_literal_value(other) is not None else f"((void){other}, {chosen})")
