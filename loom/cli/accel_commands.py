"""``loom accel compile | run``: accelerator host drivers from the command line, and ``accel_demo()``.

    loom accel compile KERNEL --accel DESC.json [--name ACCEL] [--flow NAME|auto] [--dims M=..] [-o DIR]
    loom accel run     KERNEL --accel DESC.json [--name ACCEL] [--flow NAME|all|auto] [--dims M=..]
    loom accel new     NAME [-o DIR]      (NAME.json + NAME_model.py: a commented accelerator that runs)

A description of several accelerators (``systems/matmul_conv.json``) drives each op of a kernel on its
own accelerator: ``--assign cost`` (per op the modelled fastest that matches) or ``--assign v3_4,*,-``
(one entry per linalg op: a name, ``*`` first match, ``-`` host), ``--host-ops`` (ops no accelerator
computes run on the host); ``compile`` and ``run`` then report every op and every device.

KERNEL is a built-in (``matmul``: dims M, N, K; ``conv2d``: NCHW input B x C x H x W,
F filters of R x R, stride S; all static shapes from ``--dims``) or
``path/to/file.py:kernel`` (a ``@loom.kernel``) or ``path/to/file.mlir[:func]``; their dynamic
dims are sized from ``--dims`` given by the accelerator's dim names, e.g. ``m=64,n=32,k=16``
(``--flow auto`` too).
``compile`` writes ``NN-<stage>.mlir`` per stage, ``driver.c`` and ``summary.txt``.
``run`` executes on the simulator, compares with numpy (built-ins) or with the
kernel run on the CPU (user kernels), and prints flow, transfers, bytes per operand,
time and status (``ok`` = result equal and transfer counts equal the analytic count).
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, f32, i32

from loom.cli.arg_types import non_negative_int, parse_dims
from loom.errors import LoomError
from loom.examples.accel_kernels import BUILTINS, Builtin
from loom.examples import ACCELERATORS_DIR as EXAMPLES_DIR
from loom.cli.table import format_table



def register(sub) -> None:
    p = sub.add_parser("accel", help="generate and run accelerator host drivers (AXI4MLIR flow)")
    acc_sub = p.add_subparsers(metavar="ACTION")
    for name, handler, text in (("compile", cmd_compile, "write every stage's IR, the C driver and a summary"),
                                ("run", cmd_run, "run on the simulator and check against a reference")):
        q = acc_sub.add_parser(name, help=text)
        q.add_argument("kernel", help=f"built-in ({', '.join(BUILTINS)}) or path/to/file.py:kernel")
        q.add_argument("--accel", required=True, help="accelerator description JSON")
        q.add_argument("--name", default=None, help="accelerator name in the file (default: first that matches)")
        q.add_argument("--flow", default=None, help="opcode flow (default: the selected one); 'auto' picks flow, "
                       "loop order and tiles by cost model + measurement (static --dims)"
                       + ("; 'all' runs every flow" if name == "run" else ""))
        q.add_argument("--dims", default="", help="problem sizes, e.g. M=128,N=128,K=128")
        q.add_argument("--coalesce", action="store_true",
                       help="merge consecutive sends into one DMA transaction (accel-coalesce)")
        q.add_argument("--double-buffer", action="store_true",
                       help="overlap host copies with transfers and compute (non-blocking sends, "
                            "deferred receives; convert-accel-to-runtime{double-buffer=true})")
        q.add_argument("--dtype", choices=("i32", "f32"), default=None, help="element type (default: the accelerator's)")
        q.add_argument("--assign", default=None, type=_assign,
                       help="several accelerators: 'cost' (per op the modelled fastest that matches) or one entry "
                            "per linalg op, comma-separated: an accelerator name, * (first match) or - (host)")
        q.add_argument("--host-ops", action="store_true",
                       help="ops that no accelerator computes run on the host (lowered to loops in the driver)")
        if name == "compile":
            q.add_argument("-o", "--output", default="accel_out", help="output directory")
        else:
            q.add_argument("--seed", type=non_negative_int, default=0)
        q.set_defaults(handler=handler)
    q = acc_sub.add_parser("new", help="write a commented description + Python model skeleton that runs as written")
    q.add_argument("name", help="accelerator name (letters, digits, _): writes NAME.json and NAME_model.py")
    q.add_argument("-o", "--output", default=".", help="directory to write into (default: the current one)")
    q.set_defaults(handler=cmd_new)
    p.set_defaults(handler=lambda args: p.print_help() or 2)


def _assign(text: str) -> str | tuple[str, ...]:
    return text if text == "cost" else tuple(part.strip() for part in text.split(","))


def _report(drv) -> str:
    """The summary; with ops on several accelerators, every op's, one device after the other."""
    if len(drv.devices) == 1:
        return str(drv.summary)
    ops = [f"op {k} on {s.accelerator}:\n" + "\n".join("  " + line for line in str(s).splitlines())
           for k, s in enumerate(drv.summaries)]
    return f"devices: {', '.join(drv.devices)}\n" + "\n".join(ops)


