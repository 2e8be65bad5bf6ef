"""Shared helpers of the figure scripts: kernels, both kinds of drivers, timing, CSV/PNG.

Time of a run (``total_time``): the runtime's timing model total
(``RunStats.timing`` / ``loom.accel.timing.timing_report(lib)``) when the runtime
provides it; otherwise the driver-only task clock of the standalone harness
(median of the full run minus the input set-up run; the simulator's own work is
included, the same for both drivers). Host counters (instructions, data-cache
references, branches) always come from cachegrind on the standalone harnesses,
driver-only, simulator files excluded, as ``benchmarks/manual/bench_counters.py`` does.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from math import exp, log
from pathlib import Path
from typing import Sequence

import numpy as np

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))  # `import manual` (xDSL owns the name `benchmarks`)
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH / "figures"))  # run_stamp

import manual  # noqa: E402
import run_stamp  # noqa: E402
from manual import manual as manual_impl  # noqa: E402

from loom.runtime import build as runtime_build  # noqa: E402

EXAMPLES = REPO / "loom" / "examples" / "accelerators"
OUT = run_stamp.out_dir()  # $LOOM_FIGURES_OUT or benchmarks/figures/out
HARNESS = Path(__file__).resolve().parent / "gen_harness.c"


def timing_api():
    """``loom.accel.timing`` when the runtime timing model exists, else None."""
    try:
        import loom.runtime.timing as timing
    except ImportError:
        return None
    return timing


def matmul_module(M: int, N: int, K: int):
    from xdsl.dialects.builtin import i32

    from loom.examples.accel_kernels import BUILTINS
    return BUILTINS["matmul"].build({"M": M, "N": N, "K": K}, i32)


def matmul_arrays(M: int, N: int, K: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-8, 8, s).astype(np.int32) for s in ((M, K), (K, N), (M, N))]


def generated(M, N, K, file: str, accel: str, flow: str | None, **options):
    from loom.driver.compile import compile_driver
    return compile_driver(matmul_module(M, N, K), EXAMPLES / file, accel, flow, **options)


def cpu_matmul_seconds(M: int, N: int, K: int, arrays: Sequence[np.ndarray], repeats: int) -> float:
    """loom's C backend matmul (linalg -> loops -> C) on this host: median wall time, result checked."""
    import time

    from loom.backends.c import compile_module
    from loom.passes import Pipeline

    module = matmul_module(M, N, K)
    Pipeline.parse("linalg-generalize-named-ops,convert-linalg-to-loops").run(module)
    fn = compile_module(module).function("matmul")
    times = []
    for _ in range(repeats):
        a, b, c = (x.copy() for x in arrays)
        start = time.perf_counter()
        fn(a, b, c)
        times.append(time.perf_counter() - start)
    a, b, c = (x.copy() for x in arrays)
    fn(a, b, c)
    assert np.array_equal(c, arrays[2] + arrays[0] @ arrays[1])
    return float(np.median(times))


def conv_dims(iC: int, H: int, oC: int, fHW: int, stride: int, batch: int = 1) -> dict[str, int]:
    """The conv2d builtin's dimensions of a square layer (padded input H x H)."""
    return {"B": batch, "C": iC, "F": oC, "H": H, "W": H, "R": fHW, "S": stride}


def conv_arrays(dims: dict[str, int], seed: int = 0) -> list[np.ndarray]:
    """(input NCHW, filters FCHW, output NCHW) int32 operands of a conv layer."""
    from loom.examples.accel_kernels import BUILTINS
    rng = np.random.default_rng(seed)
    return [rng.integers(-4, 4, sh).astype(np.int32) for sh in BUILTINS["conv2d"].shapes(dims)]


def generated_conv(dims: dict[str, int], **options):
    """The generated driver of a conv layer on conv2d.json's conv_os (``compile_driver`` options)."""
    from xdsl.dialects.builtin import i32

    from loom.driver.compile import compile_driver
    from loom.examples.accel_kernels import BUILTINS
    return compile_driver(BUILTINS["conv2d"].build(dims, i32), EXAMPLES / "conv2d.json", **options)


