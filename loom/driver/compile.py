"""Host-driver generation for AXI accelerators (AXI4MLIR flow): linalg in, C driver out.

    drv = compile_driver(kernel, "loom/examples/accelerators/matmul_v3.json", "v3_16", "As")
    drv.stages            # [(stage name, pipeline text, IR text)], input to runtime calls
    drv.c_source          # the C driver (extern calls into loom/runtime/dma_runtime.h)
    drv.summary           # matched op, tiles, permutation, placement (str(summary) is a report)
    drv.summary.expected_transfers({"m": 128, "n": 128, "k": 128})
    drv(A, B, C)          # runs on the simulator (C += A.B in place); drv.last_run: trace counters

A kernel whose op sits in ``scf.for`` loops marked ``#accel.loop<batch "b">`` (independent
problems, e.g. ``loom.models.offload.batch_matmul_module``) runs them all in one DMA session:
``drv.batch_dims`` leading axes of every array are the batch, the summary is one problem's.

``kernel``: an xDSL ``ModuleOp`` or ``FuncOp`` holding a linalg op on memrefs, or a
``@loom.kernel`` (anything with ``.module``). Dynamic shapes are welcome: one
compiled driver then serves every problem size. Stages (each a pass pipeline, see
``loom/passes``)::

    generalized  linalg-generalize-named-ops
    annotated    convert-linalg-to-accel{accel-file=.. accelerator=.. flow=..}
    tiled        accel-tile
    placed       accel-place-flow,dce
    [coalesced   accel-coalesce{..}]
    runtime      convert-accel-to-runtime,dce[,dma-inline-copies,dma-inline-deferred-recvs]

The stages hand over nothing but the IR (``loom/accel/FORMAT.md``, "The IR between
the stages"): ``stage_files(drv)`` gives the files ``loom accel compile -o`` writes,
``stage_pipelines(...)`` the pipelines, and any stage file parsed with
``loom.dialects.context()`` continues through the remaining pipelines to the same
IR and C. The summary and ``drv.accelerator`` are read from the annotated IR.

Ops on several accelerators of one description (``assign``, ``loom.driver.devices``) make one driver
whose ops each run on their own device (``drv.devices``, ``drv.last_run.devices``); ``host_ops=True``
lowers the ops no accelerator takes to host loops (a last stage, ``host``).

The C backend compiles the last stage and links it against the runtime shared
library (``loom.runtime.build_library``: runtime + simulator models), so drivers
and Python share one runtime instance. Errors are ``LoomError``: no accelerator
matches (each op's first difference is named), unknown accelerator or flow, data
type mismatch, problem arrays of the wrong shape.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from math import ceil, prod
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from loom.accel.description import AcceleratorDescription, load_description
from loom.accel.matching import describe_op, linear_form
from loom.accel.opcodes import Recv, Send
from loom.accel.timing import timing_config
from loom.core.affine import Affine
from loom.runtime.timing import TimingReport, configure_timing, timing_report
from loom.accel.tiling import choose_cache_tiles
from loom.accel.validate import FlowPlacement, place_flow
from loom.errors import LoomError

if TYPE_CHECKING:
    from loom.runtime.models import RuntimeModel

# importing registers the passes by name
import loom.passes.accel_place_flow  # noqa: F401,E402
import loom.passes.accel_tile  # noqa: F401,E402
import loom.passes.convert_accel_to_runtime  # noqa: F401,E402
import loom.passes.convert_linalg_to_accel  # noqa: F401,E402
import loom.passes.convert_linalg_to_loops  # noqa: F401,E402
import loom.passes.accel_coalesce  # noqa: F401,E402
import loom.passes.dma_inline_copies  # noqa: F401,E402
import loom.passes.dma_inline_deferred_recvs  # noqa: F401,E402
from loom.dialects import context  # noqa: E402
from loom.passes import Pipeline  # noqa: E402
from loom.passes.pipeline import option_string  # noqa: E402
from loom.passes.accel_ir import ACCELERATOR, PLAN, plan_of, system_of  # noqa: E402


# ------------------------------------------------------------------------------ summary
@dataclass(frozen=True)
class Transfers:
    """Transfer counts of one run: transactions, words per direction, words per operand."""

    sends: int
    recvs: int
    words_sent: int
    words_received: int
    operand_words_sent: dict[str, int]
    operand_words_received: dict[str, int]

    def __add__(self, other: "Transfers") -> "Transfers":
        def merged(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            return {n: a.get(n, 0) + b.get(n, 0) for n in {**a, **b}}
        return Transfers(self.sends + other.sends, self.recvs + other.recvs, self.words_sent + other.words_sent,
                         self.words_received + other.words_received,
                         merged(self.operand_words_sent, other.operand_words_sent),
                         merged(self.operand_words_received, other.operand_words_received))

    def operand_bytes(self, word_bytes: int = 4) -> dict[str, int]:
        names = {*self.operand_words_sent, *self.operand_words_received}
        return {n: word_bytes * (self.operand_words_sent.get(n, 0) + self.operand_words_received.get(n, 0))
                for n in sorted(names)}


@dataclass(frozen=True)
class DriverSummary:
    accelerator: str
    flow: str
    matched_op: str
    dims: tuple[str, ...]
    tile_sizes: dict[str, int]  # 0 = "full"
    cache_tiles: dict[str, int]  # outer tiles of the free dims (empty: none)
    cache_note: str
    loop_order: tuple[str, ...]  # tile loops, outer first
    placement: FlowPlacement
    subscripts: tuple[tuple[tuple[dict[str, int], int], ...], ...]  # per operand, per subscript: terms, const
    operand_names: tuple[str, ...]
    static_extents: dict[str, int] = field(default_factory=dict)  # loop extents the op's types fix

    def unpaddable_window(self, problem: Mapping[str, int]) -> str | None:
        """Why a call of this size cannot run, or None: a window subscript (``ow + fw``) over a tiled dim
        whose extent is not a multiple of its tile and a ``"full"`` dim of dynamic extent. The edge
        window is then shorter than the accelerator's (tow + Fw - 1) and the staging block cannot be
        padded to a size the IR does not know (with static shapes accel-place-flow pads it)."""
        for n, subs in enumerate(self.subscripts):
            for k, (terms, const) in enumerate(subs):
                if len(terms) < 2:
                    continue
                full = [d for d in terms if not self.tile_sizes.get(d) and d not in self.static_extents]
                partial = [d for d in terms if self.tile_sizes.get(d) and d in problem
                           and problem[d] % self.tile_sizes[d]]
                if full and partial:
                    written = str(Affine(terms, const))  # as the description wrote it: 2 * oh + 2 * fh
                    return (f"operand {self.operand_names[n]} (subscript {k}: {written}) is a window over tiled "
                            f"{', '.join(f'{d}={problem[d]} (tile {self.tile_sizes[d]})' for d in partial)} and "
                            f"\"full\" {', '.join(full)} of dynamic size: the edge tiles' windows cannot be padded "
                            f"to the accelerator's; use sizes that are multiples of the tile, or compile the kernel "
                            f"with static shapes (then the driver pads them)")
        return None

    def expected_transfers(self, problem: Mapping[str, int]) -> Transfers:
        """The analytic count for a problem size: every opcode runs once per iteration of the
        tile loops enclosing its level (ceil(D / T) each); a tile moves its padded size."""
        loops = self.placement.tile_loops
        sends = recvs = ws = wr = 0
        per_sent: dict[str, int] = {}
        per_recv: dict[str, int] = {}
        for placed in (*self.placement.init, *self.placement.opcodes):
            count = prod(ceil(problem[d] / self.tile_sizes[d]) for d in loops[:placed.level])
            words_s = words_r = 0
            for pa in placed.actions:
                if isinstance(pa.action, (Send, Recv)):
                    n = pa.action.operand
                    w = self._tile_words(n, loops[:placed.level], problem)
                    name = self.operand_names[n]
                    if isinstance(pa.action, Recv):
                        words_r += w
                        per_recv[name] = per_recv.get(name, 0) + count * w
                    else:
                        words_s += w
                        per_sent[name] = per_sent.get(name, 0) + count * w
                else:
                    words_s += 1
            has_send = any(not isinstance(pa.action, Recv) for pa in placed.actions)
            has_recv = any(isinstance(pa.action, Recv) for pa in placed.actions)
            sends += count * has_send
            recvs += count * has_recv
            ws += count * words_s
            wr += count * words_r
        # as the runtime's tally: an operand no word of which moved (an empty dim) is not listed
        return Transfers(sends, recvs, ws, wr, {n: w for n, w in per_sent.items() if w},
                         {n: w for n, w in per_recv.items() if w})

    def opcode_words(self, problem: Mapping[str, int]) -> list[tuple[str, int | None, int | None]]:
        """(opcode id, words it sends, words it receives) in one transaction each way, init opcodes
        first; None where the count needs a dim ``problem`` does not give (a ``"full"`` tile)."""
        loops = self.placement.tile_loops
        out = []
        for placed in (*self.placement.init, *self.placement.opcodes):
            sent: int | None = 0
            received: int | None = 0
            for pa in placed.actions:
                is_recv = isinstance(pa.action, Recv)
                try:
                    w = self._tile_words(pa.action.operand, loops[:placed.level], problem) \
                        if isinstance(pa.action, (Send, Recv)) else 1
                except KeyError:
                    w = None
                if is_recv:
                    received = None if received is None or w is None else received + w
                else:
                    sent = None if sent is None or w is None else sent + w
            out.append((placed.id, sent, received))
        return out

    def problem_dims(self, shapes: Sequence[Sequence[int]]) -> dict[str, int]:
        """Loop extents from operand shapes (dims indexed alone by some operand)."""
        dims: dict[str, int] = {}
        for shape, subs in zip(shapes, self.subscripts):
            for k, (terms, const) in enumerate(subs):
                if len(terms) == 1 and next(iter(terms.values())) == 1 and not const:
                    dims.setdefault(next(iter(terms)), int(shape[k]))
        return dims

    def _tile_words(self, n: int, enclosing: Sequence[str], problem: Mapping[str, int]) -> int:
        words = 1
        for terms, _ in self.subscripts[n]:
            def extent(d: str) -> int:
                return self.tile_sizes[d] if d in enclosing and self.tile_sizes[d] else problem[d]
            if len(terms) == 1 and next(iter(terms.values())) == 1:
                words *= extent(next(iter(terms)))
            else:
                words *= 1 + sum(abs(c) * (extent(d) - 1) for d, c in terms.items())
        return words

    def __str__(self) -> str:
        lines = [f"accelerator {self.accelerator}, flow {self.flow}",
                 f"matched: {self.matched_op}",
                 "tiles: " + ", ".join(f"{d}={t if t else 'full'}" for d, t in self.tile_sizes.items()),
                 "cache tiles: " + (", ".join(f"{d}={t}" for d, t in self.cache_tiles.items()) or "none")
                 + f" ({self.cache_note})",
                 "tile loop order (permutation): " + ", ".join(self.loop_order),
                 "placement:"]
        for p in (*self.placement.init, *self.placement.opcodes):
            inside = ", ".join(self.loop_order[:p.level])
            where = f"inside {inside}" if inside else "outside all loops"
            kind = "init" if p in self.placement.init else p.position
            lines.append(f"  {p.id:<10} level {p.level} ({kind}; {where})")
        return "\n".join(lines)


@dataclass
class RunStats:
    seconds: float
    transfers: Transfers
    timing: "TimingReport | None" = None  # the system timing model's report (loom.accel.timing)
    model_cycles: int | None = None  # accelerator cycles the model reported (loom_model_cycles; RTL models)
    # a driver over several accelerators: each one's own (sessions in program order; empty otherwise)
    devices: dict[str, "RunStats"] = field(default_factory=dict)
    sessions: int = 0  # DMA sessions (dma_init .. dma_free) the device opened (per-device stats only)
    # words (sent, received) per function argument, by the argument's name: what a report names operands by
    # (``transfers`` is keyed by accelerator operand role, which two ops, or two accelerators, share)
    argument_words: dict[str, tuple[int, int]] = field(default_factory=dict)


def argument_words(lib: Any, names: Sequence[str], arrays: Sequence[Any]) -> dict[str, tuple[int, int]]:
    """The runtime's per-pointer tally of the last call, per argument that moved words (an array passed
    twice counts once)."""
    seen: set[int] = set()
    words: dict[str, tuple[int, int]] = {}
    for name, arr in zip(names, arrays):
        ptr = arr.ctypes.data if isinstance(arr, np.ndarray) else None
        if ptr is None or ptr in seen:
            continue
        seen.add(ptr)
        moved = (lib.loom_operand_tally(ptr, 0), lib.loom_operand_tally(ptr, 1))
        if any(moved):
            words[name] = moved
    return words


# ------------------------------------------------------------------------------ driver
@dataclass
class AccelDriver:
    func_name: str
    accelerator: AcceleratorDescription
    summary: DriverSummary
    stages: list[tuple[str, str, str]]  # (name, pipeline, IR text)
    c_source: str
    compiled: Any  # loom.backends.c.CompiledModule
    compile_seconds: float
    last_run: RunStats | None = field(default=None)
    # the timing model's constants for runs (None: the description's, ``timing_config``); benchmarks
    # set a changed copy to sweep a constant (``dataclasses.replace(timing_config(acc), ...)``)
    timing: Any = field(default=None, compare=False)
    # leading axes of every array that ``#accel.loop<batch>`` loops iterate (independent problems in one
    # DMA session): the summary describes one problem, the arrays' trailing axes
    batch_dims: int = 0
    # the function's arguments (what ``drv(...)`` takes) and, per offloaded op (``summaries``, in program
    # order; ``summary`` is the first), the argument each of its operands is (-1: not an argument)
    arg_names: tuple[str, ...] = ()
    op_args: tuple[tuple[int, ...], ...] = ()
    summaries: tuple[DriverSummary, ...] = ()
    # per offloaded op (as ``summaries``), the accelerator that computes it; ops on several accelerators
    # make a driver over several devices (``loom.driver.devices``), each with its model in ``models``
    accelerators: tuple[AcceleratorDescription, ...] = ()
    models: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _lib: Any = field(default=None, repr=False, compare=False)  # the runtime, loaded at the first call
    model: Any = field(default=None, repr=False, compare=False)  # the RuntimeModel (resolved at compile or first call)

    @property
    def devices(self) -> tuple[str, ...]:
        """The accelerators the driver drives, in the order of their first op."""
        return tuple(dict.fromkeys(a.name for a in self.accelerators or (self.accelerator,)))

    def stage(self, name: str) -> str:
        for n, _, text in self.stages:
            if n == name:
                return text
        raise LoomError(f"no stage {name!r}; stages: {', '.join(n for n, _, _ in self.stages)}")

    def op_arrays(self, k: int, arrays: Sequence[Any]) -> list[Any] | None:
        """Offloaded op k's operands among the function's arguments, in the op's operand order
        (None when one of them is not an argument); arrays given in the op's order pass through."""
        if not self.op_args or len(arrays) != len(self.arg_names):
            return list(arrays)
        args = self.op_args[k]
        return None if min(args, default=0) < 0 else [arrays[i] for i in args]

    def problem_dims(self, arrays: Sequence[np.ndarray]) -> dict[str, int]:
        """Loop extents of one problem read from the arrays (dims indexed alone by some operand of the
        first offloaded op; the arrays are the function's arguments, in its order)."""
        ops = self.op_arrays(0, arrays)
        return self.summary.problem_dims([a.shape[self.batch_dims:] for a in (ops if ops is not None else arrays)])

    def _op_transfers(self, arrays: Sequence[Any], device: str | None):
        """(op index, summary, analytic Transfers) of every offloaded op (only those on ``device``, when given)."""
        for k, summary in enumerate(self.summaries or (self.summary,)):
            if device is not None and summary.accelerator != device:
                continue
            ops = self.op_arrays(k, arrays)
            if ops is None:
                raise LoomError(f"offloaded op {k} reads or writes memory that is not a function argument; "
                                "its transfers depend on the function's code", where=f"driver @{self.func_name}")
            yield k, summary, summary.expected_transfers(summary.problem_dims([a.shape[self.batch_dims:] for a in ops]))

    def expected_transfers(self, arrays: Sequence[np.ndarray], device: str | None = None) -> Transfers:
        """The analytic count of a call with these arrays: every offloaded op's (only those on accelerator
        ``device``, when given), added up."""
        total: Transfers | None = None
        for _, _, t in self._op_transfers(arrays, device):
            total = t if total is None else total + t
        assert total is not None
        return total

    def expected_argument_words(self, arrays: Sequence[Any], device: str | None = None) -> dict[str, tuple[int, int]]:
        """``expected_transfers`` per function argument (words sent, received), as ``RunStats.argument_words``
        counts them: each op's operand roles mapped to the arguments they are."""
        words: dict[str, tuple[int, int]] = {}
        for k, summary, t in self._op_transfers(arrays, device):
            args = self.op_args[k] if self.op_args else range(len(summary.operand_names))
            names = self.arg_names or summary.operand_names
            for role, i in zip(summary.operand_names, args):
                sent, received = words.get(names[i], (0, 0))
                moved = (sent + t.operand_words_sent.get(role, 0), received + t.operand_words_received.get(role, 0))
                if any(moved):
                    words[names[i]] = moved
        return words

    def arg_subscripts(self, arg: int):
        """How the first offloaded op using function argument ``arg`` indexes it (per axis: terms, const),
        or None when no offloaded op uses it."""
        if not self.op_args:
            return self.summary.subscripts[arg] if arg < len(self.summary.subscripts) else None
        for summary, args in zip(self.summaries, self.op_args):
            if arg in args:
                return summary.subscripts[args.index(arg)]
        return None

    def _arg_roles(self) -> list[str | None]:
        """Per function argument: the accelerator operand name it is for the first op using it."""
        if not self.op_args:
            return list(self.summary.operand_names)
        roles: list[str | None] = [None] * len(self.arg_names)
        for summary, args in zip(self.summaries, self.op_args):
            for n, i in enumerate(args):
                if i >= 0 and roles[i] is None:
                    roles[i] = summary.operand_names[n]
        return roles

    def _check_batch(self, arrays: Sequence[np.ndarray]) -> list:
        """One problem's views of the arrays (the checks of the summary's subscripts apply to them);
        the leading batch axes must agree."""
        if not self.batch_dims:
            return list(arrays)
        where = f"driver @{self.func_name}"
        lead = None
        for name, arr in zip(self.arg_names or self.summary.operand_names, arrays):
            if not isinstance(arr, np.ndarray) or arr.ndim < self.batch_dims:
                raise LoomError(f"operand {name} must be an array with {self.batch_dims} leading batch axes",
                                where=where)
            lead = arr.shape[:self.batch_dims] if lead is None else lead
            if arr.shape[:self.batch_dims] != lead:
                raise LoomError(f"operand {name} has batch axes {arr.shape[:self.batch_dims]}, the first operand "
                                f"{lead}: every operand holds the same problems", where=where)
        if 0 in (lead or ()):
            return [np.empty(a.shape[self.batch_dims:], a.dtype) for a in arrays]
        return [a[(0,) * self.batch_dims] for a in arrays]

    def __call__(self, *arrays: np.ndarray) -> RunStats:
        """Run on the simulator; outputs are updated in place (C += A.B semantics)."""
        from loom.driver.call_checks import check_driver_arrays
        from loom.runtime.build import load_library

        if self.compiled is None:
            raise LoomError("this driver was compiled with build=False (C source only); compile it with "
                            "build=True to run it", where=f"driver @{self.func_name}")
        if self.arg_names and len(arrays) != len(self.arg_names):
            raise LoomError(f"the driver takes {len(self.arg_names)} arrays (the arguments of @{self.func_name}: "
                            f"{', '.join(self.arg_names)}), got {len(arrays)}", where=f"driver @{self.func_name}")
        views = self._check_batch(arrays)
        # each offloaded op's operands are checked in the op's order, whatever the arguments' order
        for k, summary in enumerate(self.summaries or (self.summary,)):
            ops = self.op_arrays(k, views)
            if ops is not None:
                acc = self.accelerators[k] if self.accelerators else self.accelerator
                check_driver_arrays(self.func_name, self._operand_labels(k, summary), summary.subscripts, ops,
                                    outputs=acc.kernel.output_indices)
                problem = summary.problem_dims([a.shape for a in ops])
                check_full_tiles_fit(acc, summary, problem)
                why = summary.unpaddable_window(problem)
                if why is not None:
                    raise LoomError(f"accelerator {acc.name}: {why}", where=f"driver @{self.func_name}")
        from loom.runtime.host import raise_on_error, trace_counters

        if len(self.devices) > 1:
            return self._call_devices(arrays)
        if self.model is None:  # no model in the description nor given: say what to add
            self.model = simulator_model(self.accelerator)
        if self._lib is None:  # load_library re-hashes the runtime sources: once per driver, not per call
            self._lib = load_library()
        lib = self._lib
        self.model.select(lib)
        timing = self.timing or timing_config(self.accelerator)
        configure_timing(lib, timing)
        lib.loom_dma_set_tracing(1)
        lib.loom_trace_reset()
        lib.loom_operand_tally_reset()
        fn = self.compiled.function(self.func_name)
        start = time.perf_counter()
        fn(*arrays)
        seconds = time.perf_counter() - start
        raise_on_error(lib)
        counters = trace_counters(lib)
        sent: dict[str, int] = {}
        recv: dict[str, int] = {}
        for name, arr in zip(self._arg_roles(), arrays):  # keyed by operand role, as expected_transfers
            if name is None:
                continue
            ptr = arr.ctypes.data
            s, r = lib.loom_operand_tally(ptr, 0), lib.loom_operand_tally(ptr, 1)
            if s:
                sent[name] = sent.get(name, 0) + s
            if r:
                recv[name] = recv.get(name, 0) + r
        lib.loom_dma_set_tracing(0)
        transfers = Transfers(counters["sends"], counters["recvs"], counters["words_sent"],
                              counters["words_received"], sent, recv)
        cycles = lib.loom_sim_model_cycles()
        self.last_run = RunStats(seconds, transfers, timing_report(lib, timing), cycles if cycles >= 0 else None,
                                 argument_words=argument_words(lib, self.arg_names or self.summary.operand_names,
                                                               arrays))
        return self.last_run

    def _call_devices(self, arrays: Sequence[np.ndarray]) -> RunStats:
        """A call on several simulated devices: each DMA session runs on the device at its address."""
        from loom.driver.devices import run_on_devices

        if self._lib is None:
            from loom.runtime.build import load_library
            self._lib = load_library()
        self.last_run = run_on_devices(self, self._lib, arrays)
        return self.last_run

    def argument_roles(self) -> dict[str, list[str]]:
        """Per function argument an offloaded op uses, the accelerator operand names it is used as (op order,
        each once): a report names an operand by the argument and the role in parentheses."""
        if not self.op_args:
            return {n: [n] for n in self.summary.operand_names}
        roles: dict[str, list[str]] = {}
        for summary, args in zip(self.summaries, self.op_args):
            for role, i in zip(summary.operand_names, args):
                if i >= 0 and role not in roles.setdefault(self.arg_names[i], []):
                    roles[self.arg_names[i]].append(role)
        return roles

    def uncounted_operands(self) -> list[str]:
        """Operands of offloaded ops that are buffers of the function, not arguments: the per-argument tally
        cannot see them (``operand A of offloaded op 2 (v3_16)``)."""
        return [f"operand {role} of offloaded op {k + 1} ({summary.accelerator})"
                for k, (summary, args) in enumerate(zip(self.summaries, self.op_args))
                for role, i in zip(summary.operand_names, args) if i < 0]

    def _operand_labels(self, k: int, summary: DriverSummary) -> list[str]:
        """Operand names for messages: the accelerator's, with the argument when it is not in that position."""
        if not self.op_args:
            return list(summary.operand_names)
        return [name if i in (n, -1) else f"{name} (argument {i} {self.arg_names[i]})"
                for n, (name, i) in enumerate(zip(summary.operand_names, self.op_args[k]))]


