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
- GuardWithIf guards the body with ``offset < E``; a Func computed at a loop of
  the split covers the tile's points that exist, its static-size region shifted
  inward to end at ``E`` in a tile cut short (``offset_range(existing=True)``),
  and an iteration holding no such point is skipped (``first_points``);
- RoundUp (and PredicateLoads/Stores) leave no tail: bounds inference rounded
  the Func's region up to a multiple of ``f`` (``infer_bounds(round_up=True)``).
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
                                f"{node.extent} here, not a multiple of {s.factor}; {tail} rounds up the regions of "
                                "Funcs computed at the root only (use GuardWithIf or ShiftInwards, or compute_root)",
                                where=f"Func '{owner}'", construct="split")
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

    def offset_range(self, node: LoopNode, existing: bool = False) -> SymRange:
        """Offsets of ``node``'s values (from its root's first value) covered by the open loops. ``existing`` (the
        region of the producers computed there): a tile of a non-dividing GuardWithIf split that the open loops
        leave open is shifted inward to end at the split's end, at each such split from the innermost out (its
        points that exist, and a few before them, which hold the same values: the region keeps its static size
        and stays inside the tiles of the loops around it, where a producer may be stored). Halide clamps the
        region to the guard instead; the values read are the same."""
        if node.split is None:
            if node.iv is not None:
                return SymRange(node.iv, 0, 0)
            if node.fused is not None:
                return self._fused_part(node)
            return SymRange(None, 0, node.extent - 1)
        outer, inner, factor = node.split
        o = self.offset_range(outer, existing)
        if o.ssa is None or o.lo != o.hi:
            return SymRange(None, 0, node.extent - 1)
        base = arith.MuliOp(o.ssa if o.lo == 0 else arith.AddiOp(o.ssa, const_index(o.lo)),
                            const_index(factor)).result
        if node.extent % factor and self.tails[id(node)] == TailStrategy.ShiftInwards:
            base = arith.MinSIOp(base, const_index(node.extent - factor)).result
        i = self.offset_range(inner, existing)
        ssa = base if i.ssa is None else arith.AddiOp(base, i.ssa).result
        if existing and i.lo != i.hi and node.extent % factor and self.tails[id(node)] == TailStrategy.GuardWithIf:
            ssa = arith.MinSIOp(ssa, const_index(node.extent - 1 - i.hi)).result
        return SymRange(ssa, i.lo, i.hi)

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

    def _is_open(self, node: LoopNode) -> bool:
        """Whether ``node``'s loop (or the fused loop it is part of) is open."""
        return node.iv is not None or (node.fused is not None and self._is_open(node.fused[0]))

    def _any_open(self, node: LoopNode) -> bool:
        """Whether a loop of ``node`` (it, or one of its split's) is open."""
        if node.split is None:
            return self._is_open(node)
        return self._any_open(node.split[0]) or self._any_open(node.split[1])

    def _open_guards(self, node: LoopNode) -> list[LoopNode]:
        """The non-dividing GuardWithIf splits under ``node`` with an open loop."""
        if node.split is None:
            return []
        outer, inner, factor = node.split
        here = [node] if node.extent % factor and self.tails[id(node)] == TailStrategy.GuardWithIf and \
            self._any_open(node) else []
        return here + self._open_guards(outer) + self._open_guards(inner)

    def first_points(self) -> list[tuple[object, int]]:
        """(first offset value, extent) of each open non-dividing GuardWithIf split: an iteration whose first
        offset is past the end holds no point that exists."""
        out = []
        for root in self.roots.values():
            for node in self._open_guards(root):
                r = self.offset_range(node)
                if r.ssa is not None:
                    out.append((r.ssa if r.lo == 0 else arith.AddiOp(r.ssa, const_index(r.lo)).result, node.extent))
        return out

    def existing_offsets(self, name: str) -> SymRange:
        """``offset_range`` of root ``name`` over the points that exist (see there)."""
        return self.offset_range(self.roots[name], existing=True)

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
    if start.ssa is None:
        return SymRange(offset.ssa, start.lo + offset.lo, start.lo + offset.hi)
    if offset.ssa is None:
        return SymRange(start.ssa, start.lo + offset.lo, start.lo + offset.hi)
    return SymRange(arith.AddiOp(start.ssa, offset.ssa).result, start.lo + offset.lo, start.lo + offset.hi)
