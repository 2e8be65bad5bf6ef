"""A CPU-scheduled pipeline -> one ``func.func`` of scf/memref/arith/math loop nests.

The function takes one memref per ImageParam (numpy layout: dims reversed,
static shapes) and the output buffer last, covering the output's region from
``infer_bounds`` (the requested region, widened by what update definitions
write; ``CpuProgram.run`` crops it). Placement rules are in ``cpu_plan``, tails
and unrolling in ``cpu_loops``, scalar semantics in ``cpu_scalar``, regions of
Funcs computed inside loops in ``cpu_regions``.

Each realised Func gets a buffer of static shape for its store level. As
shapes are static, the storage is allocated once at the function's entry (not
once per iteration of the store level's loop) and reused by every iteration:
``memref.alloca`` (a C stack array, which gcc knows aliases nothing) up to
``STACK_BYTES``, else ``memref.alloc`` freed before the return. A read
subtracts the buffer's runtime base (the store level's region start) from
the index. Data-dependent indices are clamped into the buffer (bounds
inference already proved them inside; the clamp keeps the C memory-safe even
if it were wrong). A ``parallel`` loop is an ``scf.parallel`` (OpenMP threads in the C
backend) whose body allocates the buffers of the Funcs computed inside it (one
stored outside it is refused, as Halide refuses it); a vectorized loop (``vectorize(v, n)``
splits ``v`` by n, as Halide) stays a loop, marked with its width for the C backend (gcc vectorizes at -O3
where it can). A Func sliding along a
dimension (computed per iteration of a loop, stored outside it) has its storage
folded there to a power of two (Halide's storage folding).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import partial

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, i8, i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from loom.errors import LoomError
from loom.dialects.hints import SIMD_ATTR

from .bounds import infer_bounds, interval, round_up_factors
from .cpu_loops import StageLoops, var_range
from .cpu_param_offsets import offset_value, split_param_offsets
from .cpu_plan import ROOT, Plan
from .cpu_round_up import computed_outside, rounded
from .cpu_regions import RegionInference, SymRange, constant_region, sym_interval
from .cpu_scalar import ConstantPool, ScalarEmitter, const_index, ir_type, storage_type, to_index
from .evaluate import output_region
from .expr import Call, Var, walk
from .func import Func
from .graph import FuncGraph, refuse_racing_storage, validate_schedules
from .index_forms import Affine, FloorDiv, NotAffine, to_affine
from .param import params_of
from .schedule import TailStrategy
from .types import Bool, Int32

STACK_BYTES = 16 * 1024  # the C backend's limit for stack arrays


def _memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
# An innermost loop this long or longer runs in three parts around its boundary clamps (_partition). A shorter
# one (a 7-tap RDom loop) keeps its constant trip count, which gcc unrolls: split at run-time bounds, the 7x7
# box of bench_cpu_vs_halide ran 2.3x slower.
MIN_PARTITIONED_EXTENT = 16
# A parallel loop inside other loops opens an OpenMP region each time they enter it. One whose nest (the loop and
# the loops inside it) runs fewer iterations than this runs serially: an rfactor intermediate's parallel(u) of 8
# rows of 8 inside a per-pixel loop took 2.4 s in OpenMP regions, Halide's thread pool 87 ms.
MIN_NESTED_PARALLEL_WORK = 1 << 13
MAX_ROUND_UP_PASSES = 4
# The loops of a Func whose innermost loop is too short to partition are tested once per this many iterations
# or more (a row of a 64 x 16 tile vectorized by 8), and run without clamps where their reads lie inside
MIN_TILE_TEST = 64


@dataclass
class Buffer:
    ref: SSAValue
    starts: list[SymRange]  # per Func dim: the buffer's first index is ssa + lo
    shape: list[int]  # per Func dim
    folds: dict[int, int] = field(default_factory=dict)  # dim -> power of two its index is taken modulo

    def base_index(self, i: int, ix: SSAValue) -> SSAValue:
        s = self.starts[i]
        if s.ssa is not None:
            ix = arith.SubiOp(ix, s.ssa).result
        if s.lo:
            ix = arith.SubiOp(ix, const_index(s.lo)).result
        if i in self.folds:  # storage folding: the index from the start is >= 0, so & is the remainder
            ix = arith.AndIOp(ix, const_index(self.folds[i] - 1)).result
        return ix


def _memref_type(t, region: list[SymRange]) -> MemRefType:
    return MemRefType(storage_type(t), [r.extent for r in reversed(region)])


def _has_call(e) -> bool:
    return any(isinstance(x, Call) for x in walk(e))


def _index_value(r: SymRange) -> SSAValue:
    """The single value of a range with lo == hi."""
    if r.ssa is None:
        return const_index(r.lo)
    return arith.AddiOp(r.ssa, const_index(r.lo)).result if r.lo else r.ssa


def _inside(compute: SymRange, store: SymRange, regions: RegionInference) -> SymRange:
    """The range to compute in a buffer stored at an outer level (never beyond the store's range)."""
    if compute.ssa is store.ssa and store.lo <= compute.lo and compute.hi <= store.hi:
        return compute
    if compute.ssa is not None and store.ssa is None:
        # an inner loop's box lies within the outer one's; a widened one's extra element may not
        return regions.clamped(compute, store.lo, store.hi) if compute.widened else compute
    if compute.ssa is not None and not compute.widened:
        return compute  # exact: what this iteration reads, inside the window stored for all of them
    return store


class CpuLowering:
    def __init__(self, output: Func, input_shapes: dict, size, origin=None, name: str = "pipeline"):
        self.pipe = FuncGraph(output)
        validate_schedules(self.pipe)
        refuse_racing_storage(self.pipe)
        self.scalar_params = params_of(self.pipe.funcs)  # scalar arguments, after the input memrefs
        self.scalar_env: dict = {}
        input_shapes = dict(input_shapes)  # a Buffer read in a definition (a bound ImageParam): its array's shape
        input_shapes.update({p.name: tuple(p.bound.shape) for p in self.pipe.params
                             if p.name not in input_shapes and p.bound is not None})
        missing = [p.name for p in self.pipe.params if p.name not in input_shapes]
        if missing:
            raise LoomError(f"no input shape given for ImageParam(s) {', '.join(missing)}",
                            where=f"Func '{output.name}'")
        self.input_shapes = {k: tuple(v) for k, v in input_shapes.items()}
        self.requested = output_region(output, size, origin)
        self.plan = Plan(self.pipe, self.input_shapes)
        self.name = name
        self.grow: dict[int, list] = {}  # RoundUp windows of Funcs computed inside loops (cpu_round_up)
        self._reset()

    def _reset(self):
        """The whole-pipeline regions (grown by ``self.grow``) and a fresh lowering state."""
        self.allocation: dict[int, list] = {}  # storage past a region: what rounded-up points read (infer_bounds)
        self.global_regions = infer_bounds(self.pipe, self.requested, self.input_shapes, round_up=True,
                                           clamp_inlined_boundaries=True, grow=self.grow, allocation=self.allocation,
                                           computed_outside=partial(computed_outside, self.plan))
        self.regions = RegionInference(self.plan, self.global_regions, self.allocation)
        self.live: dict[int, Buffer] = {}
        self.open_trips = 1  # how many times the loops open around the point being lowered enter their bodies
        self.stored: dict[int, Buffer] = {}
        self.entry: Block | None = None  # the function's entry block
        self.alloc_block: Block | None = None  # where buffers are allocated: the entry, or a parallel loop's body
        self.heap: list[SSAValue] = []  # buffers to free before the return
        self.indices: dict[tuple, SSAValue] = {}  # buffer indices made for the point being stored
        self.coords: dict[str, SSAValue] = {}  # the point's loop coordinates as index values
        self.past_storage: list[str] = []  # Funcs computed past their storage in this pass (grown next pass)
        self.interior: dict[int, list] = {}  # id(f) -> its definitions without boundary clamps, while realised inside
        # every coordinate and index lies in a region far inside i32: an index computed as an ``index`` is
        # the value the language's i32 arithmetic gives (see _affine_index)
        # (the buffers: realised Funcs and inputs; an inlined boundary condition's region is what its clamps take
        # in, any i32 when an unranged Param moves its reads)
        buffers = {id(f) for f in self.plan.realised_funcs} | {id(p) for p in self.pipe.params}
        self.coords_fit = all(-2 ** 30 <= lo and hi <= 2 ** 30 for key, region in self.global_regions.items()
                              if key in buffers for lo, hi in region)

    # ---- module ------------------------------------------------------------------------
    def build(self) -> ModuleOp:
        """The module; lowered again while Funcs computed inside loops over RoundUp-rounded windows need more than
        their whole-pipeline regions (their producers' regions and the input checks grow with them)."""
        for _ in range(MAX_ROUND_UP_PASSES):
            module = self._build_once()
            if not self._grow_regions():
                if self.past_storage:  # cannot happen: such a window's span is recorded and grows the storage
                    raise LoomError(f"RoundUp: {', '.join(self.past_storage)} computed past its storage",
                                    where=f"Func '{self.pipe.output.name}'", construct="split")
                return module
            self._reset()
        raise LoomError("RoundUp: the regions of Funcs computed inside loops did not settle after "
                        f"{MAX_ROUND_UP_PASSES} passes", where=f"Func '{self.pipe.output.name}'", construct="split")

    def _grow_regions(self) -> bool:
        """Record in ``self.grow`` the rounded spans reaching past the whole-pipeline regions; whether any did."""
        grew = False
        for key, spans in self.regions.rounded_spans.items():
            have = self.grow.setdefault(key, [None] * len(spans))
            for i, (span, (lo, hi)) in enumerate(zip(spans, self.global_regions[key])):
                if span is not None and (span[0] < lo or span[1] > hi):
                    have[i] = (min(span[0], lo), max(span[1], hi))
                    grew = True
        return grew

    def _build_once(self) -> ModuleOp:
        out = self.pipe.output
        in_types = [MemRefType(storage_type(p.type), list(self.input_shapes[p.name])) for p in self.pipe.params]
        scalar_types = [ir_type(p.type) for p in self.scalar_params]
        out_region = constant_region(self.global_regions[id(out)])
        fop = func.FuncOp(self.name, ([*in_types, *scalar_types, _memref_type(out.type, out_region)], []))
        self.entry = self.alloc_block = fop.body.block
        with ImplicitBuilder(fop.body) as args:
            for p, a in zip(self.pipe.params, args):
                shape = list(self.input_shapes[p.name])[::-1]
                self.live[id(p)] = Buffer(a, [SymRange(None, 0, n - 1) for n in shape], shape)
            scalar_args = args[len(in_types):len(in_types) + len(scalar_types)]
            self.scalar_env = {p.key: a for p, a in zip(self.scalar_params, scalar_args)}
            self.stored[id(out)] = Buffer(args[-1], out_region, [r.extent for r in out_region])
            with ConstantPool(self.entry):
                self._scope_root()
            for ref in self.heap:
                memref.DeallocOp.get(ref)
            func.ReturnOp()
        module = ModuleOp([fop])
        module.verify()
        return module

    # ---- scopes ------------------------------------------------------------------------
    def _scope_root(self):
        for f in self.plan.realised_funcs:
            region = constant_region(self.global_regions[id(f)])
            if self.plan.store_level[id(f)] == ROOT and id(f) not in self.stored:
                self._alloc(f, constant_region(self.allocation.get(id(f), self.global_regions[id(f)])))
            if self.plan.compute_level[id(f)] == ROOT:
                self._realise(f, region)

    def _at(self, level, g, stage: int, loop) -> bool:
        return level[0] == "at" and level[1] is g and level[3] == stage and (loop is None or level[2] == loop)

    def _placed(self, g, stage: int, loop) -> list[Func]:
        """The Funcs computed or stored at ``loop`` of ``g``'s definition ``stage`` (``loop`` None: those the
        update ``stage`` reads at loops of the pure definition)."""
        plan = self.plan
        at = 0 if loop is None else stage
        return [f for f in plan.realised_funcs
                if self._at(plan.compute_level[id(f)], g, at, loop) or
                (loop is not None and self._at(plan.store_level[id(f)], g, at, loop))]

    def _scope(self, g, stage: int, loop, make_env, iv: SSAValue | None = None):
        """Realise the Funcs placed at ``loop`` (index value ``iv``) of ``g``'s definition ``stage``, or (``loop``
        None) those placed at loops of its pure definition that update ``stage`` reads, before that update's loop
        nest."""
        plan = self.plan
        at = 0 if loop is None else stage
        placed = self._placed(g, stage, loop)
        if not placed:
            return
        required = self.regions.below(g, stage, make_env(), set(self.live), {id(f) for f in placed})
        for f in placed:
            if id(f) not in required:
                continue
            region = required[id(f)]
            if self._at(plan.store_level[id(f)], g, at, loop) and id(f) not in self.stored:
                self._alloc(f, self.regions.storage(f, region))
            if self._at(plan.compute_level[id(f)], g, at, loop):
                if id(f) not in self.stored:
                    self._alloc(f, self.regions.storage(f, region))
                else:
                    starts = self.stored[id(f)].starts
                    if any(c.ssa is None and s.ssa is None and (c.lo < s.lo or c.hi > s.hi)
                           for c, s in zip(region, starts)):
                        # a RoundUp-rounded window past its root storage (store_root().compute_at(g, y)): computed
                        # whole, as Halide does; the storage grows to it (_grow_regions) and the pipeline is
                        # lowered again, which build checks
                        self.past_storage.append(f.name)
                    else:
                        region = [_inside(c, s, self.regions) for c, s in zip(region, starts)]
                slide = self._sliding(f, region, iv) if not self._at(plan.store_level[id(f)], g, at, loop) else None
                if slide is None:
                    self._realise_specialised(f, region)
                else:
                    self._fold(f, slide[0], region[slide[0]].extent)
                    self._realise_sliding(f, region, iv, *slide)

    def _sliding(self, f, region: list[SymRange], iv) -> tuple[int, int] | None:
        """(dim, c) when ``f``, stored outside the loop of index ``iv``, is computed there over a window that moves
        forward by c < its extent along one dim each iteration, or by less (a tile shifted inward at the end), so
        its newest c rows cover what the window gained (Halide's sliding window: ``store_root().compute_at(g,
        y)`` of a stencil's producer); None otherwise. Only Funcs whose every definition writes its own pure point
        (each point computed alone) slide."""
        if not isinstance(iv, BlockArgument) or any(not isinstance(a, Var) for args, _ in
                                                      self.plan.definitions[id(f)] for a in args):
            return None
        store = self.stored[id(f)].starts
        moving = []
        for j, (r, st) in enumerate(zip(region, store)):
            step = (0, 0) if r.ssa is None else _advance(r.ssa, iv)
            if step is None or (st.ssa is not None and _advance(st.ssa, iv) != (0, 0)):
                return None
            if step != (0, 0):
                moving.append((j, step))
        if len(moving) != 1:
            return None
        j, (least, most) = moving[0]
        factors = round_up_factors(f).get(j)
        if factors and rounded(most, factors) != most:
            return None  # its newest rows would not fill its RoundUp split: each iteration computes the window
        return (j, most) if 0 <= least and 0 < most < region[j].extent else None

    def _realise_specialised(self, f, region: list[SymRange]):
        """``f`` over ``region``, without its boundary conditions' clamps when the region reads only the inside of
        their sources (a tile away from the image's edges: one test per tile), with them otherwise."""
        inside = self._inside_sources(f, region)
        if inside is None:
            self._realise(f, region)
        else:
            _if(inside, lambda: self._realise(f, region, clamp_free=True), lambda: self._realise(f, region))

    def _inside_sources(self, f, region: list[SymRange]) -> SSAValue | None:
        """The run-time test that every boundary clamp's argument in ``f``'s definitions lies in its source's
        range over ``region`` (one comparison pair per clamp); None when there is none to test or an
        argument's range is not known from the region."""
        tests = []
        self.regions.new_scope()
        for k in range(len(f.definitions)):
            env = self.regions.stage_env(f, k, region)  # each definition names its own Vars
            for rv in f.definitions[k].rvars:
                env[rv.name] = SymRange(None, rv.min, rv.min + rv.extent - 1)
            got = self._clamp_tests(f, k, env)
            if got is None:
                return None
            tests += got
        return _all(tests)

    def _clamp_tests(self, f, k: int, env: dict[str, SymRange]) -> list[SSAValue] | None:
        """Comparisons that hold when every boundary clamp's argument in ``f``'s definition ``k`` lies in its
        source's range over ``env``; None when one's range is unknown or a clamp acts wherever ``env`` is."""
        tests = []
        for a, lo, hi in self.plan.boundary_clamps(f, k):
            r = self._clamp_argument(a, env)  # a widened range holds every value too: the test is conservative
            if r.ssa is None and ((r.lo, r.hi) == _UNKNOWN or not lo <= r.lo <= r.hi <= hi):
                return None  # unknown, or a clamp acting on every tile
            if r.ssa is not None:
                tests.append(arith.CmpiOp(r.ssa, const_index(lo - r.lo), "sge").result)
                tests.append(arith.CmpiOp(r.ssa, const_index(hi - r.hi), "sle").result)
        return tests

    def _clamp_argument(self, a, env: dict[str, SymRange]) -> SymRange:
        """The range of boundary clamp argument ``a`` over ``env``; one moved by Params (``x + off``) is the rest's
        range on a base shifted by their run-time values (``cpu_param_offsets``)."""
        split = split_param_offsets(a)
        if split is None:
            return sym_interval(a, env, _UNKNOWN, self.regions, several_bases=True)
        rest, terms = split
        r = sym_interval(rest, env, _UNKNOWN, self.regions, several_bases=True)
        if r.widened or (r.ssa is None and (r.lo, r.hi) == _UNKNOWN):
            return r
        offset = offset_value(terms, self.scalar_env)
        return SymRange(offset if r.ssa is None else arith.AddiOp(r.ssa, offset).result, r.lo, r.hi)

    def _tile_inside(self, f, k, d, loops: StageLoops, pos: int, region_env) -> SSAValue | None:
        """The test, on an iteration of loop ``pos``, that the loops inside it read only the inside of the
        boundary conditions' sources (Halide partitions the tile loops too): asked at the innermost loop whose
        loops inside run ``MIN_TILE_TEST`` iterations or more, when the innermost loop is too short to be
        partitioned itself (a vectorized tile's ``xi`` of 8: the mirror's modulos ran at every pixel); None
        otherwise."""
        nodes = loops.loops
        if id(f) in self.interior or pos >= len(nodes) - 1 or nodes[-1].extent >= MIN_PARTITIONED_EXTENT \
                or any(t == TailStrategy.GuardWithIf for t in loops.tails.values()):
            return None
        inner = math.prod(n.extent for n in nodes[pos + 1:])
        if inner < MIN_TILE_TEST or (pos + 2 < len(nodes) and inner // nodes[pos + 1].extent >= MIN_TILE_TEST):
            return None  # a loop further in is the one tested
        if not self.plan.boundary_clamps(f, k):
            return None
        self.regions.new_scope()
        tests = self._clamp_tests(f, k, self._level_env(loops, region_env, d))
        return _all(tests) if tests else None

    def _clamp_free_loops(self, f, k, d, loops: StageLoops, pos: int, region_env):
        self.interior[id(f)] = self.plan.clamp_free(f)
        try:
            self._loops(f, k, d, loops, pos, region_env)
        finally:
            del self.interior[id(f)]

    def _realise_sliding(self, f, region: list[SymRange], iv, dim: int, step: int):
        """The whole window on the loop's first iteration, afterwards the ``step`` newest rows along ``dim`` (the
        rest the previous iterations computed into the same storage)."""
        r = region[dim]
        newest = list(region)
        newest[dim] = SymRange(r.ssa, r.hi - step + 1, r.hi)
        _if(arith.CmpiOp(iv, const_index(0), "eq").result, lambda: self._realise(f, region),
            lambda: self._realise(f, newest))

    def _alloc(self, f, region: list[SymRange]) -> Buffer:
        """Storage for ``f`` over ``region`` (static extents), allocated once at the function's entry (or at the
        top of the parallel loop body it is inside)."""
        op = self._allocation(f, [r.extent for r in region])
        self._hoist(op)
        buf = Buffer(op.memref, list(region), [r.extent for r in region])
        self.stored[id(f)] = buf
        return buf

    def _allocation(self, f, shape: list[int]) -> Operation:
        """An alloca (up to ``STACK_BYTES``) or a heap alloc, freed before the return, of ``shape`` (per Func dim)."""
        elem = storage_type(f.type)
        size = math.prod(shape) * max(1, elem.bitwidth // 8)
        if size > _memory_bytes():  # the C code's malloc would fail and abort the process
            raise LoomError(f"its storage of {' x '.join(map(str, shape))} {f.type.name} ({size:.3g} bytes) is more "
                            f"than this machine's memory ({_memory_bytes():.3g} bytes): a read far outside the "
                            "output's region? (bound it, clamp the index, or compute it inside a loop)",
                            where=f"Func '{f.name}'")
        small = size <= STACK_BYTES
        op = (memref.AllocaOp if small else memref.AllocOp).get(elem, shape=shape[::-1])
        if not small:
            self.heap.append(op.memref)
        return op

    def _fold(self, f, dim: int, window: int) -> None:
        """Halide's storage folding: a Func sliding along ``dim`` holds only the ``window`` newest values there,
        so its storage along ``dim`` is the next power of two, indexed modulo it (a row buffer for a stencil's
        producer stored at the root and computed per row, instead of the whole image)."""
        buf = self.stored[id(f)]
        fold = 1 << (window - 1).bit_length()
        old = buf.ref.owner
        if fold >= buf.shape[dim] or buf.ref.uses:
            return
        shape = list(buf.shape)
        shape[dim] = fold
        new = self._allocation(f, shape)
        new.detach()  # built where the builder stands; it goes where the storage was
        old.parent.insert_op_before(new, old)
        if buf.ref in self.heap:
            self.heap.remove(buf.ref)
        old.detach()
        old.erase()
        buf.ref, buf.shape = new.memref, shape
        buf.folds[dim] = fold

    def _hoist(self, op: Operation):
        """Move ``op`` (no operands) from where the builder put it to the top of the entry block, or of the body of
        the innermost parallel loop around it (each thread its own storage)."""
        op.detach()
        first = self.alloc_block.first_op
        if first is None:
            self.alloc_block.add_op(op)
        else:
            self.alloc_block.insert_op_before(op, first)

    # ---- stages ------------------------------------------------------------------------
    def _realise(self, f: Func, region: list[SymRange], clamp_free: bool = False):
        """``f``'s definitions over ``region``; ``clamp_free``: without their boundary clamps (every read inside)."""
        if clamp_free:
            self.interior[id(f)] = self.plan.clamp_free(f)
            try:
                self._realise(f, region)
            finally:
                del self.interior[id(f)]
            return
        buf = self.stored[id(f)]
        self.live[id(f)] = buf  # updates read the Func itself
        for k, d in enumerate(f.definitions):
            env = {a.name: region[i] for i, a in enumerate(d.args) if isinstance(a, Var)}
            extents = {name: r.extent for name, r in env.items()}
            extents.update({r.name: r.extent for r in d.rvars})
            loops = StageLoops(d.schedule, extents, pure=(k == 0), owner=f.name)
            saved = (dict(self.live), dict(self.stored))
            if k > 0:
                self._scope(f, k, None, lambda: env)
            self._loops(f, k, d, loops, 0, env)
            self.live, self.stored = saved

    def _loops(self, f, k, d, loops: StageLoops, pos: int, region_env: dict[str, SymRange]):
        if pos == len(loops.loops):
            self._body(f, k, d, loops, region_env)
            return
        node = loops.loops[pos]

        def scope_and_nest(iv):
            self._scope(f, k, node.name, lambda: self._level_env(loops, region_env, d), iv)
            inside_test = self._tile_inside(f, k, d, loops, pos, region_env)
            if inside_test is None:
                self._loops(f, k, d, loops, pos + 1, region_env)
                return
            # the loops inside read only the inside of the sources on this iteration: a copy without the clamps
            _if(inside_test, lambda: self._clamp_free_loops(f, k, d, loops, pos + 1, region_env),
                lambda: self._loops(f, k, d, loops, pos + 1, region_env))

        def inside(iv):
            node.iv = iv
            trips = self.open_trips
            self.open_trips *= node.extent
            self.regions.ivs[id(iv)] = (0, node.extent - 1)
            saved = (dict(self.live), dict(self.stored))
            guarded = loops.guard_open()
            if guarded and self._placed(f, k, node.name) and loops.guards_decided():
                # every guarded index is fixed here: skip the points past the end before computing the
                # producers placed at this loop, whose regions then hold only points that exist
                guards = loops.guards()
                self.regions.caps = [(off, extent - 1) for off, extent in guards]
                _if(_guard_condition(guards), lambda: scope_and_nest(iv))
                self.regions.caps = []
            else:  # a tile past the end: the producers' regions are clamped into what the pipeline reads
                scope_and_nest(iv)
            self.live, self.stored = saved
            self.open_trips = trips
            node.iv = None

        if loops.unroll(node) or node.extent == 1:  # a one-trip loop is its body (canonicalize would inline it)
            for c in range(node.extent):
                inside(const_index(c))
            return
        # a parallel loop shares no storage between its iterations: refuse_racing_storage refused that
        loop = self._parallel_for if node.name in d.schedule.parallel and not self._tiny_nested(loops, pos) else _for
        if d.schedule.vectorized.get(node.name) and loop is _for:  # vectorize(v, n)'s lanes
            loop = partial(_for, simd=node.extent)
        innermost = pos == len(loops.loops) - 1
        parts = self._partition(f, k, d, loops, node, region_env) if innermost and \
            node.extent >= MIN_PARTITIONED_EXTENT else None
        if parts is None:
            loop(const_index(0), const_index(node.extent), inside)
            return
        # the iterations before p and from q on read across an edge; those between, none: no clamps there
        p, q = parts
        loop(const_index(0), p, inside)
        self.interior[id(f)] = self.plan.clamp_free(f)
        loop(p, q, inside)
        del self.interior[id(f)]
        loop(q, const_index(node.extent), inside)

    def _tiny_nested(self, loops: StageLoops, pos: int) -> bool:
        """Whether parallel loop ``pos`` sits inside other loops and its nest is too small to pay for the OpenMP
        region each of their iterations opens (``MIN_NESTED_PARALLEL_WORK``)."""
        work = math.prod(node.extent for node in loops.loops[pos:])
        return self.open_trips > 1 and work < MIN_NESTED_PARALLEL_WORK

    def _parallel_for(self, lb: SSAValue, ub: SSAValue, body) -> None:
        """``scf.parallel iv = lb to ub`` (OpenMP threads in the C backend); the buffers of Funcs computed inside
        are allocated in its body, one set per iteration, and heap ones freed at its end."""
        block = Block(arg_types=[IndexType()])
        outer = (self.alloc_block, self.heap)
        self.alloc_block, self.heap = block, []
        with ImplicitBuilder(block):
            body(block.args[0])
            for ref in self.heap:
                memref.DeallocOp.get(ref)
            scf.ReduceOp()
        self.alloc_block, self.heap = outer
        scf.ParallelOp([lb], [ub], [const_index(1)], Region(block))

    def _partition(self, f, k, d, loops: StageLoops, node, region_env) -> tuple[SSAValue, SSAValue] | None:
        """(p, q): the iterations [p, q) of the innermost loop in which no boundary clamp of ``f``'s definition
        ``k`` acts (Halide's loop partitioning), when each clamp's argument steps by one per iteration or is
        fixed in the loop; None otherwise (no clamp, a guarded split, another stride)."""
        if id(f) in self.interior or any(t == TailStrategy.GuardWithIf for t in loops.tails.values()):
            return None
        clamps = self.plan.boundary_clamps(f, k)
        if not clamps:
            return None
        env = self._level_env(loops, region_env, d)  # the innermost loop is not open: its Var spans the loop
        self.regions.new_scope()
        firsts, lasts, fixed = [], [], []
        for a, lo, hi in clamps:
            r = self._clamp_argument(a, env)
            if (r.ssa is None and (r.lo, r.hi) == _UNKNOWN) or r.widened:
                return None
            start = const_index(r.lo) if r.ssa is None else arith.AddiOp(r.ssa, const_index(r.lo)).result
            if r.lo == r.hi:  # fixed in this loop: every iteration or none is inside
                fixed.append(arith.AndIOp(arith.CmpiOp(start, const_index(lo), "sge"),
                                          arith.CmpiOp(start, const_index(hi), "sle")).result)
            elif r.hi - r.lo == node.extent - 1:  # start + iv at iteration iv
                firsts.append(arith.SubiOp(const_index(lo), start).result)
                lasts.append(arith.SubiOp(const_index(hi + 1), start).result)
            else:
                return None
        if not firsts:
            return None
        zero, extent = const_index(0), const_index(node.extent)
        p = zero
        for v in firsts:
            p = arith.MaxSIOp(p, v).result
        p = arith.MinSIOp(p, extent).result
        q = extent
        for v in lasts:
            q = arith.MinSIOp(q, v).result
        q = arith.MaxSIOp(q, p).result
        if fixed:  # a clamp fixed in the loop that acts: no iteration is clamp-free
            q = arith.SelectOp(_all(fixed), q, p).result
        return p, q

    def _level_env(self, loops: StageLoops, region_env, d):
        """Ranges of the stage's pure Vars and RVars with the currently open loops."""
        env = {name: var_range(region_env[name], loops.offset_range(loops.roots[name])) for name in region_env}
        for rv in d.rvars:  # an RVar's offsets start at its min
            env[rv.name] = var_range(SymRange(None, rv.min, rv.min), loops.offset_range(loops.roots[rv.name]))
        return env

    def _body(self, f, k, d, loops: StageLoops, region_env):
        buf = self.stored[id(f)]
        values: dict[str, SSAValue] = {}
        for name, r in self._level_env(loops, region_env, d).items():
            values[name] = _index_value(r)
        guards = loops.guards()
        if guards:
            _if(_guard_condition(guards), lambda: self._store(f, k, buf, values))
        else:
            self._store(f, k, buf, values)

    def _store(self, f, k, buf: Buffer, values: dict[str, SSAValue]):
        args, value = self.interior.get(id(f), self.plan.definitions[id(f)])[k]
        self.coords = values
        env = {name: arith.IndexCastOp(v, ir_type(Int32)).result for name, v in values.items()}
        env.update(self.scalar_env)
        em = ScalarEmitter(env, self._load, fold_bounded=True)
        self.indices = {}
        v = em.emit(value)
        if f.type == Bool:
            v = arith.ExtUIOp(v, i8).result
        indices = [self._buffer_index(buf, i, a, em.emit(a)) for i, a in enumerate(args)]
        memref.StoreOp.get(v, buf.ref, indices[::-1])

    def _buffer_index(self, buf: Buffer, i: int, a, v: SSAValue) -> SSAValue:
        """Index ``v`` (the value of ``a``) into ``buf``'s dim ``i``, made once per stored point: a stencil
        reads the same rows and columns of a buffer many times."""
        as_index = self._affine_index(a)
        if as_index is None:
            as_index = self.indices.get((v, a.type))
        if as_index is None:
            as_index = self.indices[(v, a.type)] = to_index(v, a.type)
        key = (buf.ref, i, as_index, _has_call(a))
        ix = self.indices.get(key)
        if ix is None:
            ix = buf.base_index(i, as_index)
            if key[3] and not _within(a, buf.starts[i], buf.shape[i]):
                ix = _clamp(ix, buf.shape[i])  # a data-dependent index: kept inside the buffer (memory safety)
            self.indices[key] = ix
        return ix

    def _affine_index(self, a) -> SSAValue | None:
        """An index (floor of an) affine form in the loop coordinates, computed as an ``index`` from them: the
        value of its i32 form, which nothing wraps here (``coords_fit``), without the round trip through
        int32 that keeps the C compiler from strength-reducing the addressing. None for any other index."""
        if not self.coords_fit:
            return None
        split = split_param_offsets(a)  # x + off: an unranged Param only moves reads proved inside (partitioned)
        rest, terms = split if split is not None else (a, [])
        try:
            form = to_affine(rest, {name: Affine.var(name) for name in self.coords})
        except NotAffine:
            return None
        if terms and isinstance(form, FloorDiv):
            return None
        key = ("affine", form, tuple((sign, id(t)) for sign, t in terms))
        if key not in self.indices:
            num, d = (form.num, form.div) if isinstance(form, FloorDiv) else (form, 1)
            value = None
            for name, c in sorted(num.terms.items()):
                term = self.coords[name] if c == 1 else arith.MuliOp(self.coords[name], const_index(c)).result
                value = term if value is None else arith.AddiOp(value, term).result
            if value is None or num.const:
                value = const_index(num.const) if value is None else arith.AddiOp(value, const_index(num.const)).result
            if terms:
                value = arith.AddiOp(value, offset_value(terms, self.scalar_env)).result
            self.indices[key] = value if d == 1 else arith.FloorDivSIOp(value, const_index(d)).result
        return self.indices[key]

    def _load(self, call: Call, index_values: list[SSAValue]) -> SSAValue:
        t = call.target
        buf = self.live.get(id(t))
        if buf is None:
            raise LoomError(f"'{t.name}' is read where it is not computed: its compute_at/store_at level "
                            f"does not enclose every consumer (read as {call!r})", where=f"Func '{t.name}'",
                            construct="compute_at")
        indices = [self._buffer_index(buf, i, a, v) for i, (a, v) in enumerate(zip(call.args, index_values))]
        v = memref.LoadOp.get(buf.ref, indices[::-1]).res
        if t.type == Bool:
            v = arith.TruncIOp(v, ir_type(Bool)).result
        return v


def _within(a, start: SymRange, extent: int) -> bool:
    """Whether index ``a`` lies inside a buffer starting at the constant ``start`` whatever the data: its interval
    (a value read from a u8 image or masked by & 15 is bounded by its type or the mask) within the buffer."""
    if start.ssa is not None:
        return False
    lo, hi = interval(a, {})
    return start.lo <= lo and hi <= start.lo + extent - 1


_UNKNOWN = (-(1 << 62), 1 << 62)  # sym_interval's fallback when nothing bounds an index


def _all(conditions: list[SSAValue]) -> SSAValue | None:
    """The conjunction of ``conditions`` (None when there are none)."""
    cond = None
    for c in conditions:
        cond = c if cond is None else arith.AndIOp(cond, c).result
    return cond


def _if(cond: SSAValue, then, otherwise=None) -> None:
    """``scf.if cond`` whose branches ``then()`` and ``otherwise()`` (if given) build."""
    branches = []
    for build in (then, otherwise) if otherwise is not None else (then,):
        block = Block()
        with ImplicitBuilder(block):
            build()
            scf.YieldOp()
        branches.append(Region(block))
    scf.IfOp(cond, [], *branches)


def _for(lb: SSAValue, ub: SSAValue, body, simd: int | None = None) -> None:
    """``scf.for iv = lb to ub`` with ``body(iv)`` building its body; ``simd``: a vectorized loop's width, which
    the C backend's native mode gives ``#pragma omp simd simdlen(simd)`` when it proves the loop independent."""
    block = Block(arg_types=[IndexType()])
    with ImplicitBuilder(block):
        body(block.args[0])
        scf.YieldOp()
    op = scf.ForOp(lb, ub, const_index(1), [], Region(block))
    if simd:
        op.attributes[SIMD_ATTR] = IntegerAttr(simd, i64)


def _advance(v: SSAValue, iv: SSAValue) -> tuple[int, int] | None:
    """The least and the most ``v`` grows by from one iteration of the loop of index ``iv`` to the next ((0, 0):
    fixed in it), when it is built from ``iv`` and values fixed in the loop by sums, constant multiples and
    min/max (a tile shifted inward at the end moves less on the last iteration); None otherwise."""
    if v is iv:
        return 1, 1
    op = v.owner
    if not isinstance(op, Operation) or isinstance(op, arith.ConstantOp):
        return 0, 0  # another loop's index (an outer one: fixed in this loop) or a constant
    if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MinSIOp, arith.MaxSIOp)):
        a, b = _advance(op.lhs, iv), _advance(op.rhs, iv)
        if a is None or b is None:
            return None
        if isinstance(op, arith.AddiOp):
            return a[0] + b[0], a[1] + b[1]
        if isinstance(op, arith.SubiOp):
            return a[0] - b[1], a[1] - b[0]
        return min(a[0], b[0]), max(a[1], b[1])  # min(a, b) moves by one of a's or b's moves, or between
    if isinstance(op, arith.MuliOp):
        a, b = _advance(op.lhs, iv), _advance(op.rhs, iv)
        for grows, other in ((a, op.rhs), (b, op.lhs)):
            if grows not in (None, (0, 0)) and isinstance(other.owner, arith.ConstantOp):
                c = other.owner.value.value.data
                return (grows[0] * c, grows[1] * c) if c >= 0 else (grows[1] * c, grows[0] * c)
    steps = [_advance(o, iv) for o in op.operands]
    return (0, 0) if all(st == (0, 0) for st in steps) else None


def _clamp(ix: SSAValue, extent: int) -> SSAValue:
    return arith.MinSIOp(arith.MaxSIOp(ix, const_index(0)), const_index(extent - 1)).result


def lower_pipeline(output: Func, input_shapes: dict, size, origin=None, name: str = "pipeline") -> ModuleOp:
    """The pipeline as a module with one function ``name(inputs..., output)``."""
    return CpuLowering(output, input_shapes, size, origin, name).build()


__all__ = ["CpuLowering", "lower_pipeline"]


def _guard_condition(guards) -> SSAValue:
    """Every guarded offset below its extent (the points of non-dividing GuardWithIf splits that exist)."""
    cond = None
    for off, extent in guards:
        c = arith.CmpiOp(off, const_index(extent), "slt").result
        cond = c if cond is None else arith.AndIOp(cond, c).result
    return cond