def check_staging(acc: AcceleratorDescription, summary: DriverSummary, problem: Mapping[str, int],
                  double_buffer: bool = False, filename: str | None = None) -> None:
    """Every opcode's transaction fits the DMA staging buffers (one half of the input buffer when
    double-buffered: the host stages the next transaction in the other half). Opcodes whose size
    depends on dims ``problem`` does not give are left to the runtime."""
    capacity = acc.dma.input_words // (2 if double_buffer else 1)
    buffer = (f"with double buffering each half of the DMA input buffer holds {capacity} words "
              f"(input_size {acc.dma.input_size} bytes / 2)" if double_buffer else
              f"the DMA input buffer holds {capacity} words (input_size {acc.dma.input_size} bytes)")
    full = [d for d in summary.dims if not summary.tile_sizes.get(d) and d in problem]
    shape = ", ".join(f"{d}={problem[d]}" for d in full)
    fix = f" (the \"full\" dims span the problem: {shape})" if shape else ""
    remedies = [*(["smaller flexible tiles"] if any(t.kind == "flexible" for t in acc.tiles.tiles) else []),
                *([f"a smaller {', '.join(full)}"] if full else [])]
    check_full_tiles_fit(acc, summary, problem, filename)
    for opcode, sent, received in summary.opcode_words(problem):
        if sent is not None and sent > capacity:
            raise LoomError(f"accelerator {acc.name}, flow {summary.flow}: opcode {opcode!r} sends {sent} words in "
                            f"one transaction{fix}, but {buffer}; use "
                            + ", ".join([*remedies, "a larger dma.input_size"])
                            + (", or no double buffering" if double_buffer else ""),
                            where=acc.path("dma.input_size"), filename=filename or acc.filename)
        if received is not None and received > acc.dma.output_words:
            raise LoomError(f"accelerator {acc.name}, flow {summary.flow}: opcode {opcode!r} receives {received} "
                            f"words in one transaction{fix}, but the DMA output buffer holds {acc.dma.output_words} "
                            f"words (output_size {acc.dma.output_size} bytes); use "
                            + ", ".join([*remedies, "a larger dma.output_size"]),
                            where=acc.path("dma.output_size"), filename=filename or acc.filename)


