"""One driver over several accelerators: which device computes each op, and the devices of a run.

A function whose linalg ops go to different accelerators of one description (a matmul engine
and a conv engine, or two matmul engines of different tile sizes) compiles to one C driver: each
op's code opens its own DMA session (``dma_init`` with that accelerator's ``dma_address``) and
closes it before the next op starts. On a board the address selects the DMA engine; on the
simulator the runtime's device hook (``loom_dma_set_device_hook``, ``dma_runtime.h``) lets
``DeviceRun`` select, at each ``dma_init``, the behaviour model and timing constants of the
device at that address, and collect that device's counters at each ``dma_free``. So the
accelerators of one driver must have distinct ``dma_address`` es (``check_devices``).

``cheapest_assignment`` is ``compile_driver(assign="cost")``: per op, the matching accelerator
with the least modelled time (``loom.driver.autotune.estimate``) for the op's static shape.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp

from loom.accel.description import AcceleratorDescription, load_description
from loom.errors import LoomError

HOOK_EVENT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int)
DEVICE_OPEN, DEVICE_CLOSED = 0, 1  # enum loom_device_event


class DeviceHook(ctypes.Structure):
    """``loom_device_hook`` of ``dma_runtime.h`` (same field order)."""

    _fields_ = [("ctx", ctypes.c_void_p), ("event", HOOK_EVENT)]


# ------------------------------------------------------------------------------ compile time
def check_devices(accs: Sequence[AcceleratorDescription], path: str) -> None:
    """The accelerators of one driver are told apart by their DMA engine's address."""
    seen: dict[int, str] = {}
    system = None
    for acc in {a.name: a for a in accs}.values():
        other = seen.setdefault(acc.dma.dma_address, acc.name)
        if other != acc.name:
            system = system or load_description(path)  # the file's entry: its JSON path, not the IR's
            raise LoomError(f"accelerators {other} and {acc.name} both have dma_address {acc.dma.dma_address:#x}: "
                            "one driver drives each op on its own accelerator and tells them apart by their DMA "
                            "engine; give each its own dma_address, or compile for one of them (accelerator=NAME)",
                            where=system.accelerator(acc.name).path("dma.dma_address"), filename=path)


def resolve_models(accs: Sequence[AcceleratorDescription], summaries: Sequence[Any], path: str,
                   override: Any = None) -> dict[str, Any]:
    """Each accelerator's behaviour model (``override``: a mapping name -> model), resolved from the file."""
    from loom.driver.compile import _check_generic_subscripts, simulator_model

    if override is not None and not isinstance(override, Mapping):
        raise LoomError("the kernel's ops run on several accelerators: pass model as a mapping accelerator name -> "
                        "model", where="compile_driver(model)")
    system = load_description(path)
    models: dict[str, Any] = {}
    for acc in accs:
        if acc.name in models:
            continue
        if override is not None and acc.name in override:
            models[acc.name] = simulator_model(acc, override[acc.name])
        elif acc.model is not None:
            if acc.model.kind == "generic":
                _check_generic_subscripts(acc, [s for s, a in zip(summaries, accs) if a.name == acc.name], path)
            models[acc.name] = simulator_model(system.accelerator(acc.name))
        else:
            models[acc.name] = None  # running says what to add
    return models


def cheapest_assignment(module: ModuleOp, path: str, double_buffer: bool = False) -> tuple[str, ...]:
    """Per linalg.generic (textual order): the matching accelerator with the least modelled time for its
    static shape (``*``: the first match, when the shape is dynamic or nothing matches)."""
    from loom.accel.matching import element_type_of, match_generic

    system = load_description(path)
    out = []
    for g in (g for g in module.walk() if isinstance(g, GenericOp)):
        accs = [a for a in system.accelerators
                if not isinstance(match_generic(g, a), str) and element_type_of(g) == a.data_type]
        shapes = [v.type.get_shape() for v in (*g.inputs, *g.outputs)]  # type: ignore[attr-defined]
        costs = [(t, k, a.name) for k, a in enumerate(accs)
                 if (t := _modelled_seconds(a, shapes, double_buffer)) is not None] if len(accs) > 1 else []
        out.append(min(costs)[2] if costs else "*")
    return tuple(out)


