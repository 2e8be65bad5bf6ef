"""``scf-unroll{factor=N}``: unroll innermost ``scf.for`` loops by a factor, keeping a remainder loop.

Matches: every ``scf.for`` with no ``scf.for`` / ``scf.parallel`` inside it (an innermost loop),
with or without ``iter_args``.
Produces: a main loop ``for i = lb to lb + ((ub - lb) / (step*N)) * (step*N) step step*N`` whose
body is N copies of the original body at ``i, i + step, ..., i + (N-1)*step`` (``iter_args``
chained from copy to copy), followed by the original loop from the main loop's end to ``ub``
for the remaining iterations; the remainder loop is dropped when the bounds are constants and
N iterations divide the trip count. Trip counts are computed with ``arith.divui`` on ``index``
values, assuming ``lb <= ub`` and ``step > 0`` (which every loop loom emits satisfies; a loop
with ``ub < lb`` keeps its zero trip count because the main loop's upper bound is clamped to
``ub`` with ``arith.maxsi`` on the lower bound).
Leaves alone: loops that contain another loop, ``factor=1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from loom.passes.loop_nests import constant_int, require_positive

_DONE = "loom.unrolled"  # marks the loops this pass made, so a walk does not unroll them again


@dataclass(frozen=True)
class ScfUnrollPass(ModulePass):
    name = "scf-unroll"

    factor: int = 2

    def __post_init__(self) -> None:
        require_positive(self.name, "factor", self.factor)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.factor == 1:
            return
        PatternRewriteWalker(_Unroll(self.factor), apply_recursively=False).rewrite_module(op)
        for loop in op.walk():
            loop.attributes.pop(_DONE, None)


@dataclass
class _Unroll(RewritePattern):
    factor: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        if _DONE in loop.attributes or any(isinstance(o, (scf.ForOp, scf.ParallelOp))
                                           for o in loop.body.walk()):
            return
        n = self.factor
        ty = loop.lb.type
        lb, ub, step = loop.lb, loop.ub, loop.step

        def emit(new_op):
            rewriter.insert(new_op)
            return new_op.results[0]

        const = lambda v: emit(arith.ConstantOp(IntegerAttr(v, ty)))  # noqa: E731
        c_lb, c_ub, c_step = constant_int(lb), constant_int(ub), constant_int(step)
        if c_step is not None:
            big_step = const(c_step * n)
        else:
            big_step = emit(arith.MuliOp(step, const(n)))
        exact = None not in (c_lb, c_ub, c_step) and (c_ub - c_lb) % (c_step * n) == 0  # type: ignore[operator]
        if exact:
            main_ub = ub
        else:
            span = emit(arith.SubiOp(ub, lb))
            whole = emit(arith.DivUIOp(span, big_step)) if isinstance(ty, IndexType) else emit(
                arith.DivSIOp(span, big_step))
            main_ub = emit(arith.MaxSIOp(emit(arith.AddiOp(lb, emit(arith.MuliOp(whole, big_step)))), lb))

        body = Block(arg_types=[ty, *(a.type for a in loop.iter_args)])
        iv, *carried = body.args
        values: list[SSAValue] = list(carried)
        for k in range(n):
            index = iv
            if k:
                offset = arith.ConstantOp(IntegerAttr(c_step * k, ty)) if c_step is not None else None
                if offset is None:
                    kc = arith.ConstantOp(IntegerAttr(k, ty))
                    body.add_op(kc)
                    offset = arith.MuliOp(step, kc)
                body.add_op(offset)
                shifted = arith.AddiOp(iv, offset.results[0])
                body.add_op(shifted)
                index = shifted.result
            mapping = {loop.body.block.args[0]: index, **dict(zip(loop.body.block.args[1:], values))}
            for inner in loop.body.block.ops:
                if isinstance(inner, scf.YieldOp):
                    values = [mapping.get(v, v) for v in inner.arguments]
                else:
                    body.add_op(inner.clone(mapping))
        body.add_op(scf.YieldOp(*values))
        main = scf.ForOp(lb, main_ub, big_step, list(loop.iter_args), body)
        main.attributes[_DONE] = UnitAttr()
        rewriter.insert(main)
        if exact:
            rewriter.replace(loop, [], list(main.results))
            return
        remainder_body = Block(arg_types=[ty, *(a.type for a in loop.iter_args)])
        mapping = dict(zip(loop.body.block.args, remainder_body.args))
        for inner in loop.body.block.ops:
            remainder_body.add_op(inner.clone(mapping))
        remainder = scf.ForOp(main_ub, ub, step, list(main.results), remainder_body)
        remainder.attributes[_DONE] = UnitAttr()
        rewriter.replace(loop, remainder, list(remainder.results))
