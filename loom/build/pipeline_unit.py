"""``loom build`` of an image pipeline: the streaming accelerator's unified buffers (``ubuf`` IR
and the buffer table) and the CPU schedule's IR, C and object, checked bit for bit against the
reference evaluator and the cycle simulation."""

from __future__ import annotations

import numpy as np

from loom.build.folder import OutputFolder
from loom.build.options import BuildOptions
from loom.errors import LoomError


def build_pipeline(folder: OutputFolder, unit: str, app, options: BuildOptions) -> None:
    from loom.examples.pipelines import build_app_funcs
    from loom.frontends.pipeline import evaluate
    from loom.jit.pipeline import compile_cpu
    from loom.streaming import build_design, simulate
    from loom.streaming.to_ubuf import design_to_ir

    record = folder.unit(unit, "pipeline")
    size = tuple(options.size)
    osize = tuple(app.output_shape(size))
    accel = build_app_funcs(app, "accel", tile=size)[0]  # a user's build error names its line
    design = build_design(accel, osize)
    if options.wants("mlir"):
        folder.write(unit, "ir/ubuf.mlir", str(design_to_ir(design, name=unit)), kind="mlir", stage="ubuf",
                     description=f"the scheduled streaming accelerator for {size[0]}x{size[1]} (unified buffers)")
    folder.write(unit, "report/buffers.txt", design.table() + "\n", kind="report", stage="ubuf",
                 description="unified buffers: capacities, ports, stage offsets, latency")
    if not (options.wants("c") or options.wants("hls")):
        return
    inputs = app.make_inputs(size, np.random.default_rng(options.seed))
    cpu = build_app_funcs(app, "cpu")[0]
    program = compile_cpu(cpu, {k: v.shape for k, v in inputs.items()}, osize)
    if options.wants("mlir"):
        folder.write(unit, "ir/cpu-frontend.mlir", str(program.module), kind="mlir", stage="frontend",
                     description="the CPU schedule lowered to loops")
        folder.write(unit, "ir/cpu-lowered.mlir", str(program.lowered), kind="mlir", stage="lowered",
                     description="what the C backend takes")
    if options.wants("hls"):
        from loom.build.hls_unit import build_hls

        build_hls(folder, unit, unit, program.lowered, options)
    if not options.wants("c"):
        return
    from loom.backends.c import emit_c

    folder.write(unit, f"c/{unit}.c", emit_c(program.lowered), kind="c", stage="c", description="the CPU schedule in C")
    if options.check:
        want = evaluate(cpu, inputs, osize)
        _compare(record, "CPU schedule (C)", program(inputs), want)
        _compare(record, f"cycle simulation ({design.latency} cycles)", simulate(accel, inputs, osize, design=design),
                 want)


def _compare(record, what: str, got: np.ndarray, want: np.ndarray) -> None:
    bad = int(np.count_nonzero(got != want)) if got.shape == want.shape else want.size
    record.checks.append(f"{what} vs the reference evaluator: " + ("bit-exact" if bad == 0 else f"{bad} pixels differ"))
    if bad:
        raise LoomError(f"{what} differs from the reference evaluator in {bad} of {want.size} pixels")
