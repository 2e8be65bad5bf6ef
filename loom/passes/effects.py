"""Memory-effect questions the dead-code and CSE steps ask, answered as xDSL 0.74 answers them but returning at
the first effect that decides the answer.

xDSL collects *every* effect of an op first; for a loop (``RecursiveMemoryEffect``) that is its whole body,
recursively, and its canonicalize and cse ask for every loop at every visit, so a nest of depth d is walked d
times per sweep. A loop with a store in its body is neither dead nor side-effect free whatever else it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from xdsl.ir import Operation, SSAValue
from xdsl.traits import EffectInstance, IsTerminator, MemoryEffect, MemoryEffectKind, RecursiveMemoryEffect, SymbolOpInterface


@cache
def _traits(op_type: type[Operation]) -> tuple[bool, tuple[MemoryEffect, ...]]:
    """(may be dead: neither terminator nor symbol, its memory-effect traits) of an op class; xDSL looks traits
    up by class, and this lookup was a third of canonicalize's time."""
    may = (not op_type.has_trait(IsTerminator, value_if_unregistered=False)
           and not op_type.has_trait(SymbolOpInterface, value_if_unregistered=False))
    return may, tuple(op_type.get_traits_of_type(MemoryEffect))


def effects_only(op: Operation, allowed: Callable[[EffectInstance], bool]) -> bool:
    """Whether ``op``'s effects are known (xDSL's ``get_effects(op) is not None``) and all ``allowed``."""
    traits = _traits(type(op))[1]
    if not traits:
        return False  # unknown effects
    for trait in traits:
        if type(trait) is RecursiveMemoryEffect:
            if not all(effects_only(child, allowed)
                       for region in op.regions for block in region.blocks for child in block.ops):
                return False
            continue
        effects = trait.get_effects(op)
        if effects is None or not all(allowed(e) for e in effects):
            return False
    return True


def would_be_trivially_dead(op: Operation) -> bool:
    """xDSL's predicate: ``op`` would be dead if its results were unused (only reads, and allocations of values
    defined inside ``op``)."""
    def allowed(e: EffectInstance) -> bool:
        return e.kind == MemoryEffectKind.READ or (
            e.kind == MemoryEffectKind.ALLOC and isinstance(e.value, SSAValue) and op.is_ancestor(e.value.owner))

    return _traits(type(op))[0] and effects_only(op, allowed)


def is_trivially_dead(op: Operation) -> bool:
    return all(r.first_use is None for r in op.results) and would_be_trivially_dead(op)


def is_side_effect_free(op: Operation) -> bool:
    return effects_only(op, lambda e: False)


def only_reads(op: Operation) -> bool:
    """xDSL's ``only_has_effect(op, READ)``."""
    return effects_only(op, lambda e: e.kind == MemoryEffectKind.READ)
