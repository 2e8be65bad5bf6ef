"""The system timing model's configuration, read from the accelerator description.

The model itself runs in the C runtime (``loom/runtime/timing.c``, described in
``dma_runtime.h``) as a virtual timeline, so it is exact and costs nothing measurable:

* host time = the host code actually run, measured with a monotonic clock: inside the
  copy routines (``host_copy``) and between runtime calls (``host_other``); or, for
  tests, a fixed cost per runtime call and per word copied (``deterministic_host``);
* a DMA transaction occupies its channel for ``latency + ceil(words / (width / 32))``
  accelerator cycles; each compute takes ``ceil(MACs / ops_per_cycle)`` cycles and
  starts when its send has arrived; blocking waits advance host time (``wait``);
* a send streams only into a free input buffer of the accelerator: with
  ``input_buffers = 1`` (default) once it is idle, with 2 while the previous tile computes;
* a result's computes start only in a free output buffer: with ``output_buffers = 1``
  (default) once the previous result has been received, with 2 while it drains.

    cfg = timing_config(acc)                 # defaults filled in from the accelerator
    loom.runtime.timing.configure_timing(lib, cfg)   # before a run on a loaded runtime library
    ...run any driver (generated or hand-written) on lib...
    print(loom.runtime.timing.timing_report(lib))    # TimingReport: total and breakdown

``total = host_copy + host_other + wait``; ``dma`` and ``compute`` are busy times that
overlap host time when transfers are non-blocking (double buffering).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from loom.accel.description import AcceleratorDescription
    from loom.accel.json_node import JsonNode

DEFAULT_CLOCK_HZ = 200e6  # paper Table I: synthesised at 200 MHz
DEFAULT_STREAM_WIDTH_BITS = 32  # one 32-bit word per AXI-Stream beat
# AXI DMA simple-mode start: ~4 AXI-Lite register writes (control, address, length,
# status poll) from the host, each a few tens of fabric cycles on a Zynq-7000 GP port,
# plus the engine's first-beat latency: ~100 cycles (0.5 us at 200 MHz).
DEFAULT_DMA_LATENCY_CYCLES = 100
# Paper Table I: (accelerator size, ops per cycle). Same size, same throughput.
MATMUL_THROUGHPUT = {4: 10, 8: 60, 16: 112}
# v4 (flexible tiles) is v4_16 in the paper: 16x16 PEs, the size-16 throughput.
FLEXIBLE_MATMUL_THROUGHPUT = 112
# The paper gives no figure for the Conv2D accelerator; we take a 16-lane MAC tree
# (one 16-wide dot-product step per cycle). Override with "ops_per_cycle".
CONV_THROUGHPUT = 16

# AXI DMA has independent MM2S and S2MM channels: a receive may run while the next send streams.
DEFAULT_RECV_OVERLAPS_SEND = True
# Host time is this machine's; 10 stands for the paper's board (Cortex-A9 at 650 MHz).
DEFAULT_HOST_SLOWDOWN = 1.0
# The paper's accelerators (SECDA-style SystemC) read their input stream into one set of
# buffers and do not read it while they compute: one bank. 2 = double-buffered inputs (the
# next tile streams in while the current one computes). LOOM_MAX_INPUT_BUFFERS in dma_runtime.h.
DEFAULT_INPUT_BUFFERS = 1
MAX_INPUT_BUFFERS = 8
# The paper's accelerators compute into one C buffer and stream it out before the next result's
# computes start: one bank. 2 = the next result computes while the previous one drains to the
# host. LOOM_MAX_OUTPUT_BUFFERS in dma_runtime.h.
DEFAULT_OUTPUT_BUFFERS = 1
MAX_OUTPUT_BUFFERS = 8

TIMING_KEYS = ("clock_mhz", "ops_per_cycle", "stream_width_bits", "dma_latency_cycles", "recv_overlaps_send",
               "host_slowdown", "input_buffers", "output_buffers")


@dataclass(frozen=True)
class TimingSpec:
    """The ``timing`` object as written (None = use the default)."""

    clock_mhz: float | None = None
    ops_per_cycle: float | None = None
    stream_width_bits: int | None = None
    dma_latency_cycles: int | None = None
    recv_overlaps_send: bool | None = None
    host_slowdown: float | None = None
    input_buffers: int | None = None
    output_buffers: int | None = None
    where: str = ""


@dataclass(frozen=True)
class TimingConfig:
    """A complete timing configuration (every default resolved)."""

    clock_hz: float = DEFAULT_CLOCK_HZ
    ops_per_cycle: float = MATMUL_THROUGHPUT[16]
    stream_width_bits: int = DEFAULT_STREAM_WIDTH_BITS
    dma_latency_cycles: int = DEFAULT_DMA_LATENCY_CYCLES
    recv_overlaps_send: bool = DEFAULT_RECV_OVERLAPS_SEND
    host_slowdown: float = DEFAULT_HOST_SLOWDOWN
    input_buffers: int = DEFAULT_INPUT_BUFFERS
    output_buffers: int = DEFAULT_OUTPUT_BUFFERS
    # constant name -> "description" or "default" (why it has its value; not part of equality)
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def constants(self) -> list[tuple[str, str, str]]:
        """(name, value, source) of every constant the model uses, in the description's units."""
        src = dict(self.sources)
        values = [("clock_mhz", f"{self.clock_hz / 1e6:g}"), ("ops_per_cycle", f"{self.ops_per_cycle:g}"),
                  ("stream_width_bits", str(self.stream_width_bits)),
                  ("dma_latency_cycles", str(self.dma_latency_cycles)),
                  ("recv_overlaps_send", "true" if self.recv_overlaps_send else "false"),
                  ("host_slowdown", f"{self.host_slowdown:g}"), ("input_buffers", str(self.input_buffers)),
                  ("output_buffers", str(self.output_buffers))]
        return [(name, value, src.get(name, "given")) for name, value in values]

    def describe(self) -> str:
        """One line: every constant with where it came from (printed by every timing report)."""
        return "timing model (modelled): " + ", ".join(f"{n}={v} [{s}]" for n, v, s in self.constants())


