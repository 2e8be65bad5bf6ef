"""``arith-contract-fma``: fuse a float multiply feeding an add into one ``math.fma``.

Matches: ``arith.addf`` (either operand order) of an ``arith.mulf`` result that has no other use,
on f32 or f64 scalars.
Produces: ``math.fma %a, %b, %c`` (``a * b + c`` rounded once) in place of the add; the multiply is
erased. The C backend emits ``fmaf``/``fma``, which ``-march=native`` on an FMA CPU turns into one
vector instruction. Why a pass: the C backend compiles with ``-std=c99``, where gcc does not
contract ``a * b + c`` by itself (``-ffp-contract=off``), so a multiply-accumulate loop would need
two instructions and keep half of the FMA units idle.
Results differ from the unfused ops by at most the one skipped rounding of the product; use it
where that is acceptable (the CPU tuner applies it in native mode only: without FMA instructions
``fmaf`` is a slow library call).
Leaves alone: a multiply with other uses (it would be computed twice), vector and integer ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, Float64Type, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern


@dataclass(frozen=True)
class ArithContractFmaPass(ModulePass):
    name = "arith-contract-fma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_Contract(), apply_recursively=False).rewrite_module(op)


class _Contract(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, add: arith.AddfOp, rewriter: PatternRewriter) -> None:
        if not isinstance(add.result.type, (Float32Type, Float64Type)):
            return
        for product, addend in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            mul = product.owner
            if isinstance(mul, arith.MulfOp) and mul.result.has_one_use():
                rewriter.replace(add, math.FmaOp(mul.lhs, mul.rhs, addend))
                rewriter.erase(mul)
                return
