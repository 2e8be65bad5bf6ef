"""``loom-canonicalize``: xDSL's ``canonicalize`` (the same patterns, folders and dead-code removal, in the same
order) with the dead-code check of ``loom.passes.effects``, which stops at the first effect that keeps an op.

Matches: every op, as xDSL's pass does. Produces: the IR xDSL's ``canonicalize`` produces. With
``keep-types=f32,f64`` an op reading or producing a value of those types is neither folded nor rewritten (dead
ones are still erased): the HLS backend computes them in another type (``types={"f32": "ap_fixed<..>"}``),
where ``0.75 * 0.75`` folded in f32 is not the product of the two constants quantised into the type.
Why: xDSL 0.74's check walks a loop's whole body at every worklist visit and for every op of every post-walk
dead-code sweep (on the harris pipeline's 1143 ops, 2.0 s of canonicalize's 2.3 s).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.dead_code_elimination import LiveSet

from loom.passes.effects import is_trivially_dead, would_be_trivially_dead


class _LiveSet(LiveSet):
    def propagate_op_liveness(self, op: Operation):  # xDSL's, with loom's check
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if not would_be_trivially_dead(op):
            self.set_live(op)
            return
        if any(self.is_live(use.operation) for result in op.results for use in result.uses):
            self.set_live(op)


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """xDSL's ``region_dce`` (erase every op no live op needs) with loom's check."""
    live = _LiveSet()
    while live.changed:
        live.changed = False
        live.propagate_region_liveness(region)
    live.delete_dead(region, listener)
    return live.changed


class _Canonicalize(RewritePattern):
    """xDSL's ``canonicalize`` applier: erase a dead op, else fold it, else try its canonicalization patterns
    (xDSL's nested applier for ops with several patterns asks its own dead-code check again; not needed here, the
    op was just found live)."""

    def __init__(self, ctx: Context, keep: frozenset[str] = frozenset()):
        self.ctx = ctx
        self.keep = keep
        self.appliers: dict[type[Operation], GreedyRewritePatternApplier] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if is_trivially_dead(op):
            rewriter.erase(op)
            return
        if self.keep and any(str(v.type) in self.keep for v in (*op.operands, *op.results)):
            return
        applier = self.appliers.get(type(op))
        if applier is None:
            patterns = [p for t in op.get_traits_of_type(HasCanonicalizationPatternsTrait)
                        for p in t.get_patterns(type(op))]
            applier = GreedyRewritePatternApplier(patterns, ctx=self.ctx, folding_enabled=True, dce_enabled=False)
            self.appliers[type(op)] = applier
        applier.match_and_rewrite(op, rewriter)


@dataclass(frozen=True)
class LoomCanonicalizePass(ModulePass):
    name = "loom-canonicalize"
    keep_types: tuple[str, ...] = ()  # values of these types are computed elsewhere in another type: not folded

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(_Canonicalize(ctx, frozenset(self.keep_types)), post_walk_func=region_dce)
        walker.rewrite_module(op)