def conv_command(dims: dict[str, int], *options: str, drv=None) -> list[str]:
    """Command line running one conv layer once: ``drv``'s standalone harness, or the manual one
    (``options`` then include its ``--coalesce`` / ``--double-buffer``)."""
    args = [dims[k] for k in ("B", "C", "H", "W", "F", "R", "S")]
    if drv is None:
        return manual.conv_command(*args, *options)
    return [str(build_generated_harness(drv, CONV_HARNESS)), *map(str, args), *options]


# ------------------------------------------------------------------------------ harness of a generated driver
CONV_HARNESS = Path(__file__).resolve().parent / "gen_conv_harness.c"


def build_generated_harness(drv, harness: Path = HARNESS) -> Path:
    """A standalone executable running ``drv`` (runtime + simulator compiled like manual's harness);
    ``harness``: the runner's source (``gen_harness.c`` for matmul, ``CONV_HARNESS`` for conv)."""
    func = f"loom_{drv.func_name}"
    source_dir = runtime_build.cache_dir() / "generated-driver-sources"
    source_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(drv.c_source.encode()).hexdigest()[:20]
    driver_c = source_dir / f"generated_driver_{digest}.c"
    if not driver_c.exists():
        write_atomic(driver_c, drv.c_source)
    return manual_impl.link_harness(harness.stem, [(driver_c, []), (harness, [f"-DGEN_FUNC={func}"])], key=func)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (concurrent benchmark runs share the cache folder)."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def model_of(drv) -> tuple[str, int]:
    """(name, size) the standalone harness selects by id (loom_sim_use_model): the description's shipped
    model ("builtin:matmul_v3" -> matmul_v3 with the fixed tile size; 0 for v4 and conv2d)."""
    acc = drv.accelerator
    if acc.model is None or acc.model.kind != "builtin":
        raise SystemExit(f"{acc.name}: the C harness runs the shipped models only (\"model\": \"builtin:...\")")
    name = str(acc.model.argument)
    tile = acc.tiles.tiles[0]
    return name, (tile.size or 0) if name.startswith("matmul_v") and tile.kind == "fixed" else 0


def generated_command(drv, M, N, K, *options: str) -> list[str]:
    model, size = model_of(drv)
    return [str(build_generated_harness(drv)), model, str(size), str(M), str(N), str(K), *options]


@dataclass
class HostCounts:
    instructions: int
    d_refs: int
    branches: int
    task_s: float  # driver-only task clock (median)


# Not driver work: the simulated accelerator, and the timing model's own clock reads
# (both drivers pay them on the same runtime; on the board neither exists).
EXCLUDE = (*manual.SIMULATOR_FILES, "timing.c", "clock_gettime.c")


def host_counts(run: list[str], base: list[str], repeats: int = 3, valgrind: bool = True) -> HostCounts:
    from loom.perf import measure, task_clock
    if valgrind:
        # the timing model's instrumentation is not driver work: off for both drivers
        with _environment(LOOM_TIMING="off"):
            full = measure(run, repeats, exclude_files=EXCLUDE)
            setup = measure(base, 1, exclude_files=EXCLUDE)
        d = full - setup
        return HostCounts(d.instructions, d.d_refs, d.branches, max(d.task_clock_s, 1e-9))
    full_t = task_clock(run, repeats)
    base_t = task_clock(base, repeats)
    return HostCounts(0, 0, 0, max(_seconds(full_t) - _seconds(base_t), 1e-9))


@contextmanager
def _environment(**values: str):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _seconds(t) -> float:
    if isinstance(t, (int, float)):
        return float(t)
    for name in ("task_clock_s", "cpu_s", "seconds"):
        if hasattr(t, name):
            return float(getattr(t, name))
    return float(t[0])


# ------------------------------------------------------------------------------ timing
def generated_total(drv, arrays: Sequence[np.ndarray], repeats: int = 3, timing=None) -> float | None:
    """Timing-model total of a generated driver (best of ``repeats``: host time is measured, and the
    minimum is the least disturbed by other work on this shared machine), or None without a timing model.
    ``timing``: a ``TimingConfig`` for these runs (default: the description's)."""
    drv.timing = timing
    times = []
    for _ in range(repeats):
        stats = drv(*[a.copy() for a in arrays])
        report = getattr(stats, "timing", None)
        if report is None:
            return None
        times.append(report.total_s)
    return float(min(times))


