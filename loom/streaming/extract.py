"""Accelerator extraction: the hw_accelerate region, its input closure, its ports.

Matches: the one Func scheduled ``hw_accelerate(xi, xo)`` and every Func
``compute_at(that Func, xo)`` (the stages, each with a buffer); Funcs inlined
into a stage become part of its compute kernel, with their unrolled updates
merged (update merging: ``x = x + a; x = x + b`` is one kernel). Produces the
stages, the streams (ImageParams read inside, Funcs marked
``stream_to_accelerator``/``accelerator_input``), one logical read port per
distinct affine access, constant Funcs (tap registers, tap memories, ROMs) and
the memory classification of thesis Table 4.3. Every stage computes the output's pixels per cycle
(``unroll(x, n)``), except an input memory (a stage reading only host streams) unrolled beyond an output at one
pixel per cycle: it runs at its own rate (``StageNode.own_rate``, scheduled by ``scheduler.own_rate_grid``), and
a stage read only through an up- or down-sampling along x (``f[x / k]``, ``f[s x + i]``), which may compute fewer
or more (``_behind_resampling``). ``unroll(y, n)`` on the dimension after x computes n rows a step
(``StageNode.rows``, checked by ``_check_rows``).
Under a global-buffer level (thesis Code 3.6,
``hierarchy``), the stages are those of the fabric tile and the GLB copies are its streams. A reduction of a stage's own
update that is not (or only partly, ``unroll(r, n)``) unrolled is iterated in
time (thesis §4.4, "read-modify-write"): its remaining loops become the stage's
reduction time loops (``StageNode.time_reduction``) and its accumulator an
"accumulation" memory ``<stage>_acc``. Rejects, with the reason: non-affine or
data-dependent addressing of a buffer, histograms, recursion, reductions not
unrolled in Funcs inlined into a stage, and host-computed inputs that were not
declared as accelerator inputs.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from dataclasses import dataclass, field

from loom.errors import LoomError
from loom.frontends.pipeline.expr import Call, Var, walk
from loom.frontends.pipeline.func import BoundaryFunc, Func, ImageParam
from loom.frontends.pipeline.param import Param
from loom.frontends.pipeline.graph import FuncGraph, loop_stage, resolve, validate_schedules
from loom.frontends.pipeline.schedule import is_pure_var as _is_pure_loop
from loom.frontends.pipeline.schedule import loop_directives as _loop_directives

from loom.frontends.pipeline.index_forms import Affine, FloorDiv, NotAffine, to_affine
from .hierarchy import GlobalBufferLevel, find_global_buffer_level
from .muxed_reads import limit_hint, mux_guard, muxed_indices


@dataclass
class ReadAccess:
    """One logical read port: ``consumer`` at point p reads ``producer`` at ``index(p)``."""

    consumer: str
    producer: str
    index: tuple  # Affine per producer dimension, over the consumer's pure Var names (global coords)
    site: str
    # a multiplexer's input (``muxed_reads``): (Func, dim, value) conditions, each that the Func's region holds the
    # value the read takes in that dim; a design drops the read when the tile never selects it (``for_regions``)
    guard: tuple = ()


@dataclass
class StageNode:
    name: str
    source: object  # Func or ImageParam
    kind: str  # "stream" (enters from the host) or "compute"
    dims: list  # pure Var names
    kernel_funcs: list = field(default_factory=list)  # inlined Funcs realised with this stage
    reads: list = field(default_factory=list)
    merged_updates: list = field(default_factory=list)  # "f.update(i) x n": reductions merged into the kernel
    lanes: int = 1  # pixels per cycle along dims[0]
    rows: int = 1  # rows per step along dims[1] (unroll(y, n): a lanes x rows block a step)
    # dim index -> values a cycle of a later dim iterated in time inside each step (unroll(c, n) on an input
    # memory: n channels a cycle, its channel blocks one after another within a pixel's step)
    blocks: dict = field(default_factory=dict)
    own_rate: bool = False  # an input memory (or its stream) unrolled beyond the output: its own time grid along x
    fill: bool = False  # filled whole per invocation in its own loop order (``Accelerator._mark_fills``)
    # its reduction's time loop is outside its pure loops: the whole tile's partial sums kept across its iterations
    # (output stationary), the loop a Func is computed at once per iteration (``Accelerator.per_iteration``)
    reduction_outer: bool = False
    time_reduction_leaves: list = field(default_factory=list)  # (time loop, the schedule's loop it is)
    unrolled_dims: set = field(default_factory=set)  # dims computed in space, not time
    # reduction loops iterated in time, innermost first: (loop name, trip count); the accumulator
    # is read and written once per iteration and the stage's value is final after the last one
    time_reduction: list = field(default_factory=list)
    unselected: frozenset = frozenset()  # guard conditions false for the design's tile (``Accelerator.for_regions``)


def time_dims(node: StageNode) -> list:
    """Indices of the dims a stage steps through in time: neither computed in space nor in blocks within a step."""
    return [k for k, d in enumerate(node.dims) if d not in node.unrolled_dims and k not in node.blocks]


@dataclass
class ConstantTable:
    name: str
    func: Func
    index_pattern: str  # "constant" | "affine" | "data-dependent"
    kind: str  # "tap register" | "tap memory" | "ROM"


@dataclass
class MemoryClass:
    usage: str
    index_pattern: str
    kind: str


MEMORY_KINDS = {  # thesis Table 4.3; None = not handled by the memory tiles
    ("constant", "initialized"): "tap register",
    ("affine", "initialized"): "tap memory",
    ("non-affine", "initialized"): "tap memory",
    ("data-dependent", "initialized"): "LUT/ROM",
    ("affine", "streaming"): "buffer",
    ("non-affine", "streaming"): None,
    ("data-dependent", "streaming"): None,
    ("affine", "RMW"): "accumulation",
    ("data-dependent", "RMW"): None,
    ("affine", "iterative"): None,
}


def _is_buffer(f) -> bool:
    """A ``Buffer`` read in a definition: an initialized memory (its contents are the design's), not a stream."""
    return isinstance(f, ImageParam) and f.from_buffer


def x_scale(read: ReadAccess, x: str):
    """(a, d) when the read takes the producer's x as ``floor((a x + c) / d)`` of the consumer's ``x`` alone."""
    form = read.index[0] if read.index else None
    if form is None or set(form.terms) != {x} or form.terms[x] <= 0:
        return None
    return form.terms[x], form.div if isinstance(form, FloorDiv) else 1


def first_dim_unroll(f: Func) -> int:
    """The factor of ``f``'s own ``unroll(v, n)`` of its first dimension (1 if none): a GLB copy's lanes, which
    its reader's rate does not set."""
    sched = f.pure.schedule
    origin = {d.name: d.name for d in f.dims}
    for sp in sched.splits:
        origin[sp.outer] = origin[sp.inner] = origin.get(sp.old, sp.old)
    return next((n for name, n in sched.unrolled.items() if n is not None and origin.get(name) == f.dims[0].name), 1)


def split_leaves(sched, name: str, extent: int) -> dict:
    """The loops ``name`` (of ``extent`` values) is split into: loop -> (weight, extent), so that the value is
    the sum of weight x loop over them (``split(v, o, i, n)``: v = n o + i)."""
    leaves = {name: (1, extent)}
    for sp in sched.splits:
        if sp.old in leaves:
            w, e = leaves.pop(sp.old)
            leaves[sp.inner] = (w, min(sp.factor, e))
            leaves[sp.outer] = (w * sp.factor, -(-e // sp.factor))
    return leaves


def resamples_x(read: ReadAccess, x: str) -> bool:
    """The read up-samples (a < d: ``f[x / k]``) or down-samples (a > d: ``f[2 x + i]``) the producer along x."""
    scale = x_scale(read, x)
    return scale is not None and scale[0] != scale[1]


# every loop directive that only shapes host loops, which the streaming flow does not build
HOST_DIRECTIVES = ("unroll", "vectorize", "parallel", "split", "fuse", "reorder")


AFFINE_FORMS = ("unified buffers address affine indices (x + 1, 2 * x - y) and one affine index divided by a "
                "positive constant ((x + 1) / 2, x / 2 + y, x >> 1); compute such a read on the host and stream it "
                "in (stream_to_accelerator)")


def param_constants(exprs, g) -> dict:
    """Param key -> value for the integer Params in ``exprs``: the accelerator takes a Param as a configuration
    constant, its value when the design is built, in its addresses as in its kernels (``to_affine``'s env)."""
    out = {}
    for p in (e for x in exprs for e in walk(x)):
        if isinstance(p, Param) and p.type.is_int and p.key not in out:
            if p.value is None:
                raise LoomError(f"reads Param '{p.name}' in an index, which has no value; give it one "
                                "(Param(..., value=v) or .set(v)) before building the design: the accelerator's "
                                "addresses take it as a constant", where=f"Func '{g.name}'", construct="Param")
            out[p.key] = int(p.value.item())
    return out


def accumulator_name(stage: str) -> str:
    """The accumulation buffer of a stage whose reduction is iterated in time."""
    return f"{stage}_acc"


def _reduction_update(node):
    """The update of ``node`` whose loops hold its reduction's time loops (only one may iterate in time), or None."""
    leaves = [leaf for _, leaf in node.time_reduction_leaves]
    if not leaves or not isinstance(node.source, Func):
        return None
    return next((d for d in node.source.updates if all(leaf in d.schedule.loops for leaf in leaves)), None)


def reduction_placement(node) -> dict:
    """Time loop of each of ``node``'s reductions iterated in time -> "inner" (inside all of its update's pure loops
    iterated in time), "outer" (outside all of them) or the pure loops it is outside of (between them), read off the
    update's loop order as written."""
    d = _reduction_update(node)
    if d is None:
        return {loop: "inner" for loop, _ in node.time_reduction_leaves}
    loops, sched = d.schedule.loops, d.schedule
    pure = [loops.index(v) for v in loops if _is_pure_loop(sched, v) and v not in sched.unrolled]
    out = {}
    for loop, leaf in node.time_reduction_leaves:
        inside = [loops[k] for k in pure if k < loops.index(leaf)]
        out[loop] = "inner" if not inside else "outer" if len(inside) == len(pure) else inside
    return out


def _loops_outside(node, leaf) -> list:
    """The pure loops of ``node``'s update iterated in time outside reduction loop ``leaf``."""
    d = _reduction_update(node)
    loops, sched = d.schedule.loops, d.schedule
    return [v for v in loops[loops.index(leaf) + 1:] if _is_pure_loop(sched, v) and v not in sched.unrolled]


def _unroll_hint(node, leaf) -> str:
    """For a pure loop the pure definition unrolls but the update iterates: Halide schedules each definition
    apart, so the update needs its own unroll."""
    d = _reduction_update(node)
    pure_unrolled = node.source.pure.schedule.unrolled
    missed = [v for v in _loops_outside(node, leaf) if v in pure_unrolled]
    if not missed:
        return ""
    calls = "".join(f".unroll({v})" for v in missed)
    return (f"; {', '.join(missed)} is unrolled on {node.name}'s pure definition but iterated in time by its update "
            f"(each definition has its own schedule): {node.name}.update({d.index - 1}){calls}")


def _unroll_inline_reduction(g):
    """An inline reduction (``sum(e)``, ``maximum(e)``...) read inside the accelerator is computed in space: its
    anonymous Func has no handle the user could schedule, and one result a cycle needs every term at once. A
    schedule already given to its update (through ``name=`` and the pipeline's Funcs) is kept."""
    if getattr(g, "inline_reduction", None) is None:
        return
    for i, d in enumerate(g.updates):
        if not d.schedule.unrolled and not d.schedule.splits:
            for r in d.rvars:
                g.update(i).unroll(r)


def outer_reductions(node) -> list:
    """``node``'s time loops outside its update's pure loops (their partial sums kept for the whole tile),
    innermost first as the update orders them."""
    outer = [loop for loop, p in reduction_placement(node).items() if p == "outer"]
    d, leaf = _reduction_update(node), dict(node.time_reduction_leaves)
    return sorted(outer, key=lambda loop: d.schedule.loops.index(leaf[loop])) if d is not None else outer


class Accelerator:
    """The extracted hw_accelerate region of a pipeline."""

    def __init__(self, output: Func):
        self.pipe = FuncGraph(output)
        validate_schedules(self.pipe)
        accs = [f for f in self.pipe.funcs if f.schedule.hw_accelerate]
        if not accs:
            raise LoomError(f"no Func in the pipeline is scheduled with hw_accelerate",
                            where=f"Func '{output.name}'", construct="hw_accelerate")
        if len(accs) > 1:
            raise LoomError("more than one hw_accelerate region: " + ", ".join(f.name for f in accs),
                            where=f"Func '{accs[1].name}'", construct="hw_accelerate")
        self.func = accs[0]
        self.xi, self.xo = self.func.schedule.hw_accelerate
        # thesis Code 3.6: a GLB tile feeding fabric tiles; the fabric is the streaming accelerator
        self.glb: GlobalBufferLevel | None = find_global_buffer_level(self.pipe.funcs, self.func, self.xo)
        if self.glb is not None:
            self.func, self.xi, self.xo = self.glb.fabric, self.glb.fabric_xi, self.glb.fabric_xo
        self.stages: dict[str, StageNode] = {}
        # every multiplexer input, when ``for_regions`` dropped some
        self.full_stages: dict[str, StageNode] | None = None
        self.constants: dict[str, ConstantTable] = {}
        self.memory: dict[str, MemoryClass] = {}
        self._constant_ids = self._find_constant_funcs()
        self._classify_funcs()
        self._refuse_dropped_schedules()
        self._refuse_fuse()
        for f in self._stage_funcs:
            self._collect_stage(f)
        self._refuse_odd_names()
        self._check_per_iteration()
        self._refuse_vector_and_parallel()
        self._refuse_wide_types()
        self._order_stages()
        self._check_rates()
        self._refuse_loop_structure()  # after the rates: a rate mismatch is the more basic error

    def _refuse_odd_names(self):
        """Buffers, ports and isl tuples are named after the stages and tables (the ubuf IR, its access maps, the
        RTL): a name that is not an identifier ('odd-name') would reach isl as a syntax error."""
        for name in [*self.stages, *self.constants]:
            if not (name.isidentifier() and name.isascii()):
                raise LoomError(f"the accelerator names its buffers after their Funcs, and {name!r} is not an "
                                "identifier; name it with letters, digits and '_'", where=f"Func '{name}'",
                                construct="Func")

    # which Func is what ------------------------------------------------
    def _find_constant_funcs(self):
        """Funcs computed from constants and Buffers alone (lookup tables, weights): known at build time."""
        const = set()
        for f in self.pipe.funcs:  # producers first
            prods = self.pipe.producers[id(f)]
            if all(_is_buffer(p) or (not isinstance(p, ImageParam) and id(p) in const) for p in prods):
                const.add(id(f))
        return const

    def is_constant(self, f):
        return _is_buffer(f) or (isinstance(f, Func) and id(f) in self._constant_ids)

    def _is_stream(self, f):
        if isinstance(f, ImageParam):
            return True
        if self.glb is not None and self.glb.is_buffer(f):
            return True  # a GLB copy streams into the fabric
        return f.schedule.stream_to_accelerator or f.schedule.accelerator_input

    def _is_stage(self, f):
        if isinstance(f, ImageParam):
            return False
        if f is self.func:
            return True
        lvl = f.schedule.compute_level
        return isinstance(lvl, tuple) and ((lvl[0] is self.func and lvl[1] == self.xo) or id(f) in self.per_iteration)

    def _classify_funcs(self):
        loops = self.func.pure.schedule.loops
        xo_index = loops.index(self.xo)
        self._stage_funcs = []
        # Func -> (stage, loop): computed once per iteration of the stage's reduction loop (a memory refilled per
        # channel tile); checked against the stage's time reduction in ``_collect_stage``
        self.per_iteration: dict = {}
        for f in self.pipe.funcs:
            lvl = f.schedule.compute_level
            if isinstance(lvl, tuple) and self._is_stage(lvl[0]) and loop_stage(*lvl):
                d = lvl[0].definitions[loop_stage(*lvl)]
                if _is_pure_loop(d.schedule, lvl[1]):
                    raise self._update_loop_level(f, *lvl)
                self.per_iteration[id(f)] = lvl
            elif isinstance(lvl, tuple) and lvl[0] is self.func and loops.index(lvl[1]) < xo_index:
                raise LoomError(f"compute_at({self.func.name}, {lvl[1]}) is inside the "
                                f"accelerator's loop nest, which would recompute it every cycle; use "
                                f"compute_at({self.func.name}, {self.xo}) for a streaming buffer",
                                where=f"Func '{f.name}'", construct="compute_at")
            if self._is_stage(f) and not self._is_stream(f):
                self._stage_funcs.append(f)

    def _update_loop_level(self, f, g, loop):
        """compute_at a loop of a stage's update (Halide semantics, run on the CPU path) other than a reduction
        loop iterated in time outside all of its pure loops has no streaming schedule: nothing refills the
        memory per iteration of a loop in space or of a pixel loop."""
        k = loop_stage(g, loop)
        loops = g.definitions[k].schedule.loops
        pure = [v for v in loops if _is_pure_loop(g.definitions[k].schedule, v)]
        inner = [v for v in pure if loops.index(v) < loops.index(loop)]
        where = f", outside its pure loops {', '.join(inner)}" if inner else ""
        return LoomError(f"compute_at({g.name}, {loop}): '{loop}' is a loop of update {k - 1} of '{g.name}'{where}; "
                         "the streaming scheduler computes a memory once per iteration of a reduction loop only at "
                         "a reduction loop iterated in time outside all of the stage's pure loops; the CPU path runs "
                         f"it. On the accelerator, compute '{f.name}' at the tile loop: "
                         f"compute_at({self.func.name}, {self.xo})", where=f"Func '{f.name}'", construct="compute_at")

    def _check_per_iteration(self):
        """A stage with reduction loops iterated in time outside all of its pure loops keeps its tile's partial
        sums across their iterations: its reduction is outer. A loop between pure loops is refused; a Func computed
        at a loop of a stage's update must be computed at one of those outer loops."""
        for node in self.stages.values():
            if node.kind != "compute":
                continue
            for loop, where in reduction_placement(node).items():
                if isinstance(where, list):
                    leaf = dict(node.time_reduction_leaves)[loop]
                    raise LoomError(f"reduction loop '{leaf}' is iterated in time between the update's pure loops "
                                    f"(outside {', '.join(where)}, inside {', '.join(_loops_outside(node, leaf))}): "
                                    "a partial sum kept across part of the tile has no streaming schedule; put it "
                                    "inside all pure loops (its sum in an accumulation register) or outside all of "
                                    f"them (the tile's partial sums kept), e.g. reorder(..., {leaf}) with it last, "
                                    f"or unroll it{_unroll_hint(node, leaf)}",
                                    where=f"Func '{node.name}'", construct="reorder")
            node.reduction_outer = bool(outer_reductions(node))
        for fid, (g, loop) in self.per_iteration.items():
            node = self.stages[g.name]
            if loop not in [dict(node.time_reduction_leaves)[v] for v in outer_reductions(node)]:
                raise self._update_loop_level(next(h for h in self.pipe.funcs if id(h) == fid), g, loop)

    # ports ----------------------------------------------------------------
    def _collect_stage(self, f: Func):
        node = StageNode(f.name, f, "compute", [d.name for d in f.dims])
        self.stages[f.name] = node
        for i, d in enumerate(f.updates):
            for j, a in enumerate(d.args):
                if isinstance(a, Var) and a.name == f.dims[j].name:
                    continue
                if any(isinstance(e, Call) for e in walk(a)):
                    raise self._reject(f, "histogram", f"update {i} writes '{f.name}' at a data-dependent "
                                       f"index '{a!r}' (a histogram); data-dependent writes are not supported "
                                       "on the accelerator", d)
                if any(isinstance(e, Call) and resolve(f, e.target) is f for e in walk(d.value)):
                    raise self._reject(f, "recursion", f"update {i} reads '{f.name}' at values it computes "
                                       f"itself along '{a!r}' (recursion / iterative memory); not supported "
                                       "on the accelerator", d)
                raise self._reject(f, "general update", f"update {i} writes '{f.name}' at index '{a!r}' "
                                   f"instead of the pure Var '{f.dims[j].name}'; only reductions into "
                                   f"{f.name}[{', '.join(v.name for v in f.dims)}] are supported on the "
                                   "accelerator", d)
        forms = [Affine.var(d.name) for d in f.dims]
        seen = set()
        self._collect(f, f, forms, node, seen)

    def unselected(self, regions) -> dict:
        """Stage -> the guard conditions of its multiplexers' inputs (``ReadAccess.guard``) false for one tile's
        ``regions``: inputs the tile never selects (their index outside the region bounds inference gives the Func
        read: ``clamp(c, 0, 3)`` where c is 0 or 1)."""
        def holds(cond):
            f, j, v = cond
            lo, hi = regions[id(f)][j]
            return lo <= v <= hi

        full = self.full_stages or self.stages
        out = {name: frozenset(c for r in node.reads for c in r.guard if not holds(c)) for name, node in full.items()}
        return {name: false for name, false in out.items() if false}

    def for_regions(self, regions) -> "Accelerator":
        """This accelerator for one tile's ``regions``: its multiplexers' inputs the tile never selects dropped
        (from all of them, whichever tile this one was made for)."""
        out = copy.copy(self)
        out.full_stages = full = self.full_stages or self.stages
        out.stages = dict(full)
        for name, false in self.unselected(regions).items():
            node = full[name]
            out.stages[name] = dataclasses.replace(node, reads=[r for r in node.reads if not false & set(r.guard)],
                                                   unselected=false)
        return out

    def _reject(self, f, what, msg, d=None):
        loc = d.location if d is not None else (None, None)
        return LoomError(f"unsupported pattern ({what}): {msg}", where=f"Func '{f.name}'",
                         filename=loc[0], line=loc[1], construct=what)

    def _collect(self, g: Func, stage_func: Func, forms, node: StageNode, seen, guard=()):
        for d in g.definitions:
            env = {}
            for i, a in enumerate(d.args):
                if isinstance(a, Var):
                    env[a.name] = forms[i]
            ranges = self._reduction_points(g, d, node, own=g is stage_func)
            if not d.is_pure:
                n = 1
                for rg in ranges:
                    n *= len(rg)
                tag = f"{g.name}.update({d.index - 1}) x{n}"
                if tag not in node.merged_updates:
                    node.merged_updates.append(tag)
            calls = list(d.calls())  # once per definition, not per unrolled reduction point
            env.update(param_constants((a for call in calls for a in call.args), g))
            for point in itertools.product(*reversed(ranges)):  # RVars innermost first
                for r, v in zip(reversed(d.rvars), point):
                    env[r.name] = v
                for call in calls:
                    target = resolve(g, call.target)
                    if target is g:
                        continue  # the reduction's own accumulator: merged into one kernel
                    try:
                        index = tuple(to_affine(a, env) for a in call.args)
                        pattern = "constant" if all(ix.is_const for ix in index) else "affine"
                    except NotAffine as na:
                        index, pattern = None, na.kind
                        bad = na
                    if self.is_constant(target):
                        self._note_constant(target, pattern)
                        continue
                    indices, muxed = [index], []
                    if index is None and not isinstance(target, BoundaryFunc):
                        try:  # a few values: one port each, the kernel's multiplexer picks one
                            muxed, indices = muxed_indices(call.args, env)
                            index, pattern = indices[0], "affine"
                        except NotAffine:
                            pass
                    if isinstance(target, BoundaryFunc) and not self._is_stream(target):
                        raise self._reject(g, "non-affine indexing", f"reads the boundary condition "
                                           f"'{target.name}' inside the accelerator; its clamped or guarded "
                                           "addresses are not affine. Compute it on the host and mark it "
                                           f"{target.name}.stream_to_accelerator()", d)
                    if index is None:
                        if pattern == "data-dependent":
                            raise self._reject(g, "data-dependent read", f"reads '{target.name}' at "
                                               f"'{call!r}', whose index depends on data; only constant Funcs "
                                               "(lookup tables / ROMs) may be indexed by data, and a buffer "
                                               f"through a multiplexer: {limit_hint()}", d)
                        raise self._reject(g, "non-affine indexing", f"reads '{target.name}' at '{call!r}': "
                                           f"'{bad.expr!r}' is not affine in the loop variables; "
                                           f"{AFFINE_FORMS}; {limit_hint()}", d)
                    if self._is_stage(target) or self._is_stream(target):
                        if self._is_stream(target) and target.name not in self.stages:
                            self._add_stream(target)
                        for index in indices:
                            key, cond = (target.name, index), guard + mux_guard(target, muxed, index)
                            if key not in seen:
                                seen.add(key)
                                node.reads.append(ReadAccess(node.name, target.name, index, repr(call), cond))
                                continue
                            read = next(r for r in node.reads if (r.producer, r.index) == key)
                            if read.guard != cond:  # needed on either condition: kept
                                read.guard = ()
                        continue
                    if target.schedule.compute_level is None:  # inlined into this stage's kernel
                        if target not in node.kernel_funcs:
                            node.kernel_funcs.append(target)
                            _unroll_inline_reduction(target)
                        for index in indices:
                            cond = guard + mux_guard(target, muxed, index)
                            visit = ("inline", id(target), index, cond)  # the same Func at the same point: same reads
                            if visit not in seen:
                                seen.add(visit)
                                self._collect(target, stage_func, list(index), node, seen, cond)
                        continue
                    raise LoomError(f"it is computed on the host but read inside the "
                                    f"accelerator by '{g.name}' without being declared an accelerator input; "
                                    f"mark it with {target.name}.stream_to_accelerator() or "
                                    f"accelerator_input(), or compute it inside with "
                                    f"compute_at({self.func.name}, {self.xo})",
                                    where=f"Func '{target.name}'", construct="accelerator input")

    def _reduction_points(self, g, d, node: StageNode, own: bool):
        """Per RVar, the values it takes in one cycle: constants when unrolled, affine in a time loop otherwise.

        ``unroll(r)`` computes r in space; ``unroll(r, n)`` computes n values of r per cycle and iterates
        extent/n cycles; no unroll iterates r one value per cycle. Time loops are only possible for
        the stage's own updates (its accumulator is the stage's buffer)."""
        sched = d.schedule
        points, loops, leaves_in_time = [], [], []
        for r in d.rvars:
            if sched.unrolled.get(r.name, 0) is None:
                points.append(list(range(r.min, r.min + r.extent)))
                continue
            leaves = split_leaves(sched, r.name, r.extent)
            space = {v: we for v, we in leaves.items() if v in sched.unrolled or we[1] == 1}
            time = [v for v in leaves if v not in space]
            factor = math.prod(e for _, e in space.values())
            if len(time) > 1 and not own:
                raise LoomError(f"reduction variable '{r.name}' of update {d.index - 1} is split without "
                                f"being unrolled; use {g.name}.update({d.index - 1}).unroll({r.name}, n)",
                                where=f"Func '{g.name}'", construct="unroll")
            if not time:  # nothing left to iterate in time
                points.append(list(range(r.min, r.min + r.extent)))
                continue
            if not own:
                raise LoomError(f"reduction variable '{r.name}' of update {d.index - 1} is not "
                                "unrolled; inside hw_accelerate every loop iteration takes a cycle, so a stage "
                                f"at one pixel per cycle needs {g.name}.update({d.index - 1}).unroll({r.name}); "
                                f"to iterate it in time instead, give '{g.name}' its own buffer with "
                                f"compute_at({self.func.name}, {self.xo})", where=f"Func '{g.name}'",
                                construct="unroll")
            steps = math.prod(leaves[v][1] for v in time)
            if steps * factor != r.extent:
                divisors = ", ".join(str(k) for k in range(1, r.extent + 1) if r.extent % k == 0)
                filename, line = sched.locations.get("unroll", (None, None))
                what = (f"unroll({r.name}, {factor}) does not divide the reduction extent {r.extent}"
                        if len(time) == 1 else f"the splits of '{r.name}' ({', '.join(time)} in time, "
                        f"{', '.join(space) or 'nothing'} in space) do not divide its extent {r.extent} exactly")
                raise LoomError(f"{what}; a reduction iterated in time on the accelerator has no tail, whatever "
                                f"the TailStrategy (the CPU path takes GuardWithIf): unroll it by one of {divisors}",
                                where=f"Func '{g.name}'", construct="unroll", filename=filename, line=line)
            step = Affine.constant(0)
            for v in time:  # a split reduction: each of its loops in time a time loop of its own
                loop = f"{r.name}.t" if len(time) == 1 else f"{r.name}.{v}.t"
                loops.append((loop, leaves[v][1]))
                leaves_in_time.append((loop, v))
                step = step + Affine.var(loop).scale(leaves[v][0])
            offsets = [r.min]
            for w, e in space.values():
                offsets = [o + w * i for o in offsets for i in range(e)]
            points.append([step + Affine.constant(o) for o in sorted(offsets)])
        if loops:
            if node.time_reduction and node.time_reduction != loops:
                raise LoomError(f"update {d.index - 1} iterates a reduction in time but an earlier update "
                                "already does; only one update of a stage may iterate in time (unroll the "
                                "others fully)", where=f"Func '{g.name}'", construct="unroll")
            node.time_reduction = loops
            node.time_reduction_leaves = leaves_in_time
        return points

    def reduction_points(self, g, d, node: StageNode, own: bool):
        """Per RVar of update ``d`` of ``g``, its values in one firing (ints, or affine in the time loops)."""
        return self._reduction_points(g, d, node, own)

    def _add_stream(self, target):
        dims = ([f"d{i}" for i in range(target.dimensions)] if isinstance(target, ImageParam)
                else [d.name for d in target.dims])
        self.stages[target.name] = StageNode(target.name, target, "stream", dims)

    def _note_constant(self, f, pattern):
        order = ["constant", "affine", "non-affine", "data-dependent"]
        prev = self.constants.get(f.name)
        if prev is not None and order.index(prev.index_pattern) >= order.index(pattern):
            return
        kind = {"constant": "tap register", "affine": "tap memory", "non-affine": "tap memory",
                "data-dependent": "ROM"}[pattern]
        self.constants[f.name] = ConstantTable(f.name, f, pattern, kind)

    # order, rates, classification -------------------------------------
    def _order_stages(self):
        order = {f.name: i for i, f in enumerate(self.pipe.funcs)}
        order.update({p.name: -1 for p in self.pipe.params})
        names = sorted(self.stages, key=lambda n: (self.stages[n].kind != "stream", order.get(n, 0)))
        self.stages = {n: self.stages[n] for n in names}
        for n, node in self.stages.items():
            self.memory[n] = MemoryClass("streaming", "affine", "buffer")
            if node.time_reduction:  # read-modify-write of the partial sums (thesis Table 4.3)
                self.memory[accumulator_name(n)] = MemoryClass("RMW", "affine", MEMORY_KINDS[("affine", "RMW")])
        for n, c in self.constants.items():
            self.memory[n] = MemoryClass("initialized", c.index_pattern, MEMORY_KINDS[(c.index_pattern,
                                                                                     "initialized")])

    def _host_split_inner(self, sched, name: str) -> bool:
        """``name`` is the inner loop of a split whose outer loop the host iterates (outside the output's xo)."""
        if sched is not self.func.pure.schedule:
            return False
        loops = sched.loops
        return any(sp.inner == name and sp.outer in loops and loops.index(sp.outer) > loops.index(self.xo)
                   and sp.old not in {s2.inner for s2 in sched.splits} for sp in sched.splits)

    def _refuse_unroll_beyond_tile(self, node, sched, origin):
        """unroll(xi, n) on a loop of fewer than n iterations (a rate wider than the accelerator tile): the lanes
        past the tile's edge compute pixels of no tile. Halide refuses the same schedule at run time (the shifted
        tail reads before the buffer's start), so it is refused here, naming the rate and the tile's extent."""
        extent = {}  # loop -> its trip count, where a split fixes it
        for sp in sched.splits:
            within = extent.get(sp.old)
            if sp.inner in sched.unrolled and within is not None and sp.factor > within:
                dim = origin.get(sp.old, sp.old)
                what = ("pixels per cycle" if dim == node.dims[0] else
                        "rows per step" if len(node.dims) > 1 and dim == node.dims[1] else "iterations a step")
                whose = "the accelerator tile's" if node.source is self.func else "its split's"
                filename, line = sched.locations.get("unroll", (None, None))
                raise LoomError(f"unroll({sp.old}, {sp.factor}): {sp.factor} {what} is more than the {within} "
                                f"iterations of '{sp.old}' ({whose} extent along '{dim}'); unroll by at most "
                                f"{within} (a divisor of {within} keeps every lane busy) or widen the tile",
                                where=f"Func '{node.name}'", construct="unroll", filename=filename, line=line)
            if within is not None:
                extent[sp.outer] = -(-within // sp.factor)
            extent[sp.inner] = sp.factor if within is None else min(sp.factor, within)

    def _refuse_pixels_behind_space_dim(self, node, sched, origin):
        """Pixels and rows a step are scheduled along a stage's first and second dimensions. With a dimension
        computed in space first (channels first: ``hw[c, x, y]``, ``unroll(c)``) an ``unroll(x, n)`` was taken as
        n rows a step and ``unroll(y, n)`` refused as an unknown dimension, in messages naming calls nobody wrote
        (``unroll(y, 2)`` on the input stream); refused here by the call written, with the layout that works."""
        first = node.dims[0]
        if len(node.dims) < 3 or first not in sched.unrolled or sched.unrolled[first] is not None:
            return
        for name, factor in sched.unrolled.items():
            dim = origin.get(name, name)
            if factor in (None, 1) or dim not in node.dims[1:]:
                continue
            what = "pixels" if dim == node.dims[1] else "rows"
            last = ", ".join([*(d for d in node.dims if d != first), first])
            written = next((sp.old for sp in sched.splits if sp.inner == name), name)  # unroll's own split
            filename, line = sched.locations.get("unroll", (None, None))
            raise LoomError(f"unroll({written}, {factor}): {factor} {what} a step along '{dim}' need '{dim}' as the "
                            f"{'first' if what == 'pixels' else 'second'} dimension, but '{node.name}' computes its "
                            f"first dimension '{first}' in space (unroll({first})); pixels and rows a step are "
                            f"scheduled along a stage's first two dimensions: put '{first}' last "
                            f"({node.name}[{last}]) or compute one pixel a step", where=f"Func '{node.name}'",
                            construct="unroll", filename=filename, line=line)

    def _refuse_blocks_of_a_space_dim(self, node: StageNode, sched):
        """unroll(c, n) after unroll(c) (create_memories and stream_to_accelerator unroll a memory's channels): in
        Halide both loops of the split stay unrolled, every channel in space, which is not n channels a cycle."""
        for sp in sched.splits:
            factor = sched.unrolled.get(sp.inner)
            if factor is None or sp.old not in node.dims[2:] or sched.unrolled.get(sp.old, 0) is not None:
                continue
            filename, line = sched.locations.get("unroll", (None, None))
            channels = f"{factor} channel{'s' if factor != 1 else ''} a cycle"
            way = (f"For {channels} ask accelerate for it: {node.name}.accelerate(level, channels_per_cycle="
                   f"{{{sp.old}: {factor}}}) (before create_memories), or schedule the output's tile yourself: "
                   f"{node.name}.tile(x, y, xo, yo, xi, yi, w, h).reorder(xi, yi, {sp.old}, xo, yo)"
                   f".hw_accelerate(xi, xo).unroll({sp.old}, {factor})"
                   if node.source is self.func else f"For {channels} compute '{node.name}' at its level yourself: "
                   f"{node.name}.compute_at(level).unroll({sp.old}, {factor})")
            raise LoomError(f"unroll({sp.old}, {factor}) of a dimension already unrolled whole (unroll({sp.old}); "
                            "accelerate, create_memories, stream_to_accelerator and stream_through_accelerator unroll "
                            "a stage's channels): as in Halide both loops of the split stay unrolled, every channel "
                            f"in space. {way}", where=f"Func '{node.name}'", construct="unroll", filename=filename,
                            line=line)

    def _check_rates(self):
        """Pixels per cycle from unroll(x, n) on each stage; they must match (rate matching)."""
        for node in self.stages.values():
            if node.kind == "stream":
                self._refuse_host_unroll(node)
                continue  # host streams arrive at the accelerator's rate (set below)
            sched = node.source.pure.schedule
            origin = {d: d for d in node.dims}
            for sp in sched.splits:
                origin[sp.outer] = origin[sp.inner] = origin.get(sp.old, sp.old)
            self._refuse_unroll_beyond_tile(node, sched, origin)
            self._refuse_pixels_behind_space_dim(node, sched, origin)
            self._refuse_blocks_of_a_space_dim(node, sched)
            for name, factor in sched.unrolled.items():
                if node.source is self.func:
                    self._refuse_host_loop_unroll(sched, name, factor)
                dim = origin.get(name, name)
                split = any(sp.old == dim or origin.get(sp.old) == dim for sp in sched.splits)
                if factor is None and name in node.dims and not split:
                    node.unrolled_dims.add(name)
                elif factor is None and dim in node.dims and dim not in node.dims[:2] and \
                        self._host_split_inner(sched, name):
                    node.unrolled_dims.add(dim)  # a tile of channels per invocation: the host loops over tiles
                elif factor is not None and dim == node.dims[0]:
                    node.lanes = factor
                elif factor is not None and len(node.dims) > 1 and dim == node.dims[1]:
                    node.rows = factor
                elif factor is not None and dim in node.dims[2:]:
                    node.blocks[node.dims.index(dim)] = factor  # channels a cycle, their blocks within a step
                else:
                    call = f"unroll({name})" if factor is None else f"unroll({name}, {factor})"
                    raise LoomError(f"{call}: a stage unrolls its innermost dimension '{node.dims[0]}' by a "
                                    "factor (pixels per cycle), its second by a factor (rows per step), a later one "
                                    "by a factor (channels a cycle), a whole "
                                    "dimension (computed in space), or the output's inner loop of a split the "
                                    "host iterates (a tile of channels per invocation: split(co, coo, coi, n) "
                                    "with coo outside the accelerator's loop)", where=f"Func '{node.name}'",
                                    construct="unroll")
        self.lanes = self.stages[self.func.name].lanes
        self.rows = self.stages[self.func.name].rows
        behind = self._behind_resampling()
        self._mark_fills(behind)
        for node in self.stages.values():
            if node.kind == "compute" and node.lanes != self.lanes and node.name not in behind and not node.fill:
                self._check_own_rate(node)
        for name in behind:  # its producers read step for step compute its pixels a step
            node = self.stages[name]
            for a in node.reads:
                p = self.stages[a.producer]
                if p.kind == "compute" and not p.own_rate and p.lanes != node.lanes and \
                        x_scale(a, node.dims[0]) == (1, 1):
                    others = ", ".join(f"{n.name}={n.lanes}" for n in self.stages.values() if n.kind == "compute")
                    raise LoomError(f"stages run at different rates (pixels per cycle: {others}) and '{name}' "
                                    f"reads it step for step along x; unroll it by {node.lanes} as well",
                                    where=f"Func '{p.name}'", construct="unroll")
        self._check_rows()
        for n in self.stages.values():
            if n.kind == "stream":
                readers = {c.lanes for c in self.stages.values() for a in c.reads if a.producer == n.name}
                if len(readers) > 1:
                    raise LoomError(f"the stream is read at different rates (pixels per cycle: {sorted(readers)}); "
                                    "only one input memory may read a stream that runs at its own rate",
                                    where=f"Func '{n.name}'", construct="unroll")
                n.lanes = readers.pop() if readers else self.lanes
                rows = {c.rows for c in self.stages.values() for a in c.reads if a.producer == n.name}
                if len(rows) > 1:
                    raise LoomError(f"the stream is read at different rows per step ({sorted(rows)}); its readers "
                                    "must compute the same rows a step", where=f"Func '{n.name}'", construct="unroll")
                n.rows = rows.pop() if rows else self.rows
                n.blocks = self._reader_blocks(n)
                n.own_rate = any(c.own_rate for c in self.stages.values() for a in c.reads if a.producer == n.name)

    def dim_for_dim_reader(self, stream: StageNode) -> StageNode | None:
        """The one compute stage reading a host stream dim for dim (``hw[c, x, y] = input[c, x, y]``, each index
        its own dim's Var), or None."""
        reads = self.buffer_reads(stream.name)
        if not reads or len({a.consumer for a in reads}) != 1:
            return None
        reader = self.stages[reads[0].consumer]
        same = reader.kind != "stream" and len(reader.dims) == len(stream.dims) and all(
            len(a.index) == len(reader.dims) and all(isinstance(f, Affine) and set(f.terms) == {d}
                                                     for f, d in zip(a.index, reader.dims)) for a in reads)
        return reader if same else None

    def _reader_blocks(self, stream: StageNode) -> dict:
        """A host stream arrives in the channel blocks of a reader reading it dim for dim (the GLB streams a channel
        tile a cycle); otherwise its channels arrive in parallel."""
        reader = self.dim_for_dim_reader(stream)
        return dict(reader.blocks) if reader is not None else {}

    def _refuse_host_loop_unroll(self, sched, name, factor):
        """unroll of the output's host loops over tiles (at or outside hw_accelerate's ``xo``) was read as pixels or
        rows a step of the accelerator; a full unroll of one of its dimensions is a hardware copy wherever it sits."""
        loops = sched.loops
        base = next((sp.outer for sp in sched.splits if sp.inner == name), name) if factor is not None else name
        if base not in loops or loops.index(base) < loops.index(self.xo):
            return
        if factor is None and base in [d.name for d in self.func.dims]:
            return
        shown = f"unroll({base})" if factor is None else f"unroll({base}, {factor})"
        raise LoomError(f"{self.func.name}.{shown} has no effect: '{base}' is the host's loop over tiles (at or "
                        f"outside hw_accelerate's '{self.xo}'), each iteration an accelerator invocation, which loom "
                        f"runs one after another (pixels and rows a step are unrolls of the tile's own loops, e.g. "
                        f"unroll({self.xi}, n)); drop the unroll", where=f"Func '{self.func.name}'", construct="unroll")

    def _check_rows(self):
        """Rows a step (``unroll(y, n)`` on the dimension after x): a stage computes a lanes x rows block a step,
        its rows advancing n per row period. Stages may compute different rows a step when they read each other
        through a y access ``floor((a y + c) / d)`` (a down- or up-sampling along y, or a translation); the
        scheduler's row rates follow those reads. What it does not model with rows is refused by name."""
        if all(n.rows == 1 for n in self.stages.values() if n.kind == "compute"):
            return
        for node in self.stages.values():
            if node.kind != "compute":
                continue
            why = None
            if node.time_reduction and node.rows > 1:
                why = "it iterates a reduction in time; rows a step are scheduled only for stages firing once per step"
            elif node.own_rate and node.rows > 1:
                why = "it is an input memory at its own rate along x"
            else:
                y = node.dims[1] if len(node.dims) > 1 else None
                for a in node.reads:
                    p = self.stages[a.producer]
                    if p.kind == "stream":
                        continue
                    form = a.index[1] if len(a.index) > 1 else None
                    if form is None or y is None or set(form.terms) != {y} or form.terms[y] <= 0:
                        why = (f"it reads '{p.name}' at {form!r} along y ({a.site}); with rows a step a read must "
                               f"take the producer's y as floor((a {y} + c) / d) of its own {y} alone")
                        break
            if why is not None:
                raise LoomError(f"rows a step (unroll of '{node.dims[1]}', here {node.rows}) are not supported: {why}",
                                where=f"Func '{node.name}'", construct="unroll")

    def _behind_resampling(self) -> set:
        """Stages that may compute another number of pixels per step than the output: read only through an
        up- or down-sampling along x (``f[x / k]``: a consumer of n pixels a step reads n / k of theirs;
        ``f[s x + i]``: n s), or only by such stages at the same pixels per step. The scheduler ties them to their
        consumers step for step or gives them their own grid along x (``stage_time_strides``)."""
        out: set = set()
        for node in reversed(list(self.stages.values())):  # consumers first
            if node.kind != "compute" or node is self.stages[self.func.name]:
                continue
            reads = self.buffer_reads(node.name)
            if reads and all(resamples_x(a, self.stages[a.consumer].dims[0]) or
                             (a.consumer in out and self.stages[a.consumer].lanes == node.lanes) for a in reads):
                out.add(node.name)
        return out

    def _refuse_host_unroll(self, node: StageNode):
        """A Func the host computes and streams in has no loops here (the host part is realised by the
        reference evaluator; in Halide its loop directives only transform a host loop) and its order and rate
        are its reader's, so a loop directive on it would be dropped silently. GLB copies are the accelerator's
        own and keep their unroll."""
        f = node.source
        if not isinstance(f, Func) or (self.glb is not None and self.glb.is_buffer(f)):
            return
        for what, call, directive in _loop_directives(f, HOST_DIRECTIVES):
            instead = (f"unroll that stage instead (a buffered copy computed at compute_at({self.func.name}, "
                       f"{self.xo})) or drop the unroll" if directive == "unroll" else f"drop the {directive}")
            raise LoomError(f"{what}.{call} has no effect: '{f.name}' is computed on the host and streamed "
                            "into the accelerator, where loom builds no loops for it, and a stream arrives in "
                            f"the order and at the pixels per cycle of the stage reading it; {instead}",
                            where=f"Func '{f.name}'", construct=directive)

    def _refuse_dropped_schedules(self):
        """Loop directives the streaming flow has no use for are refused rather than dropped: on a Func
        computed on the host behind a stream (no host loops are built: the reference evaluator realises
        it); inside the accelerator, see ``_refuse_vector_and_parallel`` and ``_refuse_loop_structure``."""
        streams = [f for f in self.pipe.funcs if self._is_stream(f) and not self.is_constant(f)
                   and not (self.glb is not None and self.glb.is_buffer(f))]
        host, todo = {}, list(streams)
        while todo:
            f = todo.pop()
            for p in self.pipe.producers[id(f)]:
                if isinstance(p, Func) and id(p) not in host and not self.is_constant(p) and not self._is_stream(p):
                    host[id(p)] = (p, f)
                    todo.append(p)
        for p, fed in host.values():
            for what, call, directive in _loop_directives(p, HOST_DIRECTIVES):
                raise LoomError(f"{what}.{call} has no effect: '{p.name}' is computed on the host (it feeds the "
                                f"stream '{fed.name}'), where the streaming flow builds no loops (loom's reference "
                                f"evaluator computes its values); drop the {directive}",
                                where=f"Func '{p.name}'", construct=directive)

    def _refuse_wide_types(self):
        """64-bit values (i64, u64, f64) anywhere the accelerator computes: its PEs, ports and memories hold
        at most 32-bit words (the CGRA is a 16-bit fabric; 32-bit values are modelled as wider words)."""
        inlined = [g for node in self.stages.values() for g in node.kernel_funcs]
        for f in self.pipe.funcs:
            if not isinstance(f, Func) or not (f in self._stage_funcs or f in inlined):
                continue
            for d in f.definitions:
                for e in (e for a in (*d.args, d.value) for e in walk(a)):
                    if e.type is not None and e.type.bits == 64:
                        raise LoomError(f"computes {e.type.name} values ('{e!r}'), which the accelerator does not "
                                        f"support (at most 32-bit values on its 16-bit fabric); compute it on the "
                                        f"host or in a narrower type", where=f"Func '{f.name}'")

    def _refuse_vector_and_parallel(self):
        """vectorize / parallel on anything the accelerator computes (thesis §3.5: a CGRA has no SIMD lanes
        or threads; unroll duplicates the hardware). After ``_collect_stage``: the Funcs inlined into a
        stage are known (real Halide refuses vectorize on an inlined Func outright)."""
        inlined = [g for node in self.stages.values() for g in node.kernel_funcs]
        inside = [f for f in self.pipe.funcs if isinstance(f, Func) and
                  (f in self._stage_funcs or f in inlined or (self.glb is not None and self.glb.is_buffer(f)))]
        xo_index = self.func.pure.schedule.loops.index(self.xo)
        for f in inside:
            for what, call, directive in _loop_directives(f, ("vectorize", "parallel")):
                loop = call[call.index("(") + 1:].split(",")[0].rstrip(")")
                loops = f.pure.schedule.loops
                host = f is self.func and what == f.name and loop in loops and loops.index(loop) >= xo_index
                if host and directive == "parallel":
                    continue  # a host loop over tiles, outside the accelerator (loom runs them in turn)
                if host:
                    raise LoomError(f"{what}.{call} has no effect: '{loop}' is the host's loop over tiles, each "
                                    "iteration an accelerator invocation, which has no vector form; drop the "
                                    "vectorize (parallel is accepted there)", where=f"Func '{f.name}'",
                                    construct=directive)
                instead = (f"unroll({loop}, n) computes n pixels per cycle" if directive == "vectorize"
                           else "unroll duplicates the hardware")
                raise LoomError(f"{what}.{call} has no effect: '{f.name}' is computed by the accelerator, which "
                                f"has no SIMD lanes or threads (thesis §3.5: on a CGRA {instead}); use unroll "
                                f"or drop the {directive}", where=f"Func '{f.name}'", construct=directive)

    def _mark_fills(self, behind: set):
        """Stages off the output's loop structure, each filled whole once per invocation in its own loop order (a
        DNN layer's memory-tile copies and depthwise stage computed at the tile loop, its channel tiles iterated
        in time): an input memory iterating more or fewer dimensions in time than the output (4-D weights under a
        3-D output), a stage at another rate read only through reduction loops or constants along its first
        dimension (channels summed by its reader, not read channel for channel) that cannot run at its own
        rate, the producers read only by such stages, and their streams. Their readers wait for what they read
        (``scheduler.tile_fills``)."""
        out = self.stages[self.func.name]
        n_time = len(time_dims(out))
        for node in reversed(list(self.stages.values())):  # consumers first
            if node.kind != "compute" or node is out:
                continue
            reads = self.buffer_reads(node.name)
            dims_off = len(time_dims(node)) != n_time and node.reads and \
                all(self.stages[r.producer].kind == "stream" for r in node.reads)
            summed = reads and node.lanes != self.lanes and node.name not in behind and \
                all(x_scale(a, self.stages[a.consumer].dims[0]) is None for a in reads) and \
                self._own_rate_refusal(node) is not None
            under = reads and all(self.stages[a.consumer].fill for a in reads)
            # an input memory of a table no read indexes by a pixel loop (w2[c, o] = w[c, o] read as w2[r.x, o])
            table = reads and len(node.dims) == n_time and node.reads and \
                all(self.stages[r.producer].kind == "stream" for r in node.reads) and self._off_the_pixels(node)
            node.fill = bool(dims_off or summed or under or table or id(node.source) in self.per_iteration)
        for node in self.stages.values():
            readers = {a.consumer for a in self.buffer_reads(node.name)}
            # a stream with fewer dimensions than the output steps through (a bias per output channel) cannot
            # follow its loops: it is loaded whole per invocation, as a fill stage's stream is
            short = len(node.dims) < n_time and self.dim_for_dim_reader(node) is None
            off = len(node.dims) == n_time and self._off_the_pixels(node)
            if node.kind == "stream" and readers and (short or off or all(self.stages[c].fill for c in readers)):
                node.fill = True

    def _off_the_pixels(self, stream: StageNode) -> bool:
        """No read of the stream (or memory) indexes it by a loop its reader steps through in time (a 2-D weight table
        ``w[r.x, o]`` read by a 1x1 conv over x, y): its values follow none of the output's pixel loops. With as
        many dimensions as the output iterates in time it is loaded whole per invocation, a word a cycle; on the
        output's grid it arrived a word per pixel step (a 48-word table under a 16-cycle step delayed the first
        pixel by 737 cycles). A table with more dimensions keeps the grid, its further dimensions arriving in
        parallel (many words a cycle)."""
        def pixel_loops(name):
            node = self.stages[name]
            return {node.dims[k] for k in time_dims(node)}

        def used(form):
            return set(getattr(getattr(form, "num", form), "terms", None) or ())

        reads = self.buffer_reads(stream.name)
        return all(not (used(f) & pixel_loops(a.consumer)) for a in reads for f in a.index)

    def wider_than_its_readers(self, node: StageNode) -> bool:
        """A stage read only step for step along its first dimension, by stages whose pixels a step divide its
        own (an output stationary layer's accumulator 8 channels a step under a GLB output at 1): it fires once
        every n of its readers' steps, its lanes read one after another (the scheduler ties them along x)."""
        reads = self.buffer_reads(node.name)
        return bool(reads) and node.lanes > self.lanes and node.lanes % self.lanes == 0 and \
            all(x_scale(a, self.stages[a.consumer].dims[0]) == (1, 1) and self.stages[a.consumer].lanes == self.lanes
                and not self.stages[a.consumer].own_rate for a in reads)

    def _refuse_fuse(self):
        """fuse inside the accelerator (see ``_refuse_loop_structure``) or of the host's loops over tiles."""
        xo_index = self.func.pure.schedule.loops.index(self.xo)
        for f in self._stage_funcs:
            if self.glb is not None and self.glb.is_buffer(f):
                continue
            for d in f.definitions:
                what = f.name if d.is_pure else f"{f.name}.update({d.index - 1})"
                for fz in d.schedule.fuses:
                    host = f is self.func and d.is_pure and fz.fused in d.schedule.loops and \
                        d.schedule.loops.index(fz.fused) >= xo_index
                    why = ("it fuses the host's loops over tiles, which hides the tile its splits give to "
                           f"hw_accelerate({self.xi}, {self.xo}) (loom runs the tiles one after another; in any "
                           "order the values are the same)" if host else
                           "the accelerator streams a stage in its dimensions' order and a fused loop has no "
                           "streaming schedule; unroll(x, n) / unroll(y, n) computes a block a step")
                    raise LoomError(f"{what}.fuse({fz.inner}, {fz.outer}, {fz.fused}) is not supported: {why}; "
                                    "drop the fuse", where=f"Func '{f.name}'", construct="fuse")

    def _refuse_loop_structure(self):
        """reorder and split inside the accelerator, which the scheduler would drop: it streams each stage
        over its region in its dimensions' order (x innermost, a reduction iterated in time innermost of all),
        and only unroll (pixels or rows a step, hardware copies) changes that; fuse: ``_refuse_fuse``. Stages
        filled whole per invocation (``StageNode.fill``) follow their own loop order, and a reduction made outer
        (``StageNode.reduction_outer``) its update's: both are scheduled as written. Funcs
        inlined into a stage keep Halide's rule (their split, fuse and reorder change nothing); GLB copies are
        tiled by ``iteration_order`` (hierarchy.py) and left alone."""
        xo_index = self.func.pure.schedule.loops.index(self.xo)
        for f in self._stage_funcs:
            if self.glb is not None and self.glb.is_buffer(f):
                continue
            fs = f.schedule
            c, st = fs.compute_level, fs.store_level
            same = c == st if not (isinstance(c, tuple) and isinstance(st, tuple)) else c[0] is st[0] and c[1] == st[1]
            if f is not self.func and not same:
                shown = "store_root()" if fs.store_level == "root" else f"store_at({fs.store_level[0].name}, " \
                                                                       f"{fs.store_level[1]})"
                loc = fs.locations.get("store_at", (None, None))
                raise LoomError(f"{shown} has no effect: a stage's storage is its buffer inside the accelerator, "
                                f"filled and drained for each tile (compute_at({self.func.name}, {self.xo})); "
                                "drop the store level", where=f"Func '{f.name}'", construct="store_at",
                                filename=loc[0], line=loc[1])
            node = self.stages.get(f.name)
            for d in f.definitions:
                if node is not None and node.fill:
                    continue  # the scheduler follows these loops: scheduler._fill_schedule
                what = f.name if d.is_pure else f"{f.name}.update({d.index - 1})"
                sched = d.schedule
                if node is not None and node.reduction_outer and not d.is_pure:  # its reduction loops as written
                    self._check_loop_order(f, d, what, [v for v in sched.loops if v not in sched.unrolled
                                                        and _is_pure_loop(sched, v)])
                    continue
                loops = sched.loops[:xo_index] if f is self.func and d.is_pure else sched.loops
                for sp in sched.splits:
                    if sp.inner in sched.unrolled or (f is self.func and d.is_pure and sp.outer not in loops):
                        continue  # unroll(v, n), or the tile split around hw_accelerate's xo
                    if f is self.func and d.is_pure and sp.old in [v.name for v in f.dims]:  # a tile split
                        raise LoomError(f"{what}.split({sp.old}, {sp.outer}, {sp.inner}, {sp.factor}) has no effect: "
                                        f"its outer loop '{sp.outer}' is inside hw_accelerate's loop '{self.xo}' "
                                        f"(loops, innermost first: {', '.join(sched.loops)}), so the accelerator "
                                        "covers all of it; keep the tile's outer loops outside "
                                        f"'{self.xo}' (no reorder across it)", where=f"Func '{f.name}'",
                                        construct="split")
                    if sp.old in [r.name for r in d.rvars]:
                        continue  # a reduction split without unroll: refused by _reduction_points
                    raise LoomError(f"{what}.split({sp.old}, {sp.outer}, {sp.inner}, {sp.factor}) (a split or tile) "
                                    f"has no effect: the accelerator computes '{f.name}' over its region in its "
                                    f"dimensions' order ({', '.join(x.name for x in f.dims)}, innermost first), one "
                                    "step after another; unroll(v, n) computes n points a step; drop the split",
                                    where=f"Func '{f.name}'", construct="split")
                self._check_loop_order(f, d, what, [v for v in loops if v not in sched.unrolled])

    def _check_loop_order(self, f, d, what, loops):
        """The streamed loops (innermost first) must be reductions, then the dimensions in order."""
        sched = d.schedule
        origin = {x.name: x.name for x in f.dims}
        for sp in sched.splits:
            origin[sp.outer] = origin[sp.inner] = origin.get(sp.old, sp.old)
        dims = [x.name for x in f.dims]
        rank = [(0, 0) if not _is_pure_loop(sched, v) else (1, dims.index(origin.get(v, v)))
                for v in loops if origin.get(v, v) in dims or not _is_pure_loop(sched, v)]
        if rank != sorted(rank):
            calls = "".join(f".reorder({', '.join(r)})" for r in sched.reorders) or ".reorder(...)"
            red = "" if d.is_pure else ", a reduction innermost of all"
            raise LoomError(f"{what}{calls} has no effect: the accelerator computes '{f.name}' in its dimensions' "
                            f"order ({', '.join(dims)}, innermost first{red}), "
                            f"not in the loop order {', '.join(loops)}; drop the reorder",
                            where=f"Func '{f.name}'", construct="reorder")

    def _check_own_rate(self, node: StageNode):
        """An input memory unrolled beyond the output's rate runs on its own time grid (thesis §6.4: the
        input tile fills its memory as fast as its ports allow and the compute reads it at its own pace)."""
        others = ", ".join(f"{n.name}={n.lanes}" for n in self.stages.values() if n.kind == "compute")
        why = self._own_rate_refusal(node)
        if why is not None and self.wider_than_its_readers(node):
            return  # tied to the output's grid, firing once every lanes / output lanes of its steps
        if why is not None:
            raise LoomError(f"stages run at different rates (pixels per cycle: {others}) and '{node.name}' cannot "
                            f"run at its own rate: {why}; unroll every stage's innermost dimension by the same "
                            "factor", where=f"Func '{node.name}'", construct="unroll")
        node.own_rate = True

    def _own_rate_refusal(self, node: StageNode) -> str | None:
        why = None
        if self.lanes != 1:
            why = f"the output '{self.func.name}' computes {self.lanes} pixels per cycle; a stage runs at its own " \
                  "rate only when the output computes one"
        elif node.time_reduction:
            why = "it iterates a reduction in time"
        elif any(self.stages[a.producer].kind != "stream" for a in node.reads):
            why = "it reads other stages; only an input memory (a stage reading host streams only) may run at " \
                  "its own rate"
        return why

    def buffer_reads(self, producer: str):
        return [a for n in self.stages.values() for a in n.reads if a.producer == producer]

    def classification_table(self) -> str:
        rows = [("memory", "usage", "index pattern", "kind")]
        for n, m in self.memory.items():
            rows.append((n, m.usage, m.index_pattern, m.kind or "unsupported"))
        w = [max(len(r[i]) for r in rows) for i in range(4)]
        return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)) for r in rows)
