"""``scf-parallelize``: run the outermost loop whose iterations are independent on threads.

Matches: per function, the outermost ``scf.for`` loops (not inside another loop).
Produces: an ``scf.parallel`` with the same bounds and body (the C backend emits it as
``#pragma omp parallel for``) when the loop's iterations provably touch disjoint data:
  - it has no ``iter_args`` and its body holds no call;
  - every memref the body stores to is accessed (every load and store of it in the body)
    with one and the same index list, and one entry of that list is *owned* by the loop:
    the loop's induction variable itself, or the induction variable of an inner loop
    ``for j = iv to min(iv + s, ub)`` / ``iv + s`` where ``s`` is this loop's step (the point
    loop of a tile made by ``scf-tile-and-interchange``), so iteration ``iv`` only touches
    elements whose entry lies in ``[iv, iv + step)``;
  - memrefs it only reads may be read any way.
Leaves alone (with a remark on the ``loom.passes`` logger): loops that fail the test, and
loops inside another loop (one level of threads is enough: nested ``scf.parallel`` run
serially inside their thread). Memrefs given as two aliasing arguments are the caller's
responsibility, as for every ``scf.parallel``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass

from loom.passes.loop_nests import band_roots, remarks, where

_NO_TAG = "loom.parallelize"  # tagging a loop picks it instead of the outermost ones


@dataclass(frozen=True)
class ScfParallelizePass(ModulePass):
    name = "scf-parallelize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in band_roots(op, _NO_TAG):
            loop.attributes.pop(_NO_TAG, None)
            reason = independence_problem(loop)
            if reason:
                remarks.warning("%s: %s: left alone: %s", self.name, where(loop), reason)
                continue
            _to_parallel(loop)


def independence_problem(loop: scf.ForOp) -> str | None:
    """Why the iterations of ``loop`` may interfere, or None when they provably do not."""
    if loop.iter_args:
        return "the loop carries iter_args"
    accesses: dict[SSAValue, list[tuple[SSAValue, ...]]] = {}
    stored: set[SSAValue] = set()
    for op in loop.body.walk():
        if isinstance(op, func.CallOp):
            return "the body calls a function"
        if isinstance(op, memref.LoadOp):
            accesses.setdefault(op.memref, []).append(tuple(op.indices))
        elif isinstance(op, memref.StoreOp):
            accesses.setdefault(op.memref, []).append(tuple(op.indices))
            stored.add(op.memref)
        elif isinstance(op, (memref.CopyOp,)) or op.name.startswith("linalg."):
            return f"the body holds {op.name}"
    owned = _owned_indices(loop)
    for target in stored:
        lists = set(accesses[target])
        if len(lists) != 1:
            return "a stored memref is accessed with different indices"
        (indices,) = lists
        if not any(index in owned for index in indices):
            return "no index of a stored memref is owned by the loop"
    return None


def _owned_indices(loop: scf.ForOp) -> set[SSAValue]:
    iv = loop.body.block.args[0]
    owned = {iv}
    for inner in loop.body.walk():
        if isinstance(inner, scf.ForOp) and inner is not loop and inner.lb == iv and _ends_one_step_later(
                inner.ub, iv, loop.step):
            owned.add(inner.body.block.args[0])
    return owned


def _ends_one_step_later(ub: SSAValue, iv: SSAValue, step: SSAValue) -> bool:
    """``ub`` is ``iv + step`` or ``min(iv + step, x)`` (at most one step past ``iv``)."""
    op = ub.owner
    if isinstance(op, arith.MinSIOp):
        return any(_ends_one_step_later(v, iv, step) for v in (op.lhs, op.rhs))
    if isinstance(op, arith.AddiOp):
        return (op.lhs == iv and _same_value(op.rhs, step)) or (op.rhs == iv and _same_value(op.lhs, step))
    return False


def _same_value(a: SSAValue, b: SSAValue) -> bool:
    if a == b:
        return True
    ca, cb = a.owner, b.owner
    return (isinstance(ca, arith.ConstantOp) and isinstance(cb, arith.ConstantOp) and ca.value == cb.value)


def _to_parallel(loop: scf.ForOp) -> None:
    body = Block(arg_types=[loop.lb.type])
    old = loop.body.block
    old.args[0].replace_all_uses_with(body.args[0])
    for op in list(old.ops):
        op.detach()
        if isinstance(op, scf.YieldOp):
            op.erase()
            continue
        body.add_op(op)
    body.add_op(scf.ReduceOp())
    parallel = scf.ParallelOp([loop.lb], [loop.ub], [loop.step], [body])
    block = loop.parent_block()
    assert block is not None
    block.insert_op_before(parallel, loop)
    loop.detach()
    loop.erase(safe_erase=False)