def accel_timing(file: str, accel: str):
    """The accelerator's timing configuration (``TimingConfig``) from its description."""
    from loom.accel.description import load_description
    from loom.accel.timing import timing_config
    return timing_config(load_description(str(EXAMPLES / file)).accelerator(accel))


def configure_manual_timing(lib, file: str, accel: str, timing=None) -> None:
    """Give the manual drivers' runtime the accelerator's timing (clock, ops per cycle, stream,
    DMA latency, ...), exactly as a generated driver configures its own runtime before a run;
    ``timing``: that configuration changed (a point of the sensitivity band)."""
    from loom.runtime.timing import configure_timing
    configure_timing(lib, timing or accel_timing(file, accel))


def manual_accelerator(version: int, tile: int) -> tuple[str, str]:
    """(description file, accelerator name) whose timing the manual v``version`` driver runs under."""
    return f"matmul_v{version}.json", f"v{version}_{tile}" if version != 4 else "v4_16"


def manual_report(version: int, tile: int, arrays: Sequence[np.ndarray], timing=None, flow: str = "Ns",
                  coalesce: bool = False, double_buffer: bool = False):
    """One run of a manual MatMul driver on copies of ``arrays``: (timing report, resulting C)."""
    lib = manual.load_drivers()
    configure_manual_timing(lib, *manual_accelerator(version, tile), timing)
    a, b, c = (x.copy() for x in arrays)
    manual.matmul(version, flow, a, b, c, tile, coalesce=coalesce, double_buffer=double_buffer, lib=lib)
    return timing_api().timing_report(lib), c


def manual_conv_report(arrays: Sequence[np.ndarray], stride: int, timing=None, coalesce: bool = False,
                       double_buffer: bool = False):
    """One run of the manual conv driver on copies of ``arrays``: (timing report, resulting output)."""
    lib = manual.load_drivers()
    configure_manual_timing(lib, "conv2d.json", "conv_os", timing)
    i, w, o = (x.copy() for x in arrays)
    manual.conv_os(i, w, o, stride, lib=lib, coalesce=coalesce, double_buffer=double_buffer)
    return timing_api().timing_report(lib), o


def generated_report(drv, arrays: Sequence[np.ndarray], timing=None):
    """One run of a generated driver on copies of ``arrays``: (timing report, resulting output)."""
    drv.timing = timing
    copies = [a.copy() for a in arrays]
    stats = drv(*copies)
    return stats.timing, copies[-1]


def host_seconds(lib, run, arithmetic: bool = False) -> float:
    """``run()`` (returning the CPU seconds of one driver call) with the timing model off
    (``LOOM_TIMING=off``: no clock reads inside the runtime, which would charge the driver that
    makes more runtime calls for the instrumentation). Thread CPU time, like perf's task clock:
    preemption on a shared machine is not counted. By default the simulated accelerator moves
    the words but skips its multiply-accumulates (``without_arithmetic``): on a board that
    arithmetic is the accelerator's, not host work, and on this CPU it is most of the call, the
    same for both drivers, diluting their difference. The run's output values are then
    meaningless: callers check results in separate runs. ``arithmetic=True`` times it too."""
    from loom.runtime.host import without_arithmetic
    with _environment(LOOM_TIMING="off"), (nullcontext() if arithmetic else without_arithmetic(lib)):
        return run()


def manual_seconds(version: int, tile: int, arrays: Sequence[np.ndarray], flow: str = "Ns",
                   coalesce: bool = False, double_buffer: bool = False, arithmetic: bool = False) -> float:
    """``host_seconds`` of a manual MatMul driver, traced like a generated driver's run (same runtime work)."""
    a, b, c = (x.copy() for x in arrays)
    return _traced_manual(lambda lib: manual_impl.timed_matmul(version, flow, a, b, c, tile, coalesce,
                                                               double_buffer, lib=lib), arithmetic)


def manual_conv_seconds(arrays: Sequence[np.ndarray], stride: int, coalesce: bool = False,
                        double_buffer: bool = False, arithmetic: bool = False) -> float:
    """``host_seconds`` of the manual conv driver (``manual_seconds`` for conv_os.c)."""
    i, w, o = (x.copy() for x in arrays)
    return _traced_manual(lambda lib: manual_impl.timed_conv(i, w, o, stride, lib, coalesce, double_buffer),
                          arithmetic)


