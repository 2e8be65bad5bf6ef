"""Where each Func of a CPU-scheduled pipeline is realised, and its inlined definitions.

Rules (Halide's, with the choices noted):
- A Func is realised into a buffer when it is the output, has a compute level
  (``compute_root`` / ``compute_at``; ``hw_accelerate``, ``stream_to_accelerator``
  and ``accelerator_input`` imply ``compute_root``), or has update definitions.
  Every other Func is inlined into its consumers.
- An unscheduled Func with updates is computed at the innermost pure loop of
  its single realised consumer (Halide's default; an unscheduled inline reduction
  reading it counts as its own consumers: argmax's two reductions are one Tuple
  reduction in Halide); a constant table (no
  producers) or a Func with several realised consumers is computed at root.
- A boundary condition (``repeat_edge`` / ``constant_exterior``) is always
  inlined as index clamps and a select, whatever its schedule.
- A Func computed at a loop of ``g``'s pure stage is computed inside that stage
  at that loop; an update stage of ``g`` that reads it gets it computed once
  before that stage's loop nest, over the region the stage reads.
- A Func computed at a loop that only an update of ``g`` has (an RVar or a
  split of one: Halide's ``compute_at(g, r)``) is computed inside that update's
  loop nest, once per iteration of the loop, over the region the iteration
  reads; no other definition of ``g`` may read it (it exists only there).
"""

from __future__ import annotations

import math
from loom.errors import LoomError

from .expr import BinOp, Call, Cast, Const, RVar, Select, Unary, Var, walk
from .func import BoundaryFunc, Func, ImageParam
from .graph import FuncGraph, loop_stage, resolve, stage_label
from .mathfn import MathCall
from .mirror import PERIODIC_KINDS, mirror_index
from .param import Param
from .schedule import refuse_loops_of_inlined
from .types import Bool


ROOT = ("root",)


def is_realised(f: Func, pipe: FuncGraph) -> bool:
    if isinstance(f, BoundaryFunc):
        return False
    return f is pipe.output or f.schedule.compute_level is not None or bool(f.updates)


def rebuild(e, child):
    """``e`` with each child expression replaced by ``child(c)`` (leaves returned as they are)."""
    if isinstance(e, (Var, RVar, Const, Param)):
        return e
    if isinstance(e, Call):
        return Call(e.target, tuple(child(a) for a in e.args))
    if isinstance(e, Cast):
        return Cast(e.type, child(e.value))
    if isinstance(e, BinOp):
        return BinOp(e.op, child(e.a), child(e.b), e.type)
    if isinstance(e, Unary):
        return Unary(e.op, child(e.value))
    if isinstance(e, Select):
        return Select(child(e.cond), child(e.t), child(e.f))
    if isinstance(e, MathCall):
        return e.with_args(tuple(child(a) for a in e.args))
    raise TypeError(f"cannot rebuild {e!r}")


def substitute(e, subst: dict):
    """``e`` with Vars replaced by expressions (simultaneously; no re-substitution)."""
    if isinstance(e, (Var, RVar)):
        return subst.get(e.name, e)
    return rebuild(e, lambda c: substitute(c, subst))


