"""The runtime side of the timing model: configure it on a loaded runtime library, read its report.

The model runs in the C runtime (``timing.c``); its configuration comes from the
accelerator description (``loom.accel.timing.timing_config``), passed here as any
object with ``clock_hz``, ``ops_per_cycle``, ``stream_width_bits`` and
``dma_latency_cycles`` (and optionally ``recv_overlaps_send``, ``host_slowdown``, ``input_buffers``,
``output_buffers``).
"""

from __future__ import annotations

import ctypes
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from loom.errors import LoomError


def _raise_runtime(lib: ctypes.CDLL, where: str) -> None:
    code = lib.loom_dma_error_code()
    if code:
        message = lib.loom_dma_last_error().decode(errors="replace")
        lib.loom_dma_clear_error()
        raise LoomError(message, where=where)


def configure_timing(lib: ctypes.CDLL, config) -> None:
    """Set the runtime's timing model (kept across runs until changed)."""
    lib.loom_timing_configure(float(config.clock_hz), float(config.ops_per_cycle), int(config.stream_width_bits),
                              int(config.dma_latency_cycles))
    _raise_runtime(lib, "loom_timing_configure")
    lib.loom_timing_configure_system(int(bool(getattr(config, "recv_overlaps_send", True))),
                                     float(getattr(config, "host_slowdown", 1.0)))
    _raise_runtime(lib, "loom_timing_configure_system")
    lib.loom_timing_set_input_buffers(int(getattr(config, "input_buffers", 1)))
    _raise_runtime(lib, "loom_timing_set_input_buffers")
    lib.loom_timing_set_output_buffers(int(getattr(config, "output_buffers", 1)))
    _raise_runtime(lib, "loom_timing_set_output_buffers")


def set_host_model(lib: ctypes.CDLL, *, deterministic: bool, call_s: float = 0.0, word_s: float = 0.0) -> None:
    """Host time measured (``deterministic=False``) or ``call_s`` per call + ``word_s`` per word copied."""
    lib.loom_timing_set_host_model(int(deterministic), float(call_s), float(word_s))
    _raise_runtime(lib, "loom_timing_set_host_model")


@contextmanager
def deterministic_host(lib: ctypes.CDLL, *, call_s: float, word_s: float) -> Iterator[None]:
    """Within the block, host time is a fixed cost per call / per word (machine-independent)."""
    set_host_model(lib, deterministic=True, call_s=call_s, word_s=word_s)
    try:
        yield
    finally:
        set_host_model(lib, deterministic=False)


@dataclass(frozen=True)
class TimingReport:
    """A run on the timing model. Seconds; ``total_s = host_copy_s + host_other_s + wait_s``."""

    total_s: float
    host_copy_s: float
    host_other_s: float
    dma_s: float
    compute_s: float
    wait_s: float
    transactions: int
    bytes_sent: int
    bytes_received: int
    sends: int = 0
    recvs: int = 0
    macs: int = 0
    constants: str = field(default="", compare=False)  # the configuration's ``describe()``, when passed
    # ``dma_s`` by channel, and the stalls: sends that waited for a free accelerator input buffer
    # (with one, for the accelerator to finish computing), receives that waited for a compute
    send_dma_s: float = 0.0
    recv_dma_s: float = 0.0
    send_stall_s: float = 0.0
    recv_stall_s: float = 0.0
    setup_s: float = 0.0  # the DMA set-up part of ``dma_s`` (transactions x dma_latency_cycles)
    compute_stall_s: float = 0.0  # computes waiting for a free output bank (their result's)

    def __str__(self) -> str:
        def row(name: str, seconds: float) -> str:
            share = f"{100 * seconds / self.total_s:6.1f}%" if self.total_s else "      -"
            return f"  {name:<12} {seconds * 1e6:12.3f} us {share}"
        return "\n".join([
            *([f"  {self.constants}"] if self.constants else []),
            f"  {'total':<12} {self.total_s * 1e6:12.3f} us",
            row("host copies", self.host_copy_s),
            row("host other", self.host_other_s),
            row("waiting", self.wait_s),
            row("DMA busy", self.dma_s),
            row("  sends", self.send_dma_s),
            row("  receives", self.recv_dma_s),
            *([row("  set-up", self.setup_s)] if self.setup_s else []),
            row("compute", self.compute_s),
            row("send stall", self.send_stall_s) + "  (sends waiting for a free accelerator input buffer)",
            row("recv stall", self.recv_stall_s) + "  (receives waiting for the compute)",
            row("comp stall", self.compute_stall_s) + "  (computes waiting for a free output buffer)",
            f"  transactions {self.transactions} ({self.sends} sends, {self.recvs} receives), "
            f"{self.bytes_sent} B sent, {self.bytes_received} B received",
        ])


def timing_report(lib: ctypes.CDLL, config=None) -> TimingReport:
    """The report of the last run (or of the run in progress) on a loaded runtime library;
    with ``config`` (the one passed to ``configure_timing``), it names the constants used."""
    from loom.runtime.build import TimingReport as CReport
    r = CReport()
    lib.loom_timing_get_report(ctypes.byref(r))
    return TimingReport(r.total_s, r.host_copy_s, r.host_other_s, r.dma_s, r.compute_s, r.wait_s,
                        r.sends + r.recvs, 4 * r.words_sent, 4 * r.words_received, r.sends, r.recvs, r.macs,
                        config.describe() if hasattr(config, "describe") else "", r.send_dma_s, r.recv_dma_s,
                        r.send_stall_s, r.recv_stall_s, r.setup_s, r.compute_stall_s)


def predicted_accelerator_cycles(report: TimingReport, config) -> float:
    """The accelerator cycles the timing model predicts for a run: stream beats of every transfer plus
    compute cycles, without the DMA engine's per-transaction set-up (``dma_latency_cycles``), which
    happens outside the accelerator. Comparable with a cycle-accurate (RTL) model's clock count."""
    busy = (report.dma_s + report.compute_s) * float(config.clock_hz)
    return busy - int(config.dma_latency_cycles) * report.transactions


__all__ = ["TimingReport", "predicted_accelerator_cycles", "configure_timing", "set_host_model", "deterministic_host", "timing_report"]
