"""``loom build`` of an EKL file: per kernel its esn, linalg and loop IR, C, the object and a check
against the numpy reference loom builds from the elaborated form (not from the generated code)."""

from __future__ import annotations

from dataclasses import replace

from loom.build.folder import OutputFolder
from loom.build.options import BuildOptions
from loom.core.compare import relative_difference
from loom.errors import LoomError

EKL_STAGES = (("esn", "esn dialect, as elaborated"), ("linalg", "linalg.generic / named contractions"),
              ("loops", "loops"), ("lowered", "what the C backend takes"))
DYNAMIC_EXTENT = 8  # size of '?' extents for the check (as `loom ekl run`)


def ekl_kernels(path, name: str | None) -> dict:
    import loom.ekl

    module = loom.ekl.load(path)
    if name is None:
        return dict(module.kernels)
    return {name: module.kernel(name)}


def build_ekl_kernel(folder: OutputFolder, unit: str, kernel, options: BuildOptions, hls_required: bool = True
                     ) -> None:
    from loom.backends.c import emit_c

    record = folder.unit(unit, "ekl")
    if options.wants("mlir"):
        for k, (stage, what) in enumerate(EKL_STAGES, 1):
            module = kernel.ir("c" if stage == "lowered" else stage)  # EKL calls the lowered stage "c"
            folder.write(unit, f"ir/{k:02d}-{stage}.mlir", str(module), kind="mlir", stage=stage, description=what)
    if options.wants("c"):
        folder.write(unit, f"c/{kernel.name}.c", emit_c(kernel.ir("c")), kind="c", stage="c",
                     description="the generated C source")
        if options.check:
            _check(record, kernel, options)
    if options.wants("hls"):
        from loom.build.hls_unit import build_hls

        # constant arrays are ROMs in hardware, not ports the host would have to fill
        # '?' extents: the check's size (or the known extent they must equal), --dims overriding
        sized = replace(options, dims={**kernel.dim_sizes(DYNAMIC_EXTENT), **dict(options.dims)})
        build_hls(folder, unit, kernel.name, kernel.ir("c", consts_as_globals=True), sized, required=hls_required,
                  ranges=testbench_ranges(kernel))


def testbench_ranges(kernel) -> dict[str, tuple]:
    """The HLS testbench's draw of every array the kernel reads, as the C check's random inputs
    (``random_arrays``): indices {0, 1}, floats [0, 1). Its defaults ([-100, 100], [-2, 2]) send gathers,
    and indices computed from floats (messner's tables), outside their arrays."""
    return {p.name: (0, 2) if p.dtype == "index" else (0.0, 1.0) for p in kernel.form.params
            if p.shape and p.dtype in ("index", "f32", "f64") and (not p.is_output or p.is_inout)}


def _check(record, kernel, options: BuildOptions) -> None:
    from loom.jit.ekl import random_arrays

    arrays = random_arrays(kernel, DYNAMIC_EXTENT, options.seed)
    inputs = kernel.inputs(arrays)
    kernel(**arrays)
    reference = kernel.reference(**inputs)
    tolerances = kernel.tolerances(arrays)  # per output, from its type and how many terms it accumulates
    errors = {}
    for name, want in reference.items():
        errors[name] = relative_difference(arrays[name], want)
    worst = max(errors, key=lambda n: errors[n] / tolerances[n])
    record.checks.append(f"run on random inputs ('?' = {DYNAMIC_EXTENT}): max relative error vs numpy "
                         f"{errors[worst]:.2g} on {worst} (tolerance {tolerances[worst]:.2g})")
    if errors[worst] > tolerances[worst]:
        raise LoomError(f"EKL kernel {kernel.name} differs from the numpy reference by {errors[worst]:.3g} on "
                        f"{worst} (tolerance {tolerances[worst]:.2g})")
