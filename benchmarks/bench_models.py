"""Whole models on loom's CPU backend against PyTorch CPU, and TinyBERT's matrix products on MatMul v4.

    .venv/bin/python benchmarks/bench_models.py [--quick] [--threads N] [--repeat R] [--no-accel]

1. ResNet18 (1x3x224x224) and the TinyBERT-shaped encoder (4 layers, hidden 312, 12 heads, FFN 1200;
   batch 2, sequence 128) from ``loom.examples.models``: import + compile time, loom's run time (median
   of R after a warm-up) and PyTorch's with the same thread count (``torch.set_num_threads`` and
   OMP_NUM_THREADS), the relative error, and the share of loom's time in matrix products / convolutions.
2. The encoder with its matmul layers on the f32 MatMul v4-16 (simulated; the shipped description
   switched to f32): offloaded layers' modelled accelerator time vs their CPU time, and the modelled
   end-to-end time (modelled accelerator layers + measured CPU layers) vs CPU-only loom.

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
        _offload(*bert, repeat)


def _offload(graph, cpu, ids, repeat: int) -> None:
    import numpy as np

    import loom
    from loom.models.compiler import compile_graph

    acc = Path(loom.__file__).parent / "examples" / "accelerators"
    data = json.loads((acc / "matmul_v4.json").read_text())
    data["cpu"] = json.loads((acc / "pynq-z2.json").read_text())["cpu"]
    for a in data["accelerators"]:
        a["data_type"] = "f32"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "matmul_v4_f32.json"
        path.write_text(json.dumps(data))
        offloaded = compile_graph(graph, accelerators=[str(path)])
        want = cpu(ids)
        got = offloaded(ids, profile=True)
    cpu_profiles = []
    for _ in range(repeat):
        cpu(ids, profile=True)
        cpu_profiles.append({t.index: t.seconds for t in cpu.last_profile})
    cpu_layer = {k: statistics.median(p[k] for p in cpu_profiles) for k in cpu_profiles[0]}
    off = [t for t in offloaded.last_profile if t.modelled_s is not None]
    rest = [t for t in offloaded.last_profile if t.modelled_s is None]
    cpu_total = sum(cpu_layer.values())
    cpu_offloaded = sum(cpu_layer[t.index] for t in off)
    modelled = sum(t.modelled_s for t in off)
    end_to_end = modelled + sum(cpu_layer[t.index] for t in rest)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"tinybert on {off[0].device if off else '-'}: {len(off)} matmul layers offloaded "
          f"({cpu_offloaded / cpu_total:.1%} of CPU-only time), relative error vs CPU {error:.2e}")
    print(f"  offloaded layers: CPU {cpu_offloaded * 1e3:.1f} ms, modelled accelerator {modelled * 1e3:.1f} ms "
          f"({cpu_offloaded / modelled:.2f}x)")
    print(f"  end to end: CPU-only {cpu_total * 1e3:.1f} ms, co-executed (modelled) {end_to_end * 1e3:.1f} ms "
          f"({cpu_total / end_to_end:.2f}x)")


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
