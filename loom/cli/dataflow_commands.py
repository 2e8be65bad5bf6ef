"""``loom dataflow``: run dataflow graphs, optimise olympus systems.

    loom dataflow run FILE.mlir [--args 5,3]     a dfg module whose operators all have bodies
    loom dataflow run FILE.py                    a Python file defining graph() -> Graph, or
                                                 module() + bindings() [+ ENTRY, ARGS]
    loom dataflow opt FILE.mlir --platform P.json -p PASS[,PASS...]
                                                 olympus passes with the utilisation table
                                                 before and after each pass
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from loom.cli.table import format_table
from loom.errors import LoomError


def register(sub) -> None:
    p = sub.add_parser("dataflow", help="run dataflow graphs; olympus system passes")
    cmds = p.add_subparsers(metavar="ACTION")
    r = cmds.add_parser("run", help="run a dfg graph (.mlir or .py)")
    r.add_argument("file")
    r.add_argument("--args", default="", help="comma-separated integer arguments of the entry function")
    r.add_argument("--entry", default=None)
    r.add_argument("--timeout", type=float, default=600.0)
    r.set_defaults(handler=_run)
    o = cmds.add_parser("opt", help="olympus passes with utilisation before/after")
    o.add_argument("file")
    o.add_argument("--platform", required=True)
    o.add_argument("-p", "--passes", required=True)
    o.add_argument("--print-ir", action="store_true")
    o.set_defaults(handler=_opt)


def _parse(path: str):
    from xdsl.parser import Parser

    from loom.dialects import context

    try:
        text = Path(path).read_text()
    except OSError as e:
        raise LoomError(f"cannot read: {e.strerror}", filename=path) from None
    try:
        return Parser(context(), text, path).parse_module()
    except Exception as e:  # noqa: BLE001 - xDSL parse errors carry the file:line text
        raise LoomError(f"cannot parse:\n{e}", filename=path) from None


def _load_py(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if spec is None or spec.loader is None:
        raise LoomError("cannot load this Python file", filename=path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(args) -> int:
    from loom.dataflow import run, run_graph

    if args.file.endswith(".py"):
        mod = _load_py(args.file)
        if hasattr(mod, "graph"):
            g = mod.graph()
            outputs, result = run(g, timeout=args.timeout)
            for name, items in outputs.items():
                print(f"output {name}: {len(items)} items")
        elif hasattr(mod, "module") and hasattr(mod, "bindings"):
            result = run_graph(mod.module(), getattr(mod, "ENTRY", None), tuple(getattr(mod, "ARGS", ())),
                               mod.bindings(), args.timeout)
            print("result:", ", ".join(map(str, result.values)))
        else:
            raise LoomError("expected graph() or module() + bindings() in the file", filename=args.file)
    else:
        values = tuple(int(v) for v in args.args.split(",") if v.strip())
        result = run_graph(_parse(args.file), args.entry, values, {}, args.timeout)
        print("result:", ", ".join(map(str, result.values)))
    print(format_table(["channel", "depth", "pushes", "pulls", "left"],
                       [[c.name, c.depth, c.pushes, c.pulls, c.left] for c in result.channels]))
    print(f"{len(result.nodes)} nodes in {result.seconds:.3f} s")
    return 0


def _opt(args) -> int:
    from loom.passes import Pipeline
    from loom.passes.olympus_model import analyse
    from loom.platform import load_platform

    platform = load_platform(args.platform)
    module = _parse(args.file)
    module.verify()
    quoted = f'"{args.platform}"'
    rows = analyse(module, platform).rows()
    table = {r[0]: [r[0], r[2]] for r in rows}
    headers = ["", "input"]
    for name in [p.strip() for p in args.passes.split(",") if p.strip()]:
        text = f"{name}{{platform={quoted}}}" if name != "olympus-sanitize" and name != "olympus-buffer-sharing" \
            else name
        Pipeline.parse(text).run(module)
        headers.append(name.removeprefix("olympus-"))
        for r in analyse(module, platform).rows():
            table.setdefault(r[0], [r[0]] + [""] * (len(headers) - 2)).append(r[2])
    print(f"platform {platform.name}: {platform.memory_channels} memory channels x {platform.memory_width_bits} b, "
          f"utilisation limit {100 * platform.utilization_limit:.0f}%")
    print(format_table(headers, [row + [""] * (len(headers) - len(row)) for row in table.values()]))
    if args.print_ir:
        print(module)
    return 0
