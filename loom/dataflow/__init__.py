"""Running dataflow graphs (dfg IR): parallel nodes, bounded channels, no hangs.

    from loom.dataflow import run_graph, Process, Map, Accelerator
    run = run_graph(module, args=(5,), bindings={"pow2": Accelerator(...), "read_op": lambda: 3})

This layer sits above the orchestration layer (it drives ``loom.driver`` for
offloaded nodes and compiled ``@loom.kernel``s for C nodes). Semantics and error
reporting: ``channels``; implementations of body-less operators: ``bindings``; the throughput
model (predicted items/s beside the measured rate): ``model``.
"""

from loom.dataflow.bindings import Accelerator, Map, Process
from loom.dataflow.channels import Broken, ChannelStats, DeadlockError, NodeError, NodeStats, Port
from loom.dataflow.graphs import run
from loom.dataflow.model import NodeCost, model_run, predict
from loom.dataflow.runner import GraphRun, run_graph
from loom.frontends.dataflow import Graph

__all__ = ["run_graph", "run", "Graph", "GraphRun", "Process", "Map", "Accelerator", "Port", "Broken", "ChannelStats",
           "NodeError", "DeadlockError", "NodeStats", "NodeCost", "predict", "model_run"]
