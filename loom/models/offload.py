"""Model layers on accelerators: matrix products and convolutions offloaded through generated AXI drivers.

``plan_offload(graph, accelerators)`` gives, per layer index, a runner for every layer an accelerator
description takes: ``matmul`` (2-d, bias optional) and ``batch_matmul`` layers through one driver per
element type (f32 or int32 layers) compiled from a dynamic-shape ``linalg.matmul``, ``conv2d`` layers
(not grouped, no dilation) through one driver per stride and element type compiled from a dynamic-shape
``linalg.conv_2d_nchw_fchw``
(``loom.driver.compile_driver``; the description's tiles, partial tiles zero-padded). One driver serves
every layer shape, except with a target's flow ``"auto"`` (``(path, accelerator, "auto")``): then each
distinct matrix-product shape gets the driver ``--flow auto`` chooses for it (flow, flexible tiles and
double buffering, ``compile_driver(..., "auto", double_buffer="auto", problem=...)``), still compiled from
the dynamic-shape kernel; convolutions keep the description's selected flow. Drivers accumulate
(C += A.B), so the output starts from the layer's bias (or zero), the linalg ``outs`` semantics; a
padded convolution first runs a ``pad`` layer on the CPU (``OffloadPlan.pads``: compiled
once the plan is final, so a convolution the CPU keeps has none). A ``batch_matmul`` layer runs all its
products in one call of a batch-loop driver (``batch_matmul_module``: one DMA session, so one product's
first transfers overlap the previous one's last; with flow ``"auto"`` the cost model's best few schedules
are run on the whole batch and the fastest is kept). Layers no description takes stay on
the CPU; the reasons are kept (``OffloadPlan.reasons``). Each runner carries the ``--flow auto`` cost
model's time of its layer (``modelled_estimate_s``); with ``offload="when-faster"`` the compiler then
keeps on the CPU every layer the CPU runs at least as fast (``loom.models.offload_cost.keep_faster``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from loom.errors import LoomError
from loom.models.graph import Graph, Layer, Tensor
from loom.models.offload_cost import modelled_accelerator_s

_NO_MATCH = ("no operation matches", "data type mismatch")  # compile_driver's "not this accelerator"


@dataclass
class LayerRunner:
    """Runs one layer on an accelerator; ``modelled_s`` is the timing model's time of its last call."""
    driver: object  # loom.driver.AccelDriver
    device: str
    modelled_s: float = 0.0
    schedule: str = ""  # the driver's flow, tiles and double buffering (a report's "where")
    modelled_estimate_s: float = 0.0  # the --flow auto cost model's time of the whole layer (plan time)
    cpu_estimate_s: float | None = None  # the compiled CPU layer's measured time (offload="when-faster")

    def __call__(self, layer: Layer, ins: list[np.ndarray], out: np.ndarray) -> None:
        a, b, *bias = ins
        if bias:
            np.copyto(out, np.broadcast_to(bias[0], out.shape))  # the accumulator's initial value
        else:
            out.fill(0)
        self.modelled_s = 0.0
        if a.ndim == 2:
            self._matmul(a, b, out)
        elif getattr(self.driver, "batch_dims", 0) == 1:  # every product in one driver call, one DMA session
            a3, b3 = (np.ascontiguousarray(x.reshape(-1, *x.shape[-2:])) for x in (a, b))
            o3 = out.reshape(-1, *out.shape[-2:])
            self._matmul(a3, b3, o3)
            if not np.shares_memory(o3, out):
                out[...] = o3.reshape(out.shape)
        else:
            for k in range(a.shape[0]):  # one product per batch entry: contiguous slices, no copies
                self._matmul(a[k], b[k], out[k])

    def _matmul(self, a, b, c) -> None:
        stats = self.driver(a, b, c)
        if stats is not None and stats.timing is not None:
            self.modelled_s += stats.timing.total_s