def _traced_manual(timed, arithmetic: bool) -> float:
    """``host_seconds`` of ``timed(lib)`` (a manual driver call returning its CPU seconds), traced like a
    generated driver's run (same runtime work)."""
    lib = manual.load_drivers()
    lib.loom_dma_set_tracing(1)
    lib.loom_trace_reset()
    try:
        return host_seconds(lib, lambda: timed(lib), arithmetic)
    finally:
        lib.loom_dma_set_tracing(0)


def generated_seconds(drv, arrays: Sequence[np.ndarray], arithmetic: bool = False) -> float:
    """``host_seconds`` of a generated driver: its exported C function called through ctypes with
    ready-made memref descriptors, after the set-up ``drv(...)`` does (model selected, tracing on),
    so that only the C call is timed, as for the manual driver (no Python argument marshalling)."""
    import ctypes

    from loom.runtime.host import raise_on_error
    from loom.runtime.memref import memref_descriptor
    from loom.runtime.host import use_model
    copies = [a.copy() for a in arrays]
    if drv.model is None or drv._lib is None:
        drv(*[a.copy() for a in arrays])  # first call: resolves the model and loads the runtime
    lib = drv._lib
    # the runtime's own build of the shipped model, selected by id as manual_seconds does: drv.model is
    # the same source compiled into a separate shared object (default visibility, so its calls are not
    # inlined), a slower simulator that would be charged to the generated driver
    name, size = model_of(drv)
    use_model(lib, name, size)
    lib.loom_dma_set_tracing(1)
    lib.loom_trace_reset()
    fn = getattr(drv.compiled.library, f"loom_{drv.func_name}")
    fn.restype = None
    descriptors = [memref_descriptor(a) for a in copies]
    pointers = [ctypes.byref(d) for d in descriptors]

    def call() -> float:
        start = time.thread_time()
        fn(*pointers)
        return time.thread_time() - start
    try:
        seconds = host_seconds(lib, call, arithmetic)
    finally:
        lib.loom_dma_set_tracing(0)
    raise_on_error(lib)
    return seconds


def manual_total(version: int, tile: int, arrays: Sequence[np.ndarray], repeats: int = 3,
                 timing=None, **driver: object) -> float | None:
    """Best-of-``repeats`` modelled total of a manual driver (Ns unless ``flow=``; ``coalesce=``,
    ``double_buffer=``), or None without a timing model."""
    api = timing_api()
    if api is None or not hasattr(api, "timing_report"):
        return None
    times = [manual_report(version, tile, arrays, timing, **driver)[0].total_s for _ in range(repeats)]
    return float(min(times))  # best of repeats, like generated_total


def geomean(values: Sequence[float]) -> float:
    values = [v for v in values if v > 0]
    return exp(sum(log(v) for v in values) / len(values)) if values else float("nan")


# ------------------------------------------------------------------------------ output
def write_csv(name: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
    """OUT/name.csv, stamped with the current benchmark run (see run_stamp.py)."""
    return run_stamp.write_csv(name, headers, rows)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    cells = [[fmt(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    for r in cells:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))


def bar_plot(name: str, title: str, labels: Sequence[str], series: dict[str, Sequence[float]], ylabel: str,
             log_scale: bool = False, hline: float | None = None,
             errors: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None) -> Path | None:
    """Grouped bars, one group per label; ``errors[key] = (lows, highs)`` draws a bar's range
    (the sensitivity band's min and max); None (and a note) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no PNG; pip install matplotlib, the `plot` extra)")
        return None
    OUT.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(min(16, max(8, 0.5 * len(labels) * max(1, len(series)))), 4.5))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(labels))
    for i, (key, values) in enumerate(series.items()):
        yerr = None
        if errors and key in errors:
            lows, highs = errors[key]
            yerr = [[max(v - lo, 0.0) for v, lo in zip(values, lows)], [max(hi - v, 0.0) for v, hi in zip(values, highs)]]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=key, yerr=yerr, capsize=2 if yerr else 0)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if log_scale:
        ax.set_yscale("log")
    if hline is not None:  # e.g. 1.0: the baseline a speedup is measured against
        ax.axhline(hline, color="black", linewidth=0.8, linestyle="--")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = OUT / f"{name}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
