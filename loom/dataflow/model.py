"""Analytical steady-state throughput of a dfg graph run by the threaded runtime.

The unit is one *item* of a reference channel (the graph's output). Each node costs, per
item, ``cpu`` seconds of its own thread, of which ``gil`` seconds hold the GIL (Python work:
channel operations, glue, interpreted bodies; C kernels and accelerator drivers release it).
With ``cores`` cores, the steady-state rate is the smallest of three bounds:

- the slowest node: ``1 / max(cpu_i)`` (every node is its own thread; a node serves one
  item at a time, so with deep enough channels the pipeline runs at its slowest stage);
- the CPU share: ``cores / sum(cpu_i)`` (all nodes together cannot use more than the cores);
- the GIL: ``1 / sum(gil_i)`` (Python work of all nodes is serialised; channel operations
  are Python work, so this is also the channels' bandwidth).

Fill and drain of the pipeline are left out: the model is for long runs. Costs come either
from a run (``NodeStats``: CPU seconds of each thread, divided by the items of the reference
channel) or from the caller (``NodeCost``: e.g. kernels timed one after another).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from loom.dataflow.channels import NodeStats
from loom.errors import LoomError


@dataclass(frozen=True)
class NodeCost:
    name: str
    cpu: float  # seconds of CPU per item
    gil: float  # of which holding the GIL


@dataclass(frozen=True)
class Prediction:
    items_per_second: float
    bottleneck: str  # "node @x", "CPU share (2 cores)" or "GIL (Python work)"
    bounds: dict[str, float]  # every bound, items/s

    def describe(self) -> str:
        return f"{self.items_per_second:.4g} items/s (bottleneck: {self.bottleneck})"


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def predict(costs: Sequence[NodeCost], cores: int | None = None) -> Prediction:
    """The steady-state items/s of nodes with these per-item costs on ``cores`` cores."""
    cores = available_cores() if cores is None else cores
    if cores < 1:
        raise LoomError(f"cores must be >= 1, got {cores}", where="throughput model")
    for c in costs:
        if c.cpu < 0 or c.gil < 0 or c.gil > c.cpu * (1 + 1e-9):
            raise LoomError(f"expected 0 <= gil <= cpu seconds per item, got cpu={c.cpu} gil={c.gil}",
                            where=f"node @{c.name}")
    working = [c for c in costs if c.cpu > 0]
    if not working:
        raise LoomError("no node has a cost: nothing to predict", where="throughput model")
    slowest = max(working, key=lambda c: c.cpu)
    bounds = {f"node @{slowest.name}": 1 / slowest.cpu,
              f"CPU share ({cores} core{'s' if cores > 1 else ''})": cores / sum(c.cpu for c in working)}
    gil = sum(c.gil for c in working)
    if gil > 0:
        bounds["GIL (Python work)"] = 1 / gil
    bottleneck = min(bounds, key=bounds.__getitem__)
    return Prediction(bounds[bottleneck], bottleneck, bounds)


def costs_from_run(nodes: Sequence[NodeStats], items: int) -> list[NodeCost]:
    """Per-item costs measured in a run that moved ``items`` items through the reference channel."""
    if items < 1:
        raise LoomError("the reference channel moved no items: no rate to model", where="throughput model")
    return [NodeCost(n.name, n.cpu / items, n.gil / items) for n in nodes]


@dataclass(frozen=True)
class ModelReport:
    channel: str
    items: int
    measured: float  # items/s over the run's wall time (including start and drain)
    prediction: Prediction

    def lines(self) -> list[str]:
        return [f"throughput on %{self.channel} ({self.items} items): measured {self.measured:.4g} items/s, "
                f"model {self.prediction.describe()}",
                "model bounds: " + ", ".join(f"{k} {v:.4g}/s" for k, v in self.prediction.bounds.items())]


def model_run(run, channel: str | None = None, cores: int | None = None) -> ModelReport | None:
    """Predicted beside measured items/s of a finished ``GraphRun``; ``None`` if no channel moved items.

    The reference channel defaults to the busiest one (most pulls)."""
    if channel is not None:
        ref = run.channel(channel)
    else:
        moved = [c for c in run.channels if c.pulls > 0]
        if not moved:
            return None
        ref = max(moved, key=lambda c: c.pulls)
    if ref.pulls == 0:
        return None
    measured = ref.pulls / run.seconds if run.seconds > 0 else float("inf")
    return ModelReport(ref.name, ref.pulls, measured, predict(costs_from_run(run.node_stats, ref.pulls), cores))


__all__ = ["NodeCost", "Prediction", "ModelReport", "predict", "costs_from_run", "model_run", "available_cores"]
