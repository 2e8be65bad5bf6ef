"""Co-simulate a streaming design's RTL with Verilator: the pipeline's output computed by the generated hardware.

``simulate_rtl(output, inputs, size)`` runs the pipeline as ``loom.streaming.simulate`` does (the host part with
the reference evaluator, one accelerator invocation per tile) and, for every invocation, drives the SystemVerilog
of ``loom.streaming.verilog`` (Verilated once per design, cached by content) with the tile's input streams,
one word per lane a cycle the design asks for it; the output image is assembled from the words the RTL
emits, so a wrong kernel, tap, schedule or counter in the RTL gives a wrong pixel. ``RtlReport`` gives the
RTL's cycles per invocation (the cycle of its last output word + 1) against the design's latency.
``write_testbench(output, inputs, size, folder)`` writes the RTL with a self-checking testbench replaying the same
invocations for any simulator (``loom.streaming.verilog_testbench``).
"""

from __future__ import annotations

import ctypes
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from loom.errors import LoomError
from loom.runtime.rtl import PREFIX, build_rtl_model
from loom.streaming.simulate import simulate
from loom.streaming.verilog import TOP, RtlDesign, design_verilog
from loom.streaming.verilog_harness import verilog_harness
from loom.streaming.verilog_io import WordOrder
from loom.streaming.verilog_testbench import verilog_testbench


class RtlReport:
    """What ``simulate_rtl`` ran: invocations, RTL cycles per invocation, the designs' Verilog."""

    def __init__(self):
        self.invocations = 0
        self.rtl_cycles: list[int] = []
        self.design_cycles: list[int] = []
        self.rtl_seconds = 0.0  # wall time in the Verilated model's runs (not the simulation around them)
        self.verilog: dict[int, str] = {}  # id(design) -> its SystemVerilog


class _RtlModel:
    def __init__(self, rtl: RtlDesign):
        self.rtl = rtl
        with tempfile.TemporaryDirectory(prefix="loom-stream-rtl-") as work:
            sv, cpp = Path(work) / f"{TOP}.sv", Path(work) / "loom_stream_harness.cpp"
            sv.write_text(rtl.verilog)
            cpp.write_text(verilog_harness(rtl))
            so = build_rtl_model([sv], TOP, harness=cpp)
        self.lib = ctypes.CDLL(str(so))
        fn = self.lib.loom_stream_run
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.POINTER(ctypes.POINTER(ctypes.c_uint64)), ctypes.POINTER(ctypes.c_int64),
                       ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_uint64), ctypes.c_int64,
                       ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
        self.run_fn = fn
        self.order = WordOrder(rtl)  # the storage index of every word the streams send and the output emits

    def run(self, buffers: dict) -> tuple[np.ndarray, int]:
        """The output stage's values over its domain for one invocation, and the RTL's cycles."""
        rtl = self.rtl
        io = self.order.invocation(buffers)
        ptrs = (ctypes.POINTER(ctypes.c_uint64) * max(len(io.streams), 1))(
            *[w.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)) for w in io.streams])
        counts = (ctypes.c_int64 * max(len(io.streams), 1))(*[rtl.stages[n].n_steps for n in rtl.streams])
        cmins = (ctypes.c_int32 * max(len(io.mins), 1))(*io.mins)
        out = rtl.stages[rtl.output]
        got = np.zeros(out.n_steps * len(out.lanes), np.uint64)
        last = ctypes.c_int64(-1)
        n = self.run_fn(ptrs, counts, cmins, got.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)), out.n_steps,
                        rtl.cycles + 64, ctypes.byref(last))
        if n != out.n_steps:
            raise LoomError(f"the RTL emitted {n} of its {out.n_steps} output steps within {rtl.cycles + 64} cycles",
                            where=f"{TOP} ({PREFIX})")
        return self.order.image(got, buffers[rtl.output].array), last.value + 1


