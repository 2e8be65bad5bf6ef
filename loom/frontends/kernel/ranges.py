"""Python ``range`` semantics for kernel loops whose step is not a positive constant.

``scf.for`` and ``affine.for`` only count up, by a positive step. Python's ``range`` also counts down, and a step
read at run time may have either sign (an scf.for with a negative step runs no iteration; a zero step never
ends). Such a loop is normalised: ``k`` runs over ``[0, len(range(lb, ub, step)))`` and the user's variable is
``lb + k * step``. The length is ``ceil((ub - lb) / step)`` for either sign (a negative length runs nothing);
a zero step is refused at trace time, or at run time by the always-on division check of that length, whose
message ``loom.check`` names (``loom.dialects.check_note``).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import AffineMap

from loom.dialects.check_note import set_check_note
from loom.frontends.kernel import values as V
from loom.frontends.kernel.kernel_types import Index
from loom.frontends.kernel.values import Value

ZERO_STEP = "range() step is zero"


def needs_normalising(step) -> bool:
    return not (isinstance(step, int) and step > 0)


def range_length(lb, ub, step):
    """The iteration count of ``range(lb, ub, step)`` (a Python int when all three are), emitted before the loop."""
    if all(isinstance(x, int) for x in (lb, ub, step)):
        return len(range(lb, ub, step))
    diff = V.binary("-", ub, lb)
    if isinstance(step, int):  # negative constant: ceil(d / s) = -floor(d / -s)
        return V.binary("-", 0, V.binary("//", diff, -step))
    op = V.emit(arith.CeilDivSIOp(V.as_value(diff, Index).ssa, step.ssa))
    set_check_note(op, ZERO_STEP)
    return Value(op.result, Index)


def affine_length_bound(lb, ub, step):
    """The length as an affine upper-bound map ``(lb - ub) ceildiv -step`` for a negative constant step and affine
    bounds, else None (the loop is then an scf.for)."""
    if not isinstance(step, int):
        return None
    forms = []
    for x in (lb, ub):
        if isinstance(x, int):
            x = V.as_value(x, Index)
        if x.affine is None or not x.affine.valid:
            return None
        forms.append(x.affine)
    diff = forms[0].add(forms[1], -1)
    ops = list(diff.terms)
    return AffineMapAttr(AffineMap(len(ops), 0, (diff.to_xdsl(ops).ceil_div(-step),))), ops


def user_variable(k: Value, lb, step):
    """``lb + k * step``: affine in ``k`` when the step is a constant."""
    return V.binary("+", lb, V.binary("*", k, step))
