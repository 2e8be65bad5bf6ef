"""Dataflow runtime throughput: channels between C-compiled nodes, and a 4-node C pipeline vs sequential.

    python benchmarks/bench_dataflow.py [--quick]

Items cross the channel in batches (one numpy block per push): a Python-level channel
costs microseconds per operation, so single scalars cannot reach 1 M items/s; a batch of
N scalars (or of 4 KiB blocks) per push amortises it, and the C kernels touch every item.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from loom import I32, Dim, MemRef, kernel  # noqa: E402
from loom.dataflow import Graph, Process, run  # noqa: E402

N = Dim("N")


@kernel
def fill(A: MemRef[(N,), I32], base: I32):
    for i in range(N):
        A[i] = base + I32(i)


@kernel
def checksum(A: MemRef[(N,), I32]) -> I32:
    s = 0
    for i in range(N):
        s = s + A[i]
    return s


@kernel
def stage(A: MemRef[(N,), I32], B: MemRef[(N,), I32]):
    for i in range(N):
        v = A[i]
        for r in range(200):
            v = v * 1103515245 + 12345
        B[i] = v


def channel_throughput(batch: int, batches: int) -> float:
    """items/s from a C producer to a C consumer, ``batch`` i32 items per push."""
    g = Graph("chan")
    ch = g.channel(np.int32, depth=4, shape=(batch,), name="c")
    total = []

    def produce(out):
        for b in range(batches):
            a = np.empty(batch, np.int32)
            fill(a, b)
            out.push(a)

    def consume(inp):
        s = 0
        for a in inp:
            s += int(checksum(a))
        total.append(s)

    g.node(Process(produce), outputs=[ch], name="producer")
    g.node(Process(consume), inputs=[ch], name="consumer")
    t = time.perf_counter()
    run(g)
    dt = time.perf_counter() - t
    want = sum(int(np.arange(b, b + batch, dtype=np.int64).astype(np.int32).sum(dtype=np.int64)) for b in range(batches))
    assert total[0] % 2**32 == want % 2**32
    return batch * batches / dt


def pipeline(blocks: int, n: int) -> tuple[float, float]:
    data = [np.arange(k, k + n, dtype=np.int32) for k in range(blocks)]
    for f in (stage,):
        f.compile()
    t = time.perf_counter()
    seq = []
    for a in data:
        x = a
        for _ in range(4):
            y = np.empty(n, np.int32)
            stage(x, y)
            x = y
        seq.append(x)
    t_seq = time.perf_counter() - t
    g = Graph("pipe4")
    chans = [g.channel(np.int32, depth=2, shape=(n,), name=f"c{k}") for k in range(5)]

    def feed(out):
        for a in data:
            out.push(a)

    g.node(Process(feed), outputs=[chans[0]], name="feed")
    for k in range(4):
        g.node(stage, inputs=[chans[k]], outputs=[chans[k + 1]], name=f"stage{k}")
    g.output(chans[4], "out")
    t = time.perf_counter()
    outputs, _ = run(g)
    t_par = time.perf_counter() - t
    for a, b in zip(outputs["out"], seq):
        np.testing.assert_array_equal(a, b)
    return t_seq, t_par


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    q = ap.parse_args().quick
    checksum.compile(), fill.compile(), stage.compile()
    scalar = channel_throughput(4096, 200 if q else 2000)
    print(f"channel, C node -> C node, i32 items batched 4096 per push: {scalar / 1e6:.1f} M items/s")
    single = channel_throughput(1, 500 if q else 5000)
    print(f"channel, one i32 item per push (unbatched):                 {single / 1e3:.1f} k items/s")
    blocks = channel_throughput(1024 * 16, 100 if q else 1000)  # 16 blocks of 4 KiB per push
    print(f"channel, 4 KiB blocks (16 per push):                         {blocks * 4 / 1e9:.2f} GB/s")
    t_seq, t_par = pipeline(16 if q else 64, 4096)
    print(f"4-node C pipeline: sequential {t_seq:.3f} s, dataflow {t_par:.3f} s, speedup {t_seq / t_par:.2f}x")


if __name__ == "__main__":
    main()
