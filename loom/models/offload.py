"""Model layers on accelerators: matrix products offloaded through generated AXI drivers.

``plan_offload(graph, accelerators)`` gives, per layer index, a ``LayerRunner`` for every ``matmul``
(2-d, bias optional) and ``batch_matmul`` layer an accelerator description takes: one driver per data
type, compiled once from a dynamic-shape ``linalg.matmul`` (``loom.driver.compile_driver``; the
description's tile sizes, partial tiles zero-padded), serving every layer shape. The driver
accumulates (C += A.B), so C starts from the layer's bias (or zero), the linalg ``outs`` semantics.
Other layers, and every layer when no description takes f32 matrix products, stay on the CPU; the
reasons are kept (``OffloadPlan.reasons``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from loom.errors import LoomError
from loom.models.graph import Graph, Layer

_NO_MATCH = ("no operation matches", "data type mismatch")  # compile_driver's "not this accelerator"


@dataclass
class LayerRunner:
    """Runs one layer on an accelerator; ``modelled_s`` is the timing model's time of its last call."""
    driver: object  # loom.driver.AccelDriver
    device: str
    modelled_s: float = 0.0

    def __call__(self, layer: Layer, ins: list[np.ndarray], out: np.ndarray) -> None:
        a, b, *bias = ins
        if bias:
            np.copyto(out, np.broadcast_to(bias[0], out.shape))  # the accumulator's initial value
        else:
            out.fill(0)
        self.modelled_s = 0.0
        if a.ndim == 2:
            self._matmul(a, b, out)
        else:
            for k in range(a.shape[0]):  # one product per batch entry: contiguous slices, no copies
                self._matmul(a[k], b[k], out[k])

    def _matmul(self, a, b, c) -> None:
        stats = self.driver(a, b, c)
        if stats is not None and stats.timing is not None:
            self.modelled_s += stats.timing.total_s


@dataclass
class OffloadPlan:
    runners: dict[int, LayerRunner] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)  # why matrix products stayed on the CPU


def _matmul_module():
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import func, linalg
    from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp, f32

    t = MemRefType(f32, [DYNAMIC_INDEX, DYNAMIC_INDEX])
    f = func.FuncOp("model_matmul", ([t, t, t], []))
    with ImplicitBuilder(f.body) as (a, b, c):
        linalg.MatmulOp([a, b], [c])
        func.ReturnOp()
    return ModuleOp([f])


def _driver(targets) -> tuple[object | None, list[str]]:
    from loom.driver import compile_driver

    reasons = []
    for t in targets:
        try:
            return compile_driver(_matmul_module(), t.description, t.accelerator, t.flow), reasons
        except LoomError as error:
            if not any(error.message.startswith(s) for s in _NO_MATCH):
                raise
            reasons.append(f"{t}: {error.message}")
    return None, reasons or ["no accelerator given"]


def plan_offload(graph: Graph, accelerators) -> OffloadPlan:
    from loom.offload.ekl import targets as parse_targets

    found = parse_targets(accelerators)
    products = [k for k, layer in enumerate(graph.layers) if layer.kind in ("matmul", "batch_matmul")]
    plan = OffloadPlan()
    if not products:
        return plan
    driver, reasons = _driver(found)
    plan.reasons = reasons
    if driver is None:
        return plan
    runner_device = driver.accelerator.name
    for k in products:
        plan.runners[k] = LayerRunner(driver, runner_device)
    return plan
