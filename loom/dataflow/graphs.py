"""Running a Python-built ``Graph`` (``loom.frontends.dataflow``): its IR plus its bindings.

    outputs, run = run(graph)     # outputs: {output name: [items]}; run: GraphRun (channel counts)

``verify=False`` skips the IR verifiers for builder-made modules (the builder enforces the
same rules while the graph is declared; the fuzzer runs thousands of graphs this way).
"""

from __future__ import annotations

import threading

from loom.dataflow.bindings import Process
from loom.dataflow.runner import GraphRun, run_graph
from loom.frontends.dataflow import Graph


def _collector(items: list, lock: threading.Lock):
    def collect(port):
        for item in port:
            with lock:
                items.append(item)

    return Process(collect)


def run(graph: Graph, timeout: float | None = None, bindings: dict | None = None, verify: bool = True) -> tuple[dict[str, list], GraphRun]:
    collected: dict[str, list] = {name: [] for name in graph.outputs.values()}
    lock = threading.Lock()
    merged = dict(graph.bindings)
    for sink, name in graph.outputs.items():
        merged[sink] = _collector(collected[name], lock)
    merged.update(bindings or {})
    result = run_graph(graph.module(verify=verify), graph.name, (), merged, timeout, verify=False)
    return collected, result