def _description(path: str) -> str:
    p = Path(path)
    if not p.is_file() and (EXAMPLES_DIR / path).is_file():
        p = EXAMPLES_DIR / path
    if not p.is_file():
        raise LoomError(f"no such accelerator description: {path}", where="--accel")
    return str(p)


def _elem(dtype: str | None, desc: str, name: str | None):
    from loom.accel import load_description
    if dtype is None:
        system = load_description(desc)
        if not system.accelerators:
            raise LoomError("the description has no accelerators (a host-only description?); give one with an "
                            "\"accelerators\" list", filename=desc, where="accelerators")
        acc = system.accelerator(name) if name else system.accelerators[0]
        dtype = acc.data_type
    return f32 if dtype == "f32" else i32


def _kernel(args) -> tuple[object, Builtin | None, dict[str, int]]:
    dims = parse_dims(args.dims)
    if args.kernel in BUILTINS:
        b = BUILTINS[args.kernel]
        unknown = [k for k in dims if k not in b.dims]
        if unknown:
            raise LoomError(f"{args.kernel} has dims {', '.join(b.dims)}; got {unknown[0]!r}", where="--dims")
        full = {**b.dims, **dims}
        defaulted = [k for k in b.dims if k not in dims]
        if defaulted:  # say so: a silent default would hide a typo in --dims
            print(f"{args.kernel}: default " + ", ".join(f"{k}={full[k]}" for k in defaulted)
                  + " (set with --dims)", flush=True)
        return b.build(full, _elem(args.dtype, _description(args.accel), args.name)), b, full
    from loom.examples.targets import resolve_kernel
    kernel, _ = resolve_kernel(args.kernel)
    return kernel, None, dims


