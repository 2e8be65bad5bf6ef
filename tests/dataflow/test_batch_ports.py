"""Batched channel operations (``push_many``/``pull_many``) keep the per-item semantics, and nodes are accounted."""

import time

import numpy as np
import pytest

from loom.dataflow import Broken, DeadlockError, Graph, NodeError, Process, run
from loom.errors import LoomError


def test_push_many_of_an_array_arrives_in_order_in_bounded_batches():
    n, depth = 10_000, 64
    g = Graph("batch")
    ch = g.channel("i32", depth=depth, name="c")
    sizes = []

    def produce(out):
        out.push_many(np.arange(n, dtype=np.int32))  # more items than the depth: enters as room frees up

    def consume(inp, out):
        for chunk in inp.chunks(1000):
            sizes.append(len(chunk))
            out.push_many(chunk)

    sink = g.channel("i32", depth=depth, name="s")
    g.node(Process(produce), outputs=[ch], name="producer")
    g.node(Process(consume), inputs=[ch], outputs=[sink], name="relay")
    g.output(sink, "out")
    outputs, result = run(g, timeout=30)
    assert outputs["out"] == list(range(n))
    assert all(1 <= s <= depth for s in sizes)  # never more than the channel ever held
    c = result.channel("c")
    assert (c.pushes, c.pulls, c.left) == (n, n, 0)


def test_batches_are_range_checked_like_single_items():
    g = Graph("norm")
    a = g.channel("ui8", depth=8, name="a")
    g.node(Process(lambda out: out.push_many(np.array([0, 255, 7], np.int64))), outputs=[a], name="p")
    g.output(a, "out")
    outputs, _ = run(g, timeout=10)
    assert outputs["out"] == [0, 255, 7]
    for batch in (lambda out: out.push_many(np.array([7, 256], np.int64)), lambda out: out.push(-1)):
        g = Graph("range")
        a = g.channel("ui8", depth=8, name="a")
        g.node(Process(batch), outputs=[a], name="p")
        g.output(a, "out")
        with pytest.raises(NodeError, match=r"node @p.*channel %a: integer (256|-1) does not fit ui8 \(0..255\)"):
            run(g, timeout=10)

    g = Graph("bad")
    b = g.channel("i32", depth=8, name="b")
    g.node(Process(lambda out: out.push_many([1, 2.5])), outputs=[b], name="p")
    g.output(b, "out")
    with pytest.raises(NodeError) as info:
        run(g, timeout=10)
    assert info.value.node == "p" and "expected an integer item" in str(info.value)


def test_pull_many_after_the_writer_closed_drains_then_breaks():
    g = Graph("drain")
    c = g.channel("f32", depth=16, name="c")
    seen = []

    def consume(inp):
        time.sleep(0.05)  # the producer has ended (channel closed) by now
        seen.append(inp.pull_many(3))
        seen.append(inp.pull_many(100))
        with pytest.raises(Broken):
            inp.pull_many(1)
        with pytest.raises(LoomError, match="limit >= 1"):
            inp.pull_many(0)

    g.node(Process(lambda out: out.push_many(np.arange(5, dtype=np.float32))), outputs=[c], name="p")
    g.node(Process(consume), inputs=[c], name="q")
    run(g, timeout=10)
    assert seen == [[0.0, 1.0, 2.0], [3.0, 4.0]]


def test_a_blocked_push_many_is_part_of_deadlock_detection():
    g = Graph("dl")
    a = g.channel("i32", depth=2, name="a")
    b = g.channel("i32", depth=2, name="b")

    def left(inp, out):
        out.push_many(np.zeros(5, np.int32))  # fills a, then waits for right, who waits for left
        inp.pull()

    def right(inp, out):
        inp  # noqa: B018
        out.push_many(np.zeros(5, np.int32))

    g.node(Process(left), inputs=[b], outputs=[a], name="left")
    g.node(Process(right), inputs=[a], outputs=[b], name="right")
    with pytest.raises(DeadlockError) as info:
        run(g, timeout=10)
    assert sorted(info.value.nodes) == ["left", "right"]


def test_node_stats_count_firings_and_blocked_time():
    """A slow consumer: the producer spends most of its life blocked, the consumer is busy."""
    n = 20
    g = Graph("acct")
    c = g.channel("i32", depth=1, name="c")

    def slow(x):
        time.sleep(0.01)
        return x

    out = g.channel("i32", depth=1, name="o")
    g.node(Process(lambda o: [o.push(k) for k in range(n)]), outputs=[c], name="fast")
    g.node(slow, inputs=[c], outputs=[out], name="slow")
    g.output(out, "out")
    outputs, result = run(g, timeout=30)
    assert outputs["out"] == list(range(n))
    fast, slow_stats = result.node("fast"), result.node("slow")
    assert slow_stats.firings == n and fast.firings == n
    assert slow_stats.service_seconds >= 0.01
    assert fast.blocked > 0.5 * fast.alive  # waiting for room in a depth-1 channel
    assert slow_stats.busy > 0.8 * n * 0.01
