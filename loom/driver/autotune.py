"""``--flow auto``: choose flow (with its permutation) and flexible tile sizes.

    best = choose(acc, {"m": 32, "n": 256, "k": 512})        # analytic, no compile
    best, trials = choose_hybrid(kernel, desc, acc, problem)  # model ranks, measurement picks
    best.candidate.flow, best.candidate.tiles, best.total_s
    ranked = exhaustive(kernel, desc, acc.name, arrays)        # compile + run every candidate

The space: every flow of the accelerator (each flow fixes its loop permutation)
times, for each flexible dim, the tiles ``multiple_of * 2**i``, the padded problem
extent and the balanced splits of the extent into 2..``SPLITS`` tiles (rounded up to
``multiple_of``: 312 -> 160, 112, 80; not only powers of two), all within ``min``/``max``,
keeping only tiles whose operand blocks fit the accelerator buffers, times double
buffering off / on when asked (``double_buffer=(False, True)``: the joint search).
Fixed and ``"full"`` dims keep their size.

The cost model of one candidate (a blocking driver, nothing overlaps):
transfers and words per transaction come from the flow placement
(``DriverSummary.expected_transfers``, exact), and

    dma      = sends+recvs transactions * latency + words / words_per_cycle   (cycles / clock)
    compute  = compute opcodes * tile MACs / ops_per_cycle                    (cycles / clock)
    host     = words copied * host_s_per_word + transactions * host_s_per_call
    total    = dma + compute + host                                          (blocking)
    total    = max(host, compute + max(sends, recvs)) + one receive          (double-buffered: the
               host stages the next transaction while the accelerator works; the modelled
               accelerator does not stream while it computes, so transfers and compute add
               up; ``sends + recvs`` instead of the max when not ``recv_overlaps_send``)

With ``timing.input_buffers >= 2`` the accelerator reads the next tile while it computes, with
``timing.output_buffers >= 2`` it computes the next result while the last one drains:
double-buffered, ``compute + max(sends, recvs)`` becomes ``max(compute + recvs, ...)``,
``max(compute + sends, ...)`` or ``max(compute, max(...))`` (and, when every compute is followed
by a receive, at least a third of host + sends + compute + receives: the host waits for receive
i when it starts send i + 2, and stages send i + 3 after that); blocking without a receive per
compute, the compute hides behind the next instruction's staging and send.

The accelerator figures come from the description's ``timing`` (when the
description has one) else from ``DEFAULT_TIMING``; the two host costs are
calibrated once per process by running one driver (``calibrate``).
The model is serial, while the runtime's timeline overlaps the accelerator's
compute with the host's staging of the next transaction, so near-ties can come out
in the wrong order. ``--flow auto`` is therefore a hybrid (``choose_hybrid``): the
model ranks every candidate (no compile), then the best ``HYBRID_TOP`` are compiled
and run on the simulator + timing model and the fastest measured one is chosen.
``measured_seconds(stats)`` is the single place that turns a run into a time:
the timing model's total when the runtime reports one (``RunStats.timing``),
else the cost model applied to the run's measured transfers plus its wall time.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from math import ceil, prod
from typing import Any, Mapping, Sequence

import numpy as np

from loom.accel.description import AcceleratorDescription
from loom.accel.tiling import accelerator_tiles
from loom.accel.timing import (DEFAULT_CLOCK_HZ, DEFAULT_DMA_LATENCY_CYCLES, DEFAULT_STREAM_WIDTH_BITS,
                               MATMUL_THROUGHPUT, timing_config)
from loom.accel.validate import place_flow
from loom.errors import LoomError


# ------------------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class CostParams:
    clock_hz: float = DEFAULT_CLOCK_HZ
    ops_per_cycle: float = float(MATMUL_THROUGHPUT[16])  # MACs per accelerator cycle
    words_per_cycle: float = DEFAULT_STREAM_WIDTH_BITS / 32  # AXI-Stream width / 32
    latency_cycles: float = float(DEFAULT_DMA_LATENCY_CYCLES)  # DMA set-up per transaction
    host_s_per_word: float = 2e-9  # staging-buffer copy, per word (calibrated)
    host_s_per_call: float = 2e-7  # runtime calls per transaction (calibrated)
    recv_overlaps_send: bool = True  # the description's timing constant
    input_buffers: int = 1  # the accelerator's input banks (timing.input_buffers)
    output_buffers: int = 1  # its result banks (timing.output_buffers)


def accelerator_params(acc: AcceleratorDescription, base: CostParams | None = None) -> CostParams:
    """Clock, throughput, stream width and DMA latency of ``acc``: the runtime timing
    model's configuration (``loom.accel.timing.timing_config``)."""
    base = base or CostParams()
    cfg = timing_config(acc)
    return replace(base, clock_hz=float(cfg.clock_hz), ops_per_cycle=float(cfg.ops_per_cycle),
                   words_per_cycle=cfg.stream_width_bits / 32, latency_cycles=float(cfg.dma_latency_cycles),
                   recv_overlaps_send=cfg.recv_overlaps_send, input_buffers=cfg.input_buffers,
                   output_buffers=cfg.output_buffers)


