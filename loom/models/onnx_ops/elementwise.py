"""Element-wise arithmetic, comparisons and logic: binary and variadic ops (of constants folded: shape
arithmetic), unary math, rounding, Div / Mod, Where, IsNaN / IsInf."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from loom.models.graph import F64, I64, ROUNDING_OPS, TRIG_OPS, U64, Condition, divide
from loom.models.onnx_ops.node import Node, all_const, const_values, text


def _elementwise(op: str):
    def build(n: Node):
        return n.b.binary(op, n.tensor(0), n.tensor(1))
    return build


def _variadic(op: str, mean: bool = False):
    def build(n: Node):
        acc = n.tensor(0)
        for k in range(1, len(n.inputs)):
            acc = n.b.binary(op, acc, n.tensor(k))
        return n.b.binary("mul", acc, 1.0 / len(n.inputs)) if mean and len(n.inputs) > 1 else acc
    return build


def _unary(op: str):
    return lambda n: n.b.unary(op, n.tensor(0))


def _rounding(op: str):
    """Floor / Ceil / Round (half to even): of constants folded (shape arithmetic: an output size floor(h * 1.5)),
    of tensors a layer."""
    def build(n: Node):
        if all_const(n):
            return ROUNDING_OPS[op](const_values(n)[0])
        return n.b.unary(op, n.tensor(0))
    return build


def _foldable(build: Callable[[Node], object]):
    """Ops that may be shape arithmetic on constants: folded with numpy when every input is constant."""
    def run(n: Node):
        if all_const(n) and all(v is not None for v in n.inputs):
            vals = const_values(n)
            if n.op in ("Add", "Sub", "Mul", "Div") and all(v.dtype == I64 for v in vals):
                a, c = vals  # (shape arithmetic: a Div of integers truncates, as onnx's reference)
                return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}.get(
                    n.op, lambda p, q: divide("truncdiv", *np.broadcast_arrays(p, q)))(a, c)
        return build(n)
    return run


def _pow(n: Node):
    """x ** y in x's dtype, as the reference (numpy) computes it: of two floats alike in their dtype, of mixed or
    integer operands in float64 (exact for integer results below 2^53), then converted to x's dtype."""
    a, e = n.tensor(0), n.tensor(1)
    if a.dtype == e.dtype and a.dtype.kind == "f":
        return n.b.binary("pow", a, e)
    y = n.b.binary("pow", n.b.cast(a, F64, n.op), n.b.cast(e, F64, n.op))
    return n.b.cast(y, a.dtype, n.op)


def _bit_shift(n: Node):
    """x << y or x >> y (direction LEFT / RIGHT) as numpy shifts the unsigned types it is defined on."""
    direction = text(n.attrs.get("direction", ""))
    if direction not in ("LEFT", "RIGHT"):
        raise n.error(f"direction {direction!r} must be LEFT or RIGHT")
    op = "shl" if direction == "LEFT" else "shr"
    return n.b.binary(op, n.tensor(0), n.tensor(1), unsigned=n.widened == U64)


def _div(n: Node):
    """Div: of integers truncated towards zero (onnx's reference; a zero divisor gives 0 as there), of floats IEEE's."""
    a, c = n.tensor(0), n.tensor(1)
    return n.b.binary("truncdiv" if a.dtype.kind in "iu" else "div", a, c, unsigned=n.widened == U64)


def _mod(n: Node):
    """Mod: fmod=1 the remainder with the dividend's sign (C's fmod), fmod=0 the divisor's (numpy's mod; the
    specification allows it of integers only, onnx's reference computes it of floats too). A zero integer divisor
    gives 0, as the reference (numpy). Of constants (torch.onnx's shape arithmetic: an axis modulo the rank) folded."""
    op = "fmod" if int(n.attrs.get("fmod", 0)) else "mod"
    if all_const(n):
        a, c = const_values(n)
        return divide(op, *np.broadcast_arrays(a, c)) if a.dtype == c.dtype else (
            np.fmod if op == "fmod" else np.mod)(a, c)
    a, c = n.tensor(0), n.tensor(1)
    return n.b.binary(op, a, c, unsigned=n.widened == U64)


def _compare(op: str):
    return lambda n: n.b.compare(op, n.tensor(0), n.tensor(1))


def _logical(op: str):
    def build(n: Node):
        if all_const(n):  # masks of constants (shape arithmetic)
            return getattr(np, f"logical_{op}")(*const_values(n))
        return n.b.logical(op, n.tensor(0), n.tensor(1))
    return build


def _not(n: Node):
    if all_const(n):
        return np.logical_not(const_values(n)[0])
    return n.b.logical_not(n.tensor(0))


def _where(n: Node):
    cond = n.inputs[0]  # a comparison, or a bool constant (a mask)
    return n.b.select(cond if isinstance(cond, Condition) else n.tensor(0), n.tensor(1), n.tensor(2))


def _is_inf(n: Node):
    x = n.tensor(0)
    positive, negative = int(n.attrs.get("detect_positive", 1)), int(n.attrs.get("detect_negative", 1))
    if positive and negative:
        return n.b.compare("eq", n.b.unary("abs", x), float("inf"))
    if not positive and not negative:
        return n.b.constant(f"{n.proto.name or 'isinf'}_none", np.zeros(x.shape, bool))
    return n.b.compare("eq", x, float("inf") if positive else -float("inf"))


OPS = {
    "Add": _foldable(_elementwise("add")), "Sub": _foldable(_elementwise("sub")),
    "Mul": _foldable(_elementwise("mul")), "Div": _foldable(_div),
    "Pow": _pow, "Max": _variadic("max"), "Min": _variadic("min"), "Sum": _variadic("add"),
    "Mean": _variadic("add", mean=True),
    "Relu": _unary("relu"), "Sigmoid": _unary("sigmoid"), "Tanh": _unary("tanh"), "Exp": _unary("exp"),
    "Floor": _rounding("floor"), "Ceil": _rounding("ceil"), "Round": _rounding("round"),
    "Log": _unary("log"), "Sqrt": _unary("sqrt"), "Neg": _unary("neg"), "Abs": _unary("abs"),
    "Sign": lambda n: n.b.sign(n.tensor(0), keep_nan=True), "Erf": _unary("erf"), "Reciprocal": _unary("reciprocal"),
    "Sin": _unary("sin"), "Cos": _unary("cos"), **{name.capitalize(): _unary(name) for name in TRIG_OPS},
    "Greater": _compare("gt"), "Less": _compare("lt"), "GreaterOrEqual": _compare("ge"),
    "LessOrEqual": _compare("le"), "Equal": _compare("eq"), "Where": _where,
    "Not": _not, "And": _logical("and"), "Or": _logical("or"), "Xor": _logical("xor"), "Mod": _mod,
    "IsNaN": lambda n: n.b.compare("ne", n.tensor(0), n.tensor(0)), "IsInf": _is_inf,
    "BitShift": _bit_shift, "BitwiseAnd": _elementwise("bitand"), "BitwiseOr": _elementwise("bitor"),
    "BitwiseXor": _elementwise("bitxor"), "BitwiseNot": _unary("bitnot"),
}