class Inliner:
    """Rewrites a definition so every Call targets a realised Func or an ImageParam.

    The expressions it returns are hash-consed: structurally equal sub-expressions are one object, and a Func
    inlined at the same arguments is expanded once. Inlined Funcs read by several consumers (camera_pipeline's
    demosaic) otherwise grew a tree per read that the emitter (which shares by identity) and then CSE had to
    undo."""

    def __init__(self, pipe: FuncGraph, realised: set[int], input_shapes: dict):
        self.pipe = pipe
        self.realised = realised
        self.input_shapes = input_shapes
        self._nodes: dict[tuple, object] = {}  # structural key (children by id) -> the one node

    def _node(self, key: tuple, make):
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = make()
        return node

    def expr(self, e, consumer):
        """``e`` (written in ``consumer``'s definition) with inlined Funcs expanded."""
        if isinstance(e, (Var, RVar, Param)):
            return e
        if isinstance(e, Const):  # repr keeps -0.0 apart from 0.0
            return self._node(("const", repr(e.value), repr(e.type)), lambda: e)
        if isinstance(e, Call):
            args = tuple(self.expr(a, consumer) for a in e.args)
            target = resolve(consumer, e.target) if isinstance(consumer, Func) else e.target
            return self.call(target, args)
        if isinstance(e, Cast):
            v = self.expr(e.value, consumer)
            return self._node(("cast", repr(e.type), id(v)), lambda: Cast(e.type, v))
        if isinstance(e, BinOp):
            a, b = self.expr(e.a, consumer), self.expr(e.b, consumer)
            return self._node(("bin", e.op, repr(e.type), id(a), id(b)), lambda: BinOp(e.op, a, b, e.type))
        if isinstance(e, Unary):
            v = self.expr(e.value, consumer)
            return self._node(("unary", e.op, id(v)), lambda: Unary(e.op, v))
        if isinstance(e, Select):
            c, t, f = (self.expr(x, consumer) for x in (e.cond, e.t, e.f))
            return self._node(("select", id(c), id(t), id(f)), lambda: Select(c, t, f))
        if isinstance(e, MathCall):
            args = tuple(self.expr(a, consumer) for a in e.args)
            return self._node(("math", e.name, *map(id, args)), lambda: e.with_args(args))
        raise TypeError(f"cannot inline {e!r}")

    def call(self, target, args):
        key = ("call", id(target), *map(id, args))
        if isinstance(target, ImageParam) or id(target) in self.realised:
            return self._node(key, lambda: Call(target, args))
        if key in self._nodes:
            return self._nodes[key]
        if isinstance(target, BoundaryFunc):
            out = self._boundary(target, args)
        else:
            out = self.expr(substitute(target.pure.value, {d.name: a for d, a in zip(target.dims, args)}), target)
        self._nodes[key] = out
        return out

    @staticmethod
    def _periodic(a, lo, hi, kind: str):
        """``a`` mapped into [lo, hi] periodically; ``a`` itself where it lies there, so the CPU path drops the
        mapping as it drops a clamp (a 3x3 box through mirror_interior ran its modulos at every pixel, 9x
        slower than Halide)."""
        mapped = mirror_index(a, lo, hi, kind)
        if mapped is not a:
            mapped.boundary = (a, lo, hi)
        return mapped

    def _boundary(self, f: BoundaryFunc, args):
        box = f.source_box(self.input_shapes)
        clamped, inside = [], None
        if f.kind in PERIODIC_KINDS:
            return self.call(f.source, tuple(self._periodic(a, lo, hi, f.kind) for a, (lo, hi) in zip(args, box)))
        for a, (lo, hi) in zip(args, box):
            if lo == -math.inf:  # an unbounded dimension: reads pass through
                clamped.append(a)
                continue
            t = a.type
            lo, hi = max(lo, t.min_value), min(hi, t.max_value)
            clamp = BinOp("min", BinOp("max", a, Const(lo, t), t), Const(hi, t), t)
            clamp.boundary = (a, lo, hi)  # a clamp the CPU path drops where ``a`` lies in [lo, hi] (interior)
            clamped.append(clamp)
            ok = BinOp("and", BinOp("ge", a, Const(lo, t), Bool), BinOp("le", a, Const(hi, t), Bool), Bool)
            inside = ok if inside is None else BinOp("and", inside, ok, Bool)
        read = self.call(f.source, tuple(clamped))
        if f.kind == "repeat_edge" or inside is None:
            return read
        select = Select(inside, read, f.value)
        select.interior = read  # what it is where every clamp is inactive
        return select


def without_boundaries(e, memo: dict):
    """``e`` with its boundary conditions' clamps and exterior selects dropped: its value wherever every clamp's
    argument lies inside the source (``memo``: id -> rewritten node, keeping shared sub-expressions shared)."""
    key = id(e)
    if key in memo:
        return memo[key]
    boundary = getattr(e, "boundary", None)
    if boundary is not None:
        out = without_boundaries(boundary[0], memo)
    elif getattr(e, "interior", None) is not None:
        out = without_boundaries(e.interior, memo)
    else:
        out = rebuild(e, lambda c: without_boundaries(c, memo))
    memo[key] = out
    return out



def realised_calls(e):
    """Calls in an inlined expression (to realised Funcs and ImageParams)."""
    return [x for x in walk(e) if isinstance(x, Call)]