@dataclass
class ConvRunner(LayerRunner):
    """A convolution: the input padded on the CPU first (``pad``: the compiled pad layer's function)."""
    pad: object = None
    padded_shape: tuple[int, ...] = ()

    def __call__(self, layer: Layer, ins: list[np.ndarray], out: np.ndarray) -> None:
        x, w, *bias = ins
        if self.pad is not None:
            padded = np.empty(self.padded_shape, x.dtype)
            self.pad(x, padded)
            x = padded
        if bias:
            np.copyto(out, bias[0].reshape(1, -1, 1, 1))  # the accumulator's initial value
        else:
            out.fill(0)
        self.modelled_s = 0.0
        self._matmul(x, w, out)  # one driver call: the driver loops over the convolution's tiles


@dataclass
class OffloadPlan:
    runners: dict[int, LayerRunner] = field(default_factory=dict)
    pads: dict[int, Layer] = field(default_factory=dict)  # conv layer index -> its input's pad layer
    reasons: list[str] = field(default_factory=list)  # why layers of a kind stayed on the CPU
    kept_on_cpu: dict[int, str] = field(default_factory=dict)  # layer index -> why the CPU runs it


def _dynamic_module(rank: int, build, dtype: np.dtype):
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import func
    from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp

    from loom.models.lower import memref_type

    t = MemRefType(memref_type((), dtype).element_type, [DYNAMIC_INDEX] * rank)
    f = func.FuncOp("model_layer", ([t, t, t], []))
    with ImplicitBuilder(f.body) as args:
        build(*args)
        func.ReturnOp()
    return ModuleOp([f])


def _matmul_module(dtype: np.dtype):
    from xdsl.dialects.linalg import ops as linalg

    return _dynamic_module(2, lambda a, b, c: linalg.MatmulOp([a, b], [c]), dtype)


def batch_matmul_module(dtype: np.dtype):
    """``C[b] += A[b] . B[b]`` with dynamic shapes: a ``linalg.matmul`` on one entry's (rank-reduced)
    views inside an ``scf.for`` marked ``#accel.loop<batch "b">``, so a driver compiled from it runs
    every entry in one DMA session (one call, one timeline: a problem's first transfers overlap the
    previous one's last) instead of one driver call per entry."""
    from xdsl.parser import Parser

    from loom.dialects import context
    from loom.models.lower import memref_type

    t = memref_type((), dtype).element_type
    full, one = f"memref<?x?x?x{t}>", f"memref<?x?x{t}, strided<[?, 1], offset: ?>>"
    views = "\n".join(f"    %{v} = memref.subview %{x}[%b, 0, 0] [1, %{r}, %{c}] [1, 1, 1] : {full} to {one}"
                      for v, x, r, c in (("a", "A", "m", "k"), ("bb", "B", "k", "n"), ("cc", "C", "m", "n")))
    text = f"""func.func @model_layer(%A: {full}, %B: {full}, %C: {full}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %nb = memref.dim %A, %c0 : {full}
  %m = memref.dim %A, %c1 : {full}
  %k = memref.dim %A, %c2 : {full}
  %n = memref.dim %B, %c2 : {full}
  scf.for %b = %c0 to %nb step %c1 {{
{views}
    linalg.matmul ins(%a, %bb : {one}, {one}) outs(%cc : {one})
  }} {{accel.loop = #accel.loop<batch "b">}}
  func.return
}}"""
    return Parser(context(), text).parse_module()


def _conv_module(stride: tuple[int, int], dtype: np.dtype):
    from loom import linalg

    return _dynamic_module(4, lambda i, w, o: linalg.conv_2d_nchw_fchw(i, w, o, strides=stride), dtype)


def _driver(targets, module_for, what: str) -> tuple[object | None, object | None, list[str]]:
    """The first target whose accelerator takes the kernel: (driver, target, why the others did not).
    A target with flow "auto" is tried with the description's selected flow."""
    from loom.driver import compile_driver

    reasons = []
    for t in targets:
        try:
            flow = None if t.flow == "auto" else t.flow
            return compile_driver(module_for(), t.description, t.accelerator, flow), t, reasons
        except LoomError as error:
            if not any(error.message.startswith(s) for s in _NO_MATCH):
                raise
            reasons.append(f"{what} on {t}: {error.message}")
    return None, None, reasons or [f"{what}: no accelerator given"]


