"""``loom build`` of a kernel: its IR at every stage, C, the compiled object, a check, a driver, HLS C++.

Works for ``@loom.kernel`` functions and for functions of a ``.mlir`` file (``MlirFunction``).
With ``--accel``, the host driver for the accelerator (every driver stage, ``driver.c``, summary).
"""

from __future__ import annotations

import numpy as np

from loom.build.folder import OutputFolder
from loom.build.options import BuildOptions
from loom.errors import LoomError
from loom.jit.stages import STAGE_HELP, STAGES, stage_text


def build_kernel(folder: OutputFolder, unit: str, kernel, options: BuildOptions, example=None,
                 hls_required: bool = True) -> None:
    record = folder.unit(unit, "kernel")
    module = kernel.module
    if options.wants("mlir"):
        for k, stage in enumerate(STAGES[:-1], 1):
            folder.write(unit, f"ir/{k:02d}-{stage}.mlir", stage_text(module, stage), kind="mlir", stage=stage,
                         description=STAGE_HELP[stage])
    if options.wants("c"):
        folder.write(unit, f"c/{kernel.name}.c", stage_text(module, "c"), kind="c", stage="c",
                     description=STAGE_HELP["c"])
        folder.copy(unit, f"lib/{kernel.name}.so", _so_path(folder, unit, kernel), kind="shared-object", stage="c",
                    description="compiled with the system C compiler (loom's flags), loadable with ctypes")
        if options.check:
            _check(record, kernel, example, options)
    if options.accel and options.wants("driver"):
        _driver(folder, unit, record, kernel, options)
    if options.wants("hls"):
        from loom.build.hls_unit import build_hls

        build_hls(folder, unit, kernel.name, module, options, example, required=hls_required)


def _so_path(folder: OutputFolder, unit: str, kernel):
    """The shared object the kernel's calls use (compile_module memoizes it: compiled once); the
    section records its C flags so a deployed variant loads it without a compiler."""
    from loom.backends.c import compile_module
    from loom.backends.c.checks import checks_requested
    from loom.backends.c.compiler import native_requested
    from loom.passes.recipes import lower_to_c

    checked = checks_requested(getattr(kernel, "checked", None))
    folder.facts.setdefault(unit, {}).update(checked=checked, native=native_requested(None))
    return compile_module(lower_to_c(kernel.module), checked=checked).so_path


def _check(record, kernel, example, options: BuildOptions) -> None:
    from loom.examples.checks import CHECK_HEADERS, check_kernel

    rng = np.random.default_rng(options.seed)
    try:
        if example is not None:
            args = example.make_args(rng, 1)
        elif hasattr(kernel, "random_arguments"):  # a function of a .mlir file
            args = kernel.random_arguments(options.dims, rng)
        else:
            from loom.jit.random_inputs import random_arguments

            args = random_arguments(kernel, options.dims, rng)
    except LoomError as error:
        record.notes.append(f"not run: {error.message}")
        return
    row = dict(zip(CHECK_HEADERS, check_kernel(kernel, example, args, use_mlir=True)))
    record.checks.append(f"run on random inputs: vs numpy {row['vs numpy']}, vs mlir-runner "
                         f"{row['vs mlir-runner']}: {row['status']}")
    if row["status"] != "ok":
        raise LoomError(f"kernel {kernel.name} gives wrong results ({row['status']}): vs numpy {row['vs numpy']}, "
                        f"vs mlir-runner {row['vs mlir-runner']}")


def _driver(folder: OutputFolder, unit: str, record, kernel, options: BuildOptions) -> None:
    from loom.driver.compile import compile_driver, stage_files

    try:
        drv = compile_driver(kernel, options.accel, options.accel_name, options.flow)
    except LoomError as error:
        if options.target == "driver":
            raise
        record.notes.append(f"no driver: {error}")
        return
    for filename, text in stage_files(drv).items():
        stage = filename[3:-5]
        folder.write(unit, f"driver/{filename}", text, kind="mlir", stage=stage, description=f"driver stage {stage}")
    folder.write(unit, "driver/driver.c", drv.c_source, kind="c", stage="driver",
                 description=f"host driver for {drv.summary.accelerator} flow {drv.summary.flow}")
    folder.facts.setdefault(unit, {})["accelerator"] = {
        "description": str(options.accel), "name": drv.summary.accelerator, "flow": drv.summary.flow}
    folder.write(unit, "driver/summary.txt", str(drv.summary) + "\n", kind="report", stage="driver",
                 description="matched op, tiles, loop order, opcode placement")
