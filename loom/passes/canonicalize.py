"""``loom-canonicalize``: xDSL's ``canonicalize`` (the same patterns, folders and dead-code removal, in the same
order) with a dead-code check that stops at the first effect that keeps an op.

Matches: every op, as xDSL's pass does. Produces: the IR xDSL's ``canonicalize`` produces.
Why: xDSL 0.74 decides whether an op with unused results is dead by collecting *every* memory effect of it; for a
loop (``RecursiveMemoryEffect``) that is its whole body, recursively, asked again at every worklist visit and for
every op of every post-walk dead-code sweep, so a nest of depth d is walked d times per sweep (on the harris
pipeline's 1143 ops, 2.0 s of canonicalize's 2.3 s). A loop with a store in its body is live whatever else it
holds, so the check here returns at the first such effect; the answer, and so the IR, is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import HasCanonicalizationPatternsTrait, IsTerminator, MemoryEffect, MemoryEffectKind, RecursiveMemoryEffect, SymbolOpInterface
from xdsl.transforms.dead_code_elimination import LiveSet


@cache
def _traits(op_type: type[Operation]) -> tuple[bool, tuple[MemoryEffect, ...]]:
    """(may be dead: neither terminator nor symbol, its memory-effect traits) of an op class; xDSL looks traits up
    by class, and this lookup was a third of the pass's time."""
    may = (not op_type.has_trait(IsTerminator, value_if_unregistered=False)
           and not op_type.has_trait(SymbolOpInterface, value_if_unregistered=False))
    return may, tuple(op_type.get_traits_of_type(MemoryEffect))


def _only_result_effects(root: Operation, op: Operation) -> bool:
    """xDSL's ``result_only_effects(root)`` restricted to ``op`` (inside ``root``), returning at the first
    effect other than a read or an allocation of a value defined inside ``root``."""
    traits = _traits(type(op))[1]
    if not traits:
        return False  # unknown effects
    for trait in traits:
        if type(trait) is RecursiveMemoryEffect:
            if not all(_only_result_effects(root, child)
                       for region in op.regions for block in region.blocks for child in block.ops):
                return False
            continue
        effects = trait.get_effects(op)
        if effects is None:
            return False
        for e in effects:
            if e.kind == MemoryEffectKind.READ:
                continue
            if e.kind == MemoryEffectKind.ALLOC and isinstance(e.value, SSAValue) and root.is_ancestor(e.value.owner):
                continue
            return False
    return True


def would_be_trivially_dead(op: Operation) -> bool:
    """Whether ``op`` would be dead if its results were unused (xDSL's predicate of the same name)."""
    return _traits(type(op))[0] and _only_result_effects(op, op)


def is_trivially_dead(op: Operation) -> bool:
    return all(r.first_use is None for r in op.results) and would_be_trivially_dead(op)


class _LiveSet(LiveSet):
    def propagate_op_liveness(self, op: Operation):  # xDSL's, with the check above
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
    """xDSL's ``region_dce`` (erase every op no live op needs) with the check above."""
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

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.appliers: dict[type[Operation], GreedyRewritePatternApplier] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if is_trivially_dead(op):
            rewriter.erase(op)
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_Canonicalize(ctx), post_walk_func=region_dce).rewrite_module(op)