def simulate_rtl(output, inputs: dict, size, *, design=None, ir=None, report: RtlReport | None = None) -> np.ndarray:
    """``output`` over ``size`` with every accelerator invocation run on the Verilated RTL of its design; ``ir``
    (a module or printed text, e.g. edited) is the ``ubuf`` IR the RTL is written from, as ``simulate`` takes it."""
    report = report if report is not None else RtlReport()
    models: dict = {}  # (id(design), id(ir)) -> (design, ir, _RtlModel)

    def on_tile(d, buffers, _write_times, d_ir):
        key = (id(d), id(d_ir))
        if key not in models:  # the design and its IR are kept with the model: their ids stay theirs
            rtl = design_verilog(d, d_ir)
            models[key] = (d, d_ir, _RtlModel(rtl))
            report.verilog[id(d)] = rtl.verilog
        t = time.perf_counter()
        values, cycles = models[key][2].run(buffers)
        report.rtl_seconds += time.perf_counter() - t
        report.invocations += 1
        report.rtl_cycles.append(cycles)
        report.design_cycles.append(d.latency)
        return values

    return simulate(output, inputs, size, design=design, ir=ir, on_tile=on_tile)


@dataclass
class Testbench:
    paths: dict  # file name (relative to the folder written) -> path written
    invocations: int  # tiles replayed, over every design
    cycles: int  # per invocation of the first design
    designs: list = field(default_factory=list)  # DesignTestbench per design, in the order they first ran


@dataclass
class DesignTestbench:
    folder: Path  # a self-contained testbench: the design's module, loom_stream_tb.sv and its hex files
    output: str  # the design's accelerator output
    tile: tuple  # its invocation's extents
    invocations: int
    cycles: int


def write_testbench(output, inputs: dict, size, directory, *, design=None, ir=None,
                    invocations: int | None = None) -> Testbench:
    """Write the design's SystemVerilog and a self-checking testbench (``loom.streaming.verilog_testbench``)
    replaying its first ``invocations`` tiles (all by default) to ``directory``; the expected words are the
    value simulation's (no Verilator needed). A pipeline that runs several designs (several accelerators, the
    smaller tiles of a GuardWithIf tail, tiles reading at another phase) gets one testbench per design, each
    replaying that design's own tiles, in the folders ``design<k>_<output>_<tile>`` of ``directory``."""
    if invocations is not None and (not isinstance(invocations, int) or isinstance(invocations, bool)
                                    or invocations < 1):
        raise LoomError(f"invocations must be a positive int (or None for all), got {invocations!r}",
                        where="write_testbench")
    captured: dict = {}  # (design, its IR) -> [design, IR, RTL, word order, invocations]; holds them alive (ids)

    def on_tile(d, buffers, _write_times, d_ir):
        key = (id(d), id(d_ir))
        if key not in captured:
            rtl = design_verilog(d, d_ir)
            captured[key] = [d, d_ir, rtl, WordOrder(rtl), []]
        _d, _ir, _rtl, order, words = captured[key]
        if invocations is None or len(words) < invocations:
            words.append(order.invocation(buffers, with_output=True))
        return None

    simulate(output, inputs, size, design=design, ir=ir, on_tile=on_tile)
    if not captured:
        raise LoomError("the pipeline ran no accelerator invocation to replay", where="write_testbench")
    folder, several = Path(directory), len(captured) > 1
    paths, designs = {}, []
    for k, (d, _ir, rtl, _order, words) in enumerate(captured.values()):
        tile = tuple(d.size)
        sub = f"design{k}_{rtl.output}_{'x'.join(map(str, tile))}" if several else ""
        files = {f"{TOP}.sv": rtl.verilog, **verilog_testbench(rtl, words)}
        paths.update({str(Path(sub) / name): path for name, path in _write(folder / sub, files).items()})
        designs.append(DesignTestbench(folder / sub, rtl.output, tile, len(words), rtl.cycles))
    return Testbench(paths, sum(t.invocations for t in designs), designs[0].cycles, designs)


def _write(folder: Path, files: dict) -> dict:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, text in files.items():
            (folder / name).write_text(text)
            paths[name] = folder / name
    except OSError as error:
        raise LoomError(f"cannot write the testbench: {error}", where=str(folder)) from None
    return paths


__all__ = ["simulate_rtl", "RtlReport", "write_testbench", "Testbench", "DesignTestbench"]
