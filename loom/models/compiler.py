"""From a ``Graph`` to a ``CompiledModel``: fold, build the IR (``lower.build_module``), lower it with
loom's C recipe and compile it once (cached by content hash like every loom module)."""

from __future__ import annotations

from loom.models.fold import fold_batch_norms
from loom.models.graph import Graph
from loom.models.lower import build_module
from loom.models.runtime import CompiledModel


def lower_for_cpu(module):
    """loom's C recipe plus ``scf-parallelize``: each layer's outermost independent loop (output
    channels, rows) becomes an OpenMP loop (threads from OMP_NUM_THREADS)."""
    from loom.passes.pipeline import Pipeline
    from loom.passes.recipes import lower_to_c

    parallel = Pipeline.parse("loom-convert-linalg-to-loops,loom-remove-dead-allocas,scf-parallelize")
    return lower_to_c(parallel.run(module.clone()))


def compile_graph(graph: Graph) -> CompiledModel:
    from loom.backends.c import compile_module

    graph = fold_batch_norms(graph)
    module, names = build_module(graph.layers)
    compiled = compile_module(lower_for_cpu(module))
    by_name = {name: compiled.function(name) for name in set(names.values())}
    functions = {index: by_name[name] for index, name in names.items()}
    return CompiledModel(graph, functions, names, module)