class Plan:
    """Realised Funcs, their inlined definitions and their compute / store levels.

    A level is ``ROOT`` or ``("at", g, loop, k)`` with ``g`` a realised Func and
    ``loop`` a loop of its definition ``k`` (0: the pure one; see ``graph.loop_stage``).
    """

    def __init__(self, pipe: FuncGraph, input_shapes: dict):
        self.pipe = pipe
        refuse_loops_of_inlined(pipe.funcs, pipe.output)
        self.realised_funcs = [f for f in pipe.funcs if is_realised(f, pipe)]
        self.realised = {id(f) for f in self.realised_funcs}
        self.inliner = Inliner(pipe, self.realised, input_shapes)
        # id(f) -> list of (lhs args, value) per definition, with Calls to realised Funcs only
        self.definitions = {id(f): [(tuple(self.inliner.expr(a, f) for a in d.args), self.inliner.expr(d.value, f))
                                    for d in f.definitions] for f in self.realised_funcs}
        self._derived: dict[tuple, list] = {}  # what clamp_free derives from the definitions
        self.compute_level: dict[int, tuple] = {}
        self.store_level: dict[int, tuple] = {}
        for f in self.realised_funcs:
            self._place(f)

    def boundary_clamps(self, f: Func, k: int) -> list:
        """The (argument, lo, hi) of each boundary-condition clamp in ``f``'s definition ``k``, once each."""
        args, value = self.definitions[id(f)][k]
        found = {id(x.boundary): x.boundary for e in (*args, value) for x in walk(e)
                 if getattr(x, "boundary", None) is not None}
        return list(found.values())

    def clamp_free(self, f: Func) -> list:
        """``f``'s definitions with their boundary conditions' clamps and exterior selects dropped: what it
        computes where every read lies inside its source (made once per Func)."""
        key = ("clamp_free", id(f))
        if key not in self._derived:
            memo: dict = {}
            self._derived[key] = [(tuple(without_boundaries(a, memo) for a in args), without_boundaries(value, memo))
                                  for args, value in self.definitions[id(f)]]
        return self._derived[key]

    def reads(self, consumer: Func, stage: int, producer) -> bool:
        args, value = self.definitions[id(consumer)][stage]
        return any(c.target is producer for e in (*args, value) for c in realised_calls(e))

    def realised_consumers(self, f):
        return [g for g in self.realised_funcs
                if any(self.reads(g, k, f) for k in range(len(g.definitions))) and g is not f]

    def _level(self, f, level, primitive):
        if level is None or level == "root":
            return ROOT
        g, loop = level
        if id(g) not in self.realised:
            raise LoomError(f"{primitive}({g.name}, {loop}): '{g.name}' is inlined, so it has no loops; "
                            f"schedule it first (e.g. {g.name}.compute_root())", where=f"Func '{f.name}'",
                            construct=primitive)
        k = loop_stage(g, loop)
        if k == 0 and primitive == "compute_at":
            self._refuse_updates_outside(f, g, loop)
        if k and primitive == "compute_at":
            others = [j for j in range(len(g.definitions)) if j != k and self.reads(g, j, f)]
            if others:
                raise LoomError(f"compute_at({g.name}, {loop}): '{loop}' is a loop of {stage_label(k)} of "
                                f"'{g.name}', but {stage_label(others[0])} of '{g.name}' reads '{f.name}' too; a "
                                "Func computed inside one definition's loop nest exists only there: compute it "
                                f"at a loop of the pure definition of '{g.name}' or at the root",
                                where=f"Func '{f.name}'", construct=primitive)
        return ("at", g, loop, k)

    def _refuse_updates_outside(self, f, g, loop):
        """Halide refuses ``compute_at(g, loop)`` at a loop only ``g``'s pure definition has (a split of it) when an
        update of ``g`` reads ``f``: that loop does not enclose the update's reads."""
        for j in range(1, len(g.definitions)):
            if self.reads(g, j, f) and loop not in g.definitions[j].schedule.loops:
                raise LoomError(f"compute_at({g.name}, {loop}): '{loop}' is a loop of the pure definition of "
                                f"'{g.name}' only, but {stage_label(j)} of '{g.name}' reads '{f.name}' outside it "
                                "(Halide refuses this location too); compute it at a loop that update has "
                                f"({', '.join(g.definitions[j].schedule.loops)}) or at the root",
                                where=f"Func '{f.name}'", construct="compute_at")

    def _through_inline_reductions(self, f) -> list:
        """``f``'s realised consumers, an unscheduled inline reduction among them replaced by its own: argmax's
        value and index reductions are one Tuple reduction in Halide, computed where their consumer is."""
        out = []
        for c in self.realised_consumers(f):
            inline = getattr(c, "inline_reduction", None) is not None and c.schedule.compute_level is None
            for g in (self._through_inline_reductions(c) if inline else [c]):
                if g not in out:
                    out.append(g)
        return out

    def _place(self, f):
        fs = f.schedule
        if f is self.pipe.output:
            self.compute_level[id(f)] = self.store_level[id(f)] = ROOT
            return
        if fs.compute_level is not None:
            self.compute_level[id(f)] = self._level(f, fs.compute_level, "compute_at")
            self.store_level[id(f)] = self._level(f, fs.store_level, "store_at")
            return
        # unscheduled with updates
        consumers = self._through_inline_reductions(f)
        if not self.pipe.producers.get(id(f)) or len(consumers) != 1:
            level = ROOT
        else:
            g = consumers[0]
            level = ("at", g, g.pure.schedule.loops[0], 0)
        self.compute_level[id(f)] = self.store_level[id(f)] = level
