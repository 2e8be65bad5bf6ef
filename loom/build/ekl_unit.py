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


def ekl_kernels(path, name: str | None, ranges: dict | None = None) -> dict:
    """The kernels to build; every name of ``ranges`` must be a parameter of one of them."""
    import loom.ekl

    module = loom.ekl.load(path)
    kernels = dict(module.kernels) if name is None else {name: module.kernel(name)}
    params = {p.name for k in kernels.values() for p in k.form.params}
    for unknown in sorted(set(ranges or {}) - params):
        raise LoomError(f"range of {unknown}: no kernel built from {path} has a parameter '{unknown}' (parameters: "
                        f"{', '.join(sorted(params))})", where="--range")
    return kernels


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
        folder.copy(unit, f"lib/{kernel.name}.so", _so_path(folder, unit, kernel), kind="shared-object", stage="c",
                    description="compiled with the system C compiler (loom's flags), loadable with ctypes; "
                                "constant arrays are trailing arguments")
        if options.check:
            _check(record, kernel, options)
    if options.wants("hls"):
        from loom.build.hls_unit import build_hls

        # constant arrays are ROMs in hardware, not ports the host would have to fill
        # '?' extents: the check's size (or the known extent they must equal), --dims overriding
        sized = replace(options, dims={**kernel.dim_sizes(DYNAMIC_EXTENT), **dict(options.dims)})
        build_hls(folder, unit, kernel.name, kernel.ir("c", consts_as_globals=True), sized, required=hls_required,
                  ranges=testbench_ranges(kernel, options.ranges))


def _so_path(folder: OutputFolder, unit: str, kernel):
    """The shared object the kernel's calls use (memoized by compile_module), with the flags a deployed variant
    needs to load it (gathers are range-checked)."""
    from loom.backends.c import compile_module
    from loom.backends.c.checks import checks_requested
    from loom.backends.c.compiler import native_requested

    checked = checks_requested(kernel.form.has_gathers or None)
    folder.facts.setdefault(unit, {}).update(checked=checked, native=native_requested(None))
    return compile_module(kernel.ir("c"), checked=checked).so_path


def own_ranges(kernel, ranges: dict) -> dict:
    """The ranges (``--range``, a project's ``ranges``) of this kernel's parameters."""
    names = {p.name for p in kernel.form.params}
    return {k: v for k, v in ranges.items() if k in names}


def testbench_ranges(kernel, ranges: dict | None = None) -> dict[str, tuple]:
    """The HLS testbench's draw of every array the kernel reads, as the C check's random inputs
    (``random_arrays``): indices {0, 1}, floats [0, 1), or the given ``ranges``. Its defaults ([-100, 100],
    [-2, 2]) send gathers, and indices computed from floats (messner's tables), outside their arrays."""
    given = own_ranges(kernel, ranges or {})
    out = {}
    for p in kernel.form.params:
        if p.shape and p.dtype in ("index", "f32", "f64") and (not p.is_output or p.is_inout):
            lo, hi = given.get(p.name, (0, 2) if p.dtype == "index" else (0.0, 1.0))
            out[p.name] = (int(lo), int(hi)) if p.dtype == "index" else (float(lo), float(hi))
    return out


def _check(record, kernel, options: BuildOptions) -> None:
    from loom.jit.ekl import random_arrays

    arrays = random_arrays(kernel, DYNAMIC_EXTENT, options.seed, ranges=own_ranges(kernel, options.ranges))
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
