"""A CPU schedule for one loop nest and the passes that apply it.

``CpuSchedule`` is what the tuner searches over for a kernel on the CPU: the loop order of the
outermost perfect nest (``scf-loop-interchange``), tile sizes (``scf-tile-and-interchange``;
0 = not tiled), register accumulation of the output tile over the reduction loops
(``scf-register-accumulate``: with small tiles of the innermost output loops this is a
register-blocked micro-kernel), the order of the tile loops, packing of reused read-only blocks
into contiguous panels (``scf-pack-reads``), the unroll factor of innermost loops (``scf-unroll``), native code
(vector instructions of this CPU, ``omp simd`` on provably independent innermost loops and fused
multiply-adds, ``arith-contract-fma``) and threads (``scf-parallelize`` turns the outermost
independent loop into an OpenMP loop; the thread count is set when the kernel runs).
``cpu_space`` derives the choices from the nest itself.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from dataclasses import dataclass

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ModuleOp

from loom.errors import LoomError
from loom.passes.loop_nests import constant_int, perfect_band
from loom.tune.space import Choice, Space

TILE_CHOICES = (0, 4, 8, 16, 32, 64, 128, 256)
UNROLL_CHOICES = (1, 2, 4, 8)
VECTOR_CHOICES = (-1, 0, 4, 8, 16)  # loom's pragma, the compiler's choice, simdlen(4/8/16)
MAX_ORDERS = 24  # loop orders offered: all of them for nests up to 4 deep, else a sample


@dataclass(frozen=True)
class CpuSchedule:
    order: tuple[int, ...] = ()        # loop permutation of the outermost nest (empty: as written)
    tiles: tuple[int, ...] = ()        # tile size per loop after reordering (empty: no tiling)
    unroll: int = 1
    native: bool = False
    threads: int = 1
    vector: int = -1                   # native mode: -1 loom's simd pragma, 0 the compiler's choice, N simdlen(N)
    accumulate: bool = False           # keep the output tile in a local buffer over the reduction loops
    interchange: tuple[int, ...] = ()  # order of the tile loops (positions after reordering; empty: that order)
    pack: bool = False                 # copy reused blocks of read-only operands into contiguous panels

    @classmethod
    def from_params(cls, params: dict) -> "CpuSchedule":
        depth = len(params.get("order", ())) or sum(1 for k in params if k.startswith("tile"))
        return cls(order=tuple(params.get("order", ())),
                   tiles=tuple(params[f"tile{k}"] for k in range(depth) if f"tile{k}" in params),
                   unroll=params.get("unroll", 1), native=params.get("native", False),
                   threads=params.get("threads", 1), vector=params.get("vector", -1),
                   accumulate=params.get("accumulate", False), interchange=tuple(params.get("interchange", ())),
                   pack=params.get("pack", False))

    def apply(self, loops: ModuleOp) -> ModuleOp:
        """A clone of the loop-level module with the schedule applied."""
        from loom.dialects import context

        module, ctx = loops.clone(), context()
        with _quiet_remarks():  # a knob that does not apply (e.g. threads on a reduction loop) is not news here
            self._apply(module, ctx)
        return module

    def _apply(self, module: ModuleOp, ctx) -> None:
        from loom.passes.arith_contract_fma import ArithContractFmaPass
        from loom.passes.scf_loop_interchange import ScfLoopInterchangePass
        from loom.passes.scf_pack_reads import ScfPackReadsPass
        from loom.passes.scf_parallelize import ScfParallelizePass
        from loom.passes.scf_register_accumulate import ScfRegisterAccumulatePass
        from loom.passes.scf_tile_and_interchange import ScfTileAndInterchangePass
        from loom.passes.scf_unroll import ScfUnrollPass
        from loom.passes.scf_vector_hint import ScfVectorHintPass

        if self.order and list(self.order) != sorted(self.order):
            ScfLoopInterchangePass(permutation=self.order).apply(ctx, module)
        if any(self.tiles):
            ScfTileAndInterchangePass(tile_sizes=self.tiles, interchange=self.interchange).apply(ctx, module)
        if self.threads > 1:  # before packing and accumulating, whose copies it cannot prove independent
            ScfParallelizePass().apply(ctx, module)
        if self.pack:
            ScfPackReadsPass().apply(ctx, module)
        if self.accumulate:
            ScfRegisterAccumulatePass().apply(ctx, module)
        if self.unroll > 1:
            ScfUnrollPass(factor=self.unroll).apply(ctx, module)
        if self.native and self.vector >= 0:
            ScfVectorHintPass(width=self.vector).apply(ctx, module)
        if self.native:  # FMA instructions exist only in native code: elsewhere fmaf is a library call
            ArithContractFmaPass().apply(ctx, module)


@contextlib.contextmanager
def _quiet_remarks():
    logger = logging.getLogger("loom.passes")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def outer_nest(loops: ModuleOp, function: str) -> list[scf.ForOp]:
    """The deepest perfect nest at the start of ``function``'s first outermost loop."""
    fn = next((f for f in loops.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == function), None)
    if fn is None:
        raise LoomError(f"no function @{function} in the module")
    root = next((op for op in fn.body.block.ops if isinstance(op, scf.ForOp)), None)
    if root is None:
        # callers pass the module lowered to loops: no loop here means the kernel itself has none
        raise LoomError(f"@{function} has no loops to tune: the CPU schedules (loop order, tiles, unrolling, "
                        "threads) apply to a kernel's outermost loop nest, and this kernel is straight-line code")
    return _deepest_band(root)


