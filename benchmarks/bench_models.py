"""Whole models on loom's CPU backend against PyTorch CPU, and TinyBERT's matrix products on MatMul v4.

    .venv/bin/python benchmarks/bench_models.py [--quick] [--threads N] [--repeat R] [--no-accel]
        [--deterministic-host] [--no-band] [--accelerator v4_16|v4_16_pingpong]

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
   "host 10x slower" the CPU layers are scaled by 10 too). Paper: 18.4x and 3.4x.

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
        _offload(*bert, repeat, args.deterministic_host, not args.no_band and not args.quick, args.accelerator)


def _offload(graph, cpu, ids, repeat: int, deterministic: bool, band_sweep: bool, name: str) -> None:
    """TinyBERT's products on f32 v4-16 with per-shape ``--flow auto`` drivers: per-layer report, the
    offloaded layers' and end-to-end speedups over CPU-only loom, at the default timing and the band."""
    import sys
    from dataclasses import replace

    import numpy as np

    import loom
    from loom.accel.timing import timing_config
    from loom.models.compiler import compile_graph
    from loom.runtime import runtime_library
    from loom.runtime.timing import set_host_model

    sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))
    import band

    acc = Path(loom.__file__).parent / "examples" / "accelerators"
    data = json.loads((acc / "matmul_v4.json").read_text())
    data["cpu"] = json.loads((acc / "pynq-z2.json").read_text())["cpu"]
    for a in data["accelerators"]:
        a["data_type"] = "f32"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "matmul_v4_f32.json"
        path.write_text(json.dumps(data))
        start = time.perf_counter()
        offloaded = compile_graph(graph, accelerators=[(str(path), name, "auto")])
        compile_s = time.perf_counter() - start
        want = cpu(ids)
        got = offloaded(ids, profile=True)
    if deterministic:
        set_host_model(runtime_library(), deterministic=True, call_s=band.CALL_S, word_s=band.WORD_S)
        print(f"accelerator host time deterministic: {band.CALL_S * 1e9:g} ns per call, {band.WORD_S * 1e9:g} ns "
              "per word")
    else:
        print(f"accelerator host time measured on this machine (best of {repeat})")
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
    runners = offloaded.runners
    drivers = {id(r.driver): r.driver for r in runners.values()}
    base = timing_config(next(iter(drivers.values())).accelerator)
    print(f"{name}: {base.describe()}")

    def modelled(config) -> dict[int, float]:
        """Per offloaded layer, the best modelled time over ``repeat`` runs under ``config``."""
        for d in drivers.values():
            d.timing = config
        best: dict[int, float] = {}
        for _ in range(repeat):
            offloaded(ids)
            for k, r in runners.items():
                best[k] = min(best.get(k, float("inf")), r.modelled_s)
        return best

    cpu_total = sum(cpu_layer.values())
    cpu_offloaded = sum(cpu_layer[k] for k in runners)
    rest = cpu_total - cpu_offloaded
    products = sum(t for k, t in cpu_layer.items() if graph.layers[k].kind in ("matmul", "batch_matmul"))

    def speedups(config) -> tuple[float, float, dict[int, float]]:
        """(offloaded layers, end to end) at ``config``: CPU times scaled by its host slowdown (the
        paper's board runs the CPU layers and the driver on the same slower core)."""
        m = modelled(config)
        h = config.host_slowdown
        return h * cpu_offloaded / sum(m.values()), h * cpu_total / (sum(m.values()) + h * rest), m

    layers_x, e2e_x, at_default = speedups(base)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"tinybert on {name} (--flow auto per product shape, {len(drivers)} drivers, compiled in {compile_s:.0f} s): "
          f"{len(runners)} matmul layers offloaded, relative error vs CPU {error:.2e}")
    print(f"  CPU-only loom: {cpu_total * 1e3:.1f} ms, matrix products {products / cpu_total:.1%} of it "
          f"(offloaded layers {cpu_offloaded / cpu_total:.1%})")
    groups: dict[tuple, list[int]] = {}
    for k in runners:
        layer = graph.layers[k]
        groups.setdefault((layer.kind, tuple(t.shape for t in layer.inputs[:2])), []).append(k)
    print(f"  {'layer':<14} {'A x B':<28} {'count':>5}  {'schedule':<26} {'CPU ms':>8} {'model ms':>9} {'speedup':>8}")
    for (kind, shapes), ks in groups.items():
        c, m = sum(cpu_layer[k] for k in ks), sum(at_default[k] for k in ks)
        print(f"  {kind:<14} {' x '.join(map(str, shapes)):<28} {len(ks):>5}  {runners[ks[0]].schedule:<26} "
              f"{c * 1e3:8.2f} {m * 1e3:9.2f} {c / m:7.2f}x")
    print(f"  offloaded layers: CPU {cpu_offloaded * 1e3:.1f} ms, modelled accelerator "
          f"{sum(at_default.values()) * 1e3:.1f} ms ({layers_x:.2f}x; paper 18.4x)")
    print(f"  end to end: CPU-only {cpu_total * 1e3:.1f} ms, co-executed (modelled) "
          f"{(sum(at_default.values()) + rest) * 1e3:.1f} ms ({e2e_x:.2f}x; paper 3.4x)")
    if band_sweep:
        print(f"  {band.describe_band()}; CPU layers scaled by the host slowdown too:")
        for point, config in band.configs(base).items():
            lx, ex, _ = speedups(config)
            print(f"    {band.label(point):<22} offloaded layers {lx:6.2f}x, end to end {ex:5.2f}x")
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