def _rate(node: "JsonNode", what: str, maximum: float) -> float:
    """A positive rate; bounded both ways so the C timeline's integer picoseconds cannot overflow."""
    value = node.number(what, minimum=0.0, maximum=maximum)
    if value < 1e-3:
        raise node.fail(f"expected {what} >= 0.001, found {value}")
    return value


def _boolean(node: "JsonNode") -> bool:
    if not isinstance(node.value, bool):
        raise node.expected("true or false")
    return node.value


def parse_timing(node: "JsonNode | None") -> TimingSpec | None:
    """Parse an accelerator's optional ``timing`` object (errors name the JSON path)."""
    if node is None:
        return None
    f = node.fields((), TIMING_KEYS, "the timing model")
    width = None
    if "stream_width_bits" in f:
        width = f["stream_width_bits"].integer("a stream width in bits", minimum=32, maximum=65536)
        if width % 32:
            raise f["stream_width_bits"].fail(f"expected a multiple of 32 bits (whole words per beat), found {width}")
    return TimingSpec(
        clock_mhz=_rate(f["clock_mhz"], "a clock frequency in MHz", 1e6) if "clock_mhz" in f else None,
        ops_per_cycle=_rate(f["ops_per_cycle"], "a throughput in ops per cycle", 1e9) if "ops_per_cycle" in f else None,
        stream_width_bits=width,
        dma_latency_cycles=f["dma_latency_cycles"].integer("a latency in cycles", minimum=0, maximum=10**9)
        if "dma_latency_cycles" in f else None,
        recv_overlaps_send=_boolean(f["recv_overlaps_send"]) if "recv_overlaps_send" in f else None,
        host_slowdown=_rate(f["host_slowdown"], "a host slowdown factor", 1e6) if "host_slowdown" in f else None,
        input_buffers=f["input_buffers"].integer("a number of input buffers", minimum=1, maximum=MAX_INPUT_BUFFERS)
        if "input_buffers" in f else None,
        output_buffers=f["output_buffers"].integer("a number of output buffers", minimum=1,
                                                   maximum=MAX_OUTPUT_BUFFERS) if "output_buffers" in f else None,
        where=node.path,
    )


def default_throughput(acc: "AcceleratorDescription") -> float:
    """Ops (MACs) per cycle of the paper's accelerators: by MatMul tile size, v4, conv."""
    if acc.kernel.name.startswith("conv"):
        return CONV_THROUGHPUT
    kinds = {t.kind for t in acc.tiles.tiles}
    if "flexible" in kinds:
        return FLEXIBLE_MATMUL_THROUGHPUT
    sizes = [t.size for t in acc.tiles.tiles if t.kind == "fixed" and t.size]
    size = max(sizes) if sizes else 16
    for limit in sorted(MATMUL_THROUGHPUT):  # sizes between the table's points round up
        if size <= limit:
            return MATMUL_THROUGHPUT[limit]
    return MATMUL_THROUGHPUT[16]


def timing_config(acc: "AcceleratorDescription") -> TimingConfig:
    """The accelerator's timing: its ``timing`` object over the documented defaults."""
    spec = acc.timing or TimingSpec()

    def pick(key: str, default):
        value = getattr(spec, key)
        return default if value is None else value

    return TimingConfig(
        clock_hz=spec.clock_mhz * 1e6 if spec.clock_mhz is not None else DEFAULT_CLOCK_HZ,
        ops_per_cycle=pick("ops_per_cycle", default_throughput(acc)),
        stream_width_bits=pick("stream_width_bits", DEFAULT_STREAM_WIDTH_BITS),
        dma_latency_cycles=pick("dma_latency_cycles", DEFAULT_DMA_LATENCY_CYCLES),
        recv_overlaps_send=pick("recv_overlaps_send", DEFAULT_RECV_OVERLAPS_SEND),
        host_slowdown=pick("host_slowdown", DEFAULT_HOST_SLOWDOWN),
        input_buffers=pick("input_buffers", DEFAULT_INPUT_BUFFERS),
        output_buffers=pick("output_buffers", DEFAULT_OUTPUT_BUFFERS),
        sources=tuple((k, "default" if getattr(spec, k) is None else f"description {spec.where}")
                      for k in TIMING_KEYS),
    )


__all__ = ["TimingSpec", "TimingConfig", "TIMING_KEYS", "parse_timing", "timing_config", "default_throughput"]