def cpu_space(loops: ModuleOp, function: str, *, max_threads: int | None = None) -> Space:
    """The schedule choices for the outermost nest of ``function``: loop orders, per-loop tile sizes
    no larger than the loop's static trip count, unroll factors, native code, thread counts."""
    nest = outer_nest(loops, function)
    depth = len(nest)
    kernels = micro_kernel_orders(nest)
    orders = kernels + [o for o in itertools.islice(itertools.permutations(range(depth)), MAX_ORDERS)
                        if o not in kernels]
    choices: dict[str, Choice] = {"order": Choice(tuple(orders))}
    trips = [_trip_count(loop) for loop in nest]
    for k in range(depth):
        # the tile of position k after reordering can be any loop: bound by the largest trip count
        limit = max((t for t in trips if t is not None), default=None)
        choices[f"tile{k}"] = Choice(tuple(t for t in TILE_CHOICES if limit is None or t < limit))
    # tile-loop orders: the last (up to) three positions permuted, e.g. matmul's k, j, i tile loops
    # around k, i, j point loops, which packs B's k x j panel once for all i tiles; and the last first
    tail = min(3, depth)
    interchanges = [tuple(range(depth - tail)) + tuple(p) for p in itertools.permutations(range(depth - tail, depth))]
    choices["interchange"] = Choice(tuple(dict.fromkeys([*interchanges, _micro_interchange(depth, 2)])))
    choices["accumulate"] = Choice((False, True))
    choices["pack"] = Choice((False, True))
    choices["unroll"] = Choice(UNROLL_CHOICES)
    choices["native"] = Choice((False, True))
    choices["vector"] = Choice(VECTOR_CHOICES)
    cores = max_threads or os.cpu_count() or 1
    choices["threads"] = Choice(tuple(sorted({1, *(n for n in (2, 4, 8, 16) if n <= cores), cores})))
    return Space(choices)


def micro_kernel_points(loops: ModuleOp, function: str, space: Space) -> list[dict]:
    """Register-blocked micro-kernel schedules of the nest, as points of ``space`` (the tuner tries
    them first): each micro-kernel order, reduction loops longer than 256 tiled by 256, the
    innermost output loop tiled by 16 and the other inner output loop by 4 (when longer), their tile
    loops swapped (so a packed panel of an operand they do not both index is reused), accumulation
    in registers, packing, native code with 8-lane vectors; one thread and every core (then the
    innermost output loop's tile loop is outermost, for ``scf-parallelize``)."""
    nest = outer_nest(loops, function)
    trips = [_trip_count(loop) for loop in nest]
    depth = len(nest)
    outputs = _output_loops(nest)
    points = []
    for n, order in enumerate(micro_kernel_orders(nest)):
        inner = depth - (1 if n == 0 else 2)  # the first order has one output loop inside, the others two
        tiles = [_micro_tile(position, loop, depth, inner, outputs, trips) for position, loop in enumerate(order)]
        for threads in sorted({min(space.choices["threads"].values), max(space.choices["threads"].values)}):
            point = {"order": order, **{f"tile{k}": t for k, t in enumerate(_threaded(tiles, order, outputs, threads))},
                     "interchange": _micro_interchange(depth, threads),
                     "accumulate": True, "pack": True, "unroll": 1, "native": True, "vector": 8, "threads": threads}
            try:
                points.append(space.check(point))
            except LoomError:
                continue  # a value this space does not offer (e.g. a tile larger than every loop)
    return points