def _product_shapes(layer: Layer) -> list[tuple[int, ...]]:
    """Operand shapes of one product of the layer (a batch entry for ``batch_matmul``): A, B, C."""
    a, b = layer.inputs[0].shape, layer.inputs[1].shape
    return [tuple(a[-2:]), tuple(b[-2:]), (a[-2], b[-1])]


def _schedule(driver) -> str:
    """The driver's flow, tile sizes and double buffering, as the report prints them."""
    s = driver.summary
    tiles = ",".join(f"{d}={t}" for d, t in s.tile_sizes.items())
    double = any("double-buffer=true" in pipeline for _, pipeline, _ in driver.stages)
    return f"{s.flow} {tiles}" + (" +db" if double else "")


def _auto_drivers(graph: Graph, products: list[int], target, first, module_for) -> dict[int, object]:
    """Layer index -> the ``--flow auto`` driver of its product shape (one compile per distinct shape)."""
    from loom.driver import compile_driver

    by_shape: dict[tuple, object] = {}
    out = {}
    for k in products:
        shapes = _product_shapes(graph.layers[k])
        key = tuple(shapes)
        if key not in by_shape:
            problem = first.summary.problem_dims(shapes)
            by_shape[key] = compile_driver(module_for(), target.description, first.accelerator.name, "auto",
                                           double_buffer="auto", problem=problem)
        out[k] = by_shape[key]
    return out


def fastest_batched(description: str, accelerator: str, options, count: int, a_shape, b_shape, dtype,
                    coalesce: bool = False):
    """(driver, seconds): of the schedules ``options`` (``autotune.Candidate``), the batch-loop driver
    (``batch_matmul_module``) whose run of ``count`` products of A ``a_shape`` x B ``b_shape`` on random
    operands is the shortest on the timing model (``autotune.measured_seconds``)."""
    from loom.driver import autotune, compile_driver

    dtype = np.dtype(dtype)
    module = batch_matmul_module(dtype)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((count, *s)).astype(dtype) for s in (a_shape, b_shape))
    best, best_s = None, float("inf")
    for cand in options:
        d = compile_driver(module, description, accelerator, cand.flow, tile_sizes=cand.tile_sizes or None,
                           double_buffer=cand.double_buffer, coalesce=coalesce)
        seconds = autotune.measured_seconds(d(a, b, np.zeros((count, a_shape[0], b_shape[1]), dtype)), d.accelerator)
        if seconds < best_s:
            best, best_s = d, seconds
    return best, best_s


def batched_options(acc, chosen, problem, params) -> list:
    """The schedules a batch is tried with: the one chosen for one product, the cost model's best
    ``HYBRID_TOP`` (it ranks one product; a batch in one session overlaps problems, so the order may
    differ) and, double-buffered, the ``HYBRID_TOP`` that move their words in the least DMA time (in one
    session the transfers of consecutive problems overlap, so a product's fill costs less)."""
    from loom.accel.timing import timing_config
    from loom.driver import autotune
    from loom.driver.bounds import transfer_seconds

    config = timing_config(acc)

    def dma_s(cand) -> float:
        t = autotune.summary_for(acc, cand).expected_transfers(problem)
        return transfer_seconds(t.sends, t.recvs, t.words_sent, t.words_received, config)

    ranked = [e.candidate for e in autotune.ranked(acc, problem, params, double_buffer=(False, True))]
    least = sorted(autotune.candidates(acc, problem, (True,)), key=dma_s)
    out = [chosen]
    for cand in [*ranked[:autotune.HYBRID_TOP], *least[:autotune.HYBRID_TOP]]:
        if cand not in out:
            out.append(cand)
    return out


