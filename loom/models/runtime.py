"""A compiled model: the graph's layers as C functions of one shared object, run in order on numpy arrays.

Calling it checks the inputs (count, dtype, shape; embedding ids in range) before any C runs, allocates
each layer's output, shares buffers for views, drops intermediates after their last use and returns
the outputs. ``profile=True`` also records each layer's measured host time (``last_profile``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from loom.errors import LoomError
from loom.models.bit_floats import FORMATS, bits_dtype
from loom.models.graph import Graph, Layer, Tensor


@dataclass
class LayerTime:
    index: int
    layer: Layer
    function: str  # the C function it ran, "" for a view
    device: str  # "cpu", "view" (no code) or an accelerator's name
    seconds: float  # measured on the host (for an accelerator: the simulated run, driver included)
    modelled_s: float | None = None  # the accelerator timing model's time, for offloaded layers
    schedule: str = ""  # offloaded layers: the driver's flow, tiles and double buffering
    note: str = ""  # a layer an accelerator takes but the CPU runs faster: why it stayed on the CPU


class CompiledModel:
    def __init__(self, graph: Graph, functions: dict[int, object], names: dict[int, str], module,
                 runners: dict | None = None, offload_reasons: list[str] | None = None,
                 kept_on_cpu: dict[int, str] | None = None):
        self.graph = graph
        self.module = module  # the IR before lowering (one func.func per distinct layer)
        self._functions = functions  # layer index -> callable(*inputs, output)
        self._names = names
        self.runners = runners or {}  # layer index -> loom.models.offload.LayerRunner
        self.offload_reasons = offload_reasons or []
        self.kept_on_cpu = kept_on_cpu or {}  # layer index -> why the CPU runs it (offload="when-faster")
        self.last_profile: list[LayerTime] = []
        self._last_use = self._last_uses()

    def __repr__(self) -> str:
        ins = ", ".join(map(repr, self.graph.inputs))
        return f"<loom.models.CompiledModel ({ins}) with {len(self.graph.layers)} layers>"

    @property
    def input_specs(self) -> list[Tensor]:
        return list(self.graph.inputs)

    def _last_uses(self) -> dict[str, int]:
        last: dict[str, int] = {}
        for index, layer in enumerate(self.graph.layers):
            for t in _reads(layer):
                last[t.name] = index
        for t in self.graph.outputs:
            last[t.name] = len(self.graph.layers)
        return last

    def check_inputs(self, args) -> list[np.ndarray]:
        specs = self.graph.inputs
        if len(args) != len(specs):
            raise LoomError(f"the model takes {len(specs)} input(s) ({', '.join(map(repr, specs))}), "
                            f"got {len(args)}")
        checked = []
        for k, (spec, a) in enumerate(zip(specs, args)):
            where = f"input {k} ({spec.name})"
            if not isinstance(a, np.ndarray):
                raise LoomError(f"expected a numpy array, got {type(a).__name__}", where=where)
            if a.dtype != spec.dtype:
                raise LoomError(f"expected dtype {spec.dtype}, got {a.dtype}", where=where)
            if a.shape != spec.shape:
                raise LoomError(f"expected shape {spec.shape}, got {a.shape} (the model is "
                                "compiled for the example inputs' shapes)", where=where)
            pinned = self.graph.pinned.get(spec.name)
            if pinned is not None and not np.array_equal(a, pinned):
                raise LoomError(f"the model was compiled for this input's example value {pinned.tolist()} (it gives "
                                f"a shape, axes, pads or sizes, fixed when loom compiles), got {a.tolist()}; compile "
                                "again with this value as the example", where=where)
            checked.append(np.ascontiguousarray(a).reshape(a.shape))  # 0-d stays 0-d
        return checked

    def by_position(self, args: tuple, named: dict) -> tuple:
        """``args`` followed by the inputs given by name (the model's input names, ``repr(model)`` lists them)."""
        if not named:
            return args
        specs = self.graph.inputs
        known = {spec.name: k for k, spec in enumerate(specs)}
        for name in named:
            if name not in known:
                raise LoomError(f"the model has no input named {name!r} (inputs: {', '.join(map(repr, specs))})")
            if known[name] < len(args):
                raise LoomError(f"input {known[name]} ({name}) is given both by position and by name")
        missing = [spec.name for spec in specs[len(args):] if spec.name not in named]
        if missing:
            raise LoomError(f"input(s) {', '.join(missing)} not given (the model takes "
                            f"{', '.join(map(repr, specs))})")
        return (*args, *(named[spec.name] for spec in specs[len(args):]))

    def __call__(self, *args, profile: bool = False, clock=time.perf_counter, **named):
        """Inputs by position, or by name (``model(x=...)``). ``clock``: what ``profile`` measures layers with
        (``time.process_time``: this process's CPU time, steadier than wall time on a shared machine when the
        layers run on one thread)."""
        env: dict[str, np.ndarray] = dict(self.graph.constants)
        for spec, a in zip(self.graph.inputs, self.check_inputs(self.by_position(args, named))):
            env[spec.name] = a
        timings: list[LayerTime] = []
        for index, layer in enumerate(self.graph.layers):
            ins = [env[t.name] for t in layer.inputs]
            start = clock()
            if layer.guard is not None and bool(env[layer.guard[0].name]) != layer.guard[1]:
                env[layer.output.name] = np.zeros(layer.output.shape, layer.output.dtype)  # (a branch not taken)
            elif layer.is_view:
                env[layer.output.name] = ins[0].reshape(layer.output.shape)
            else:
                if layer.kind == "embedding":
                    _check_ids(layer, ins[1], ins[0].shape[0])
                elif layer.attrs.get("zero_divisor") == "raise":
                    _check_divisor(layer, ins[-1])
                elif layer.kind in ("gather_elements", "take_positions", "scatter_elements"):
                    _check_positions(layer, ins[1], ins[0].shape[layer.attrs["axis"]])
                out = np.empty(layer.output.shape, layer.output.dtype)
                runner = self.runners.get(index)
                if runner is not None:
                    runner(layer, ins, out)
                else:  # (uint8 buffers are the C functions' int8, ...: the same bytes)
                    self._functions[index](*(_signed(a) for a in ins), _signed(out))
                env[layer.output.name] = out
            if profile:
                runner = self.runners.get(index)
                device = "view" if layer.is_view else runner.device if runner else "cpu"
                timings.append(LayerTime(index, layer, self._names.get(index, ""), device,
                                         clock() - start, runner.modelled_s if runner else None,
                                         runner.schedule if runner else "", self.kept_on_cpu.get(index, "")))
            for t in _reads(layer):  # free intermediates after their last use
                if self._last_use.get(t.name) == index and t.name not in self.graph.constants:
                    env.pop(t.name, None)
        if profile:
            self.last_profile = timings
        # an output that is a constant (a weight returned as it is) is a copy: the caller may write to
        # it, and the constant is the model's own for every later call
        outs = [env[t.name].copy() if t.name in self.graph.constants else env[t.name] for t in self.graph.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)


def _reads(layer: Layer) -> list[Tensor]:
    """The tensors a layer reads: its inputs and its guard's flag."""
    return layer.inputs if layer.guard is None else [*layer.inputs, layer.guard[0]]


_SIGNED = {np.dtype(np.uint8): np.int8, np.dtype(np.uint16): np.int16, np.dtype(np.uint32): np.int32,
           np.dtype(np.uint64): np.int64, **{d: bits_dtype(d) for d in FORMATS}}  # (bfloat16 / float8: their bits)


def _signed(a: np.ndarray) -> np.ndarray:
    signed = _SIGNED.get(a.dtype)
    return a if signed is None else a.view(signed)


def _check_positions(layer: Layer, positions: np.ndarray, size: int) -> None:
    """Run-time gather / scatter positions: in [0, size), or [-size, size) where negative ones count from the end."""
    low = -size if layer.attrs["negative"] else 0
    if positions.size and (positions.min() < low or positions.max() >= size):
        bad = int(positions.min()) if positions.min() < low else int(positions.max())
        raise LoomError(f"{layer.output.name}: index {bad} is out of range for an axis of {size} (indices lie in "
                        f"[{low}, {size}))", where=layer.where)


def _check_divisor(layer: Layer, divisor: np.ndarray) -> None:
    """An integer division whose divisor may be 0 and that is an error there (PyTorch's): checked before its C runs."""
    if not np.all(divisor):
        raise LoomError(f"{layer.attrs['op']}: integer division by zero (the divisor has a zero at "
                        f"{tuple(int(i) for i in np.argwhere(divisor == 0)[0])})", where=layer.where)


def _check_ids(layer: Layer, ids: np.ndarray, rows: int) -> None:
    if ids.size and (ids.min() < 0 or ids.max() >= rows):
        bad = int(ids.min()) if ids.min() < 0 else int(ids.max())
        raise LoomError(f"embedding: index {bad} is out of range for a table of {rows} rows",
                        where=layer.where)