def default_micro_kernel(loops: ModuleOp, function: str, threads: int = 1) -> CpuSchedule | None:
    """The untuned register-blocked schedule of ``function``'s deepest outermost nest (its matrix
    product or convolution, next to shallower fill/bias/pad nests that the schedule's passes leave
    alone): the micro-kernel order with two output loops inside the reduction and the tile sizes
    of ``micro_kernel_points``; with ``threads > 1`` the innermost output loop's tile loop is
    outermost, for ``scf-parallelize``. None when the nest has no reduction loop."""
    fn = next((f for f in loops.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == function), None)
    if fn is None:
        raise LoomError(f"no function @{function} in the module")
    nests = [_deepest_band(op) for op in fn.body.block.ops if isinstance(op, scf.ForOp)]
    if not nests:
        return None
    nest = max(nests, key=len)
    if sum(len(n) == len(nest) for n in nests) > 1:
        return None  # two nests of that depth: the passes would reorder both
    depth, trips, outputs = len(nest), [_trip_count(loop) for loop in nest], _output_loops(nest)
    orders = micro_kernel_orders(nest)
    if not orders:
        return None
    # the pair with the longest other output loop (more rows of the tile to fill), else one loop inside
    pairs = orders[1:]
    order = max(pairs, key=lambda o: trips[o[-2]] or 0) if pairs else orders[0]
    inner = depth - (2 if pairs else 1)
    tiles = [_micro_tile(position, loop, depth, inner, outputs, trips) for position, loop in enumerate(order)]
    interchange = _micro_interchange(depth, threads)
    return CpuSchedule(order=order, tiles=tuple(_threaded(tiles, order, outputs, threads)), interchange=interchange, accumulate=True, pack=True,
                       native=True, vector=8, threads=threads)


def _threaded(tiles: list[int], order: tuple[int, ...], outputs: list[int], threads: int) -> list[int]:
    """With threads and an untiled innermost output loop, reduction loops stay untiled too: the
    outermost tile loop is then an output loop's, which ``scf-parallelize`` can give the threads."""
    if threads == 1 or tiles[-1]:
        return tiles
    return [0 if loop not in outputs else t for loop, t in zip(order, tiles)]


def _micro_interchange(depth: int, threads: int) -> tuple[int, ...]:
    """The tile-loop order of a micro-kernel schedule."""
    if depth < 2:
        return tuple(range(depth))
    if threads > 1:  # the innermost output loop's tiles first: an independent loop for the threads
        return (depth - 1, *range(depth - 1))
    return (*range(depth - 2), depth - 1, depth - 2)  # inside the other inner output loop's: a packed panel serves them all


def _micro_tile(position: int, loop: int, depth: int, inner: int, outputs: list[int], trips: list) -> int:
    """Tile size at ``position`` (of loop ``loop``): for the innermost output loop 16, or 8 when that
    divides the loop and 16 does not, or the whole loop up to 32 (partial tiles run the slow original
    nest: a 56-wide row tiled by 16 would spend a quarter of its time there); 4 for the other inner
    output loop, 256 for reduction loops, untiled outer output loops and loops no longer than their tile."""
    trip = trips[loop]
    if position == depth - 1:
        if trip is None:
            return 16
        return 0 if trip <= 32 else 8 if trip % 16 and not trip % 8 else 16
    want = 4 if position >= inner else 0 if loop in outputs else 256
    return want if trip is None or trip > want else 0


def _deepest_band(root: scf.ForOp) -> list[scf.ForOp]:
    depth, band = 1, [root]
    while not isinstance(deeper := perfect_band(root, depth + 1), str):
        depth, band = depth + 1, deeper
    return band


def micro_kernel_orders(nest: list[scf.ForOp]) -> list[tuple[int, ...]]:
    """Loop orders with the reduction loops (whose induction variables do not index what the
    innermost body stores) moved inside the output loops, except the innermost output loop alone or
    with one other output loop: the shapes in which ``scf-register-accumulate`` keeps a small output
    tile in registers while the reduction runs (BLAS's micro-kernel: ``k, i, j`` for a matmul)."""
    output = _output_loops(nest)
    reduction = [k for k in range(len(nest)) if k not in output]
    if not output or not reduction:
        return []
    last = output[-1]
    inner_sets = [[last]] + [[k, last] for k in output[:-1]]
    return [tuple([k for k in output if k not in inner] + reduction + inner) for inner in inner_sets]


def _output_loops(nest: list[scf.ForOp]) -> list[int]:
    """Positions of the loops whose induction variables index what the innermost body stores."""
    stored = {v for op in nest[-1].body.block.ops if isinstance(op, memref.StoreOp) for v in op.indices}
    return [k for k, loop in enumerate(nest) if loop.body.block.args[0] in stored]


def _trip_count(loop: scf.ForOp) -> int | None:
    lb, ub, step = constant_int(loop.lb), constant_int(loop.ub), constant_int(loop.step)
    if None in (lb, ub, step) or step <= 0:  # type: ignore[operator]
        return None
    return max(0, -(-(ub - lb) // step))  # type: ignore[operator]
