"""Paper Fig. 17: the MatMuls of one TinyBERT layer offloaded to v4-16 vs loom's C on the CPU (modelled).

    .venv/bin/python benchmarks/figures/tinybert.py [--repeats N] [--quick] [--deterministic-host]

TinyBERT (hidden 312, FFN 1200, 12 heads, sequence 128, batch 2): per layer, the Q, K, V
and output projections (256 x 312 x 312, 4 of them), the attention scores and context per
(batch, head) (128 x 128 x 26 and 128 x 26 x 128, 24 each) and the two FFN MatMuls
(256 x 1200 x 312, 256 x 312 x 1200). Each shape runs once through the ``--flow auto``
choice of the joint space (flow, tiles, double buffering; cost model) with coalescing; the
layer's time is the sum over its MatMuls. Accelerator time is modelled (loom.accel.timing, constants printed), the CPU
time is loom's C backend matmul measured on this host; at "host 10x slower" both the
driver's host time and the CPU time are scaled by 10 (the paper's board runs both on
its Cortex-A9). Paper: 18.4x for the offloaded layers. Each shape also gets its
physical limit (loom.driver.bounds) and time / bound, and the check of its transfers: the words
and transactions the driver's run moved equal the analytic counts (DriverSummary.expected_transfers,
coalesced sends by accel_coalesce.expected_coalesced_sends), and their DMA time (bounds.transfer_seconds:
words at the stream width plus a set-up per transaction) against the least any schedule moves. The
attention products (24 per layer) also run as one batch-loop driver call (one DMA session for the
24 problems, loom.models.offload.batch_matmul_module); their rows report that call's time / 24.
The CPU column is plain loops (linalg.matmul -> (m, n, k) loops -> C, -O3, i32: the kind of code
the paper's baseline ran, torch-mlir at -O3), not loom's micro-kernels: benchmarks/bench_models.py
compares with those (and shows the accelerator loses to them at host 1x).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import band  # noqa: E402
import common as C  # noqa: E402

HIDDEN, FFN, HEADS, SEQ, BATCH = 312, 1200, 12, 128, 2
TOKENS, HEAD_DIM = SEQ * BATCH, HIDDEN // HEADS
LAYERS = [  # (name, M, N, K, MatMuls per TinyBERT layer)
    ("qkvo projection", TOKENS, HIDDEN, HIDDEN, 4),
    ("attention scores", SEQ, SEQ, HEAD_DIM, BATCH * HEADS),
    ("attention context", SEQ, HEAD_DIM, SEQ, BATCH * HEADS),
    ("ffn up", TOKENS, FFN, HIDDEN, 1),
    ("ffn down", TOKENS, HIDDEN, FFN, 1),
]
SLOW_HOST = 10.0
# the products of one batch_matmul layer (per batch entry and head); the projections are separate layers
BATCHED = ("attention scores", "attention context")


def main() -> None:
    from loom.accel.description import load_description
    from loom.driver import autotune as at
    from loom.driver.bounds import physical_bound, transfer_seconds
    from loom.passes.accel_coalesce import expected_coalesced_sends

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement (accelerator: best; CPU: median)")
    ap.add_argument("--quick", action="store_true", help="the two attention MatMuls only, 1 repetition")
    band.add_arguments(ap)
    args = ap.parse_args()
    layers = LAYERS[1:3] if args.quick else LAYERS
    if args.quick:
        args.repeats = 1
    desc = str(C.EXAMPLES / "matmul_v4.json")
    acc = load_description(desc).accelerator("v4_16")
    base = C.accel_timing("matmul_v4.json", "v4_16")
    slow = replace(base, host_slowdown=SLOW_HOST)
    print(band.apply_host_mode(args))
    print(f"v4_16: {base.describe()}")
    params = at.calibrate(acc, desc)
    headers = ["layer", "M", "N", "K", "count", "choice", "cpu_s", "accel_s", "speedup", "accel_slow_host_s",
               "speedup_slow_host", "compute_s", "min_transfer_s", "bound_s", "over_bound", "driver_transfer_s",
               "words", "transactions", "one_call_accel_s"]
    rows = []
    for name, M, N, K, count in layers:
        arrays = C.matmul_arrays(M, N, K)
        cpu = C.cpu_matmul_seconds(M, N, K, arrays, max(args.repeats, 1))
        best = at.choose(acc, {"m": M, "n": N, "k": K}, params, double_buffer=(False, True))
        drv = C.generated(M, N, K, "matmul_v4.json", "v4_16", best.candidate.flow,
                          tile_sizes=best.candidate.tile_sizes, coalesce=True,
                          double_buffer=best.candidate.double_buffer)
        a, b, c = (x.copy() for x in arrays)
        run = drv(a, b, c).transfers
        assert np.array_equal(c, arrays[2] + arrays[0] @ arrays[1]), name
        problem = {"m": M, "n": N, "k": K}
        want = drv.summary.expected_transfers(problem)
        sends = expected_coalesced_sends(drv.summary, problem, acc.dma.input_words)
        assert (run.sends, run.recvs, run.words_sent, run.words_received) == (
            sends, want.recvs, want.words_sent, want.words_received), (name, run, want, sends)
        dma = transfer_seconds(run.sends, run.recvs, run.words_sent, run.words_received, base)
        t = C.generated_total(drv, arrays, args.repeats, base)
        t_slow = C.generated_total(drv, arrays, args.repeats, slow)
        one_call, batch_choice = t, ""
        if name in BATCHED:  # the layer's products in one driver call (one DMA session)
            batch_choice, (whole, whole_slow) = _batched(acc, params, best.candidate, M, N, K, count, args.repeats,
                                                         (base, slow))
            t, t_slow = whole / count, whole_slow / count
        bound = physical_bound(acc, problem, base)
        rows.append([name, M, N, K, count, str(best.candidate), cpu, t, cpu / t, t_slow, SLOW_HOST * cpu / t_slow,
                     bound.compute_s, bound.transfer_s, bound.bound_s, bound.ratio(t), dma,
                     run.words_sent + run.words_received, run.sends + run.recvs, one_call])
        print(f"  {name} {M}x{N}x{K} (x{count}): {best.candidate}, cpu {cpu * 1e3:.3f} ms, accel {t * 1e3:.3f} ms "
              + (f"per product in one call of {count}, {batch_choice} (separate calls {one_call * 1e3:.3f} ms) "
                 if name in BATCHED else "")
              + f"({cpu / t:.2f}x; host {SLOW_HOST:g}x slower: {SLOW_HOST * cpu / t_slow:.2f}x); {bound}; "
              f"time / bound {bound.ratio(t):.2f}", flush=True)
        print(f"    transfers = analytic: {run.words_sent} words sent + {run.words_received} received in "
              f"{run.sends} + {run.recvs} transactions; at {base.stream_width_bits / 32:g} word/cycle x "
              f"{base.clock_hz / 1e6:g} MHz + {base.dma_latency_cycles} cycles each, channels "
              f"{'in parallel' if base.recv_overlaps_send else 'in turn'}: {dma * 1e3:.4g} ms vs least "
              f"{bound.transfer_s * 1e3:.4g} ms ({bound.transfer_schedule}): x{dma / bound.transfer_s:.2f}", flush=True)
    C.print_table(headers, rows)
    C.write_csv("tinybert", headers, rows)
    cpu_total = sum(r[4] * r[6] for r in rows)
    acc_total = sum(r[4] * r[7] for r in rows)
    slow_total = sum(r[4] * r[9] for r in rows)
    C.bar_plot("tinybert", "TinyBERT MatMuls on v4-16 (modelled) vs loom C on the CPU", [r[0] for r in rows],
               {"host 1x": [r[8] for r in rows], f"host {SLOW_HOST:g}x slower": [r[10] for r in rows]},
               "speedup over CPU (modelled accelerator)", hline=1.0)
    what = "attention MatMuls only (--quick)" if args.quick else "all MatMuls of one layer"
    print(f"\nTinyBERT layer ({what}): CPU {cpu_total * 1e3:.2f} ms, accelerator {acc_total * 1e3:.2f} ms: "
          f"{cpu_total / acc_total:.2f}x (host 1x); {SLOW_HOST * cpu_total / slow_total:.2f}x with host and CPU "
          f"{SLOW_HOST:g}x slower (paper: 18.4x)")


def _batched(acc, params, cand, M: int, N: int, K: int, count: int, repeats: int, timings) -> tuple[str, list[float]]:
    """(schedule, timing-model totals, one per ``timings``) of ``count`` MxNxK products in one batch-loop
    driver call: the fastest of the product's choice and the model's best few (as loom.models does);
    checked against numpy."""
    from loom.models.offload import batched_options, fastest_batched

    options = batched_options(acc, cand, {"m": M, "n": N, "k": K}, params)
    drv, _ = fastest_batched(str(C.EXAMPLES / "matmul_v4.json"), acc.name, options, count, (M, K), (K, N), "int32",
                             coalesce=True)
    rng = np.random.default_rng(1)
    arrays = [rng.integers(-8, 8, (count, *s)).astype(np.int32) for s in ((M, K), (K, N), (M, N))]
    c = arrays[2].copy()
    drv(arrays[0], arrays[1], c)
    assert np.array_equal(c, arrays[2] + np.einsum("bmk,bkn->bmn", arrays[0], arrays[1]))
    from loom.models.offload import _schedule
    return _schedule(drv), [C.generated_total(drv, arrays, repeats, t) for t in timings]


if __name__ == "__main__":
    main()
