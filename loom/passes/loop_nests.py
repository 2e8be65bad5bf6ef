"""Shared helpers for the loop-nest passes: finding perfectly nested ``scf.for``
bands and rebuilding them. Not a pass itself."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

remarks = logging.getLogger("loom.passes")


def require_positive(pass_name: str, option: str, value) -> None:
    """A pass option that must be a positive integer (checked when the pass is built)."""
    if not isinstance(value, int) or value < 1:
        from loom.errors import LoomError

        raise LoomError(f"{pass_name}: {option} must be a positive integer, got {value!r}")


def band_roots(module: ModuleOp, tag: str) -> list[scf.ForOp]:
    """Loops to transform: per function, those tagged with the unit attribute
    ``tag`` if any is, else the outermost ``scf.for`` loops."""
    roots: list[scf.ForOp] = []
    for fn in module.walk():
        if not isinstance(fn, func.FuncOp):
            continue
        loops = [op for op in fn.walk() if isinstance(op, scf.ForOp)]
        tagged = [op for op in loops if tag in op.attributes]
        if tagged:
            roots.extend(tagged)
        else:
            roots.extend(op for op in loops if not _inside_loop(op, fn))
    return roots


def _inside_loop(op: Operation, stop: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not stop:
        if isinstance(parent, scf.ForOp):
            return True
        parent = parent.parent_op()
    return False


def perfect_band(root: scf.ForOp, depth: int) -> list[scf.ForOp] | str:
    """The ``depth`` loops of the perfect nest starting at ``root``, or why not.

    A band qualifies when each loop's body is exactly one ``scf.for`` plus the
    terminator, no loop carries ``iter_args``, and every bound and step is
    defined outside the band (a rectangular iteration space)."""
    loops = [root]
    while len(loops) < depth:
        ops = list(loops[-1].body.block.ops)
        if len(ops) != 2 or not isinstance(ops[0], scf.ForOp):
            return (f"imperfect nest: loop at depth {len(loops) - 1} holds other ops "
                    f"than one scf.for (needs {depth} perfectly nested loops)")
        loops.append(ops[0])
    for d, loop in enumerate(loops):
        if loop.iter_args:
            return f"loop at depth {d} carries iter_args"
        for v in (loop.lb, loop.ub, loop.step):
            if defined_inside(v, root):
                return f"bounds of the loop at depth {d} depend on an enclosing loop of the band"
    return loops


def defined_inside(value: SSAValue, root: Operation) -> bool:
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
    else:
        owner = value.owner  # type: ignore[assignment]
    return owner is not None and (owner is root or root.is_ancestor(owner))


def constant_int(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def where(loop: scf.ForOp) -> str:
    """Human-readable place of a loop for remarks."""
    fn = loop.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    name = fn.sym_name.data if isinstance(fn, func.FuncOp) else "?"
    return f"func @{name}"


def new_loop(lb: SSAValue, ub: SSAValue, step: SSAValue) -> tuple[scf.ForOp, Block]:
    body = Block(arg_types=[lb.type])
    return scf.ForOp(lb, ub, step, [], body), body


def replace_band(loops: Sequence[scf.ForOp], innermost: Block, new_ivs: Sequence[SSAValue],
                 new_root: scf.ForOp) -> None:
    """Move the band's body into ``innermost`` (uses of old induction variables
    become ``new_ivs``), put ``new_root`` where the band was and erase the band."""
    old_body = loops[-1].body.block
    for op in list(old_body.ops):
        op.detach()
        innermost.add_op(op)
    for loop, iv in zip(loops, new_ivs):
        loop.body.block.args[0].replace_all_uses_with(iv)
    root = loops[0]
    root.parent_block().insert_op_before(new_root, root)  # type: ignore[union-attr]
    root.detach()
    root.erase(safe_erase=False)


def still_in(op: Operation, module: ModuleOp) -> bool:
    """Whether ``op`` is still nested in ``module`` (not erased with a parent)."""
    parent = op.parent_op()
    while parent is not None:
        if parent is module:
            return True
        parent = parent.parent_op()
    return False


@dataclass
class StaticExtent:
    """A loop whose trip count is a constant c (up to a guard): see ``static_extent``."""
    trips: int              # the static trip count c
    lb: SSAValue
    step: int
    guard: tuple[SSAValue, int] | None  # (ub, span): full only when ub - lb == span


def static_extent(loop: scf.ForOp) -> StaticExtent | str:
    """The static trip count of ``loop`` (constant bounds, ``ub = lb + c``, or ``ub = minsi(lb + c, X)``
    with the guard: full only when ``ub - lb == c``), or why there is none."""
    step = constant_int(loop.step)
    if step is None or step <= 0:
        return "a loop has no constant positive step"
    lb, ub = constant_int(loop.lb), constant_int(loop.ub)
    if lb is not None and ub is not None:
        return StaticExtent(max(0, -(-(ub - lb) // step)), loop.lb, step, None)
    span = _offset_from(loop.ub, loop.lb)
    if span is not None:
        return StaticExtent(-(-span // step), loop.lb, step, None)
    if isinstance(loop.ub.owner, arith.MinSIOp):
        for bound in loop.ub.owner.operands:
            span = _offset_from(bound, loop.lb)
            if span is not None and span > 0:
                return StaticExtent(-(-span // step), loop.lb, step, (loop.ub, span))
    return "a loop has no static extent (ub = lb + constant, or minsi of it)"


def _offset_from(value: SSAValue, base: SSAValue) -> int | None:
    """c when ``value`` is ``arith.addi`` of ``base`` and the constant c, else None."""
    op = value.owner
    if not isinstance(op, arith.AddiOp):
        return None
    for a, b in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if a is base and (c := constant_int(b)) is not None:
            return c
    return None
