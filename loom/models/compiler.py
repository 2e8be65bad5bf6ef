"""From a ``Graph`` to a ``CompiledModel``: fold, build the IR (``lower.build_module``), lower it with
loom's C recipe and compile it (cached by content hash like every loom module).

Matrix products and convolutions get the register-blocked micro-kernel schedule of the CPU tuner
(``loom.tune.cpu_schedule.default_micro_kernel``: tiles, packed panels, accumulators in registers,
FMA) and are compiled in a second, native module (``-march=native``); the other layers keep the
plain C recipe."""

from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from loom.models.fold import fold_batch_norms
from loom.models.graph import Graph
from loom.models.lower import build_module
from loom.models.runtime import CompiledModel


# layers with enough work per call to pay for waking OpenMP threads (a thread team per tiny
# element-wise layer costs more than the layer, and much more on a loaded machine)
PARALLEL_KINDS = ("conv2d", "grouped_conv2d", "matmul", "batch_matmul")
MICRO_KERNEL_KINDS = ("conv2d", "matmul", "batch_matmul")


def lower_for_cpu(module: ModuleOp, parallel: set[str]) -> ModuleOp:
    """loom's C recipe; in the functions named in ``parallel``, ``scf-parallelize`` also turns the
    outermost independent loop (output channels, rows) into an OpenMP loop (OMP_NUM_THREADS)."""
    from loom.passes.pipeline import Pipeline
    from loom.passes.recipes import lower_to_c, lower_to_loops

    loops = lower_to_loops(module)
    funcs = list(loops.body.block.ops)
    for f in funcs:
        f.detach()
    heavy = ModuleOp([f for f in funcs if isinstance(f, FuncOp) and f.sym_name.data in parallel])
    Pipeline.parse("scf-parallelize").run(heavy)
    for f in list(heavy.body.block.ops):
        f.detach()
    loops = ModuleOp([f for f in funcs if f.parent is None])
    return lower_to_c(loops)


def lower_micro_kernels(module: ModuleOp, parallel: set[str]) -> ModuleOp:
    """Each function with its default micro-kernel schedule (one thread, or an OpenMP loop when
    named in ``parallel``), lowered to C; a function without one keeps its loops."""
    from loom.passes.recipes import lower_to_c, lower_to_loops
    from loom.tune.cpu_schedule import default_micro_kernel

    loops = lower_to_loops(module)
    scheduled = []
    for f in [f for f in loops.body.block.ops if isinstance(f, FuncOp)]:
        f.detach()
        one = ModuleOp([f])
        schedule = default_micro_kernel(one, f.sym_name.data, threads=2 if f.sym_name.data in parallel else 1)
        if schedule is not None:
            one = schedule.apply(one)
        scheduled += [g.clone() for g in one.body.block.ops]
    return lower_to_c(ModuleOp(scheduled))


class LoweredGroup(NamedTuple):
    module: ModuleOp      # lowered to what the C backend takes
    native: bool | None   # for compile_module: True for micro-kernels (-march=native), else the default
    names: set[str]       # the functions it defines


def lower_by_kind(module: ModuleOp, kinds: dict[str, str], micro_kernels: bool = True) -> list[LoweredGroup]:
    """The functions of ``module`` lowered as their layer kinds (``kinds``: function name -> kind)
    choose: micro-kernel kinds in one native group (unless ``micro_kernels`` is False), the others
    with the plain C recipe; the heavy kinds with an OpenMP loop. Empty groups are left out."""
    funcs = [f for f in module.body.block.ops if isinstance(f, FuncOp)]
    parallel = {f.sym_name.data for f in funcs if kinds.get(f.sym_name.data) in PARALLEL_KINDS}
    micro = {f.sym_name.data for f in funcs if micro_kernels and kinds.get(f.sym_name.data) in MICRO_KERNEL_KINDS}
    plain = {f.sym_name.data for f in funcs} - micro
    groups = []
    for native, names, lower in ((True, micro, lower_micro_kernels), (None, plain, lower_for_cpu)):
        if names:
            part = ModuleOp([f.clone() for f in funcs if f.sym_name.data in names])
            groups.append(LoweredGroup(lower(part, parallel & names), native, names))
    return groups


def compile_graph(graph: Graph, accelerators=None, offload: str = "when-faster",
                  micro_kernels: bool = True) -> CompiledModel:
    """``accelerators``: description paths (or ``(path, accelerator[, flow])``) whose accelerators take
    the graph's matrix products and convolutions (``loom.models.offload``); the rest runs on the CPU.
    ``offload``: ``"when-faster"`` keeps a layer on the CPU unless the accelerator's modelled time beats
    the compiled CPU layer's measured time (``loom.models.offload_cost``); ``"always"`` offloads every
    layer an accelerator takes. ``micro_kernels=False``: matrix products and convolutions keep the
    plain C recipe too (loops, -O3, no tiling or packing; a baseline closer to the AXI4MLIR paper's
    TinyBERT CPU code, torch-mlir at -O3)."""
    from loom.models.offload_cost import check_policy, keep_faster

    check_policy(offload)
    graph = fold_batch_norms(graph)
    plan = None
    if accelerators:
        from loom.models.offload import plan_offload

        plan = plan_offload(graph, accelerators)
    module, names = build_module(graph.layers)
    by_name = _compile(module, function_kinds(graph.layers, names), micro_kernels)
    functions = {index: by_name[name] for index, name in names.items()}
    if plan is None:
        return CompiledModel(graph, functions, names, module)
    if offload == "when-faster":
        keep_faster(plan, graph, functions)  # drops the pads of the convolutions the CPU keeps
    pads = sorted(plan.pads.items())  # CPU pad layers of the offloaded convolutions, compiled only now
    if pads:
        layers = [*graph.layers, *(pad for _, pad in pads)]
        module, names = build_module(layers)  # the graph's layers keep their names
        new = {names[k] for k in range(len(graph.layers), len(layers))} - set(by_name)
        if new:
            funcs = [f.clone() for f in module.body.block.ops if f.sym_name.data in new]
            by_name.update(_compile(ModuleOp(funcs), function_kinds(layers, names), micro_kernels))
        for position, (conv_index, _) in enumerate(pads):
            plan.runners[conv_index].pad = by_name[names[len(graph.layers) + position]]
    return CompiledModel(graph, functions, names, module, plan.runners, plan.reasons, plan.kept_on_cpu)


def function_kinds(layers, names: dict[int, str]) -> dict[str, str]:
    """Function name -> the kind of the layers it serves (``names``: layer index -> function name)."""
    return {names[k]: layer.kind for k, layer in enumerate(layers) if k in names}


def _compile(module: ModuleOp, kinds: dict[str, str], micro_kernels: bool = True) -> dict[str, object]:
    """Function name -> its compiled callable, every function of ``module`` lowered by its kind."""
    from loom.backends.c import compile_module

    by_name = {}
    for group in lower_by_kind(module, kinds, micro_kernels):
        compiled = compile_module(group.module, native=group.native)
        by_name.update({name: compiled.function(name) for name in group.names})
    return by_name
