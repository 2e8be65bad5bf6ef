"""``loom tune`` (black-box schedule search) and ``loom sweep`` (design-space sweeps).

    loom tune cpu TARGET [--dims M=512,...] [--budget 100] [--searcher optuna|nevergrad|random|grid]
                  [--storage sqlite:///study.db --study NAME] [--repeats 5] [--seed 0] [--no-cache]
    loom tune accel TARGET --accel DESC.json [--name ACC] [--dims ...] [--budget 40] ...
    loom sweep matmul --accel DESC.json --name ACC --sizes 64x64x64,128x64x32 [--executor process|dask://H:P]
                  [-o sweep.csv] [--parquet FILE] [--plot pareto.png]
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from loom.cli.arg_types import parse_dims, positive_int
from loom.cli.table import format_table
from loom.errors import LoomError


def register(sub) -> None:
    from loom.tune import SEARCHERS

    tune = sub.add_parser("tune", help="search schedules: CPU kernels, accelerator drivers")
    kinds = tune.add_subparsers(metavar="WHAT")
    for kind in ("cpu", "accel"):
        p = kinds.add_parser(kind, help=("loop order, tiles, tile-loop order, packing, register accumulation, "
                                         "unroll, vector code, threads" if kind == "cpu"
                                         else "flow, flexible tiles, double buffering (modelled time)"))
        p.add_argument("target", help="built-in kernel, FILE.py:KERNEL or FILE.mlir[:FUNC]")
        p.add_argument("--dims", default="", help="sizes of dynamic dims, e.g. M=512,N=512,K=512 "
                       "(a built-in kernel keeps its example's size for the dims not given)")
        p.add_argument("--budget", type=positive_int, default=100 if kind == "cpu" else 40)
        p.add_argument("--searcher", choices=SEARCHERS, default="optuna")
        p.add_argument("--storage", default=None, help="Optuna storage URL (sqlite:///FILE.db): a resumable study")
        p.add_argument("--study", default=None, help="study name in the storage")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--no-cache", action="store_true", help="measure every point again")
        if kind == "cpu":
            p.add_argument("--repeats", type=positive_int, default=5, help="timed calls per point (median)")
        else:
            p.add_argument("--accel", required=True, help="accelerator description (JSON)")
            p.add_argument("--name", default=None)
        p.set_defaults(handler=cmd_tune, kind=kind)
    tune.set_defaults(handler=lambda args: tune.print_help() or 2)

    p = sub.add_parser("sweep", help="a design-space sweep of matmul drivers (compile + simulate per point)")
    p.add_argument("what", choices=("matmul",))
    p.add_argument("--accel", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--sizes", default="64x64x64", help="MxNxK problem sizes, comma-separated")
    p.add_argument("--flows", default="all", help="comma-separated flows, or all")
    p.add_argument("--double-buffer", choices=("no", "yes", "both"), default="both")
    p.add_argument("--executor", default="process", help="process, thread, serial, dask://HOST:PORT, dask-local")
    p.add_argument("--workers", type=positive_int, default=None)
    p.add_argument("-o", "--output", default="sweep.csv")
    p.add_argument("--parquet", default=None)
    p.add_argument("--plot", default=None, help="PNG of modelled time vs buffer words with the Pareto front")
    p.set_defaults(handler=cmd_sweep)


def _arguments(kernel, example, dims: dict, seed: int) -> list:
    from loom.dialects.dims import check_dim_names

    # a dim the kernel does not have would be ignored: a user kernel tuned at sizes not asked for
    check_dim_names(kernel.module, dims, f"kernel '{kernel.name}'", where="--dims")
    rng = np.random.default_rng(seed)
    if example is not None:
        args = example.make_args(rng, 1)
        if not dims:
            return args
        # the example's sizes for the dims not given, the given ones applied
        dims = {**_example_dims(kernel, example, args, dims), **dims}
    if hasattr(kernel, "random_arguments"):
        return kernel.random_arguments(dims, rng)
    from loom.jit.random_inputs import random_arguments

    return random_arguments(kernel, dims, rng)


def _example_dims(kernel, example, args: list, given: dict) -> dict[str, int]:
    """The named dims of a built-in kernel's example arguments."""
    from loom.build.hls_unit import dims_of_arrays

    return dims_of_arrays(kernel.module, args)


