"""Does a ``linalg.generic`` compute what an accelerator implements?

``match_generic(op, acc) -> Match | str`` compares, in this order (the first
difference is returned as a sentence, so "no accelerator matches" errors can
say why):

* operand counts (inputs / outputs) and loop count;
* iterator types, loop by loop;
* indexing maps, result by result, as affine sums of loop dims. Loop dims
  correspond by position (``d0`` = the kernel's first dim). Coefficients must be
  equal, with one exception: in a subscript that sums several dims (a convolution
  window, ``oh + fh``) the coefficient of a *parallel* dim may be any positive
  integer: that is the convolution stride, a host-side matter (the host picks the
  window to send), so a stride-2 convolution matches a window accelerator;
* the body: the scalar computation (``mul-add`` = yield ``out + in0 * in1``, either
  operand order, integer or float ops).

A transposed matmul (``A`` indexed ``(k, m)``) therefore does not match a matmul
accelerator. The element type is checked separately (``element_type_of``) so the
caller can report a data-type mismatch as such.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.dialects.builtin import MemRefType
from xdsl.ir.affine import AffineExpr

from loom.accel.description import AcceleratorDescription
from loom.core.affine import Affine

LinearForm = tuple[dict[int, int], int]  # {loop index: coefficient}, constant


@dataclass(frozen=True)
class Match:
    """How the op's loops map onto the accelerator's kernel."""

    dims: tuple[str, ...]  # accelerator dim name of op loop i
    # coefficient per (operand, subscript, dim) as written in the op (strides)
    op_subscripts: tuple[tuple[LinearForm, ...], ...]


def linear_form(expr: AffineExpr) -> LinearForm | None:
    """``2*d2 + d5`` -> ({2: 2, 5: 1}, 0); None for mod / div / products of dims.

    The pair form of ``loom.core.affine.Affine.from_xdsl`` that the accel passes unpack."""
    form = Affine.from_xdsl(expr)
    return None if form is None else (dict(form.terms), form.const)


# element-wise bodies ``yield in0 OP in1`` (the output is not read), by the arith op computing them
ELEMENTWISE_BODIES: dict[type, str] = {
    arith.AddiOp: "add", arith.AddfOp: "add", arith.MuliOp: "mul", arith.MulfOp: "mul",
    arith.MaxSIOp: "max", arith.MaximumfOp: "max",
    arith.MinSIOp: "min", arith.MinimumfOp: "min",
}
# An engine's max / min / relu propagate NaN (IEEE maximum / minimum, as torch's relu and numpy's maximum): maxnumf
# and minnumf return the other operand for a NaN, so a body of theirs is not the engine's and stays on the CPU.


def _is_zero(value) -> bool:
    """``value`` is an ``arith.constant`` 0 or 0.0 (inside the region or captured from outside)."""
    owner = getattr(value, "owner", None)
    if not isinstance(owner, arith.ConstantOp):
        return False
    attr = owner.value
    return getattr(attr, "value", None) is not None and float(attr.value.data) == 0.0


def _relu(ops, args, n_in: int, n_out: int) -> bool:
    """``yield max(in0, 0)`` (maxsi / maximumf; the zero a constant of the region or outside)."""
    body = [o for o in ops if not (isinstance(o, arith.ConstantOp) and _is_zero(o.results[0]))]
    if n_in != 1 or n_out != 1 or len(body) != 2 or type(body[0]) not in (arith.MaxSIOp, arith.MaximumfOp):
        return False
    mx, yld = body
    others = [v for v in mx.operands if v is not args[0]]
    return isinstance(yld, YieldOp) and list(yld.operands) == [mx.results[0]] and len(others) == 1 \
        and args[0] in list(mx.operands) and _is_zero(others[0])


def body_kind(op: GenericOp) -> str:
    """``mul-add`` / ``add`` / ``mul`` / ``max`` / ``min`` / ``copy`` / ``relu`` / ``unknown``: what the
    scalar region computes."""
    block = op.body.blocks[0]
    ops = list(block.ops)
    args = list(block.args)
    n_in = len(op.inputs)
    if any(isinstance(o, (arith.MaxnumfOp, arith.MinnumfOp)) for o in ops):
        return "NaN-dropping maxnumf/minnumf (engines' max, min and relu propagate NaN, as maximumf/minimumf)"
    if _relu(ops, args, n_in, len(op.outputs)):
        return "relu"
    if len(ops) == 1 and len(op.outputs) == 1 and ops[0].operands and ops[0].operands[0] == args[0]:
        return "copy"
    if len(ops) == 2 and n_in == 2 and len(op.outputs) == 1 and type(ops[0]) in ELEMENTWISE_BODIES:
        first, yld = ops
        if isinstance(yld, YieldOp) and list(yld.operands) == [first.results[0]] \
                and list(first.operands) in ([args[0], args[1]], [args[1], args[0]]) and args[0] is not args[1]:
            return ELEMENTWISE_BODIES[type(first)]
    if len(ops) != 3 or n_in != 2 or len(op.outputs) != 1:
        return "unknown"
    mul, add, yld = ops
    if not isinstance(yld, YieldOp) or list(yld.operands) != [add.results[0]]:
        return "unknown"
    if not isinstance(mul, (arith.MuliOp, arith.MulfOp)) or not isinstance(add, (arith.AddiOp, arith.AddfOp)):
        return "unknown"
    if set(mul.operands) != {args[0], args[1]} or len(set(mul.operands)) != 2:
        return "unknown"
    if set(add.operands) != {mul.results[0], args[2]}:
        return "unknown"
    return "mul-add"


def element_type_of(op: GenericOp) -> str:
    types = {str(v.type.element_type) for v in (*op.inputs, *op.outputs) if isinstance(v.type, MemRefType)}
    return types.pop() if len(types) == 1 else "mixed(" + ", ".join(sorted(types)) + ")"


def _iterators(op: GenericOp) -> tuple[str, ...]:
    return tuple(str(it.data.value) for it in op.iterator_types.data)


def describe_op(op: GenericOp) -> str:
    maps = ", ".join(str(m.data) for m in op.indexing_maps.data)
    return f"linalg.generic [{maps}] ({', '.join(_iterators(op))}; body {body_kind(op)}; {element_type_of(op)})"


def match_generic(op: GenericOp, acc: AcceleratorDescription) -> Match | str:
    kernel = acc.kernel
    if not all(isinstance(v.type, MemRefType) for v in (*op.inputs, *op.outputs)):
        return "operands are not memrefs (bufferize first)"
    types = element_type_of(op)
    if types.startswith("mixed("):
        return (f"its operands mix element types {types[5:]}: an accelerator's operands are all of its data_type "
                f"({acc.data_type}; the DMA moves 32-bit words), so narrow inputs with a wider accumulator (i8 x i8 "
                "-> i32) are not offloaded; widen the inputs to the output's type before the op")
    if (len(op.inputs), len(op.outputs)) != (kernel.n_inputs, kernel.n_operands - kernel.n_inputs):
        return (f"it has {len(op.inputs)} inputs and {len(op.outputs)} outputs, the kernel "
                f"{kernel.n_inputs} and {kernel.n_operands - kernel.n_inputs}")
    iters = _iterators(op)
    if len(iters) != len(kernel.dims):
        return f"it has {len(iters)} loops, the kernel {len(kernel.dims)} ({', '.join(kernel.dims)})"
    if iters != kernel.iterator_types:
        return f"iterator types ({', '.join(iters)}) differ from the kernel's ({', '.join(kernel.iterator_types)})"
    forms: list[tuple[LinearForm, ...]] = []
    for n, (map_attr, kmap) in enumerate(zip(op.indexing_maps.data, kernel.indexing_maps)):
        amap = map_attr.data
        operand = acc.operand(n)
        if len(amap.results) != kmap.rank:
            return f"operand {n} ({operand.name}) has {len(amap.results)} subscripts, the kernel's {kmap.rank}"
        subs = []
        for r, (expr, ksum) in enumerate(zip(amap.results, kmap.results)):
            form = linear_form(expr)
            want = {kernel.dims.index(d): c for d, c in ksum.terms.items()}
            bad = f"operand {n} ({operand.name}) subscript {r} is {expr}, the kernel's is {ksum} ({kmap})"
            if form is None or form[1] != ksum.const or set(form[0]) != set(want):
                return bad
            for d, c in form[0].items():
                stride_ok = len(want) > 1 and kernel.iterator_types[d] == "parallel" and c > 0
                if c != want[d] and not stride_ok:
                    return bad
            subs.append(form)
        forms.append(tuple(subs))
    kind = body_kind(op)
    if kind != kernel.body:
        return f"its body computes {kind}, the kernel {kernel.body}"
    return Match(kernel.dims, tuple(forms))