# ------------------------------------------------------------------------------ candidates
@dataclass(frozen=True)
class Candidate:
    flow: str
    tiles: tuple[tuple[str, int], ...]  # flexible dims only
    double_buffer: bool = False

    @property
    def tile_sizes(self) -> dict[str, int]:
        return dict(self.tiles)

    def __str__(self) -> str:
        return f"{self.flow} " + ",".join(f"{d}={t}" for d, t in self.tiles) + (" +db" if self.double_buffer else "")


@dataclass(frozen=True)
class Estimate:
    candidate: Candidate
    total_s: float
    host_s: float
    dma_s: float
    compute_s: float
    transactions: int
    words: int


# balanced splits of an extent into 2..SPLITS tiles join the powers of two
SPLITS = 4


def tile_choices(acc: AcceleratorDescription, dim: str, extent: int) -> list[int]:
    t = acc.tiles[dim]
    step = max(t.multiple_of, t.min)
    cap = min(t.max or 1 << 30, ceil(extent / t.multiple_of) * t.multiple_of)
    values = {cap} if cap >= step else {step}
    v = step
    while v <= cap:
        values.add(v)
        v *= 2
    for parts in range(2, SPLITS + 1):  # e.g. 312 in 2 tiles of 160: less padding than 2 x 256
        v = ceil(ceil(extent / parts) / t.multiple_of) * t.multiple_of
        if step <= v <= cap:
            values.add(v)
    return sorted(values)


def _fits(acc: AcceleratorDescription, tiles: Mapping[str, int]) -> bool:
    caps = dict(acc.buffers)
    for op in acc.operands:
        if op.name in caps:
            words = prod(tiles.get(s.single_var, 1) if s.single_var else 1 for s in op.subscripts)
            if words > caps[op.name]:
                return False
    return True


def candidates(acc: AcceleratorDescription, problem: Mapping[str, int],
               double_buffer: Sequence[bool] = (False,)) -> list[Candidate]:
    flexible = [t.dim for t in acc.tiles.tiles if t.kind == "flexible"]
    choices = [tile_choices(acc, d, problem[d]) for d in flexible]
    fixed = {t.dim: t.size for t in acc.tiles.tiles if t.kind == "fixed"}
    out = []
    for combo in itertools.product(*choices):
        tiles = dict(zip(flexible, combo))
        if not _fits(acc, {**fixed, **tiles}):
            continue
        for flow in acc.flows:
            for db in double_buffer:
                cand = Candidate(flow.name, tuple(tiles.items()), bool(db))
                if _fits_staging(acc, cand, problem):
                    out.append(cand)
    return out


def _fits_staging(acc: AcceleratorDescription, cand: Candidate, problem: Mapping[str, int]) -> bool:
    """Every opcode's transaction of the candidate fits the DMA staging buffers (half the input
    buffer when double-buffered): larger flexible tiles can make one overflow what the defaults fit."""
    from loom.driver.compile import check_staging

    try:
        check_staging(acc, summary_for(acc, cand), problem, cand.double_buffer)
    except LoomError:
        return False
    return True