def cmd_tune(args) -> int:
    from loom.examples.targets import resolve_kernel
    from loom.tune import AccelObjective, CpuObjective, tune

    kernel, example = resolve_kernel(args.target)
    call_args = _arguments(kernel, example, parse_dims(args.dims), args.seed)
    if args.kind == "cpu":
        objective = CpuObjective(kernel, call_args, repeats=args.repeats)
    else:
        objective = AccelObjective(kernel, args.accel, args.name, call_args)
    print(f"{args.target}: {len(objective.space.choices)} choices, {objective.space.size} points; "
          f"budget {args.budget} ({args.searcher})", flush=True)
    result = tune(objective, searcher=args.searcher, budget=args.budget, seed=args.seed, storage=args.storage,
                  study=args.study, cache=not args.no_cache)
    top = sorted(result.ok, key=lambda p: p.value)[:5]
    print(format_table(["rank", "seconds", "schedule", "cached"],
                       [[k + 1, f"{p.value:.6g}", p.detail, "yes" if p.cached else ""] for k, p in enumerate(top)]))
    line = f"best {result.best.value:.6g} s: {result.best.detail}"
    if args.kind == "cpu":
        base, _ = objective.evaluate(_unscheduled(objective))
        line += f"; unscheduled {base:.6g} s ({base / result.best.value:.2f}x)"
    print(line + f"; {len(result.measured)} points ({result.cached} cached, {result.failed} failed"
          + (f", {result.resumed} from the resumed study" if result.resumed else "") + ")")
    return 0


def _unscheduled(objective) -> dict:
    point = {name: choice.values[0] for name, choice in objective.space.choices.items()}
    point["order"] = tuple(range(len(point["order"])))
    point.update({k: 0 for k in point if k.startswith("tile")}, unroll=1, native=False, threads=1)
    return point


def cmd_sweep(args) -> int:
    from loom.accel.description import load_description
    from loom.driver.autotune import tile_choices
    from loom.tune import matmul_design_point, sweep

    for flag, path in (("--output", args.output), ("--parquet", args.parquet), ("--plot", args.plot)):
        if path and not Path(path).resolve().parent.is_dir():  # refused before the sweep, not after it
            raise LoomError(f"no folder {Path(path).parent} to write {path} in", where=flag)
    acc = load_description(args.accel).accelerator(args.name)
    known = [f.name for f in acc.flows]
    flows = known if args.flows == "all" else args.flows.split(",")
    unknown = [f for f in flows if f not in known]
    if unknown:
        raise LoomError(f"{acc.name} has no flow {', '.join(map(repr, unknown))} (its flows: {', '.join(known)})",
                        where="--flows")
    buffering = {"no": (False,), "yes": (True,), "both": (False, True)}[args.double_buffer]
    points = []
    for size in args.sizes.split(","):
        try:
            m, n, k = (int(v) for v in size.lower().split("x"))
        except ValueError:
            raise LoomError(f"bad size {size!r}: expected MxNxK, e.g. 64x64x32", where="--sizes") from None
        if min(m, n, k) < 1:
            raise LoomError(f"bad size {size!r}: M, N and K must be positive", where="--sizes")
        problem = {"m": m, "n": n, "k": k}
        flexible = [t.dim for t in acc.tiles.tiles if t.kind == "flexible"]
        for tiles in itertools.product(*(tile_choices(acc, d, problem[d]) for d in flexible)):
            for flow, db in itertools.product(flows, buffering):
                points.append({"description": args.accel, "accelerator": acc.name, "flow": flow, "M": m, "N": n,
                               "K": k, **{f"tile_{d}": t for d, t in zip(flexible, tiles)}, "double_buffer": db})
    print(f"{len(points)} points on {args.executor}", flush=True)
    result = sweep(matmul_design_point, points, executor=args.executor, workers=args.workers)
    result.to_csv(args.output)
    if args.parquet:
        result.to_parquet(args.parquet)
    if args.plot:
        result.plot_pareto(args.plot, "buffer_words", "modelled_s", title=f"{acc.name}: modelled time vs buffer")
    front = result.pareto("buffer_words", "modelled_s")
    print(format_table(["buffer words", "modelled us", "flow", "tiles", "double buffer"],
                       [[r["buffer_words"], f"{r['modelled_s'] * 1e6:.2f}", r["flow"],
                         ",".join(f"{k[5:]}={v}" for k, v in r.items() if k.startswith("tile_")), r["double_buffer"]]
                        for r in front]))
    print(f"{len(result.rows)} points in {result.seconds:.2f} s ({result.per_point_s * 1e3:.1f} ms/point), "
          f"{len(result.failures)} failed; results in {args.output}")
    return 0