def check_full_tiles_fit(acc: AcceleratorDescription, summary: DriverSummary, problem: Mapping[str, int],
                         filename: str | None = None) -> None:
    """Each operand tile that spans a ``"full"`` dim fits the accelerator's ``buffers`` at this problem size
    (tiles of fixed sizes were checked when the description was loaded); dims ``problem`` does not give
    are left to the call (``AccelDriver.__call__`` checks again with the arrays' sizes)."""
    full = [d for d in summary.dims if not summary.tile_sizes.get(d)]
    if not full or not acc.buffers:
        return
    tiled = [d for d in summary.dims if summary.tile_sizes.get(d)]
    for name, capacity in acc.buffers:
        n = summary.operand_names.index(name)
        uses = {d for terms, _ in summary.subscripts[n] for d in terms}
        spans = [d for d in full if d in uses]
        if not spans or any(d not in problem for d in spans):
            continue
        words = summary._tile_words(n, tiled, problem)
        if words > capacity:
            given = ", ".join(f"{d}={problem[d]}" for d in spans)
            raise LoomError(f"accelerator {acc.name}: a tile of {name} spans the \"full\" dims ({given}) and holds "
                            f"{words} elements, but the accelerator's {name} buffer holds {capacity}; use a smaller "
                            f"{', '.join(spans)} or a larger buffers.{name}", where=acc.path(f"buffers.{name}"),
                            filename=filename or acc.filename)