def _batched_driver(layer: Layer, driver, target, auto: bool):
    """A batch-loop driver for a ``batch_matmul`` layer (every entry in one call and DMA session):
    the per-entry driver's schedule or, with ``--flow auto``, the fastest of ``batched_options``."""
    from loom.driver import autotune, compile_driver
    from loom.models.offload_cost import _candidate, product_count

    acc, chosen = driver.accelerator, _candidate(driver)
    a_shape, b_shape, _ = _product_shapes(layer)
    if not auto:
        return compile_driver(batch_matmul_module(np.dtype(str(layer.output.dtype))), target.description, acc.name,
                              chosen.flow, tile_sizes=chosen.tile_sizes or None, double_buffer=chosen.double_buffer)
    problem = driver.summary.problem_dims(_product_shapes(layer))
    options = batched_options(acc, chosen, problem, autotune.calibrate(acc, target.description))
    return fastest_batched(target.description, acc.name, options, product_count(layer), a_shape, b_shape,
                           str(layer.output.dtype))[0]


def plan_offload(graph: Graph, accelerators) -> OffloadPlan:
    from loom.offload.ekl import targets as parse_targets

    found = parse_targets(accelerators)
    plan = OffloadPlan()
    products: dict[str, list[int]] = {}  # one driver per element type (f32 / i32 layers)
    for k, layer in enumerate(graph.layers):
        if layer.kind in ("matmul", "batch_matmul"):
            products.setdefault(str(layer.output.dtype), []).append(k)
    for dtype, indices in sorted(products.items()):
        module_for = lambda dtype=np.dtype(dtype): _matmul_module(dtype)  # noqa: E731
        driver, target, reasons = _driver(found, module_for, f"{dtype} matmul")
        plan.reasons += reasons
        drivers = {}
        if driver is not None:
            drivers = (_auto_drivers(graph, indices, target, driver, module_for) if target.flow == "auto"
                       else dict.fromkeys(indices, driver))
        batched: dict[tuple, object] = {}  # one batch-loop driver per batch_matmul shape
        for k, d in list(drivers.items()):
            layer = graph.layers[k]
            if layer.kind == "batch_matmul" and d.accelerator.kernel.name == "matmul":
                key = tuple(t.shape for t in layer.inputs[:2])
                if key not in batched:
                    batched[key] = _batched_driver(layer, d, target, target.flow == "auto")
                drivers[k] = batched[key]
        for k, d in drivers.items():
            layer = graph.layers[k]
            plan.runners[k] = LayerRunner(d, d.accelerator.name, schedule=_schedule(d),
                                          modelled_estimate_s=modelled_accelerator_s(
                                              d, layer, _product_shapes(layer), target.description))
    convs: dict[tuple[tuple[int, int], str], list[int]] = {}
    for k, layer in enumerate(graph.layers):
        if layer.kind == "conv2d" and layer.attrs["dilation"] == (1, 1):
            convs.setdefault((layer.attrs["stride"], str(layer.output.dtype)), []).append(k)
    for (stride, dtype), indices in sorted(convs.items()):
        driver, target, reasons = _driver(found, lambda: _conv_module(stride, np.dtype(dtype)),
                                     f"{dtype} conv2d stride {stride}")
        plan.reasons += reasons
        for k in indices if driver is not None else []:
            layer = graph.layers[k]
            (ph, pw), x = layer.attrs["padding"], layer.inputs[0]
            shape = (x.shape[0], x.shape[1], x.shape[2] + 2 * ph, x.shape[3] + 2 * pw)
            if ph or pw:
                out = Tensor(f"{layer.output.name}_padded_input", shape, x.dtype)
                plan.pads[k] = Layer("pad", [x], out, {"before": (0, 0, ph, pw), "after": (0, 0, ph, pw),
                                                       "value": 0.0}, layer.where)
            modelled = modelled_accelerator_s(driver, layer, [shape, layer.inputs[1].shape, layer.output.shape],
                                              target.description)
            plan.runners[k] = ConvRunner(driver, driver.accelerator.name, padded_shape=shape,
                                         modelled_estimate_s=modelled)
    return plan
