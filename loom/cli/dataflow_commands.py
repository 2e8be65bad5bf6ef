"""``loom dataflow``: run dataflow graphs, optimise olympus systems.

    loom dataflow run FILE.mlir [--args 5,2.5]   a dfg module whose operators all have bodies
    loom dataflow run FILE.py                    a Python file defining graph() -> Graph, or
                                                 module() + bindings() [+ ENTRY, ARGS]
    loom dataflow opt FILE.mlir --platform P.json -p PASS[,PASS...]
                                                 olympus passes with the utilisation table
                                                 before and after each pass
"""

from __future__ import annotations

from pathlib import Path

from loom.cli.table import format_table
from loom.core.user_files import import_user_file, run_user_code
from loom.errors import LoomError


def register(sub) -> None:
    p = sub.add_parser("dataflow", help="run dataflow graphs; olympus system passes")
    cmds = p.add_subparsers(metavar="ACTION")
    r = cmds.add_parser("run", help="run a dfg graph (.mlir or .py)")
    r.add_argument("file")
    r.add_argument("--args", default="", help="comma-separated arguments of the entry function, read by its "
                   "parameter types (integers, floats, true/false)")
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
    from loom.dialects import context
    from loom.dialects.parsing import text_parser

    try:
        text = Path(path).read_text()
    except OSError as e:
        raise LoomError(f"cannot read: {e.strerror}", filename=path) from None
    try:
        return text_parser(context(), text, path).parse_module()
    except Exception as e:  # noqa: BLE001 - xDSL parse errors carry the file:line text
        raise LoomError(f"cannot parse:\n{e}", filename=path) from None


def _entry_args(text: str, module, entry: str | None) -> tuple:
    """``--args 5,2.5,true`` read by the entry function's parameter types: integers (in range of their
    width and signedness), floats, i1 (true/false/0/1). Memref parameters cannot be given here."""
    from xdsl.dialects.builtin import AnyFloat, IntegerType, Signedness

    from loom.dataflow.runner import find_entry

    fop = find_entry(module, entry)
    name, params = fop.sym_name.data, fop.function_type.inputs.data
    items = [v.strip() for v in text.split(",")] if text.strip() else []
    if len(items) != len(params):
        raise LoomError(f"--args: @{name} takes {len(params)} arguments ({', '.join(map(str, params)) or 'none'}), "
                        f"got {len(items)}")
    values = []
    for k, (v, t) in enumerate(zip(items, params)):
        what = f"--args: item {k + 1} ({v!r}) for {t} argument {k} of @{name}"
        if isinstance(t, IntegerType) and t.width.data == 1:
            if v.lower() not in ("true", "false", "0", "1"):
                raise LoomError(f"{what}: expected true, false, 0 or 1")
            values.append(v.lower() in ("true", "1"))
        elif isinstance(t, IntegerType):
            try:
                n = int(v, 0)
            except ValueError:
                raise LoomError(f"{what}: expected an integer") from None
            bits, unsigned = t.width.data, t.signedness.data == Signedness.UNSIGNED
            lo, hi = (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << bits) - 1)
            if not lo <= n <= hi:
                raise LoomError(f"{what}: out of range [{lo}, {hi}]")
            values.append(n)
        elif isinstance(t, AnyFloat):
            try:
                values.append(float(v))
            except ValueError:
                raise LoomError(f"{what}: expected a number") from None
        else:
            raise LoomError(f"{what}: only integer, float and i1 arguments can be given on the command line "
                            "(bind arrays from a .py file's module() + ARGS)")
    return tuple(values)