def _check_generic_subscripts(acc: AcceleratorDescription, summaries: Sequence[DriverSummary], path: str) -> None:
    """The generic model computes the kernel as described; an op matched with other coefficients (a
    strided convolution on a stride-1 kernel: the host sends strided windows) cannot run on it."""
    for summary in summaries:
        for op, subs in zip(acc.operands, summary.subscripts):
            for k, ((terms, const), sub) in enumerate(zip(subs, op.subscripts)):
                if dict(terms) == dict(sub.terms) and const == sub.const:
                    continue
                written = " + ".join(f"{c}*{d}" if c != 1 else d for d, c in terms.items())
                raise LoomError(
                    f"accelerator {acc.name}: the matched op indexes operand {op.name} (subscript {k}) as {written}, "
                    f"the kernel as {sub}: a strided op sends strided windows, which the generic model (it computes "
                    f"the kernel as described) cannot simulate; write the stride into kernel.indexing_maps "
                    f"(\"{written.replace('*', ' * ')}\"), use stride 1, or a model that takes the stride "
                    "(builtin:conv2d, a Python or C model)", where=acc.path("model"), filename=path)


def simulator_model(acc: AcceleratorDescription, override: Any = None) -> "RuntimeModel":
    """The behaviour model that simulates ``acc`` (``loom.runtime.models.model_for``): the ``model``
    argument, else the description's ``"model"``; none is a LoomError saying what to add."""
    from loom.runtime.models import model_for
    return model_for(acc, override)