# ------------------------------------------------------------------------------ cost model
def summary_for(acc: AcceleratorDescription, cand: Candidate):
    """A ``DriverSummary`` of a candidate, built from the description alone (no IR)."""
    from loom.driver.compile import DriverSummary

    sizes = accelerator_tiles(acc, cand.tile_sizes)  # candidates choose flexible dims only
    flexible = {d: s for d, s in sizes.items() if acc.tiles[d].kind == "flexible"}
    placement = place_flow(acc, cand.flow, flexible or None)
    subs = tuple(tuple((dict(s.terms), s.const) for s in op.subscripts) for op in acc.operands)
    return DriverSummary(acc.name, placement.flow, "", tuple(acc.dims), sizes, {}, "", placement.tile_loops,
                         placement, subs, tuple(o.name for o in acc.operands))


def _compute_tiles(summary, problem: Mapping[str, int]) -> int:
    """Compute opcodes the accelerator runs: one per innermost tile-loop iteration."""
    return prod(ceil(problem[d] / summary.tile_sizes[d]) for d in summary.placement.tile_loops)


def _compute_macs(acc, summary, problem: Mapping[str, int]) -> int:
    """MACs the accelerator performs: compute opcodes x padded tile volume."""
    full = {d: (summary.tile_sizes[d] or problem[d]) for d in summary.dims}
    return _compute_tiles(summary, problem) * prod(full[d] for d in summary.dims)


def _dma_seconds(transactions: int, words: int, params: CostParams) -> float:
    """DMA busy time: a set-up latency per transaction plus the words at the stream width."""
    return (transactions * params.latency_cycles + words / params.words_per_cycle) / params.clock_hz


def estimate(acc: AcceleratorDescription, cand: Candidate, problem: Mapping[str, int],
             params: CostParams | None = None, coalesce: bool = False) -> Estimate:
    params = params or accelerator_params(acc)
    summary = summary_for(acc, cand)
    t = summary.expected_transfers(problem)
    sends = t.sends
    if coalesce:
        from loom.passes.accel_coalesce import expected_coalesced_sends
        sends = expected_coalesced_sends(summary, problem, acc.dma.input_words)
    tx = sends + t.recvs
    words = t.words_sent + t.words_received
    send_s = _dma_seconds(sends, t.words_sent, params)
    recv_s = _dma_seconds(t.recvs, t.words_received, params)
    dma = send_s + recv_s
    compute = _compute_macs(acc, summary, problem) / params.ops_per_cycle / params.clock_hz
    host = words * params.host_s_per_word + tx * params.host_s_per_call
    tiles = _compute_tiles(summary, problem)
    # a receive after every compute: the host waits for it (blocking), or for the one before it
    # before issuing the next send (double-buffered), so the compute stays on the critical path
    recv_per_compute = t.recvs >= tiles
    if cand.double_buffer:
        channels = max(send_s, recv_s) if params.recv_overlaps_send else send_s + recv_s
        one_in, one_out = params.input_buffers == 1, params.output_buffers == 1 and t.recvs > 0
        if one_in and one_out:  # neither sends nor receives overlap a compute
            accel = compute + channels
        elif one_in:  # the accelerator does not read its stream while it computes
            accel = max(compute + send_s, channels)
        elif one_out:  # a result computes once the previous one has drained
            accel = max(compute + recv_s, channels)
        else:
            # sends stream while the accelerator computes: the busiest resource decides
            # (plus filling and draining the pipeline: the first send, the last compute)
            accel = max(compute + send_s / max(sends, 1), channels + compute / max(tiles, 1))
        if recv_per_compute and not one_in:
            # the host waits for receive i in the call that starts send i + 2, and stages send
            # i + 3 after it: three instructions share one chain of host, send, compute, receive
            accel = max(accel, (host + send_s + compute + recv_s) / 3)
        total = max(host, accel) + (recv_s / t.recvs if t.recvs else 0.0)
    elif params.input_buffers > 1 and not recv_per_compute:
        # blocking, but the next instruction's staging and send overlap the current compute
        total = dma + host + max(compute - host - send_s, compute / max(tiles, 1))
    else:
        total = dma + compute + host
    return Estimate(cand, total, host, dma, compute, tx, words)


