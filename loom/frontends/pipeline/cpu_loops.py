"""The loop structure of one stage: splits, fuses, loop order, tails, unrolling.

A fused loop runs over the product of its two parts' extents; each part's index is
recovered with ``%`` / ``/`` by the inner part's extent (Halide's ``fuse``).

A split of a loop of extent ``E`` by ``f`` uses the factor ``min(f, E)`` (all
extents are static), so the outer loop runs ``ceil(E / f)`` times. Tails that
do not divide follow the split's ``TailStrategy`` (``Auto``: ShiftInwards for
pure definitions, GuardWithIf for updates):
- ShiftInwards shifts the last tile inward: the inner loop starts at
  ``min(outer * f, E - f)``, so a few points are computed twice with the same
  value and every tile has the static size ``f`` (pure definitions only);
- GuardWithIf guards the body with ``offset < E``; its last tile's offsets are ``widened`` (past ``E``), so
  the regions of Funcs computed inside it have their bases clamped into what the pipeline reads;
- RoundUp (and PredicateLoads/Stores) leave no tail: bounds inference rounded
  the Func's region up to a multiple of ``f`` (``infer_bounds(round_up=True)`` at the root, ``cpu_round_up``
  per tile).
Unrolling (``unroll``) is a hint on the CPU: a scheduled loop is emitted as
copies of the body with constant indices only in the innermost band of
unrolled loops and while that stays small (each loop at most
``MAX_UNROLL_EXTENT`` iterations, at most ``MAX_UNROLL_COPIES`` copies of the
body in all; an unrolled loop outside a rolled one would copy whole loop nests
and the Funcs computed inside them); the rest stay
``scf.for`` loops with constant trip counts, which gcc unrolls itself. An
accelerator schedule's fully unrolled 7x7 or 3x3xC reductions would otherwise
multiply the IR (and the lowering time) by 50-100 for no run-time gain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith

from loom.errors import LoomError

from .cpu_regions import SymRange
from .cpu_scalar import const_index
from .schedule import TailStrategy

MAX_UNROLL_EXTENT = 8
MAX_UNROLL_COPIES = 4


@dataclass(eq=False)
class LoopNode:
    name: str
    extent: int
    split: tuple["LoopNode", "LoopNode", int] | None = None  # (outer, inner, factor)
    iv: object = field(default=None)  # the loop's index value once opened
    fused: tuple["LoopNode", str] | None = None  # (the fused loop, "inner" | "outer") once fused


class StageLoops:
    """Split tree and loop order of one definition; ``dims`` gives each root Var's extent."""

    def __init__(self, schedule, extents: dict[str, int], pure: bool, owner: str = "?"):
        self.pure = pure
        self.roots = {name: LoopNode(name, e) for name, e in extents.items()}
        self.tails: dict[int, str] = {}  # id(split node) -> resolved tail strategy
        current = dict(self.roots)
        for s in schedule.splits:
            node = current[s.old]
            factor = max(1, min(s.factor, node.extent))
            tail = TailStrategy.resolve(getattr(s, "tail", TailStrategy.Auto), pure)
            if tail in TailStrategy.ROUNDING and node.extent % factor:
                raise LoomError(f"split({s.old}, {s.outer}, {s.inner}, {s.factor}, {tail}): the loop has extent "
                                f"{node.extent} here, not a multiple of {s.factor}; {tail} rounds up the region of "
                                "a Func's pure Var only, not a split's inner loop or a bound() extent (use "
                                "GuardWithIf or ShiftInwards)", where=f"Func '{owner}'", construct="split")
            self.tails[id(node)] = tail
            outer = LoopNode(s.outer, -(-node.extent // factor))
            inner = LoopNode(s.inner, factor)
            node.split = (outer, inner, factor)
            current[s.outer] = outer
            current[s.inner] = inner
        for fz in getattr(schedule, "fuses", ()):  # after the splits (schedule.fuse refuses the other order)
            inner, outer = current[fz.inner], current[fz.outer]
            node = LoopNode(fz.fused, inner.extent * outer.extent)
            inner.fused, outer.fused = (node, "inner"), (node, "outer")
            current[fz.fused] = node
        self.loops = [current[n] for n in reversed(schedule.loops)]  # outermost first
        self.unrolled = self._unroll_budget({n for n in schedule.unrolled})

    def _unroll_budget(self, requested: set[str]) -> set[int]:
        chosen, copies = set(), 1
        for node in reversed(self.loops):  # innermost first
            if node.name not in requested or node.extent > MAX_UNROLL_EXTENT or \
                    copies * node.extent > MAX_UNROLL_COPIES:
                break
            chosen.add(id(node))
            copies *= node.extent
        return chosen

    def unroll(self, node: LoopNode) -> bool:
        return id(node) in self.unrolled

    def offset_range(self, node: LoopNode) -> SymRange:
        """Offsets of ``node``'s values (from its root's first value) covered by the open loops."""
        if node.split is None:
            if node.iv is not None:
                return SymRange(node.iv, 0, 0)
            if node.fused is not None:
                return self._fused_part(node)
            return SymRange(None, 0, node.extent - 1)
        outer, inner, factor = node.split
        o = self.offset_range(outer)
        if o.ssa is None or o.lo != o.hi:
            return SymRange(None, 0, node.extent - 1)
        base = arith.MuliOp(o.ssa if o.lo == 0 else arith.AddiOp(o.ssa, const_index(o.lo)),
                            const_index(factor)).result
        if node.extent % factor and self.tails[id(node)] == TailStrategy.ShiftInwards:
            base = arith.MinSIOp(base, const_index(node.extent - factor)).result
        i = self.offset_range(inner)
        ssa = base if i.ssa is None else arith.AddiOp(base, i.ssa).result
        # a GuardWithIf split that does not divide runs its last tile past the end: regions read from there are
        # widened, so their bases are clamped into what the pipeline reads (Halide clamps them to the guard)
        past_end = node.extent % factor != 0 and self.tails[id(node)] == TailStrategy.GuardWithIf
        last = (None, node.extent - 1) if past_end else None  # the guard: no offset past the end is computed
        return SymRange(ssa, i.lo, i.hi, o.widened or i.widened or past_end, last)

    def _fused_part(self, node: LoopNode) -> SymRange:
        """A fused loop's part: its index is ``fused % inner extent`` (inner) or ``fused / inner extent``."""
        fused, role = node.fused
        f = self.offset_range(fused)
        if f.ssa is None or f.lo != f.hi:
            return SymRange(None, 0, node.extent - 1)
        value = f.ssa if f.lo == 0 else arith.AddiOp(f.ssa, const_index(f.lo)).result
        inner_extent = node.extent if role == "inner" else fused.extent // node.extent
        op = arith.RemUIOp if role == "inner" else arith.DivUIOp
        return SymRange(op(value, const_index(inner_extent)).result, 0, 0)

    def guard_open(self) -> bool:
        """Whether a loop of a non-dividing GuardWithIf split is open (its last tile runs past the end)."""
        def visit(node):
            if node.split is None:
                return False
            outer, inner, factor = node.split
            if node.extent % factor and self.tails[id(node)] == TailStrategy.GuardWithIf and \
                    (outer.iv is not None or inner.iv is not None):
                return True
            return visit(outer) or visit(inner)

        return any(visit(root) for root in self.roots.values())

    def guards_decided(self) -> bool:
        """Whether the open loops fix every offset a guard checks (all loops of those splits are open)."""
        def decided(node):
            if node.split is None:
                return node.iv is not None or (node.fused is not None and decided(node.fused[0]))
            outer, inner, _ = node.split
            return decided(outer) and decided(inner)

        def visit(node):
            if node.split is None:
                return True
            outer, inner, factor = node.split
            if node.extent % factor and self.tails[id(node)] == TailStrategy.GuardWithIf and not decided(node):
                return False
            return visit(outer) and visit(inner)

        return all(visit(root) for root in self.roots.values())

    def guards(self) -> list[tuple[object, int]]:
        """(offset value, extent) pairs to check in the body (non-dividing GuardWithIf splits)."""
        out = []

        def visit(node):
            if node.split is None:
                return
            outer, inner, factor = node.split
            if node.extent % factor and self.tails[id(node)] == TailStrategy.GuardWithIf:
                out.append((self.offset_range(node).ssa, node.extent))
            visit(outer)
            visit(inner)

        for root in self.roots.values():
            visit(root)
        return out


def var_range(start: SymRange, offset: SymRange) -> SymRange:
    """A root Var's range: its region start plus the open loops' offsets."""
    widened = offset.widened  # a tile past the end (a region's own widened start is clamped already)
    last = None if offset.last is None else (start.ssa, start.lo + offset.last[1])
    if start.ssa is None:
        return SymRange(offset.ssa, start.lo + offset.lo, start.lo + offset.hi, widened, last)
    if offset.ssa is None:
        return SymRange(start.ssa, start.lo + offset.lo, start.lo + offset.hi, widened, last)
    return SymRange(arith.AddiOp(start.ssa, offset.ssa).result, start.lo + offset.lo, start.lo + offset.hi, widened,
                    last)