def _as_module(kernel: Any) -> tuple[ModuleOp, str | None]:
    if isinstance(kernel, ModuleOp):
        return kernel.clone(), None
    if isinstance(kernel, func.FuncOp):
        return ModuleOp([kernel.clone()]), kernel.sym_name.data
    module = getattr(kernel, "module", None)
    if isinstance(module, ModuleOp):
        return module.clone(), getattr(kernel, "name", None)
    raise LoomError(f"expected a ModuleOp, a FuncOp or a @loom.kernel, got {type(kernel).__name__}",
                    where="compile_driver")


def _text(module: ModuleOp) -> str:
    return str(module)


def generic_text(module: ModuleOp) -> str:
    """Generic-form text (parses in upstream mlir-opt with --allow-unregistered-dialect)."""
    import io
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def stage_pipelines(description: str, accelerator: str | None = None, flow: str | None = None, *,
                    tile_sizes: Mapping[str, int] | None = None, cache_tiling: bool = True,
                    coalesce: bool = False, coalesce_max_words: int = 0,
                    double_buffer: bool = False, inline_copies: bool = True,
                    assign: Sequence[str] = (), host_ops: bool = False) -> list[tuple[str, str]]:
    """The driver's stages as (stage name, pass pipeline), in order. Only the ``annotated``
    stage reads the description file; every later stage reads the IR alone. ``inline_copies``:
    full tiles and opcode words are staged by the driver's own code (``dma-inline-copies``), and
    a double-buffered driver adds its deferred receives itself (``dma-inline-deferred-recvs``).
    ``assign``: per linalg.generic, its accelerator (``*`` first match, ``-`` host); ``host_ops``: a
    last stage lowers the ops no accelerator computes to loops the driver runs on the host."""
    path = os.path.abspath(os.fspath(description))
    # quoted and escaped: a path or name may hold quotes, backslashes, braces or newlines
    options = ["accel-file=" + option_string(path, what="the description path")]
    if accelerator:
        options.append("accelerator=" + option_string(accelerator, what="the accelerator name"))
    if flow:
        options.append("flow=" + option_string(flow, what="the flow name"))
    if tile_sizes:
        system = load_description(path)
        acc0 = system.accelerator(accelerator) if accelerator else system.accelerators[0]
        missing = [d for d in tile_sizes if d not in acc0.dims]
        if missing:
            raise LoomError(f"tile size for unknown dim {missing[0]!r}; {acc0.name} has dims {', '.join(acc0.dims)}",
                            where="compile_driver")
        sizes = {**{d: (t or 0) for d, t in acc0.tiles.nominal_sizes().items()}, **tile_sizes}
        options.append("tile-sizes=" + ",".join(str(sizes[d]) for d in acc0.dims))
    if not cache_tiling:
        options.append("cache-tiling=false")
    if assign:
        options.append("assign=" + ",".join(option_string(a, what="an accelerator name") for a in assign))
    return [
        ("generalized", "linalg-generalize-named-ops"),
        ("annotated", "convert-linalg-to-accel{" + " ".join(options) + "}"),
        ("tiled", "accel-tile"),
        ("placed", "accel-place-flow,dce"),
        *([("coalesced", f"accel-coalesce{{max-words={int(coalesce_max_words)}"
                         f"{' double-buffer=true' if double_buffer else ''}}}")] if coalesce else []),
        ("runtime", ("convert-accel-to-runtime{double-buffer=true},dce" if double_buffer
                     else "convert-accel-to-runtime,dce")
                    + (",dma-inline-copies,dma-inline-deferred-recvs" if inline_copies else "")),
        *([("host", "loom-convert-linalg-to-loops")] if host_ops else []),
    ]