def ranked(acc: AcceleratorDescription, problem: Mapping[str, int], params: CostParams | None = None,
           flows: Sequence[str] | None = None, double_buffer: Sequence[bool] = (False,)) -> list[Estimate]:
    """Every candidate with its modelled total time, fastest first (ties: fewer transactions)."""
    params = params or accelerator_params(acc)
    out = [estimate(acc, cand, problem, params) for cand in candidates(acc, problem, double_buffer)
           if not flows or cand.flow in flows]
    if not out:
        raise LoomError(f"--flow auto: no flow and tile sizes of {acc.name} fit the problem {dict(problem)}",
                        where="flow=auto")
    return sorted(out, key=lambda e: (e.total_s, e.transactions))


def choose(acc: AcceleratorDescription, problem: Mapping[str, int], params: CostParams | None = None,
           flows: Sequence[str] | None = None, double_buffer: Sequence[bool] = (False,)) -> Estimate:
    """The candidate with the lowest modelled total time (no compile, no run)."""
    return ranked(acc, problem, params, flows, double_buffer)[0]


# The model is serial (host + DMA + compute added up) while the timeline overlaps the
# accelerator's compute with the host's staging of the next transaction, and the host
# costs are calibrated averages: near-ties in the model can be ordered wrongly. The
# hybrid keeps the model for ranking (hundreds of candidates, no compile) and lets a
# measurement on the simulator + timing model pick among the few best (cheap).
HYBRID_TOP = 4
HYBRID_REPEATS = 3
# host time is measured: a candidate overrides the model's first choice only when it is
# measured faster by more than this fraction (else noise would decide)
HYBRID_MARGIN = 0.02


def choose_hybrid(kernel: Any, description: str, acc: AcceleratorDescription, problem: Mapping[str, int],
                  arrays: Sequence[np.ndarray] | None = None, params: CostParams | None = None,
                  top: int = HYBRID_TOP, repeats: int = HYBRID_REPEATS,
                  double_buffer: Sequence[bool] = (False,)) -> tuple[Estimate, list[Trial]]:
    """Model ranks, measurement picks: the ``top`` best modelled candidates are compiled and
    run (best of ``repeats``) on ``arrays`` (default: random data of the kernel's shapes).
    Returns the chosen estimate (the fastest measured, unless it beats the model's first
    choice by less than ``HYBRID_MARGIN``: then the model's first) and the trials, fastest first."""
    if top < 1 or repeats < 1:
        raise LoomError(f"top={top}, repeats={repeats}; each must be >= 1", where="choose_hybrid")
    short = ranked(acc, problem, params, double_buffer=double_buffer)[:top]
    if arrays is None:
        arrays = _random_arrays(kernel, acc, problem)
    trials = [run_candidate(kernel, description, acc, e.candidate, arrays, repeats) for e in short]
    for t, e in zip(trials, short):
        t.estimate = e
    first = trials[0]
    trials = sorted((t for t in trials if t.seconds != float("inf")), key=lambda t: t.seconds)
    if not trials:  # nothing measurable (no trace): fall back on the model
        return short[0], []
    if first.seconds != float("inf") and trials[0].seconds >= (1 - HYBRID_MARGIN) * first.seconds:
        return short[0], trials  # not clearly faster than the model's choice
    return trials[0].estimate, trials  # type: ignore[return-value]


def _random_arrays(kernel: Any, acc: AcceleratorDescription, problem: Mapping[str, int]) -> list[np.ndarray]:
    """Random operands of the kernel's shapes; a dynamic extent is sized from ``problem`` by the
    accelerator's subscript (``oh + fh`` spans ``oh + fh - 1``)."""
    def extent(operand: int, k: int, static: int) -> int:
        if static >= 0:
            return static
        sub = acc.operands[operand].subscripts[k]
        return sub.const + 1 + sum(abs(c) * (problem[d] - 1) for d, c in sub.terms.items())

    types = _kernel_func(kernel).function_type.inputs.data
    shapes = [tuple(extent(n, k, d) for k, d in enumerate(t.get_shape())) for n, t in enumerate(types)]
    dt = np.float32 if acc.data_type == "f32" else np.int32
    rng = np.random.default_rng(0)
    return [rng.integers(-8, 8, s).astype(dt) for s in shapes]


