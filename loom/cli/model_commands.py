"""``loom model``: whole models (PyTorch modules in a .py file, .onnx files) on loom's CPU backend.

    loom model run FILE [--input-shape 1,3,224,224 ...] [--input-dtype int64 ...] [--model NAME]
                        [--seed S] [--high N] [--check] [--profile] [--repeats R]
        import, compile and run on seeded random inputs (floats in [-1, 1), integers in [0, --high));
        --check compares with PyTorch (a .py model) or onnx.reference (an .onnx model);
        --profile prints the per-layer report (where each layer ran, host time, share)
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from loom.build.options import parse_shape
from loom.cli.arg_types import positive_int
from loom.errors import LoomError
from loom.models.seeded import INTEGER_HIGH, check_tolerance, onnx_reference, seeded_inputs, torch_reference


def register(sub) -> None:
    model = sub.add_parser("model", help="whole models (PyTorch .py, ONNX): import, compile, run")
    commands = model.add_subparsers(metavar="COMMAND")
    p = commands.add_parser("run", help="compile a model and run it on seeded random inputs")
    p.add_argument("file", help="model.onnx, or model.py defining the torch module")
    p.add_argument("--input-shape", action="append", default=[], metavar="D0,D1,...",
                   help="shape of each input, in order (required for .py models; .onnx files have them)")
    p.add_argument("--input-dtype", action="append", default=[], choices=("float32", "int64", "int32", "bool"),
                   help="dtype of each input of a .py model (default float32)")
    p.add_argument("--model", default=None, help="the function or nn.Module class of a .py file to use")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--high", type=positive_int, default=INTEGER_HIGH, help="integer inputs are drawn from [0, HIGH)")
    p.add_argument("--check", action="store_true", help="compare with PyTorch / onnx.reference")
    p.add_argument("--tolerance", type=float, default=None,
                   help="maximum relative error for --check (default 1e-4, 1e-3 for float16 outputs)")
    p.add_argument("--profile", action="store_true", help="print the per-layer report")
    p.add_argument("--repeats", type=positive_int, default=1, help="timed runs (the best is reported)")
    p.set_defaults(handler=cmd_run)
    model.set_defaults(handler=lambda args: model.print_help() or 2)


def _inputs(args, rng: np.random.Generator, onnx_graph=None) -> list[np.ndarray]:
    shapes = [parse_shape(s) for s in args.input_shape]
    if onnx_graph is not None and not shapes:
        specs = [(t.shape, t.dtype) for t in onnx_graph.inputs]
    else:
        if not shapes:
            raise LoomError("a .py model needs --input-shape for each input", where="--input-shape")
        dtypes = args.input_dtype or ["float32"] * len(shapes)
        if len(dtypes) != len(shapes):
            raise LoomError(f"{len(shapes)} --input-shape but {len(dtypes)} --input-dtype", where="--input-dtype")
        specs = [(s, np.dtype(d)) for s, d in zip(shapes, dtypes)]
    return seeded_inputs(specs, rng, high=args.high)


def cmd_run(args) -> int:
    from loom.models.api import import_model
    from loom.models.compiler import compile_graph
    from loom.models.onnx_conformance import relative_error

    path = Path(args.file)
    for text in args.input_shape:  # flags first: a bad one is reported before any import work
        parse_shape(text)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if path.suffix == ".onnx":
        graph = import_model(path, None if not args.input_shape else _inputs(args, np.random.default_rng(args.seed)))
        inputs = _inputs(args, rng, graph)
        reference = onnx_reference(path) if args.check else None
    elif path.suffix == ".py":
        from loom.models.torch_file import load_torch_model

        module = load_torch_model(path, args.model)
        inputs = _inputs(args, rng)
        graph = import_model(module, inputs)
        reference = torch_reference(module) if args.check else None
    else:
        raise LoomError("expected a .onnx file or a .py file defining a torch module", filename=str(path))
    imported = time.perf_counter()
    model = compile_graph(graph)
    compiled = time.perf_counter()
    best, outputs = float("inf"), None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        outputs = model(*inputs, profile=args.profile)
        best = min(best, time.perf_counter() - t0)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    print(f"{path.name}: {len(graph.layers)} layers, import {imported - start:.2f} s, "
          f"compile {compiled - imported:.2f} s, run {best * 1e3:.2f} ms")
    for k, y in enumerate(outputs):
        print(f"output {k}: {y.dtype}{list(y.shape)}  mean {float(y.mean()):.6g}")
    if args.profile:
        _print_profile(model.last_profile)
    if reference is not None:
        expected = reference(inputs)
        worst = max(relative_error(y, e) for y, e in zip(outputs, expected))
        tolerance = args.tolerance if args.tolerance is not None else check_tolerance(outputs)
        ok = worst <= tolerance and len(outputs) == len(expected)
        print(f"check: relative error {worst:.3g} ({'ok' if ok else 'FAILED'}, tolerance {tolerance:g})")
        return 0 if ok else 1
    return 0


def _print_profile(profile) -> None:
    from loom.cli.table import format_table, shorten_path
    from loom.models.report import layer_report

    rows = [[r.index, r.kind, "x".join(map(str, r.shape)), r.device, r.milliseconds, f"{r.share:.1%}",
             shorten_path(r.where, 60)] for r in layer_report(profile) if r.device != "view"]
    print(format_table(["#", "layer", "shape", "ran on", "ms", "share", "where"], rows))
