"""``loom build`` (one command over every flow) and ``loom climb`` (variant bundles).

    loom build INPUT [-o generated] [--target all|mlir|c|driver|hls] [--threads N]
               [--accel FILE.json --name ACC --flow FLOW] [--dims M=64,...] [--size WxH] [--no-check]
               [--input-shape D0,D1,... (per model input)] [--range NAME=LO:HI (EKL inputs)]
               [--format F [--rounding R] [--overflow O] (HLS C++ in a number format)]
    loom build PROJECT.json | DIR      a project: several builds, each with its options (loom.build.project)
        INPUT: a built-in kernel or pipeline name, FILE.py (kernels, a pipeline app or a dataflow
        graph), FILE.py:KERNEL, FILE.ekl, FILE.mlir (functions or a dfg graph), a model FILE.onnx or
        FILE.pt2 (torch.export.save)
    loom climb create NAME DIR | add-file FILE --language python|docker|copy CLIMB
               | add-module BUILD_DIR_OR_SECTION CLIMB | emit CLIMB [--output-directory DIR] | check BUNDLE
"""

from __future__ import annotations

import os

from loom.cli.arg_types import parse_dims, parse_size, positive_int
from loom.cli.table import format_table
from loom.errors import LoomError


def register(sub) -> None:
    from loom.build import TARGETS

    p = sub.add_parser("build", help="build every artifact of a kernel, EKL file, pipeline, dataflow graph or model")
    p.add_argument("input", help="built-in name, FILE.py[:KERNEL], FILE.ekl, FILE.mlir, FILE.onnx, FILE.pt2, or a "
                                 "project: PROJECT.json or a folder with loom-project.json (docs/build.md)")
    p.add_argument("-o", "--output", default=None,
                   help="output folder (default: generated; a project's own 'output')")
    p.add_argument("--target", choices=TARGETS, default="all", help="artifact families to write (default: all)")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="units built in parallel (default: the local core count; a project's own 'threads')")
    p.add_argument("--accel", default=None, help="accelerator description (JSON): also write host drivers")
    p.add_argument("--name", default=None, help="accelerator of the description (default: its only one)")
    p.add_argument("--flow", default=None, help="the accelerator's flow, or auto")
    p.add_argument("--dims", default="", help="sizes of dynamic dims for the check run, e.g. M=64,N=32")
    p.add_argument("--size", default="32x32", help="output size WxH of image pipelines (default 32x32)")
    p.add_argument("--input-shape", action="append", default=[], metavar="D0,D1,...",
                   help="models: shape of each input, in order (when the model's are dynamic)")
    p.add_argument("--no-check", action="store_true", help="do not run the built units against their references")
    p.add_argument("--range", action="append", default=[], metavar="NAME=LO:HI",
                   help="EKL: draw input NAME from [LO, HI) in the checks and the HLS testbench")
    p.add_argument("--format", default=None, help="HLS C++ computing f32/f64 in this loom number format "
                                                  "(docs/formats.md); --target hls checks it bit for bit")
    p.add_argument("--rounding", default="nearest_even", choices=("nearest_even", "truncate", "nearest_away"),
                   help="rounding of --format")
    p.add_argument("--overflow", default=None, choices=("wrap", "saturate", "inf"), help="overflow of --format")
    p.set_defaults(handler=cmd_build)

    c = sub.add_parser("climb", help="bundle built variants of one application (climbs)")
    actions = c.add_subparsers(metavar="ACTION")
    a = actions.add_parser("create", help="create NAME.climb in DIR")
    a.add_argument("name")
    a.add_argument("directory")
    a.set_defaults(handler=lambda args: _climbs().create(args.name, args.directory) and 0)
    a = actions.add_parser("add-file", help="add an application file or folder")
    a.add_argument("file")
    a.add_argument("--language", required=True, help="python, docker or copy (folders: copy)")
    a.add_argument("climb")
    a.set_defaults(handler=lambda args: _climbs().add_file(args.file, args.language, args.climb) or 0)
    a = actions.add_parser("add-module", help="add a built variant (a loom build folder or its variant.section)")
    a.add_argument("module")
    a.add_argument("climb")
    a.add_argument("--variant-name", default=None)
    a.set_defaults(handler=lambda args: _climbs().add_module(args.module, args.climb, name=args.variant_name) or 0)
    a = actions.add_parser("emit", help="write the bundle")
    a.add_argument("climb")
    a.add_argument("--output-directory", default=None)
    a.set_defaults(handler=lambda args: _climbs().emit(args.climb, args.output_directory) and 0)
    a = actions.add_parser("check", help="which variants of an emitted bundle can be deployed here")
    a.add_argument("bundle")
    a.set_defaults(handler=cmd_check)
    c.set_defaults(handler=lambda args: c.print_help() or 2)


def _climbs():
    from loom.build import climbs

    return climbs


def cmd_build(args) -> int:
    from loom.build import BuildOptions, build
    from loom.build.options import parse_shape
    from loom.build.project import is_project
    from loom.jit.ekl import parse_range

    if is_project(args.input):
        return _build_project(args)
    if args.accel is not None and not os.path.isfile(args.accel):
        raise LoomError(f"no such accelerator description: {args.accel}", where="--accel")
    options = BuildOptions(target=args.target, threads=args.threads or os.cpu_count() or 1, accel=args.accel, accel_name=args.name,
                           flow=args.flow, dims=parse_dims(args.dims), size=parse_size(args.size),
                           check=not args.no_check,
                           input_shapes=tuple(parse_shape(text) for text in args.input_shape),
                           number_format=args.format, rounding=args.rounding, overflow=args.overflow,
                           ranges=dict(parse_range(text) for text in args.range))
    _print_build(build(args.input, args.output or "generated", options))
    return 0


# options a project file holds per build: given on the command line too, they would be ambiguous
_PROJECT_HELD = {"target": "all", "accel": None, "name": None, "flow": None, "dims": "", "size": "32x32",
                 "input_shape": [], "no_check": False, "format": None, "rounding": "nearest_even", "overflow": None, "range": []}


def _build_project(args) -> int:
    from loom.build.project import build_project

    given = [k for k, default in _PROJECT_HELD.items() if getattr(args, k) != default]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise LoomError(f"{flag}: a project file holds each build's options; set them in {args.input} "
                        "('defaults' or a build's keys)", where=flag)
    for result in build_project(args.input, args.output, threads=args.threads):
        _print_build(result)
    return 0


def _print_build(result) -> None:
    index = result.index
    rows = [[u["name"], u["kind"], sum(a["unit"] == u["name"] for a in index["artifacts"]),
             "; ".join(u["checks"]) or "-"] for u in index["units"]]
    print(format_table(["unit", "kind", "files", "checks"], rows))
    for unit in index["units"]:
        for note in unit["notes"]:
            print(f"note: {unit['name']}: {note}")
    print(f"{index['input_kind']} {index['input']}: {len(index['artifacts'])} files in {result.folder}/ "
          f"(index: {result.folder}/INDEX.md) in {index['seconds']:.2f} s")


def cmd_check(args) -> int:
    results = _climbs().check(args.bundle)
    for result in results:
        print(result.line())
    return 0 if any(r.deployable for r in results) else 1
