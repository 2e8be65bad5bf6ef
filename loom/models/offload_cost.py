"""Whether an offloaded layer pays: the accelerator's modelled time against the CPU's measured time.

``modelled_accelerator_s(driver, layer, description)``: the cost model ``--flow auto`` ranks schedules
with (``loom.driver.autotune.estimate``: DMA set-ups and words, compute at the description's
throughput, host copies and calls calibrated once per process), applied to the schedule the layer's
driver runs (flow, flexible tiles, double buffering), once per product of a ``batch_matmul``. No
simulation: it costs microseconds per layer.

``measured_cpu_s(function, layer)``: the compiled CPU layer run on random operands of the layer's
shapes, best of ``CPU_REPEATS`` after a warm-up (the least disturbed run on a shared machine), scaled
by the description's ``host_slowdown`` (the CPU layers run on the same host the timing model slows).
With ``OMP_NUM_THREADS=1`` the clock is the process's CPU time, which other work on the machine does
not inflate (wall time on a loaded machine made layers the CPU runs faster look slower than modelled);
with threads, wall time (CPU time would add the threads up).

``keep_faster(plan, graph, functions)``: drops from ``plan`` every runner the CPU beats, with the
reason ("kept on CPU: modelled 13.0 ms on v4_16 vs 6.6 ms on CPU").
"""

from __future__ import annotations

import os
import time

import numpy as np

from loom.errors import LoomError
from loom.models.graph import Graph, Layer

OFFLOAD_POLICIES = ("always", "when-faster")
CPU_REPEATS = 5
# a product measured in a run shorter than this is repeated within one timing (timer resolution)
_MIN_SAMPLE_S = 2e-4


def check_policy(offload: str) -> str:
    if offload not in OFFLOAD_POLICIES:
        raise LoomError(f"offload: expected one of {', '.join(map(repr, OFFLOAD_POLICIES))}, found {offload!r}",
                        where="loom.models.compile(offload=...)")
    return offload


def _candidate(driver):
    """The ``--flow auto`` candidate the driver runs: its flow, flexible tiles, double buffering."""
    from loom.driver.autotune import Candidate

    acc, s = driver.accelerator, driver.summary
    flexible = tuple((d, t) for d, t in s.tile_sizes.items() if acc.tiles[d].kind == "flexible")
    double = any("double-buffer=true" in pipeline for _, pipeline, _ in driver.stages)
    return Candidate(s.flow, flexible, double)


def product_count(layer: Layer) -> int:
    """Driver calls per run of the layer: one per batch entry of a ``batch_matmul``, else one."""
    return int(np.prod(layer.inputs[0].shape[:-2])) if layer.kind == "batch_matmul" else 1


def modelled_accelerator_s(driver, layer: Layer, shapes, description: str) -> float:
    """``shapes``: the operand shapes of one driver call (A, B, C or input, weight, output)."""
    from loom.driver import autotune

    acc = driver.accelerator
    params = autotune.accelerator_params(acc)
    if acc.kernel.name == "matmul":
        params = autotune.calibrate(acc, description, params)
    problem = driver.summary.problem_dims(shapes)
    return product_count(layer) * autotune.estimate(acc, _candidate(driver), problem, params).total_s


def _random_operand(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-8, 8, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def layer_clock():
    """The clock CPU layers are timed with: process CPU time when single-threaded, else wall time."""
    return time.process_time if os.environ.get("OMP_NUM_THREADS") == "1" else time.perf_counter


def measured_cpu_s(function, layer: Layer, repeats: int = CPU_REPEATS) -> float:
    """Best-of-``repeats`` time (``layer_clock``) of the compiled CPU layer on random operands of its shapes."""
    clock = layer_clock()
    rng = np.random.default_rng(0)
    ins = [_random_operand(t.shape, t.dtype, rng) for t in layer.inputs]
    out = np.empty(layer.output.shape, layer.output.dtype)
    function(*ins, out)  # warm-up: caches, pages, OpenMP threads
    start = clock()
    function(*ins, out)
    once = clock() - start
    inner = max(1, int(_MIN_SAMPLE_S / max(once, 1e-9)))
    best = once
    for _ in range(repeats):
        start = clock()
        for _ in range(inner):
            function(*ins, out)
        best = min(best, (clock() - start) / inner)
    return best


def _host_slowdown(driver) -> float:
    from loom.accel.timing import timing_config

    return float(timing_config(driver.accelerator).host_slowdown)


def offload_pays(modelled_s: float, cpu_s: float) -> bool:
    """The ``when-faster`` rule: the accelerator takes a layer only when modelled strictly faster."""
    return modelled_s < cpu_s


def kept_reason(modelled_s: float, device: str, cpu_s: float) -> str:
    return f"kept on CPU: modelled {modelled_s * 1e3:.3g} ms on {device} vs {cpu_s * 1e3:.3g} ms on CPU"


def describe_layer(index: int, layer: Layer) -> str:
    return f"layer {index} ({layer.kind} {' x '.join(str(t.shape) for t in layer.inputs[:2])})"


def keep_faster(plan, graph: Graph, functions: dict[int, object]) -> None:
    """Per runner of ``plan`` (its ``modelled_estimate_s`` set at plan time): measure the layer's CPU
    function (identical layers once); when the CPU is not slower, drop the runner and record why
    (and a convolution's pad layer: the compiler builds only the pads of offloaded convolutions)."""
    measured: dict[tuple, float] = {}  # identical layers measured once, so they are decided alike
    for k in sorted(plan.runners):
        runner, layer = plan.runners[k], graph.layers[k]
        key = (layer.kind, tuple((t.shape, str(t.dtype)) for t in layer.inputs), repr(layer.attrs))
        if key not in measured:
            measured[key] = measured_cpu_s(functions[k], layer)
        cpu_s = measured[key] * _host_slowdown(runner.driver)
        runner.cpu_estimate_s = cpu_s
        if offload_pays(runner.modelled_estimate_s, cpu_s):
            continue
        why = kept_reason(runner.modelled_estimate_s, runner.device, cpu_s)
        plan.kept_on_cpu[k] = why
        plan.reasons.append(f"{describe_layer(k, layer)}: {why}")
        del plan.runners[k]
        plan.pads.pop(k, None)
