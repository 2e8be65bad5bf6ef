"""Dataflow runtime throughput: channels between C-compiled nodes, a 4-node C pipeline vs sequential, and the
throughput model's prediction beside each measured rate.

    python benchmarks/bench_dataflow.py [--quick]

Every channel carries its declared items (``i32`` scalars, ``memref<1024xi32>`` = 4 KiB blocks) and counts each
one; nodes may move them in batches (``push_many``/``pull_many``: one lock round per batch, a numpy array of
the channel's dtype converts without a per-item check). One item per push costs a lock round, a thread switch
and, for a C node, one ctypes call (about 10 us of argument checking per call), so the unbatched figures are
printed too.

Pipeline: 4 nodes, each the same C kernel on 4096-element blocks (about 1 ms per block), fed from Python.
``ceiling`` is two independent threads calling the same kernel with no channels at all: the best a
thread-based runtime can do on this machine. The model predicts from the kernel's time measured one after
another (``loom.dataflow.model.predict``); ``model (run)`` uses the threads' CPU time from the run itself.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from loom import I32, Dim, MemRef, kernel  # noqa: E402
from loom.dataflow import Graph, Process, run  # noqa: E402
from loom.dataflow.model import NodeCost, model_run, predict  # noqa: E402

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


def expected_checksum(first: int, n: int, batches: int) -> int:
    """The sum over batches b of (b + 0) + ... + (b + n - 1), numpy int64 (independent of the kernels)."""
    return int(sum(np.arange(b, b + n, dtype=np.int64).astype(np.int32).sum(dtype=np.int64)
                   for b in range(first, first + batches)))


def _two_nodes(g: Graph, ch, produce, consume):
    total = []
    g.node(Process(produce), outputs=[ch], name="producer")
    g.node(Process(lambda inp: total.append(consume(inp))), inputs=[ch], name="consumer")
    t = time.perf_counter()
    _, result = run(g)
    return time.perf_counter() - t, total[0], result


def scalars_unbatched(items: int, depth: int, with_c: bool) -> tuple[float, object]:
    """items/s, one i32 item per push and per pull (``with_c``: a C call per item on each side)."""
    g = Graph("scalar1")
    ch = g.channel("i32", depth=depth, name="c")
    cell_p, cell_c = np.zeros(1, np.int32), np.zeros(1, np.int32)

    def produce(out):
        for b in range(items):
            if with_c:
                fill(cell_p, b)
                out.push(cell_p[0])
            else:
                out.push(b)

    def consume(inp):
        s = 0
        for v in inp:
            if with_c:
                cell_c[0] = v  # a C call per item on this side too
                s += int(checksum(cell_c))
            else:
                s += v
        return s

    dt, total, result = _two_nodes(g, ch, produce, consume)
    assert total % 2**32 == (items * (items - 1) // 2) % 2**32
    return items / dt, result


def scalars_batched(batch: int, batches: int) -> tuple[float, object]:
    """items/s of i32 items produced and consumed by C kernels ``batch`` at a time."""
    g = Graph("scalars")
    ch = g.channel("i32", depth=2 * batch, name="c")

    def produce(out):
        for b in range(batches):
            a = np.empty(batch, np.int32)
            fill(a, b)
            out.push_many(a)

    def consume(inp):
        s = 0
        for chunk in inp.chunks(batch):
            s += int(checksum(np.array(chunk, np.int32)))
        return s

    dt, total, result = _two_nodes(g, ch, produce, consume)
    assert total % 2**32 == expected_checksum(0, batch, batches) % 2**32
    return batch * batches / dt, result


def blocks_4k(per_push: int, pushes: int) -> tuple[float, object]:
    """bytes/s of 4 KiB blocks (memref<1024xi32> items) between C nodes, ``per_push`` blocks per batch."""
    g = Graph("blocks")
    ch = g.channel(np.int32, depth=max(2 * per_push, 64), shape=(1024,), name="c")

    def produce(out):
        for b in range(pushes):
            a = np.empty((per_push, 1024), np.int32)
            fill(a.reshape(-1), b)  # one C call fills the batch; each row is one 4 KiB item
            out.push_many(a)

    def consume(inp):
        s = 0
        for chunk in inp.chunks(per_push):
            s += int(checksum(np.concatenate(chunk) if len(chunk) > 1 else chunk[0]))
        return s

    dt, total, result = _two_nodes(g, ch, produce, consume)
    assert total % 2**32 == expected_checksum(0, 1024 * per_push, pushes) % 2**32
    assert result.channel("c").pulls == per_push * pushes
    return per_push * pushes * 4096 / dt, result


def ceiling(calls: int, n: int) -> float:
    """Speedup of two independent threads over one, each calling ``stage`` (no channels)."""
    cf = stage.compile()
    src = [np.arange(n, dtype=np.int32) for _ in range(2)]

    def work(k, count):
        y = np.empty(n, np.int32)
        for _ in range(count):
            cf(src[k], y)

    t = time.perf_counter()
    work(0, calls)
    one = time.perf_counter() - t
    threads = [threading.Thread(target=work, args=(k, calls // 2)) for k in range(2)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return one / (time.perf_counter() - t)


def pipeline(blocks: int, n: int, depth: int):
    data = [np.arange(k, k + n, dtype=np.int32) for k in range(blocks)]
    t, c = time.perf_counter(), time.thread_time()
    seq = []
    for a in data:
        x = a
        for _ in range(4):
            y = np.empty(n, np.int32)
            stage(x, y)
            x = y
        seq.append(x)
    t_seq, cpu_seq = time.perf_counter() - t, time.thread_time() - c
    # the model's inputs, measured one after another: a stage's CPU per block, and the Python part of it
    # (a call on a 1-element block: argument checks, ctypes; plus a push and a pull)
    tiny, tiny_out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    c = time.thread_time()
    for _ in range(2000):
        stage(tiny, tiny_out)
    glue = (time.thread_time() - c) / 2000 + 2e-6
    per_stage = cpu_seq / (4 * blocks)
    prediction = predict([NodeCost(f"stage{k}", per_stage, glue) for k in range(4)])

    g = Graph("pipe4")
    chans = [g.channel(np.int32, depth=depth, shape=(n,), name=f"c{k}") for k in range(5)]

    def feed(out):
        for a in data:
            out.push(a)

    g.node(Process(feed), outputs=[chans[0]], name="feed")
    for k in range(4):
        g.node(stage, inputs=[chans[k]], outputs=[chans[k + 1]], name=f"stage{k}")
    g.output(chans[4], "out")
    t = time.perf_counter()
    outputs, result = run(g)
    t_par = time.perf_counter() - t
    assert len(outputs["out"]) == blocks
    for a, b in zip(outputs["out"], seq):
        np.testing.assert_array_equal(a, b)
    return t_seq, t_par, prediction, result


def _model(result, channel: str, unit: float = 1.0, label: str = "items/s") -> str:
    report = model_run(result, channel)
    p = report.prediction
    return f"model (run) {p.items_per_second * unit:.3g} {label}, bottleneck {p.bottleneck}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    q = ap.parse_args().quick
    for k in (checksum, fill, stage):
        k.compile()
    print(f"load average {os.getloadavg()[0]:.2f}, {len(os.sched_getaffinity(0))} cores")

    rate, r = scalars_batched(4096, 100 if q else 1000)
    print(f"i32 items, C nodes, push_many/pull_many of 4096:    {rate / 1e6:7.2f} M items/s   {_model(r, 'c', 1e-6, 'M')}")
    rate, r = scalars_unbatched(20000 if q else 200000, 64, with_c=False)
    print(f"i32 items, one per push, Python nodes (depth 64):   {rate / 1e3:7.1f} k items/s   {_model(r, 'c', 1e-3, 'k')}")
    rate, r = scalars_unbatched(2000 if q else 20000, 64, with_c=True)
    print(f"i32 items, one per push, a C call per item:         {rate / 1e3:7.1f} k items/s   {_model(r, 'c', 1e-3, 'k')}")
    for per in (1, 16, 64):
        bw, r = blocks_4k(per, (400 if q else 4000) // per)
        print(f"4 KiB blocks, C nodes, {per:2d} blocks per push:         {bw / 1e9:7.2f} GB/s        "
              f"{_model(r, 'c', 4096e-9, 'GB/s')}")

    ceil = ceiling(32 if q else 256, 4096)
    t_seq, t_par, prediction, r = pipeline(24 if q else 128, 4096, 4)
    blocks = r.channel("c4").pulls
    print(f"4-node C pipeline, {blocks} blocks of 4096 i32: sequential {t_seq:.3f} s, dataflow {t_par:.3f} s, "
          f"speedup {t_seq / t_par:.2f}x")
    print(f"  measured {blocks / t_par:.0f} blocks/s; model (kernels timed alone) {prediction.describe()} = "
          f"{prediction.items_per_second * t_seq / blocks:.2f}x; {_model(r, 'c4', 1.0, 'blocks/s')}")
    print(f"  ceiling: two independent threads calling the kernel run {ceil:.2f}x faster than one")


if __name__ == "__main__":
    main()