def _modelled_seconds(acc: AcceleratorDescription, shapes: list, double_buffer: bool) -> float | None:
    """The cost model's time of ``acc`` (selected flow, default tiles) on an op of these operand shapes;
    None when a shape is dynamic or a transaction would not fit the staging buffers."""
    from loom.driver.autotune import Candidate, estimate, summary_for
    from loom.driver.compile import check_staging

    cand = Candidate(acc.selected_flow, (), double_buffer)
    summary = summary_for(acc, cand)
    problem = summary.problem_dims(shapes)
    if any(problem.get(d, -1) < 0 for d in acc.dims):
        return None
    try:
        check_staging(acc, summary, problem, double_buffer)
    except LoomError:
        return None
    return estimate(acc, cand, problem).total_s


# ------------------------------------------------------------------------------ run time
@dataclass
class Device:
    """One accelerator of a driver's run: its model and timing constants, and its counters."""

    accelerator: AcceleratorDescription
    model: Any  # RuntimeModel
    timing: Any  # loom.accel.timing configuration
    operands: list[tuple[int, str]] = field(default_factory=list)  # (array data pointer, operand role)
    sessions: int = 0
    seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    received: dict[str, int] = field(default_factory=dict)
    reports: list[Any] = field(default_factory=list)
    cycles: int | None = None


