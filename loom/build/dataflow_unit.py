"""``loom build`` of a dataflow graph: the ``dfg`` module, every node bound to a kernel built as
a kernel unit (offloaded nodes with their host driver), and one run of the graph as the check."""

from __future__ import annotations

from dataclasses import replace

from loom.build.folder import OutputFolder
from loom.build.ekl_unit import build_ekl_kernel
from loom.build.kernel_unit import build_kernel
from loom.build.options import BuildOptions
from loom.core.user_files import run_user_code
from loom.errors import LoomError

RUN_TIMEOUT = 60.0  # seconds; the runner reports a deadlock long before


def build_dataflow(folder: OutputFolder, unit: str, source, options: BuildOptions) -> None:
    """``source`` is a BuildInput of kind dataflow (a .mlir file or an imported .py)."""
    record = folder.unit(unit, "dataflow")
    module, bindings, run = _graph(source)
    if options.wants("mlir"):
        folder.write(unit, "ir/dfg.mlir", str(module), kind="mlir", stage="dfg",
                     description="the graph: operators, channels, instances (dfg dialect)")
    # a node's CPU check is the graph's run; its HLS C simulation (--target hls) is checked as any unit's
    node_check = options.check and options.target == "hls"
    for node, binding in sorted(bindings.items()):
        kernel, node_options = _node_kernel(binding, options)
        if _is_ekl(kernel):
            build_ekl_kernel(folder, f"{unit}.{node}", kernel, replace(options, check=node_check), hls_required=False)
            record.notes.append(f"node {node}: built as unit {unit}.{node} (EKL)")
        elif kernel is not None:
            # a node the HLS backend cannot size (dynamic dims, no --dims) gets a note, not a failed graph
            build_kernel(folder, f"{unit}.{node}", kernel, replace(node_options, check=node_check),
                         hls_required=False)
            record.notes.append(f"node {node}: built as unit {unit}.{node}"
                                + (" with its host driver" if node_options.accel else ""))
    if options.check and run is not None:
        record.checks.append(run())
    elif options.check:
        record.notes.append("not run: the operators of a .mlir graph are bound at run time "
                            "(a .py graph file with bindings() is built and run)")


def _graph(source):
    """(module, bindings, run) where ``run()`` runs the graph once and says what came out."""
    from loom.dataflow import run as run_graph_object
    from loom.dataflow import run_graph

    path = str(source.path)
    if source.module is None:  # a .mlir file: operators with bodies, nothing bound
        module = _parse(source.path)
        return module, {}, None
    mod = source.module
    if callable(getattr(mod, "graph", None)):
        graph = run_user_code(mod.graph, path, "building the graph (graph())")
        if not hasattr(graph, "module") or not hasattr(graph, "outputs"):
            raise LoomError(f"graph() returned a {type(graph).__name__}, expected a loom.dataflow.Graph", filename=path)

        def run():
            outputs, result = run_graph_object(graph, timeout=RUN_TIMEOUT)
            return (f"graph ran: {len(result.nodes)} nodes, outputs "
                    + ", ".join(f"{name} {len(items)} items" for name, items in outputs.items()))
        return graph.module(), dict(graph.bindings), run
    module = run_user_code(mod.module, path, "building the module (module())")
    bindings = run_user_code(mod.bindings, path, "building the bindings (bindings())")

    def run():
        result = run_graph(module, getattr(mod, "ENTRY", None), tuple(getattr(mod, "ARGS", ())), bindings,
                           RUN_TIMEOUT)
        return f"graph ran: result {', '.join(map(str, result.values))}"
    return module, dict(bindings), run


def _parse(path):
    from loom.dialects import context
    from loom.dialects.parsing import text_parser

    try:
        module = text_parser(context(), path.read_text(), str(path)).parse_module()
        module.verify()
    except (OSError, UnicodeDecodeError) as error:
        raise LoomError(f"cannot read: {error}", filename=str(path)) from None
    except Exception as error:  # noqa: BLE001 - xDSL parse and verify errors carry their location text
        raise LoomError(f"not a valid dfg module: {str(error).strip().splitlines()[0]}", filename=str(path)) from None
    return module


def _is_ekl(kernel) -> bool:
    from loom.jit.ekl import EklKernel

    return isinstance(kernel, EklKernel)


def _node_kernel(binding, options: BuildOptions):
    """The kernel behind a node binding (and options naming its accelerator), or (None, options)."""
    from loom.dataflow import Accelerator, Map, Process
    from loom.jit import Kernel

    if isinstance(binding, (Map, Process)):
        binding = binding.fn
    if isinstance(binding, Kernel) or _is_ekl(binding):
        return binding, replace(options, accel=None)
    if isinstance(binding, Accelerator):
        return binding.kernel, replace(options, accel=binding.description, accel_name=binding.accelerator,
                                       flow=binding.flow)
    return None, options
