"""The physical limit of a problem on an accelerator, under the timing model's constants.

    b = physical_bound(acc, {"m": 512, "n": 512, "k": 512})
    b.compute_s, b.transfer_s, b.bound_s, b.serial_bound_s
    print(b)   # every figure, what it assumes, and the schedule that reaches the transfer minimum

* ``compute_s``: the problem's MACs (the product of its extents, no padding) at
  ``ops_per_cycle`` per cycle: no schedule computes faster;
* ``transfer_s``: the least DMA time over every flow of the accelerator and every tile
  size that fits its buffers (the same space ``--flow auto`` searches, with all
  non-power-of-two tiles of ``autotune.tile_choices``): the words each schedule must
  move (``DriverSummary.expected_transfers``: operands re-sent because the buffers
  cannot hold them are counted), one set-up per transaction with sends at best
  coalesced into full DMA input buffers, and the two channels in parallel when ``recv_overlaps_send``;
  no host time. The buffers, not the problem, decide how often data must move: a
  512^3 MatMul on v4-16 (4096-word buffers) moves A and B 8 times each;
* ``bound_s = max(compute_s, transfer_s)``: perfect overlap of computing and moving;
* ``serial_bound_s = compute_s + transfer_s``: an accelerator with one input buffer
  (``timing.input_buffers`` 1, the default: the paper's accelerators) does not read
  its stream while it computes (``timing.c``: a send starts when the accelerator is
  idle), and with one output buffer (``timing.output_buffers`` 1, the default) a result
  computes only once the previous one has been received, so compute and transfers never
  overlap and no driver beats this figure;
* ``model_bound_s``: the limit under the description's timing, the least over the same
  schedules of what the buffers allow to overlap: with one input buffer sends and computes
  are disjoint (``compute + sends``); with one output buffer (``timing.output_buffers`` 1,
  the default) a result's computes wait until the previous result has been received and a
  receive waits for its computes, so receives and computes are disjoint (``compute +
  receives``); with both, ``compute + max(sends, receives)`` = ``serial_bound_s``; with two
  or more of each, ``bound_s``. 512^3 on v4-16 (one of each): 5.99 ms compute + 11.82 ms
  transfer = 17.81 ms, 1.51x ``bound_s``: no driver of the paper's accelerator comes within
  1.15x of perfect overlap; ``v4_16_pingpong`` (two of each) can.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import Mapping

from loom.accel.description import AcceleratorDescription
from loom.accel.timing import TimingConfig, timing_config
from loom.errors import LoomError


@dataclass(frozen=True)
class Bound:
    compute_s: float
    transfer_s: float
    transfer_schedule: str  # the flow and tiles that reach transfer_s
    config: TimingConfig
    limit_s: float = 0.0  # model_bound_s (0: bound_s)

    @property
    def bound_s(self) -> float:
        return max(self.compute_s, self.transfer_s)

    @property
    def serial_bound_s(self) -> float:
        return self.compute_s + self.transfer_s

    @property
    def model_bound_s(self) -> float:
        """The least time this accelerator's timing allows: sends overlap computes only with a
        spare input buffer, receives only with a spare output buffer."""
        return max(self.limit_s, self.bound_s)

    def ratio(self, total_s: float) -> float:
        """``total_s`` over the perfect-overlap bound (>= 1 for any schedule)."""
        return total_s / self.bound_s

    def __str__(self) -> str:
        return (f"compute {self.compute_s * 1e3:.4g} ms, min transfer {self.transfer_s * 1e3:.4g} ms "
                f"({self.transfer_schedule}), bound (perfect overlap) {self.bound_s * 1e3:.4g} ms, "
                f"serial bound (nothing overlaps a compute) {self.serial_bound_s * 1e3:.4g} ms; "
                f"input_buffers={self.config.input_buffers}, output_buffers={self.config.output_buffers}: "
                f"no schedule beats {self.model_bound_s * 1e3:.4g} ms")


def compute_seconds(acc: AcceleratorDescription, problem: Mapping[str, int], config: TimingConfig) -> float:
    missing = [d for d in acc.dims if d not in problem]
    if missing:
        raise LoomError(f"the bound needs the extent of dims {', '.join(missing)} (problem {dict(problem)})",
                        where=f"physical_bound({acc.name})")
    macs = prod(int(problem[d]) for d in acc.dims)
    return macs / config.ops_per_cycle / config.clock_hz


def transfer_seconds(sends: int, recvs: int, words_sent: int, words_received: int, config: TimingConfig) -> float:
    """DMA time of a schedule: set-up per transaction plus words at the stream width, per channel."""
    per_cycle = config.stream_width_bits / 32
    send = sends * config.dma_latency_cycles + words_sent / per_cycle
    recv = recvs * config.dma_latency_cycles + words_received / per_cycle
    cycles = max(send, recv) if config.recv_overlaps_send else send + recv
    return cycles / config.clock_hz


def physical_bound(acc: AcceleratorDescription, problem: Mapping[str, int],
                   config: TimingConfig | None = None) -> Bound:
    """Compute-bound time, the least transfer time the buffers allow, and their max."""
    from loom.driver import autotune as at

    config = config or timing_config(acc)
    compute = compute_seconds(acc, problem, config)
    best, where, limit = float("inf"), "", float("inf")
    for cand in at.candidates(acc, problem):
        summary = at.summary_for(acc, cand)
        t = summary.expected_transfers(problem)
        # coalescing can at best fill the DMA input buffer with every send
        sends = min(t.sends, -(-t.words_sent // acc.dma.input_words))
        s = transfer_seconds(sends, t.recvs, t.words_sent, t.words_received, config)
        if s < best:
            best, where = s, str(cand)
        one_channel = replace(config, recv_overlaps_send=True)
        send_s = transfer_seconds(sends, 0, t.words_sent, 0, one_channel)
        recv_s = transfer_seconds(0, t.recvs, 0, t.words_received, one_channel)
        excluded = [send_s] if config.input_buffers == 1 else []  # busy times disjoint from computes
        if config.output_buffers == 1 and t.recvs:
            excluded.append(recv_s)
        apart = transfer_seconds(sends, t.recvs, t.words_sent, t.words_received, config) if len(excluded) == 2 \
            else sum(excluded)
        limit = min(limit, max(s, compute + apart))
    if best == float("inf"):
        raise LoomError(f"no flow and tile sizes of {acc.name} fit the problem {dict(problem)}",
                        where=f"physical_bound({acc.name})")
    return Bound(compute, best, where, config, limit)


__all__ = ["Bound", "physical_bound", "compute_seconds", "transfer_seconds"]