class DeviceRun:
    """For one call of a driver: at every ``dma_init`` the device at its address becomes the simulated
    accelerator, at every ``dma_free`` its counters are read (``with DeviceRun(lib, devices): fn(...)``)."""

    def __init__(self, lib: ctypes.CDLL, devices: dict[int, Device]):
        self.lib = lib
        self.devices = devices
        self.error: BaseException | None = None
        self._open: Device | None = None
        self._before: tuple[dict[str, int], dict[tuple[int, int], int], float] | None = None
        self._event = HOOK_EVENT(self._on_event)  # kept alive while installed
        self._hook = DeviceHook(None, self._event)

    def __enter__(self) -> "DeviceRun":
        self.lib.loom_dma_set_device_hook(ctypes.addressof(self._hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        self.lib.loom_dma_set_device_hook(None)  # the runtime is shared by every driver of the process

    def _tallies(self, device: Device) -> dict[tuple[int, int], int]:
        return {(ptr, d): self.lib.loom_operand_tally(ptr, d) for ptr, _ in device.operands for d in (0, 1)}

    def _on_event(self, _ctx: Any, address: int, event: int) -> None:
        # a callback must not raise (ctypes would print and go on): the error is raised after the call
        try:
            if event == DEVICE_OPEN:
                self._opened(address)
            elif self._open is not None:
                self._closed(self._open)
        except BaseException as err:  # noqa: BLE001
            self.error = self.error or err
            self.lib.loom_sim_use_model_vtable(None, None, None)  # sends fail rather than reach another device

    def _opened(self, address: int) -> None:
        from loom.runtime.host import trace_counters
        from loom.runtime.timing import configure_timing

        device = self.devices.get(address)
        self._open = device
        if device is None:
            raise LoomError(f"the driver opened a DMA session at {address:#x}, where none of its accelerators is "
                            f"({', '.join(f'{d.accelerator.name} {a:#x}' for a, d in self.devices.items())})",
                            where="driver")
        if device.model is None:
            from loom.driver.compile import simulator_model
            device.model = simulator_model(device.accelerator)  # no model: says what to add
        device.model.select(self.lib)
        configure_timing(self.lib, device.timing)
        self._before = (trace_counters(self.lib), self._tallies(device), time.perf_counter())

    def _closed(self, device: Device) -> None:
        from loom.runtime.host import trace_counters
        from loom.runtime.timing import timing_report

        assert self._before is not None
        counters, tallies, start = self._before
        device.sessions += 1
        device.seconds += time.perf_counter() - start
        now = trace_counters(self.lib)
        for key, value in now.items():
            device.counters[key] = device.counters.get(key, 0) + value - counters.get(key, 0)
        after = self._tallies(device)
        for ptr, role in device.operands:
            for direction, into in ((0, device.sent), (1, device.received)):
                words = after[(ptr, direction)] - tallies[(ptr, direction)]
                if words:
                    into[role] = into.get(role, 0) + words
        device.reports.append(timing_report(self.lib, device.timing))
        cycles = self.lib.loom_sim_model_cycles()
        if cycles >= 0:
            device.cycles = (device.cycles or 0) + cycles
        self._open = None


def run_on_devices(drv: Any, lib: ctypes.CDLL, arrays: Sequence[Any]) -> Any:
    """One call of a driver over several accelerators (``AccelDriver``): its ``RunStats`` with one
    ``RunStats`` per device in ``devices``; the call's own figures are the devices' added up."""
    from loom.accel.timing import timing_config
    from loom.driver.compile import RunStats, Transfers, argument_words
    from loom.runtime.host import raise_on_error, trace_counters

    devices: dict[int, Device] = {}
    by_name: dict[str, Device] = {}
    for k, acc in enumerate(drv.accelerators):
        if acc.name not in by_name:
            timing = drv.timing.get(acc.name) if isinstance(drv.timing, Mapping) else None
            by_name[acc.name] = devices[acc.dma.dma_address] = Device(
                acc, drv.models.get(acc.name), timing or timing_config(acc))
        for n, i in enumerate(drv.op_args[k] if drv.op_args else ()):
            entry = (arrays[i].ctypes.data, drv.summaries[k].operand_names[n]) if i >= 0 else None
            # per device, an argument is the operand its ops use it as (two ops on one device sharing it: once)
            if entry is not None and entry not in by_name[acc.name].operands:
                by_name[acc.name].operands.append(entry)
    lib.loom_dma_set_tracing(1)
    lib.loom_trace_reset()
    lib.loom_operand_tally_reset()
    fn = drv.compiled.function(drv.func_name)
    start = time.perf_counter()
    with DeviceRun(lib, devices) as run:
        fn(*arrays)
    seconds = time.perf_counter() - start
    lib.loom_dma_set_tracing(0)
    if run.error is not None:
        lib.loom_dma_clear_error()
        raise run.error
    raise_on_error(lib)
    per_device: dict[str, Any] = {}
    sent: dict[str, int] = {}
    received: dict[str, int] = {}
    for name in drv.devices:
        d = by_name[name]
        c = d.counters
        per_device[name] = RunStats(d.seconds, Transfers(c.get("sends", 0), c.get("recvs", 0), c.get("words_sent", 0),
                                                         c.get("words_received", 0), dict(d.sent), dict(d.received)),
                                    add_reports(d.reports), d.cycles, sessions=d.sessions)
        for into, words in ((sent, d.sent), (received, d.received)):  # keyed by operand role, as expected_transfers
            for role, w in words.items():
                into[role] = into.get(role, 0) + w
    counters = trace_counters(lib)
    cycles = [s.model_cycles for s in per_device.values() if s.model_cycles is not None]
    transfers = Transfers(counters["sends"], counters["recvs"], counters["words_sent"], counters["words_received"],
                          sent, received)
    return RunStats(seconds, transfers, add_reports([r for d in by_name.values() for r in d.reports]),
                    sum(cycles) if cycles else None, per_device,
                    argument_words=argument_words(lib, drv.arg_names, arrays))


def add_reports(reports: Sequence[Any]) -> Any:
    """The timing reports of consecutive sessions as one (times and counts add up; sessions run one after
    another); None when there are none."""
    if not reports:
        return None
    total = reports[0]
    for r in reports[1:]:
        total = replace(total, **{f.name: getattr(total, f.name) + getattr(r, f.name)
                                  for f in fields(total) if f.name != "constants"})
    constants = sorted({r.constants for r in reports if r.constants})
    return replace(total, constants="; ".join(constants))


__all__ = ["Device", "DeviceRun", "DeviceHook", "add_reports", "check_devices", "cheapest_assignment",
           "resolve_models", "run_on_devices"]
