"""Whole models on loom's CPU backend against PyTorch CPU, and TinyBERT's matrix products on MatMul v4.

    .venv/bin/python benchmarks/bench_models.py [--quick] [--threads N] [--repeat R] [--no-accel]
        [--deterministic-host] [--no-band] [--accelerator v4_16|v4_16_pingpong]
        [--offload when-faster|always] [--only resnet18|tinybert]

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
   too, and across the band the when-faster rule is applied at each point.

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
    print(f"threads {args.threads}, repeat {repeat}{' (quick sizes)' if args.quick else ''}")
    bert = None
    for name, model, x in cases:
        t0 = time.perf_counter()
        graph = loom.models.import_model(model, (x,))
        t1 = time.perf_counter()
        compiled = compile_graph(graph)
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
                 args.offload)


def _offload(graph, cpu, ids, repeat: int, deterministic: bool, band_sweep: bool, name: str, policy: str) -> None:
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
        always = compile_graph(graph, accelerators=target, offload="always")  # every layer v4 takes
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        planned = always if policy == "always" else compile_graph(graph, accelerators=target, offload=policy)
        plan_s = time.perf_counter() - start
        want = cpu(ids)
        got = planned(ids, profile=True)
        got_always = always(ids)
    # one thread: the process's CPU time is what the layers cost, whatever else runs on the machine
    clock = time.process_time if os.environ.get("OMP_NUM_THREADS") == "1" else time.perf_counter
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
    for d in drivers.values():
        d.timing = None
    set_host_model(runtime_library(), deterministic=False)


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
