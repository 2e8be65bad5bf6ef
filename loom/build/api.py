"""``loom.build.build``: one entry point over every flow (the EVEREST basecamp's role).

Given a Python kernel file, an EKL file, an image pipeline, a dataflow graph, a ``.mlir``
file or a model file (``.onnx``, ``.pt2``), it writes every artifact of that flow (IR per stage,
C, compiled objects, drivers, reports) into one output folder with an index (``loom.build.folder``), checking each unit
once against its reference on the way. Units are built on ``threads`` threads (the C
compiler runs outside the GIL).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from loom.build.folder import OutputFolder
from loom.build.inputs import BuildInput, classify
from loom.build.options import BuildOptions
from loom.build.section import write_section
from loom.errors import LoomError


@dataclass(frozen=True)
class BuildResult:
    folder: Path
    index: dict

    @property
    def artifacts(self) -> list[dict]:
        return self.index["artifacts"]

    @property
    def units(self) -> list[dict]:
        return self.index["units"]


def build(source: str | Path, output: str | Path = "generated", options: BuildOptions | None = None,
          **option_values) -> BuildResult:
    """Build ``source`` into ``output``; options as a BuildOptions or as keywords (target, threads,
    accel, accel_name, flow, dims, size, check, seed, input_shapes)."""
    import loom

    from loom.build.project import is_project

    if is_project(source):
        raise LoomError(f"{source} is a project (several builds): build it with loom.build.build_project")
    options = options or BuildOptions(**option_values)
    started = time.perf_counter()
    what = classify(str(source))
    jobs = _jobs(what, options)
    folder = OutputFolder(output)
    with ThreadPoolExecutor(max_workers=min(options.threads, len(jobs))) as pool:
        for future in [pool.submit(job, folder) for job in jobs]:
            future.result()  # the first failure is the one reported
    folder.artifacts.sort(key=lambda a: a.path)
    index = folder.finish({"input": str(source), "input_kind": what.kind, "loom_version": loom.__version__,
                           "target": options.target, "threads": options.threads,
                           "accelerator": options.accel, "number_format": options.number_format,
                           "seconds": round(time.perf_counter() - started, 3)})
    write_section(folder, what.label, index)
    return BuildResult(folder.root, index)


def _jobs(what: BuildInput, options: BuildOptions) -> list:
    """One callable per unit, each taking the output folder."""
    if options.ranges and what.kind != "ekl":
        raise LoomError(f"ranges draw the inputs of EKL kernels; {what.source} is a {what.kind} input",
                        where="--range")
    if what.kind == "kernel":
        from loom.build.kernel_unit import build_kernel

        return [lambda f, n=name, k=kernel, e=example: build_kernel(f, n, k, options, e)
                for name, (kernel, example) in _kernels(what).items()]
    if what.kind == "ekl":
        from loom.build.ekl_unit import build_ekl_kernel, ekl_kernels

        return [lambda f, n=name, k=kernel: build_ekl_kernel(f, n, k, options)
                for name, kernel in ekl_kernels(what.path, what.name, options.ranges).items()]
    if what.kind == "pipeline":
        from loom.build.pipeline_unit import build_pipeline
        from loom.examples.pipelines import load_app

        app = what.module if what.module is not None else load_app(what.name)
        return [lambda f: build_pipeline(f, what.label, app, options)]
    if what.kind in ("dataflow", "pipeline") and what.path is not None and what.name is not None:
        raise LoomError(f"a {what.kind} file is built whole: drop ':{what.name}'", filename=str(what.path))
    if what.kind == "dataflow":
        from loom.build.dataflow_unit import build_dataflow

        return [lambda f: build_dataflow(f, what.label, what, options)]
    if what.kind == "model":
        from loom.build.model_unit import build_model

        if what.name is not None:
            raise LoomError(f"a model file is built whole: drop ':{what.name}'", filename=str(what.path))
        return [lambda f: build_model(f, what.label, what.path, options)]
    raise LoomError(f"cannot build {what.kind} inputs", filename=str(what.path))


def _kernels(what: BuildInput) -> dict:
    """name -> (kernel, example or None) for a kernel input."""
    from loom.examples.targets import resolve_kernel
    from loom.jit import Kernel

    if what.path is None:  # a built-in example
        return {what.name: resolve_kernel(what.name)}
    if what.path.suffix == ".mlir":
        from loom.jit.mlir_function import load_mlir_target, public_functions, parse_mlir_file

        names = [what.name] if what.name else public_functions(parse_mlir_file(what.path))
        return {n: (load_mlir_target(what.path, n), None) for n in names}
    kernels = {n: k for n, k in vars(what.module).items() if isinstance(k, Kernel)}
    if what.name is not None:
        if what.name not in kernels:
            raise LoomError(f"no @loom.kernel named '{what.name}' (kernels there: {', '.join(kernels) or 'none'})",
                            filename=str(what.path))
        kernels = {what.name: kernels[what.name]}
    return {n: (k, None) for n, k in kernels.items()}
