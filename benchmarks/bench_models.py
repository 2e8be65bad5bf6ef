"""Whole models on loom's CPU backend against PyTorch CPU, and TinyBERT's matrix products on MatMul v4.

    .venv/bin/python benchmarks/bench_models.py [--quick] [--threads N] [--repeat R] [--no-accel]
        [--deterministic-host] [--no-band] [--accelerator v4_16|v4_16_pingpong]
        [--offload when-faster|always] [--only resnet18|tinybert] [--cpu-baseline micro|loops]

1. ResNet18 (1x3x224x224) and the TinyBERT-shaped encoder (4 layers, hidden 312, 12 heads, FFN 1200;
   batch 2, sequence 128) from ``loom.examples.models``: import + compile time, loom's run time (median
   of R after a warm-up) and PyTorch's with the same thread count (``torch.set_num_threads`` and
   OMP_NUM_THREADS), the relative error, and the share of loom's time in matrix products / convolutions.
2. The encoder with its matmul layers on the f32 MatMul v4-16 (simulated; the shipped description
   switched to f32), each product shape through its own ``--flow auto`` driver (flow, tiles, double
   buffering): per-layer table, offloaded layers' modelled accelerator time (best of R: the driver's host
   time is measured unless ``--deterministic-host``) vs their CPU time (best of R), the modelled
   end-to-end time (modelled accelerator layers + measured CPU layers) vs CPU-only loom, the share of
   CPU-only time in matrix products, and both speedups across the timing band (figures/band.py; at
   "host 10x slower" the CPU layers are scaled by 10 too). Paper: 18.4x and 3.4x. The co-executed
   plan is ``offload=when-faster`` (``--offload``): a layer the accelerator's modelled time does not beat
   stays on the CPU (with the reason); the figures with ``always`` (every product offloaded) are given
   too, and across the band the when-faster rule is applied at each point. Each attention product
   layer (24 products) runs as one batch-loop driver call (one DMA session).
3. The closing table: at every band point, the ceiling the timing model allows, per matmul layer
   ``count x max(bounds.physical_bound's model bound, least words any schedule moves x host cost per
   word)`` (no schedule of the 4096-word buffers does better), so the offloaded layers cannot exceed
   CPU / that floor; the floor's parts (compute, transfer, host copies) say which constant decides.
   ``--cpu-baseline loops``: the CPU-only model (and the CPU layers of the co-executed one) keep
   plain loops for matrix products (loom's (i, k, j) loop order, -O3, no tiling or packing): closer
   to the paper's baseline (torch-mlir at -O3), though faster than MLIR's (m, n, k) loops, which
   figures/tinybert.py's CPU column runs; default: loom's micro-kernels (near OpenBLAS).

``--quick``: ResNet18 at width 16 on 32x32, the encoder with one layer on 16 tokens, one repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-accel", action="store_true")
    parser.add_argument("--deterministic-host", action="store_true",
                        help="the drivers' host time: 100 ns per runtime call + 1 ns per word (exact, repeatable)")
    parser.add_argument("--no-band", action="store_true", help="only the default timing constants")
    parser.add_argument("--offload", choices=("when-faster", "always"), default="when-faster",
                        help="the co-executed plan: a layer on the accelerator only when modelled faster, or always")
    parser.add_argument("--only", choices=("resnet18", "tinybert"), help="one model only")
    parser.add_argument("--cpu-baseline", choices=("micro", "loops"), default="micro",
                        help="CPU matrix products: loom's micro-kernels, or plain loops (the paper's baseline kind)")
    parser.add_argument("--accelerator", default="v4_16",
                        help="of matmul_v4.json: v4_16 (the paper's) or v4_16_pingpong (double-buffered inputs)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before libgomp starts in this process
    import numpy as np
    import torch

    import loom.models
    from loom.examples.models import resnet18, tiny_bert_encoder
    from loom.models.compiler import compile_graph
    from loom.models.report import share_by_kind

    torch.set_num_threads(args.threads)
    repeat = 1 if args.quick else max(1, args.repeat)
    gen = torch.Generator().manual_seed(0)
    if args.quick:
        cases = [("resnet18", resnet18(width=16, num_classes=10), torch.randn(1, 3, 32, 32, generator=gen)),
                 ("tinybert", tiny_bert_encoder(layers=1, vocab=1000, max_positions=64),
                  torch.randint(0, 1000, (2, 16), generator=gen))]
    else:
        cases = [("resnet18", resnet18(), torch.randn(1, 3, 224, 224, generator=gen)),
                 ("tinybert", tiny_bert_encoder(), torch.randint(0, 30522, (2, 128), generator=gen))]
    if args.only:
        cases = [c for c in cases if c[0] == args.only]
    print(f"threads {args.threads}, repeat {repeat}{' (quick sizes)' if args.quick else ''}, CPU matrix products: "
          + ("loom micro-kernels" if args.cpu_baseline == "micro" else "plain loops (the paper's baseline kind)"))
    bert = None
    for name, model, x in cases:
        t0 = time.perf_counter()
        graph = loom.models.import_model(model, (x,))
        t1 = time.perf_counter()
        compiled = compile_graph(graph, micro_kernels=args.cpu_baseline == "micro")
        t2 = time.perf_counter()
        xs = x.numpy()
        loom_s = _median(lambda: compiled(xs), repeat)
        with torch.no_grad():
            want = model(x).numpy()
            torch_s = _median(lambda: model(x), repeat)
        got = compiled(xs, profile=True)
        error = float(np.abs(got - want).max() / np.abs(want).max())
        shares = share_by_kind(compiled.last_profile)
        heavy = sum(v for k, v in shares.items() if k in ("conv2d", "matmul", "batch_matmul"))
        print(f"{name}: import {t1 - t0:.1f} s, compile {t2 - t1:.1f} s, loom {loom_s * 1e3:.1f} ms, "
              f"PyTorch {torch_s * 1e3:.1f} ms (loom/PyTorch {loom_s / torch_s:.2f}x), relative error {error:.2e}, "
              f"conv+matmul share {heavy:.1%}")
        if name == "tinybert":
            bert = (graph, compiled, xs)
    if bert is not None and not args.no_accel:
        _offload(*bert, repeat, args.deterministic_host, not args.no_band and not args.quick, args.accelerator,
                 args.offload, args.cpu_baseline == "micro")


def _offload(graph, cpu, ids, repeat: int, deterministic: bool, band_sweep: bool, name: str, policy: str,
             micro: bool = True) -> None:
    """TinyBERT's products on f32 v4-16 with per-shape ``--flow auto`` drivers: per-layer report, the
    offloaded layers' and end-to-end speedups over CPU-only loom, at the default timing and the band.
    ``policy``: the plan's ``offload`` (``when-faster``: a layer goes to the accelerator only when its
    modelled time beats its CPU time); every figure is also given with ``always`` for comparison."""
    import sys

    import numpy as np

    import loom
    from loom.accel.timing import timing_config
    from loom.models.compiler import compile_graph
    from loom.models.offload_cost import offload_pays
    from loom.runtime import runtime_library
    from loom.runtime.timing import set_host_model

    sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))
    import band

    # the host model is set before compiling: --flow auto calibrates its host costs, and the offload
    # decision models the layers, under the host model the runs use
    if deterministic:
        set_host_model(runtime_library(), deterministic=True, call_s=band.CALL_S, word_s=band.WORD_S)
        print(f"accelerator host time deterministic: {band.CALL_S * 1e9:g} ns per call, {band.WORD_S * 1e9:g} ns "
              "per word")
    else:
        print(f"accelerator host time measured on this machine (best of {repeat})")
    acc = Path(loom.__file__).parent / "examples" / "accelerators"
    data = json.loads((acc / "matmul_v4.json").read_text())
    data["cpu"] = json.loads((acc / "pynq-z2.json").read_text())["cpu"]
    for a in data["accelerators"]:
        a["data_type"] = "f32"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "matmul_v4_f32.json"
        path.write_text(json.dumps(data))
        target = [(str(path), name, "auto")]
        start = time.perf_counter()
        always = compile_graph(graph, accelerators=target, offload="always", micro_kernels=micro)  # every layer v4 takes
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        planned = always if policy == "always" else compile_graph(graph, accelerators=target, offload=policy,
                                                                  micro_kernels=micro)
        plan_s = time.perf_counter() - start
        want = cpu(ids)
        got = planned(ids, profile=True)
        got_always = always(ids)
        from loom.driver import autotune  # the host cost per word the drivers were chosen with
        per_word = {r.driver.accelerator.name: autotune.calibrate(r.driver.accelerator, str(path)).host_s_per_word
                    for r in always.runners.values()}
    # one thread: the process's CPU time is what the layers cost, whatever else runs on the machine
    from loom.models.offload_cost import layer_clock
    clock = layer_clock()  # the clock the when-faster plan measured the layers with
    print(f"CPU layers timed with {clock.__name__} (best of {repeat})")
    cpu_profiles = []
    for _ in range(repeat):
        cpu(ids, profile=True, clock=clock)
        cpu_profiles.append({t.index: t.seconds for t in cpu.last_profile})
    # best of R on both sides: on a shared machine the least disturbed run is the closest to the
    # machine's speed (the median would favour the modelled accelerator over a slowed-down CPU)
    cpu_layer = {k: min(p[k] for p in cpu_profiles) for k in cpu_profiles[0]}
    candidates = always.runners
    drivers = {id(r.driver): r.driver for r in candidates.values()}
    base = timing_config(next(iter(drivers.values())).accelerator)
    print(f"{name}: {base.describe()}")

    def modelled(config) -> dict[int, float]:
        """Per candidate layer, the best modelled time (timing model) over ``repeat`` runs under ``config``."""
        for d in drivers.values():
            d.timing = config
        best: dict[int, float] = {}
        for _ in range(repeat):
            always(ids)
            for k, r in candidates.items():
                best[k] = min(best.get(k, float("inf")), r.modelled_s)
        return best

    cpu_total = sum(cpu_layer.values())
    products = sum(t for k, t in cpu_layer.items() if graph.layers[k].kind in ("matmul", "batch_matmul"))

    def speedups(config, offloaded) -> tuple[float | None, float, dict[int, float]]:
        """(offloaded layers or None when none, end to end) at ``config`` with the layers ``offloaded``
        (a function of the modelled times): CPU times scaled by its host slowdown (the paper's board runs
        the CPU layers and the driver on the same slower core)."""
        m, h = modelled(config), config.host_slowdown
        on = offloaded(m, h)
        accel, cpu_on = sum(m[k] for k in on), sum(cpu_layer[k] for k in on)
        rest = cpu_total - cpu_on
        return (h * cpu_on / accel if on else None), h * cpu_total / (accel + h * rest), m

    def when_faster(m, h):  # the plan's rule, on the timing model's times at this point
        return [k for k in candidates if offload_pays(m[k], h * cpu_layer[k])]

    def show(x):
        return "  none offloaded" if x is None else f"{x:6.2f}x"

    _, always_e2e, at_default = speedups(base, lambda m, h: list(candidates))
    always_layers = sum(cpu_layer[k] for k in candidates) / sum(at_default.values())
    on = list(planned.runners)
    cpu_on = sum(cpu_layer[k] for k in on)
    accel_on = sum(at_default[k] for k in on)
    layers_x = cpu_on / accel_on if on else None
    e2e_x = cpu_total / (accel_on + cpu_total - cpu_on)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    error_always = float(np.abs(got_always - want).max() / np.abs(want).max())
    print(f"tinybert on {name} (--flow auto per product shape, {len(drivers)} drivers, compiled in {compile_s:.0f} s; "
          f"offload={policy} plan {plan_s:.0f} s): {len(on)} of {len(candidates)} matmul layers offloaded, "
          f"relative error vs CPU {error:.2e} (always: {error_always:.2e})")
    print(f"  CPU-only loom: {cpu_total * 1e3:.1f} ms, matrix products {products / cpu_total:.1%} of it "
          f"(offloaded layers {cpu_on / cpu_total:.1%})")
    groups: dict[tuple, list[int]] = {}
    for k in candidates:
        layer = graph.layers[k]
        groups.setdefault((layer.kind, tuple(t.shape for t in layer.inputs[:2])), []).append(k)
    print(f"  {'layer':<14} {'A x B':<28} {'count':>5}  {'schedule':<26} {'CPU ms':>8} {'model ms':>9} "
          f"{'plan est':>9} {'speedup':>8}  ran on")
    for (kind, shapes), ks in groups.items():
        c, m = sum(cpu_layer[k] for k in ks), sum(at_default[k] for k in ks)
        est = sum(candidates[k].modelled_estimate_s for k in ks)
        where = sorted({planned.runners[k].device if k in planned.runners else "cpu" for k in ks})
        print(f"  {kind:<14} {' x '.join(map(str, shapes)):<28} {len(ks):>5}  {candidates[ks[0]].schedule:<26} "
              f"{c * 1e3:8.2f} {m * 1e3:9.2f} {est * 1e3:9.2f} {c / m:7.2f}x  {'/'.join(where)}")
    for k, why in sorted(planned.kept_on_cpu.items())[:4]:
        print(f"    layer {k}: {why}")
    if len(planned.kept_on_cpu) > 4:
        print(f"    ... {len(planned.kept_on_cpu) - 4} more layers kept on the CPU")
    print(f"  offloaded layers: CPU {cpu_on * 1e3:.1f} ms, modelled accelerator {accel_on * 1e3:.1f} ms "
          f"({show(layers_x).strip()}; paper 18.4x); with offload=always {always_layers:.2f}x")
    print(f"  end to end: CPU-only {cpu_total * 1e3:.1f} ms, co-executed (modelled) "
          f"{(accel_on + cpu_total - cpu_on) * 1e3:.1f} ms ({e2e_x:.2f}x; paper 3.4x); "
          f"with offload=always {always_e2e:.2f}x")
    if band_sweep:
        print(f"  {band.describe_band()}; CPU layers scaled by the host slowdown too; at each point the "
              "when-faster rule applied to the timing model's times:")
        for point, config in band.configs(base).items():
            lx, ex, m = speedups(config, when_faster)
            _, ax, _ = speedups(config, lambda m, h: list(candidates))
            n = len(when_faster(m, config.host_slowdown))
            print(f"    {band.label(point):<22} when-faster: {n:>2} layers offloaded, offloaded layers {show(lx)}, "
                  f"end to end {ex:5.2f}x; always: end to end {ax:5.2f}x")
    _closing_table(graph, candidates, cpu_layer, cpu_total, base, speedups, when_faster,
                   band.configs(base) if band_sweep else {(base.dma_latency_cycles, base.host_slowdown): base},
                   per_word, band.label)
    for d in drivers.values():
        d.timing = None
    set_host_model(runtime_library(), deterministic=False)


PAPER_LAYERS, PAPER_E2E = 18.4, 3.4


def _closing_table(graph, candidates, cpu_layer, cpu_total, base, speedups, when_faster, points, per_word, label):
    """Per band point: the floor the timing model allows for every matmul layer (``count x max(model
    bound, least words x host cost per word x slowdown)``), hence the ceiling of both speedups, next
    to what the drivers reach and the paper's figures."""
    from dataclasses import replace

    from loom.driver import autotune as at
    from loom.driver.bounds import physical_bound
    from loom.models.offload import _product_shapes
    from loom.models.offload_cost import product_count

    layers = {}  # layer -> (accelerator, problem, count); the product shape decides the floor
    for k, r in candidates.items():
        acc = r.driver.accelerator
        layers[k] = (acc, r.driver.summary.problem_dims(_product_shapes(graph.layers[k])), product_count(graph.layers[k]))
    words: dict[tuple, tuple[int, int]] = {}  # problem -> (least words any schedule moves, operands' words once)
    for acc, problem, _ in layers.values():
        key = tuple(sorted(problem.items()))
        if key not in words:
            moved = [at.summary_for(acc, c).expected_transfers(problem) for c in at.candidates(acc, problem)]
            least = min(t.words_sent + t.words_received for t in moved)
            m, n, kk = problem["m"], problem["n"], problem["k"]
            words[key] = (least, m * kk + kk * n + m * n)
    bounds: dict[tuple, object] = {}
    cpu_mm = sum(cpu_layer[k] for k in candidates)
    print("  closing table (modelled; floor per matmul layer = count x max(bounds' model bound: compute + least "
          "transfer with one input buffer, least words x host s/word x slowdown); CPU = loom's CPU layers x slowdown)")
    print(f"    {'point':<20} {'CPU mm ms':>9} {'floor ms':>9} = {'compute':>8} {'transfer':>8} {'host cp':>8}"
          f"  {'layers: ceil':>12} {'reached':>8} {'paper/ceil':>10}  {'e2e: ceil':>9} {'reached':>8} {'paper/ceil':>10}")
    for point, config in points.items():
        h = config.host_slowdown
        floor, parts = {}, [0.0, 0.0, 0.0]
        for k, (acc, problem, count) in layers.items():
            key = (acc.name, tuple(sorted(problem.items())), config.dma_latency_cycles)
            if key not in bounds:
                bounds[key] = physical_bound(acc, problem, replace(base, dma_latency_cycles=config.dma_latency_cycles,
                                                                   host_slowdown=1.0))
            b = bounds[key]
            least, _ = words[tuple(sorted(problem.items()))]
            host = least * per_word[acc.name] * h
            floor[k] = count * max(b.model_bound_s, host)
            parts[0] += count * b.compute_s
            parts[1] += count * b.transfer_s
            parts[2] += count * host
        ceil_layers = h * cpu_mm / sum(floor.values())
        # the best co-execution: each layer where its floor or its CPU time is lower
        ceil_e2e = h * cpu_total / (h * (cpu_total - cpu_mm) + sum(min(floor[k], h * cpu_layer[k]) for k in floor))
        _, always_e2e, m = speedups(config, lambda m, h: list(candidates))
        reached_layers = h * cpu_mm / sum(m[k] for k in candidates)
        _, e2e, _ = speedups(config, when_faster)
        print(f"    {label(point):<20} {h * cpu_mm * 1e3:9.1f} {sum(floor.values()) * 1e3:9.1f} = {parts[0] * 1e3:8.1f} "
              f"{parts[1] * 1e3:8.1f} {parts[2] * 1e3:8.1f}  {ceil_layers:11.2f}x {reached_layers:7.2f}x "
              f"{PAPER_LAYERS / ceil_layers:9.1f}x  {ceil_e2e:8.2f}x {e2e:7.2f}x {PAPER_E2E / ceil_e2e:9.1f}x")
    least = sum(count * words[tuple(sorted(p.items()))][0] for _, p, count in layers.values())
    once = sum(count * words[tuple(sorted(p.items()))][1] for _, p, count in layers.values())
    print(f"    words: the 4096-word buffers make every schedule move >= {least / 1e6:.2f} M words for the matmul layers "
          f"({least / once:.1f}x their operands' {once / 1e6:.2f} M); at {base.stream_width_bits} bits x "
          f"{base.clock_hz / 1e6:g} MHz that is >= {least / (base.stream_width_bits / 32) / base.clock_hz * 1e3 / 2:.1f} ms "
          f"with both DMA channels busy, vs {cpu_mm * 1e3:.1f} ms for the CPU; host copies "
          f"{next(iter(per_word.values())) * 1e9:.2g} ns/word")
    print(f"    (CPU mm = the {len(candidates)} matmul layers' CPU time, {cpu_mm / cpu_total:.1%} of CPU-only; 'reached': "
          "every matmul layer offloaded for the layers column, the when-faster plan for e2e; paper 18.4x / 3.4x)")


def _median(run, repeat: int) -> float:
    run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


if __name__ == "__main__":
    main()