# ------------------------------------------------------------------------------ measuring
def measured_seconds(stats: Any, acc: AcceleratorDescription | None = None,
                     params: CostParams | None = None) -> float:
    """The total time of one run: the runtime timing model when present, else a stand-in."""
    timing = getattr(stats, "timing", None)
    if timing is not None:
        return float(timing.total_s)
    params = params or (accelerator_params(acc) if acc is not None else CostParams())
    t = stats.transfers
    return float(stats.seconds) + _dma_seconds(t.sends + t.recvs, t.words_sent + t.words_received, params)


CALIBRATION_TILES, CALIBRATION_EXTENT = 8, 128  # the calibration matmul: tiles per dim, largest extent
# keyed by the accelerator and its timing constants: two descriptions may share a name
_CALIBRATED: dict[tuple[str, CostParams], CostParams] = {}


def calibrate(acc: AcceleratorDescription, description: str, params: CostParams | None = None) -> CostParams:
    """Host cost per word and per transaction, measured once per accelerator and process.

    Runs the default flow three times on a matmul of eight accelerator tiles per dim, at most 128
    (128^3 for tiles of 16 and more; an accelerator of small tiles is not run on thousands of
    transactions more than it needs, which with a Python model took seconds): the timing model's
    ``host_copy_s`` / ``host_other_s`` divided by the words / transactions moved
    (without a timing report: wall time per word, default per-call cost)."""
    params = params or accelerator_params(acc)
    key = (acc.name, params)
    if key in _CALIBRATED:
        return _CALIBRATED[key]
    if acc.kernel.name != "matmul":
        return params
    from loom.driver.compile import compile_driver
    from loom.frontends.kernel import linalg as L
    from xdsl.dialects.builtin import f32, i32

    nominal = acc.tiles.nominal_sizes()
    m, n, k = (min(CALIBRATION_EXTENT, CALIBRATION_TILES * (nominal.get(d) or CALIBRATION_EXTENT))
               for d in acc.kernel.dims)
    shapes = [(m, k), (k, n), (m, n)]
    module = L.op_module("matmul", shapes, f32 if acc.data_type == "f32" else i32, L.matmul)
    drv = compile_driver(module, description, acc.name)
    dt = np.float32 if acc.data_type == "f32" else np.int32
    arrays = [np.ones(s, dt) for s in shapes]
    samples = []
    for _ in range(3):
        stats = drv(*[a.copy() for a in arrays])
        timing = getattr(stats, "timing", None)
        t = stats.transfers
        words = t.words_sent + t.words_received
        tx = t.sends + t.recvs
        if not words or not tx:
            continue  # no trace (e.g. the runtime library was rebuilt meanwhile)
        if timing is not None:
            samples.append((timing.host_copy_s / max(words, 1), timing.host_other_s / max(tx, 1)))
        else:
            samples.append((max(stats.seconds - tx * params.host_s_per_call, 0.0) / max(words, 1),
                            params.host_s_per_call))
    if not samples:
        return params
    per_word = float(np.median([s[0] for s in samples]))
    per_call = float(np.median([s[1] for s in samples]))
    out = replace(params, host_s_per_word=per_word, host_s_per_call=per_call)
    _CALIBRATED[key] = out
    return out


@dataclass
class Trial:
    candidate: Candidate
    seconds: float
    transactions: int
    estimate: Estimate | None = field(default=None)