def _run(args) -> int:
    from loom.dataflow import run, run_graph
    from loom.dataflow.model import model_run

    if args.timeout <= 0:
        raise LoomError(f"--timeout must be > 0 seconds, got {args.timeout}")
    if args.file.endswith(".py"):
        mod = import_user_file(args.file)
        if callable(getattr(mod, "graph", None)):
            g = run_user_code(mod.graph, args.file, "building the graph (graph())")
            if not hasattr(g, "module") or not hasattr(g, "outputs"):
                raise LoomError(f"graph() returned a {type(g).__name__}, expected a loom.dataflow.Graph",
                                filename=args.file)
            outputs, result = run(g, timeout=args.timeout)
            for name, items in outputs.items():
                print(f"output {name}: {len(items)} items")
        elif callable(getattr(mod, "module", None)) and callable(getattr(mod, "bindings", None)):
            module = run_user_code(mod.module, args.file, "building the module (module())")
            bindings = run_user_code(mod.bindings, args.file, "building the bindings (bindings())")
            result = run_graph(module, args.entry or getattr(mod, "ENTRY", None),
                               _entry_args(args.args, module, args.entry or getattr(mod, "ENTRY", None)) if args.args
                               else tuple(getattr(mod, "ARGS", ())),
                               bindings, args.timeout)
            print("result:", ", ".join(map(str, result.values)))
        else:
            raise LoomError("expected graph() or module() + bindings() in the file", filename=args.file)
    else:
        module = _parse(args.file)
        try:
            module.verify()
        except Exception as e:  # noqa: BLE001 - xDSL's VerifyException
            raise LoomError(f"invalid dfg module: {str(e).strip().splitlines()[0]}", filename=args.file) from None
        result = run_graph(module, args.entry, _entry_args(args.args, module, args.entry), {}, args.timeout,
                           verify=False)
        print("result:", ", ".join(map(str, result.values)))
    print(format_table(["channel", "depth", "pushes", "pulls", "left"],
                       [[c.name, c.depth, c.pushes, c.pulls, c.left] for c in result.channels]))
    print(format_table(["node", "firings", "cpu ms", "in kernel calls ms", "blocked ms", "alive ms"],
                       [[n.name, n.firings, f"{1e3 * n.cpu:.2f}", f"{1e3 * n.native:.2f}", f"{1e3 * n.blocked:.2f}",
                         f"{1e3 * n.alive:.2f}"] for n in result.node_stats]))
    print(f"{len(result.nodes)} nodes in {result.seconds:.3f} s")
    report = model_run(result)
    if report is not None:
        print("\n".join(report.lines()))
    return 0


def _opt(args) -> int:
    from loom.passes import Pipeline
    from loom.passes.olympus_model import analyse
    from loom.platform import load_platform

    platform = load_platform(args.platform)
    module = _parse(args.file)
    try:
        module.verify()
    except Exception as e:  # noqa: BLE001 - xDSL's VerifyException
        raise LoomError(f"invalid module: {str(e).strip().splitlines()[0]}", filename=args.file) from None
    names = [p.strip() for p in args.passes.split(",") if p.strip()]
    unknown = [n for n in names if not n.startswith("olympus-")]
    if not names or unknown:
        raise LoomError(f"-p expects olympus passes (olympus-sanitize, olympus-channel-reassignment, ...), got "
                        f"{args.passes!r}")
    quoted = f'"{args.platform}"'
    rows = analyse(module, platform).rows()
    table = {r[0]: [r[0], r[2]] for r in rows}
    headers = ["", "input"]
    for name in names:
        text = f"{name}{{platform={quoted}}}" if name != "olympus-sanitize" and name != "olympus-buffer-sharing" \
            else name
        Pipeline.parse(text).run(module)
        headers.append(name.removeprefix("olympus-"))
        for r in analyse(module, platform).rows():
            table.setdefault(r[0], [r[0]] + [""] * (len(headers) - 2)).append(r[2])
    print(f"platform {platform.name}: {platform.memory_channels} memory channels x {platform.memory_width_bits} b, "
          f"utilisation limit {100 * platform.utilization_limit:.0f}%")
    print(format_table(headers, [row + [""] * (len(headers) - len(row)) for row in table.values()]))
    final = analyse(module, platform)
    over = [f"{r} {100 * final.utilization(r):.1f}%" for r in final.resources
            if final.utilization(r) > platform.utilization_limit]
    if over:  # the passes keep a system within the limit, but do not shrink one that starts beyond it
        print(f"warning: the system does not fit platform {platform.name}: {', '.join(over)} of its resources "
              f"(limit {100 * platform.utilization_limit:.0f}%)")
    if args.print_ir:
        print(module)
    return 0