def compile_driver(kernel: Any, description: str | os.PathLike, accelerator: str | None = None,
                   flow: str | None = None, *, tile_sizes: Mapping[str, int] | None = None,
                   cache_tiling: bool = True, func_name: str | None = None, build: bool = True,
                   coalesce: bool = False, coalesce_max_words: int = 0,
                   double_buffer: bool | str = False, model: Any = None,
                   problem: Mapping[str, int] | None = None, inline_copies: bool = True,
                   assign: Sequence[str] | str | None = None, host_ops: bool = False) -> AccelDriver:
    """Run every stage, emit and compile the C driver. See the module docstring.

    Several accelerators (``loom.driver.devices``): with a description of several accelerators and no
    ``accelerator``, each op goes to the first that matches it, or as ``assign`` says: a list with one
    entry per linalg.generic of the kernel (textual order after generalizing: an accelerator name, ``*``
    first match, ``-`` the host), or ``"cost"`` (per op, the matching accelerator the cost model of
    ``loom.driver.autotune`` finds fastest for its static shape). The driver then drives each op on its
    own device (its model, timing and counters: ``drv.last_run.devices``). ``host_ops=True``: ops that
    no accelerator computes are lowered to loops the driver runs on the host (else they are an error).
    ``model`` may then map accelerator names to models.

    ``model``: the accelerator's behaviour model for ``drv(...)`` (a Python model class or instance,
    or a ``loom.runtime.models.RuntimeModel``), instead of the description's ``"model"``. A model
    declared either way is resolved here, so a kernel that disagrees with it fails before running.
    ``double_buffer="auto"`` (with ``flow="auto"``): the search chooses it with the flow and tiles.
    ``inline_copies=False``: every tile and opcode word goes through a runtime call (the code before
    ``dma-inline-copies``; for comparisons)."""
    start = time.perf_counter()
    path = os.path.abspath(os.fspath(description))
    if double_buffer == "auto" and flow != "auto":
        raise LoomError("double_buffer='auto' is chosen by the search: use it with flow='auto'",
                        where="compile_driver(double_buffer='auto')")
    if double_buffer not in (True, False, "auto"):
        raise LoomError(f"double_buffer: expected True, False or 'auto', found {double_buffer!r}",
                        where="compile_driver(double_buffer)")
    if flow == "auto":  # cost-model choice of flow, flexible tiles and double buffering (loom.driver.autotune)
        from loom.driver.autotune import resolve_auto
        searched = (False, True) if double_buffer == "auto" else (bool(double_buffer),)
        accelerator, flow, auto_tiles, double_buffer = resolve_auto(kernel, path, accelerator, problem,
                                                                    double_buffer=searched)
        tile_sizes = {**auto_tiles, **(tile_sizes or {})}
    module, name = _as_module(kernel)
    _check_memref_sizes(module)
    funcs = [f for f in module.body.block.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    name = func_name or name or (funcs[0].sym_name.data if len(funcs) == 1 else None)
    if name is None:
        raise LoomError("the module has several functions; pass func_name", where="compile_driver")
    def pipelines(chosen: Sequence[str] = ()) -> list[tuple[str, str]]:
        return stage_pipelines(path, accelerator, flow, tile_sizes=tile_sizes, cache_tiling=cache_tiling,
                               coalesce=coalesce, coalesce_max_words=coalesce_max_words,
                               double_buffer=double_buffer, inline_copies=inline_copies,
                               assign=chosen, host_ops=host_ops)
    if isinstance(assign, str) and assign != "cost":
        raise LoomError(f"assign: expected 'cost' or one entry per linalg.generic, found {assign!r}",
                        where="compile_driver(assign)")
    if assign is not None and not isinstance(assign, str) and "-" in assign and not host_ops:
        raise LoomError(f"assign puts op {list(assign).index('-')} on the host ('-'): compile with host_ops=True "
                        "(the driver computes it)", where="compile_driver(assign)")
    plan = pipelines(() if assign is None or assign == "cost" else tuple(assign))
    stages = [("input", "", _text(module))]
    summary = acc = None
    summaries: tuple[DriverSummary, ...] = ()
    arg_names: tuple[str, ...] = ()
    op_args: tuple[tuple[int, ...], ...] = ()
    batch_dims = 0
    ctx = context()  # one context for all stages (building one scans the installed plugins)
    for k, (stage, text) in enumerate(plan):
        if k == 0:  # the user's input: verified first, and after every pass
            Pipeline.parse(text).run(module, ctx=ctx)
        else:  # verified once per stage (about a pass's time each in xDSL); its printed input, parsed again,
            before = stages[-1][2]  # only to name a failing pass
            Pipeline.parse(text).run_verified_once(module, lambda: Parser(ctx, before).parse_module(), ctx=ctx)
        stages.append((stage, text, _text(module)))
        if stage == "generalized" and assign == "cost":  # the choice reads the generalized ops
            from loom.driver.devices import cheapest_assignment
            plan[:] = pipelines(cheapest_assignment(module, path, bool(double_buffer)))
        if stage == "annotated":  # the summary reads the IR, as the later passes do
            summaries, op_accs = _summaries(module)
            summary, acc = summaries[0], op_accs[0]
            if not host_ops:
                _check_all_offloaded(module, name, acc, len({a.name for a in op_accs}) > 1)
            # what is static (fixed tiles, static shapes) is checked now, not when the driver runs
            for g, op_summary, op_acc in zip(_planned(module), summaries, op_accs):
                check_staging(op_acc, op_summary, _static_problem(g, op_summary), bool(double_buffer), path)
            arg_names, op_args = _operand_args(module, name)
            batch_dims = _batch_loops(module)
    assert summary is not None and acc is not None
    from loom.driver.devices import check_devices, resolve_models
    check_devices(op_accs, path)
    from loom.backends.c import compile_module, emit_c
    compiled = None
    if build:
        from loom.runtime.build import build_library
        runtime = build_library()
        compiled = compile_module(module, extra_flags=[str(runtime), f"-Wl,-rpath,{runtime.parent}"])
        c_source = compiled.c_source
    else:
        c_source = emit_c(module)
    if len({a.name for a in op_accs}) > 1:  # one model per device
        models = resolve_models(op_accs, summaries, path, model)
        return AccelDriver(name, acc, summary, stages, c_source, compiled, time.perf_counter() - start,
                           batch_dims=batch_dims, model=models[acc.name], arg_names=arg_names, op_args=op_args,
                           summaries=summaries, accelerators=op_accs, models=models)
    resolved = None
    if model is not None:
        resolved = simulator_model(acc, model)
    elif acc.model is not None:  # resolved from the file, so errors name it and the paths as written
        if acc.model.kind == "generic":
            _check_generic_subscripts(acc, summaries, path)
        resolved = simulator_model(load_description(path).accelerator(acc.name))
    return AccelDriver(name, acc, summary, stages, c_source, compiled, time.perf_counter() - start,
                       batch_dims=batch_dims, model=resolved, arg_names=arg_names, op_args=op_args,
                       summaries=summaries, accelerators=op_accs)


def _check_memref_sizes(module: ModuleOp) -> None:
    """A memref type with a negative static size (``memref<-1x4xi32>``: -1 written for ``?``) is no valid
    type; xDSL verifies it, and the tiles cut from it would get negative static strides, so the driver
    would index memory backwards. Refused before any pass runs."""
    from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType

    def bad(t) -> bool:
        return isinstance(t, MemRefType) and any(s < 0 and s != DYNAMIC_INDEX for s in t.get_shape())

    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for v in values:
            if bad(v.type):
                owner = op.sym_name.data if isinstance(op, func.FuncOp) else op.name
                raise LoomError(f"{owner}: type {v.type} has a negative size; a dynamic size is ? "
                                f"(xdsl.dialects.builtin.DYNAMIC_INDEX = {DYNAMIC_INDEX}), not -1",
                                where="compile_driver(kernel)")


def stage_files(drv: AccelDriver) -> dict[str, str]:
    """File name -> text of every stage, as ``loom accel compile -o`` writes them; each parses back
    with ``loom.dialects.context()`` and the remaining stages' pipelines continue from it."""
    files = {}
    for k, (stage, pipeline, text) in enumerate(drv.stages):
        header = f"// stage {stage}" + (f": after {pipeline}" if pipeline else "") + "\n"
        files[f"{k:02d}-{stage}.mlir"] = header + text + "\n"
    return files


def _batch_loops(module: ModuleOp) -> int:
    """How many ``#accel.loop<batch>`` loops enclose the annotated op (its arrays' leading batch axes)."""
    from xdsl.dialects import scf

    from loom.passes.accel_ir import loop_of

    g = next(g for g in module.walk() if isinstance(g, GenericOp) and PLAN in g.attributes)
    count, parent = 0, g.parent_op()
    while parent is not None:
        role = loop_of(parent) if isinstance(parent, scf.ForOp) else None
        count += role is not None and role.role.data == "batch"
        parent = parent.parent_op()
    return count


def _planned(module: ModuleOp) -> list[GenericOp]:
    return [g for g in module.walk() if isinstance(g, GenericOp) and PLAN in g.attributes]


def _check_all_offloaded(module: ModuleOp, name: str, acc: AcceleratorDescription, several: bool = False) -> None:
    """The driver is C with DMA calls: a linalg op that matched no accelerator has no code there."""
    from loom.accel.matching import match_generic

    fn = next((f for f in module.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)
    for op in fn.walk() if fn is not None else ():
        if not op.name.startswith("linalg.") or op.name in ("linalg.yield", "linalg.index") or PLAN in op.attributes:
            continue
        loc = op.location  # the kernel's source line (linalg-generalize-named-ops keeps it)
        place = dict(filename=loc.filename.data, line=loc.line.data, column=loc.column.data) \
            if isinstance(loc, FileLineColLoc) else dict(where=f"@{name}")
        what = describe_op(op) if isinstance(op, GenericOp) else op.name
        why = match_generic(op, acc) if isinstance(op, GenericOp) else "not a linalg.generic on memrefs"
        if several:  # the first accelerator's reason alone would mislead
            why = "nor any other accelerator of the driver"  # (an op assign puts on the host is refused earlier)
        raise LoomError(f"{what} does not match accelerator {acc.name} ({why}); only ops that match the "
                        f"accelerator are offloaded and the driver has no CPU code for others: move it out of "
                        f"@{name} (run it on the CPU before or after the driver), describe an accelerator "
                        "that computes it, or compile with host_ops=True (the driver computes it on the host)",
                        **place)  # type: ignore[arg-type]


def _static_problem(g: GenericOp, summary: DriverSummary) -> dict[str, int]:
    """The loop extents the op's static operand shapes give (dynamic ones left out)."""
    shapes = [v.type.get_shape() for v in (*g.inputs, *g.outputs)]  # type: ignore[attr-defined]
    return {d: v for d, v in summary.problem_dims(shapes).items() if v >= 0}


def _operand_args(module: ModuleOp, name: str) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    """Function ``name``'s argument names and, per planned op, which argument each operand is: the
    driver takes the function's arguments, in the function's order, not the op's."""
    from xdsl.dialects import memref
    from xdsl.ir import BlockArgument, OpResult

    fn = next((f for f in module.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)
    if fn is None or not fn.body.blocks:
        return (), ()
    entry = fn.body.blocks[0]
    names = tuple(a.name_hint or f"arg{i}" for i, a in enumerate(entry.args))

    def arg_of(value) -> int:
        while isinstance(value, OpResult) and isinstance(value.op, (memref.SubviewOp, memref.CastOp)):
            value = value.op.source  # a batch entry's view of an argument
        return value.index if isinstance(value, BlockArgument) and value.block is entry else -1

    ops = [g for g in _planned(module) if fn.is_ancestor(g)]
    op_args = tuple(tuple(arg_of(v) for v in (*g.inputs, *g.outputs)) for g in ops)
    # an unnamed argument (a built-in kernel's %arg0) is called by the role of the first op using it, when free
    named = list(names)
    for summary, args in zip((_summary(g)[0] for g in ops), op_args):
        for role, i in zip(summary.operand_names, args):
            if i >= 0 and not entry.args[i].name_hint and named[i] == f"arg{i}" and role not in named:
                named[i] = role
    return tuple(named), op_args


def _summaries(module: ModuleOp) -> tuple[tuple[DriverSummary, ...], tuple[AcceleratorDescription, ...]]:
    """One summary and accelerator per planned op (ops on different accelerators: one device each)."""
    pairs = [_summary(g) for g in _planned(module)]
    return tuple(s for s, _ in pairs), tuple(a for _, a in pairs)


def _summary(g: GenericOp) -> tuple[DriverSummary, AcceleratorDescription]:
    system = system_of(g)
    acc = system.accelerator(g.attributes[ACCELERATOR].accelerator.data)  # type: ignore[attr-defined]
    plan = plan_of(g)
    names = plan.dim_names
    tiles = dict(zip(names, plan.tile_sizes))
    cache = {d: t for d, t in zip(names, plan.cache_tiles) if t}
    flexible = {d: t for d, t in tiles.items() if acc.tiles[d].kind == "flexible"}
    placement = place_flow(acc, plan.flow.data, flexible or None)
    order = tuple(names[i] for i in plan.order if tiles[names[i]])
    ct = choose_cache_tiles(acc, placement, tiles, system.host)
    fitted = (f"fitted to {ct.cache}" if ct.cache else "not fitted: no host described" if system.host is None else
              "not fitted: the host lists no caches" if not system.host.caches else "fitted to no cache")
    note = (f"free dims {', '.join(ct.free_dims) or 'none'}; block {ct.block_bytes} B {fitted}; "
            f"accelerator step {ct.l1_bytes} B"
            + ("" if ct.fits_l1 is None else (" fits L1" if ct.fits_l1 else " exceeds L1")))
    subs = []
    for amap in (m.data for m in g.indexing_maps.data):
        forms = []
        for expr in amap.results:
            terms, const = linear_form(expr)  # type: ignore[misc]
            forms.append(({names[d]: c for d, c in terms.items()}, const))
        subs.append(tuple(forms))
    summary = DriverSummary(acc.name, placement.flow, describe_op(g), names, tiles, cache, note, order, placement,
                            tuple(subs), tuple(o.name for o in acc.operands))
    summary.static_extents.update(_static_problem(g, summary))
    return summary, acc


__all__ = ["compile_driver", "check_staging", "stage_pipelines", "stage_files", "AccelDriver", "DriverSummary", "Transfers", "RunStats", "simulator_model",
           "generic_text"]