def run_candidate(kernel: Any, description: str, acc: AcceleratorDescription, cand: Candidate,
                  arrays: Sequence[np.ndarray], repeats: int = 1, coalesce: bool = False) -> Trial:
    """Compile the candidate, run it ``repeats`` times on copies of ``arrays``; the best time
    (host time is measured: the minimum is the run least disturbed by other work)."""
    from loom.driver.compile import compile_driver

    drv = compile_driver(kernel, description, acc.name, cand.flow, tile_sizes=cand.tile_sizes or None,
                         coalesce=coalesce, double_buffer=cand.double_buffer)
    times, tx = [], 0
    for _ in range(repeats):
        stats = drv(*[a.copy() for a in arrays])
        times.append(measured_seconds(stats, acc))
        tx = stats.transfers.sends + stats.transfers.recvs
    if tx == 0:  # no trace: the driver ran against another runtime instance (rebuilt meanwhile)
        return Trial(cand, float("inf"), 0)
    return Trial(cand, float(min(times)), tx)


def exhaustive(kernel: Any, description: str, acc: AcceleratorDescription, arrays: Sequence[np.ndarray],
               problem: Mapping[str, int], repeats: int = 1, coalesce: bool = False,
               double_buffer: Sequence[bool] = (False,)) -> list[Trial]:
    """Every candidate compiled and run; fastest first."""
    trials = [run_candidate(kernel, description, acc, c, arrays, repeats, coalesce)
              for c in candidates(acc, problem, double_buffer)]
    return sorted((t for t in trials if t.seconds != float("inf")), key=lambda t: t.seconds)


# ------------------------------------------------------------------------------ compile_driver hook
def resolve_auto(kernel: Any, description: str, accelerator: str | None,
                 problem: Mapping[str, int] | None = None, measure: bool = True,
                 double_buffer: Sequence[bool] = (False,)) -> tuple[str, str, dict[str, int], bool]:
    """(accelerator, flow, flexible tiles, double buffering) for ``flow="auto"``; the problem from
    static shapes. ``measure``: the hybrid choice (``choose_hybrid``), else the model's alone
    (``choose``). ``double_buffer``: the settings searched ((False, True): jointly)."""
    from loom.accel.description import load_description

    system = load_description(description)
    acc = system.accelerator(accelerator) if accelerator else system.accelerators[0]
    if problem is None:
        problem = _static_problem(kernel, acc)
    missing = [d for d in acc.dims if d not in problem]
    if missing:
        raise LoomError(f"flow=auto needs the problem size of dims {', '.join(missing)}: give the kernel static "
                        "shapes", where="compile_driver(flow='auto')")
    params = calibrate(acc, description) if acc.kernel.name == "matmul" else accelerator_params(acc)
    if measure:
        best, _ = choose_hybrid(kernel, description, acc, problem, params=params, double_buffer=double_buffer)
    else:
        best = choose(acc, problem, params, double_buffer=double_buffer)
    return acc.name, best.candidate.flow, best.candidate.tile_sizes, best.candidate.double_buffer


def _kernel_func(kernel: Any):
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    module = kernel if isinstance(kernel, ModuleOp) else getattr(kernel, "module", None)
    if isinstance(kernel, func.FuncOp):
        fn = kernel
    elif isinstance(module, ModuleOp):
        fns = [f for f in module.body.block.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        fn = fns[0] if fns else None
    else:
        fn = None
    if fn is None:
        raise LoomError("flow=auto: no function in the kernel", where="compile_driver(flow='auto')")
    return fn


def _static_problem(kernel: Any, acc: AcceleratorDescription) -> dict[str, int]:
    fn = _kernel_func(kernel)
    shapes = [t.get_shape() for t in fn.function_type.inputs.data]
    problem: dict[str, int] = {}
    for op, shape in zip(acc.operands, shapes):
        for sub, extent in zip(op.subscripts, shape):
            if sub.single_var and extent >= 0:
                problem.setdefault(sub.single_var, int(extent))
    return problem


__all__ = ["CostParams", "Candidate", "Estimate", "Trial", "accelerator_params", "candidates", "tile_choices",
           "summary_for", "estimate", "ranked", "choose", "choose_hybrid", "measured_seconds", "calibrate", "run_candidate", "exhaustive",
           "resolve_auto"]
