"""``loom build`` of a model file: an ``.onnx`` file, or a ``.pt2`` program saved by ``torch.export.save``.

Per distinct layer function: its IR (frontend, loops, lowered with the schedule ``loom.models.compile``
gives its kind), the C and the compiled object. The model is then run once from those objects on
seeded inputs (floats in [-1, 1), integers in [0, 100), as ``loom model run``): the per-layer report of
that run, and the check against onnx.reference (ONNX) or torch (``.pt2``) within 1e-4 relative (1e-3 for float16
outputs, ``seeded.check_tolerance``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from loom.build.folder import OutputFolder
from loom.build.options import BuildOptions
from loom.errors import LoomError
from loom.models.seeded import check_tolerance

LAYER_STAGES = (("frontend", "the layer built with loom.linalg"), ("loops", "linalg lowered to loops"),
                ("lowered", "what the C backend takes, scheduled as loom.models.compile does"))


def build_model(folder: OutputFolder, unit: str, path: Path, options: BuildOptions) -> None:
    from loom.models.compiler import function_kinds
    from loom.models.fold import fold_batch_norms
    from loom.models.lower import build_module

    record = folder.unit(unit, "model")
    rng = np.random.default_rng(options.seed)
    graph, inputs, reference = _import(path, options, rng)
    graph = fold_batch_norms(graph)  # as loom.models.compile: what runs is the folded graph
    module, names = build_module(graph.layers)
    kinds = function_kinds(graph.layers, names)
    _notes(record, options)
    if not (options.wants("mlir") or options.wants("c")):
        return
    with ThreadPoolExecutor(max_workers=max(1, min(options.threads, len(kinds)))) as pool:
        jobs = [pool.submit(_layer, folder, unit, f, kinds[f.sym_name.data], options) for f in module.body.block.ops]
        compiled = dict(job.result() for job in jobs)
    if not options.wants("c"):
        return
    from loom.models.runtime import CompiledModel

    functions = {index: compiled[name].function(name) for index, name in names.items()}
    model = CompiledModel(graph, functions, names, module)
    outputs = model(*inputs, profile=True)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    folder.write(unit, "report/layers.txt", _report(model.last_profile), kind="report", stage="c",
                 description="per layer: kind, shape, C function, measured host time and share of one run")
    if options.check:
        _check(record, unit, outputs, reference[0], reference[1](inputs))


def _import(path: Path, options: BuildOptions, rng: np.random.Generator):
    """(graph, seeded inputs, (reference name, reference(inputs) -> outputs)) of the model file."""
    from loom.models.onnx_import import import_onnx
    from loom.models.seeded import onnx_reference, seeded_inputs, torch_reference

    suffix = path.suffix.lower()
    if suffix == ".onnx":
        if options.input_shapes:
            dtypes = _onnx_input_dtypes(path)
            if len(dtypes) != len(options.input_shapes):
                raise LoomError(f"the model has {len(dtypes)} input(s) but {len(options.input_shapes)} "
                                "--input-shape were given", where="--input-shape")
            inputs = seeded_inputs(zip(options.input_shapes, dtypes), rng)
            graph = import_onnx(path, inputs)
        else:
            graph = import_onnx(path)  # refuses dynamic dims, naming the input and --input-shape's role
            inputs = seeded_inputs(((t.shape, t.dtype) for t in graph.inputs), rng)
        return graph, inputs, ("onnx.reference", onnx_reference(path))
    if suffix == ".pt2":
        from loom.models.torch_import import dynamic_inputs, graph_from_exported, specialize

        program = _load_exported(path)
        if options.input_shapes:  # the shapes to compile a program with dynamic dims for
            if not dynamic_inputs(program):
                raise LoomError("this .pt2 program was exported with static shapes: --input-shape does not "
                                "apply", where="--input-shape")
            dtypes = _exported_input_dtypes(program)
            if len(dtypes) != len(options.input_shapes):
                raise LoomError(f"the program has {len(dtypes)} input(s) but {len(options.input_shapes)} "
                                "--input-shape were given", where="--input-shape")
            inputs = seeded_inputs(zip(options.input_shapes, dtypes), rng)
            graph = graph_from_exported(specialize(program, inputs), source=str(path))
        else:  # refuses dynamic dims, naming the input and --input-shape's role
            graph = graph_from_exported(program.run_decompositions(), source=str(path))
            inputs = seeded_inputs(((t.shape, t.dtype) for t in graph.inputs), rng)
        return graph, inputs, ("torch", torch_reference(program.module()))
    raise LoomError(f"cannot build a {suffix} model: a .pt file is a pickle or TorchScript, which loom does not "
                    "load; save the model with torch.export.save (.pt2) or export it to .onnx",
                    filename=str(path))


def _onnx_input_dtypes(path: Path) -> list[np.dtype]:
    """The element type of each real (non-initializer) input, to draw inputs of a dynamic model."""
    import onnx
    from onnx import helper

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as error:  # protobuf's DecodeError, OSError, ...
        raise LoomError(f"cannot read ONNX model: {type(error).__name__}: {error}", filename=str(path)) from None
    initialized = {t.name for t in model.graph.initializer}
    return [np.dtype(helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
            for i in model.graph.input if i.name not in initialized]


def _exported_input_dtypes(program) -> list[np.dtype]:
    from torch.export.graph_signature import InputKind

    from loom.models.torch_import import _np_dtype

    users = [s.arg.name for s in program.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    vals = {n.name: n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder"}
    return [_np_dtype(vals[name].dtype) for name in users]


def _load_exported(path: Path):
    try:
        import torch
    except ImportError:
        raise LoomError("a .pt2 model needs torch (pip install loom[models])", filename=str(path)) from None
    try:
        return torch.export.load(str(path))
    except Exception as error:  # a zip that is not an exported program, a newer format, ...
        first = (str(error).strip().splitlines() or [""])[0]
        raise LoomError(f"cannot load exported program: {type(error).__name__}: {first}", filename=str(path)) from None


def _notes(record, options: BuildOptions) -> None:
    if options.accel:
        record.notes.append("no drivers: model layers are offloaded at run time (loom.models.compile "
                            "with accelerators), not by loom build")
    if options.target == "all" or options.wants("hls"):
        record.notes.append("no HLS C++: model layers are built for the CPU only")


def _layer(folder: OutputFolder, unit: str, function, kind: str, options: BuildOptions):
    """Write one layer function's IR stages and C, compile it; (name, the compiled module)."""
    from xdsl.dialects.builtin import ModuleOp

    from loom.backends.c import compile_module
    from loom.models.compiler import lower_by_kind
    from loom.passes.recipes import lower_to_loops

    name = function.sym_name.data
    single = ModuleOp([function.clone()])
    (lowered, native, _), = lower_by_kind(single, {name: kind})  # as loom.models.compile lowers it
    if options.wants("mlir"):
        texts = (str(single), str(lower_to_loops(single)), str(lowered))
        for k, ((stage, what), text) in enumerate(zip(LAYER_STAGES, texts), 1):
            folder.write(unit, f"ir/{name}/{k:02d}-{stage}.mlir", text, kind="mlir", stage=stage,
                         description=f"{kind} layer: {what}")
    if not options.wants("c"):
        return name, None
    compiled = compile_module(lowered, native=native)
    folder.write(unit, f"c/{name}.c", compiled.c_source, kind="c", stage="c",
                 description=f"{kind} layer: the generated C source" + (" (native, micro-kernel)" if native else ""))
    folder.copy(unit, f"lib/{name}.so", compiled.so_path, kind="shared-object", stage="c",
                description=f"{kind} layer compiled with the system C compiler, loadable with ctypes")
    return name, compiled


def _report(profile) -> str:
    from loom.models.report import layer_report

    rows = [["#", "layer", "shape", "function", "ms", "share", "where"]]
    functions = {t.index: t.function for t in profile}
    rows += [[str(r.index), r.kind, "x".join(map(str, r.shape)) or "scalar", functions[r.index] or "(view)",
              f"{r.milliseconds:.3f}", f"{r.share:.1%}", r.where] for r in layer_report(profile)]
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] + "\n"
                   for row in rows)


def _check(record, unit: str, outputs: list[np.ndarray], against: str, expected: list[np.ndarray]) -> None:
    from loom.models.onnx_conformance import relative_error

    if len(outputs) != len(expected):
        raise LoomError(f"model {unit}: {len(outputs)} output(s) but the reference gives {len(expected)}")
    worst = max((relative_error(y, np.asarray(e)) for y, e in zip(outputs, expected)), default=0.0)
    tolerance = check_tolerance(outputs)
    record.checks.append(f"run on seeded inputs: max relative error vs {against} {worst:.2g} "
                         f"(tolerance {tolerance:g})")
    if worst > tolerance:
        raise LoomError(f"model {unit} differs from {against} by {worst:.3g} (relative; tolerance {tolerance:g})")