# ------------------------------------------------------------------------------ commands
def cmd_compile(args) -> int:
    from loom.driver.compile import compile_driver, stage_files

    kernel, builtin, dims = _kernel(args)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise LoomError(f"{out} is an existing file; -o takes a directory (created if missing) for the stage "
                        "files, driver.c and summary.txt", where="-o")
    drv = compile_driver(kernel, _description(args.accel), args.name, args.flow, coalesce=args.coalesce,
                         double_buffer=args.double_buffer, problem=_problem(builtin, dims), assign=args.assign,
                         host_ops=args.host_ops)
    report = _report(drv)
    shapes = [t.get_shape() for t in _signature(kernel)]
    if all(d >= 0 for shape in shapes for d in shape) and min(min(a, default=0) for a in drv.op_args or [()]) >= 0:
        # static problem: add the analytic transfers (the function's arguments mapped to each offloaded
        # op's operands, any order, several ops); per device when there are several
        arrays = [SimpleNamespace(shape=tuple(shape)) for shape in shapes]
        for device in (drv.devices if len(drv.devices) > 1 else [None]):
            t = drv.expected_transfers(arrays, device)
            words = drv.expected_argument_words(arrays, device)
            report += (f"\nexpected transfers{f' on {device}' if device else ''}: {t.sends} sends "
                       f"({t.words_sent} words), {t.recvs} receives ({t.words_received} words); "
                       f"bytes per operand: {_bytes_text(drv, words)}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for filename, text in stage_files(drv).items():
            (out / filename).write_text(text)
        (out / "driver.c").write_text(drv.c_source)
        (out / "summary.txt").write_text(report + "\n")
    except OSError as error:
        raise LoomError(f"cannot write the output directory {out}: {error.strerror or error}", where="-o") from None
    print(report)
    print(f"wrote {len(drv.stages)} stages, driver.c and summary.txt to {out}/ ({drv.compile_seconds:.2f} s)")
    return 0


def _signature(kernel) -> list:
    module = kernel if isinstance(kernel, ModuleOp) else kernel.module
    return list([f for f in module.body.block.ops if isinstance(f, func.FuncOp)][0].function_type.inputs.data)


def _arrays(shapes, elem_is_float: bool, rng) -> list[np.ndarray]:
    dt = np.float32 if elem_is_float else np.int32
    return [rng.integers(-8, 8, size=s).astype(dt) for s in shapes]


def _bytes_text(drv, words: dict[str, tuple[int, int]], word_bytes: int = 4) -> str:
    """Bytes moved per operand, named by the function's arguments (the linalg ops' operands) with the
    accelerator's operand name in parentheses where it differs: ``U(A)=1024``."""
    roles = drv.argument_roles()
    cells = []
    for name, (sent, received) in words.items():
        used_as = [r for r in roles.get(name, []) if r != name]
        cells.append(f"{name}{'(' + '/'.join(used_as) + ')' if used_as else ''}={word_bytes * (sent + received)}")
    return " ".join(cells)


def run_one(kernel, builtin: Builtin | None, dims: dict[str, int], desc: str, name: str | None, flow: str | None,
            seed: int = 0, coalesce: bool = False, double_buffer: bool = False,
            assign: str | tuple[str, ...] | None = None, host_ops: bool = False) -> list[object]:
    """Compile, run on the simulator, check; one table row (several devices: their names joined)."""
    from loom.driver.compile import compile_driver

    drv = compile_driver(kernel, desc, name, flow, coalesce=coalesce, double_buffer=double_buffer,
                         problem=_problem(builtin, dims), assign=assign, host_ops=host_ops)
    if flow == "auto":
        s = drv.summary
        print(f"--flow auto chose {s.flow} with tiles "
              + ", ".join(f"{d}={t}" for d, t in s.tile_sizes.items()), flush=True)
    args_types = _signature(kernel)
    is_float = isinstance(args_types[0].element_type, Float32Type)
    rng = np.random.default_rng(seed)
    if builtin is not None:
        shapes = builtin.shapes(dims)
    else:  # sized from the function's own arguments, whatever their order or number
        shapes = [tuple(d if d >= 0 else _dim_from(drv, n, k, dims) for k, d in enumerate(t.get_shape()))
                  for n, t in enumerate(args_types)]
    arrays = _arrays(shapes, is_float, rng)
    if builtin is not None:
        expected_arrays = [*arrays[:-1], builtin.reference(dims, arrays)]
    else:
        expected_arrays = [a.copy() for a in arrays]
        kernel(*expected_arrays)
    stats = drv(*arrays)
    # every argument is compared: a kernel may write several outputs, in any position
    same = all(np.allclose(got, want, rtol=1e-4, atol=1e-3) if is_float else np.array_equal(got, want.astype(got.dtype))
               for got, want in zip(arrays, expected_arrays))
    analytic = drv.expected_transfers(arrays) if min(min(a, default=0) for a in drv.op_args or [()]) >= 0 else None
    if coalesce and analytic is not None:  # fewer sends, same words (loom/passes/accel_coalesce.py)
        import dataclasses

        from loom.passes.accel_coalesce import expected_coalesced_sends
        # a double-buffered driver coalesces into one half of the input buffer
        capacity = drv.accelerator.dma.input_words // (2 if double_buffer else 1)
        sends = 0
        for k, summary in enumerate(drv.summaries or (drv.summary,)):
            ops = drv.op_arrays(k, arrays)
            assert ops is not None  # expected_transfers refused it otherwise
            sends += expected_coalesced_sends(
                summary, summary.problem_dims([a.shape[drv.batch_dims:] for a in ops]), capacity)
        analytic = dataclasses.replace(analytic, sends=sends)
    # an op on memory that is not an argument (a buffer of the function's own): results are checked alone
    # per function argument, not per accelerator role: the runtime tallies words by array, so an argument that is
    # two operands of an op (X . X) is one count, which the role-keyed dicts cannot split
    t, a = stats.transfers, analytic
    equal = a is None or ((t.sends, t.recvs, t.words_sent, t.words_received)
                          == (a.sends, a.recvs, a.words_sent, a.words_received)
                          and stats.argument_words == drv.expected_argument_words(arrays))
    status = "ok" if same and equal else ("WRONG RESULT" if not same else "TRANSFERS DIFFER")
    for device, d in stats.devices.items():  # several accelerators: each one's counters
        dt = d.transfers
        print(f"  device {device}: {d.sessions} session(s), {dt.sends} sends ({dt.words_sent} words), {dt.recvs} "
              f"receives ({dt.words_received} words)"
              + (f", modelled {d.timing.total_s * 1e6:.1f} us" if d.timing else "")
              + (f", {d.model_cycles} model cycles" if d.model_cycles is not None else ""), flush=True)
    if stats.model_cycles is not None:  # a cycle-accurate (RTL) model: its clock against the timing model
        from loom.accel.timing import timing_config
        from loom.runtime.timing import predicted_accelerator_cycles

        predicted = predicted_accelerator_cycles(stats.timing, timing_config(drv.accelerator))
        print(f"  {drv.summary.accelerator} {drv.summary.flow}: {stats.model_cycles} accelerator cycles, timing "
              f"model {predicted:.0f} (ratio {stats.model_cycles / predicted:.3f})", flush=True)
    uncounted = drv.uncounted_operands()
    if uncounted:
        print(f"  bytes per operand leaves out buffers of the function: {', '.join(uncounted)}", flush=True)
    t = stats.transfers
    if len(drv.devices) > 1:
        return ["+".join(drv.devices), "+".join(s.flow for s in drv.summaries), t.sends + t.recvs,
                _bytes_text(drv, stats.argument_words), round(stats.seconds * 1000, 2), status]
    return [drv.summary.accelerator, drv.summary.flow, t.sends + t.recvs, _bytes_text(drv, stats.argument_words),
            round(stats.seconds * 1000, 2), status]


def _problem(builtin: Builtin | None, dims: dict[str, int]) -> dict[str, int] | None:
    """A user kernel's --dims (named by the accelerator's dims) size its dynamic shapes for --flow auto."""
    return dict(dims) if builtin is None and dims else None


def _dim_from(drv, arg: int, sub: int, dims: dict[str, int]) -> int:
    """A dynamic size of function argument ``arg``, from how an offloaded op indexes it (the first op
    whose dims ``dims`` all give: an argument of ops on two accelerators is sized by either one's dims)."""
    uses = [(s, args.index(arg)) for s, args in zip(drv.summaries, drv.op_args) if arg in args] \
        if drv.op_args else ([(drv.summary, arg)] if arg < len(drv.summary.subscripts) else [])
    name = drv.arg_names[arg] if arg < len(drv.arg_names) else str(arg)
    if not uses:
        raise LoomError(f"argument {name} of @{drv.func_name} has a dynamic size but is no operand of an op "
                        f"offloaded to {drv.summary.accelerator}, so --dims cannot size it; give it a static shape",
                        where="--dims")
    missing = []
    for summary, operand in uses:
        terms, const = summary.subscripts[operand][sub]
        absent = [d for d in terms if d not in dims]
        if not absent:
            return const + 1 + sum(abs(c) * (dims[d] - 1) for d, c in terms.items())
        missing.append((absent[0], summary))
    d, first = missing[0]
    cased = [k for k in dims if k.lower() == d.lower()]
    raise LoomError(f"--dims must give dim {d!r} (the kernel has dynamic sizes; argument {name} of @{drv.func_name} "
                    f"is sized by accelerator {first.accelerator}'s dims, {', '.join(first.dims)})"
                    + (f"; got {cased[0]!r}: dim names are case-sensitive" if cased else
                       f"; got {', '.join(dims) or 'none'}"), where="--dims")


HEADERS = ["accelerator", "flow", "transfers", "bytes per operand", "time ms", "status"]


def cmd_run(args) -> int:
    from loom.accel import load_description

    desc = _description(args.accel)
    kernel, builtin, dims = _kernel(args)
    cases: list[tuple[str | None, str | None]] = [(args.name, args.flow)]
    if args.flow == "all":  # every flow of the named accelerator, or of every accelerator in the file
        system = load_description(desc)
        accelerators = [system.accelerator(args.name)] if args.name else list(system.accelerators)
        cases = [(acc.name, f.name) for acc in accelerators for f in acc.flows]
    rows = []
    for n, (name, flow) in enumerate(cases, 1):
        if len(cases) > 1:
            print(f"  [{n}/{len(cases)}] {name} flow {flow} ...", flush=True)
        case_kernel = kernel
        if builtin is not None and args.dtype is None and name != args.name:
            # a file may mix i32 and f32 accelerators: each built-in runs in its accelerator's type
            case_kernel = builtin.build(dims, _elem(None, desc, name))
        rows.append(run_one(case_kernel, builtin, dims, desc, name, flow, args.seed, args.coalesce,
                            args.double_buffer, args.assign, args.host_ops))
    print(format_table(HEADERS, rows))
    return 0 if all(r[-1] == "ok" for r in rows) else 1


TEMPLATES = Path(__file__).resolve().parent / "templates"


def cmd_new(args) -> int:
    """``loom accel new NAME``: NAME.json + NAME_model.py, a working accelerator to edit."""
    import re

    from loom.accel.description import RESERVED_NAMES

    name = args.name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in RESERVED_NAMES:
        raise LoomError(f"expected an accelerator name of letters, digits and _ (a file and class name), not "
                        f"{', '.join(map(repr, RESERVED_NAMES))} (assign= words), found {name!r}", where="NAME")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise LoomError(f"{out} is an existing file; -o takes a directory", where="-o")
    class_name = "".join(part.capitalize() for part in name.split("_") if part) or "Accelerator"
    files = {out / f"{name}.json": TEMPLATES / "accel_description.json.txt",
             out / f"{name}_model.py": TEMPLATES / "accel_model.py.txt"}
    existing = [str(f) for f in files if f.exists()]
    if existing:
        raise LoomError(f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; loom accel new does "
                        "not overwrite files (remove them or choose another name / -o)", where="NAME")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for target, template in files.items():
            target.write_text(template.read_text().replace("__NAME__", name).replace("__CLASS__", class_name))
    except OSError as error:
        raise LoomError(f"cannot write {out}: {error.strerror or error}", where="-o") from None
    for target in files:
        print(f"wrote {target}")
    print(f"try it: loom accel run matmul --accel {out / (name + '.json')} --flow all --dims M=9,N=7,K=11")
    return 0


# ------------------------------------------------------------------------------ demo
DEMO_CASES = [
    ("matmul", {"M": 128, "N": 128, "K": 128}, "matmul_v1.json", "v1_8", "Ns"),
    ("matmul", {"M": 128, "N": 128, "K": 128}, "matmul_v2.json", "v2_16", "As"),
    ("matmul", {"M": 128, "N": 128, "K": 128}, "matmul_v3.json", "v3_16", "Ns"),
    ("matmul", {"M": 128, "N": 128, "K": 128}, "matmul_v3.json", "v3_16", "As"),
    ("matmul", {"M": 128, "N": 128, "K": 128}, "matmul_v3.json", "v3_16", "Bs"),
    ("matmul", {"M": 128, "N": 128, "K": 128}, "matmul_v3.json", "v3_16", "Cs"),
    ("matmul", {"M": 100, "N": 70, "K": 36}, "matmul_v4.json", "v4_16_m32n16k64", "Cs"),
    ("conv2d", {"B": 1, "C": 64, "F": 64, "H": 30, "W": 30, "R": 3, "S": 1}, "conv2d.json", "conv_os", "Os"),
    ("conv2d", {"B": 1, "C": 3, "F": 16, "H": 64, "W": 64, "R": 7, "S": 2}, "conv2d.json", "conv_os", "Os"),
]


def accel_demo() -> int:
    """Compile, run and check a matmul and a convolution on several accelerators and flows."""
    print("accelerator drivers (AXI4MLIR flow): linalg -> accel ops -> DMA runtime calls -> C, run on the simulator")
    rows = []
    start = time.perf_counter()
    for kernel_name, dims, desc, acc, flow in DEMO_CASES:
        b = BUILTINS[kernel_name]
        full = {**b.dims, **dims}
        size = "x".join(str(v) for v in dims.values())
        print(f"  {kernel_name} {size} on {acc} flow {flow} ...", flush=True)
        module = b.build(full, i32)
        rows.append([kernel_name, size] + run_one(module, b, full, str(EXAMPLES_DIR / desc), acc, flow))
    print(format_table(["kernel", "dims"] + HEADERS, rows))
    ok = all(r[-1] == "ok" for r in rows)
    print(f"{sum(r[-1] == 'ok' for r in rows)}/{len(rows)} ok in {time.perf_counter() - start:.1f} s")
    return 0 if ok else 1
