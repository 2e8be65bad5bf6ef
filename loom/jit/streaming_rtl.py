"""Co-simulate a streaming design's RTL with Verilator: the pipeline's output computed by the generated hardware.

``simulate_rtl(output, inputs, size)`` runs the pipeline as ``loom.streaming.simulate`` does (the host part with
the reference evaluator, one accelerator invocation per tile) and, for every invocation, drives the SystemVerilog
of ``loom.streaming.verilog`` (Verilated once per design, cached by content) with the tile's input streams,
one word per lane a cycle the design asks for it; the output image is assembled from the words the RTL
emits, so a wrong kernel, tap, schedule or counter in the RTL gives a wrong pixel. ``RtlReport`` gives the
RTL's cycles per invocation (the cycle of its last output word + 1) against the design's latency.
"""

from __future__ import annotations

import ctypes
import tempfile
import time
from pathlib import Path

import numpy as np

from loom.errors import LoomError
from loom.runtime.rtl import PREFIX, build_rtl_model
from loom.streaming.simulate import simulate
from loom.streaming.verilog import TOP, RtlDesign, design_verilog
from loom.streaming.verilog_harness import verilog_harness


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
        # the storage index of every word each stream sends and the output emits, in firing order (once per design)
        self.order = {name: self._storage_index(rtl.stages[name]) for name in [*rtl.streams, rtl.output]}

    @staticmethod
    def _storage_index(rs) -> tuple:
        """(which words are points of the domain, their storage index): an idle lane of a partial block is not."""
        pts = rs.write_points()
        live = rs.valid(pts)
        return live, tuple(pts[live, k] for k in reversed(range(pts.shape[1])))

    def run(self, buffers: dict) -> tuple[np.ndarray, int]:
        """The output stage's values over its domain for one invocation, and the RTL's cycles."""
        rtl = self.rtl
        words, keep = [], []
        for name in rtl.streams:
            rs = rtl.stages[name]
            live, index = self.order[name]
            w = np.zeros(len(live), np.uint64)  # an idle lane's word is 0
            w[live] = _as_words(buffers[name].array[index], rs.width)
            keep.append(w)
            words.append(rs.n_steps)
        ptrs = (ctypes.POINTER(ctypes.c_uint64) * max(len(keep), 1))(
            *[w.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)) for w in keep])
        counts = (ctypes.c_int64 * max(len(words), 1))(*words)
        mins = [int(buffers[name].mins[k]) for name, rs in rtl.stages.items() for k in rs.mins_used]
        cmins = (ctypes.c_int32 * max(len(mins), 1))(*mins)
        out = rtl.stages[rtl.output]
        got = np.zeros(out.n_steps * len(out.lanes), np.uint64)
        last = ctypes.c_int64(-1)
        n = self.run_fn(ptrs, counts, cmins, got.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)), out.n_steps,
                        rtl.cycles + 64, ctypes.byref(last))
        if n != out.n_steps:
            raise LoomError(f"the RTL emitted {n} of its {out.n_steps} output steps within {rtl.cycles + 64} cycles",
                            where=f"{TOP} ({PREFIX})")
        dtype = buffers[rtl.output].array.dtype
        image = np.zeros(buffers[rtl.output].array.shape, dtype)
        live, index = self.order[rtl.output]
        image[index] = _from_words(got[live], dtype)
        return image, last.value + 1


def _as_words(values: np.ndarray, width: int) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype == np.bool_:
        return v.astype(np.uint64)
    bits = v.view(f"u{v.dtype.itemsize}") if v.dtype.kind == "i" else v
    return bits.astype(np.uint64) & np.uint64((1 << width) - 1)


def _from_words(words: np.ndarray, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (words & 1).astype(bool)
    return (words & np.uint64((1 << (8 * dtype.itemsize)) - 1)).astype(f"u{dtype.itemsize}").view(dtype)


def simulate_rtl(output, inputs: dict, size, *, design=None, ir=None, report: RtlReport | None = None) -> np.ndarray:
    """``output`` over ``size`` with every accelerator invocation run on the Verilated RTL of its design; ``ir``
    (a module or printed text, e.g. edited) is the ``ubuf`` IR the RTL is written from, as ``simulate`` takes it."""
    report = report if report is not None else RtlReport()
    models: dict[tuple, _RtlModel] = {}

    def on_tile(d, buffers, _write_times, d_ir):
        key = (id(d), id(d_ir))
        if key not in models:
            rtl = design_verilog(d, d_ir)
            models[key] = _RtlModel(rtl)
            report.verilog[id(d)] = rtl.verilog
        t = time.perf_counter()
        values, cycles = models[key].run(buffers)
        report.rtl_seconds += time.perf_counter() - t
        report.invocations += 1
        report.rtl_cycles.append(cycles)
        report.design_cycles.append(d.latency)
        return values

    return simulate(output, inputs, size, design=design, ir=ir, on_tile=on_tile)


__all__ = ["simulate_rtl", "RtlReport"]
