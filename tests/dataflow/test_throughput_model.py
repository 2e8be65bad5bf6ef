"""The dfg throughput model: the three bounds (slowest node, CPU share, GIL) computed by hand."""

import numpy as np
import pytest

from loom import I32, Dim, MemRef, kernel
from loom.dataflow import Graph, Process, run
from loom.dataflow.model import NodeCost, costs_from_run, model_run, predict
from loom.errors import LoomError

MS = 1e-3
N = Dim("N")


@kernel
def affine3(A: MemRef[(N,), I32], B: MemRef[(N,), I32]):
    for i in range(N):
        B[i] = A[i] * I32(3) + I32(1)


def test_the_slowest_node_bounds_a_pipeline_with_enough_cores():
    costs = [NodeCost("a", 1 * MS, 0.1 * MS), NodeCost("b", 3 * MS, 0.1 * MS), NodeCost("c", 1 * MS, 0.1 * MS)]
    p = predict(costs, cores=2)
    assert p.bottleneck == "node @b"
    assert p.items_per_second == pytest.approx(1 / (3 * MS))
    assert p.bounds["CPU share (2 cores)"] == pytest.approx(2 / (5 * MS))
    assert p.bounds["GIL (Python work)"] == pytest.approx(1 / (0.3 * MS))


def test_with_fewer_cores_the_cpu_share_bounds_it():
    costs = [NodeCost(f"s{k}", 1 * MS, 0.01 * MS) for k in range(4)]
    p = predict(costs, cores=2)
    assert p.bottleneck == "CPU share (2 cores)" and p.items_per_second == pytest.approx(500)
    assert predict(costs, cores=8).bottleneck == "node @s0"


def test_python_nodes_are_serialised_by_the_gil():
    costs = [NodeCost("x", 1 * MS, 1 * MS), NodeCost("y", 1 * MS, 1 * MS)]
    p = predict(costs, cores=4)
    assert p.bottleneck == "GIL (Python work)" and p.items_per_second == pytest.approx(500)


def test_bad_costs_are_errors():
    with pytest.raises(LoomError, match="0 <= gil <= cpu"):
        predict([NodeCost("x", 1 * MS, 2 * MS)], cores=2)
    with pytest.raises(LoomError, match="cores must be >= 1"):
        predict([NodeCost("x", 1 * MS, 0)], cores=0)
    with pytest.raises(LoomError, match="no node has a cost"):
        predict([NodeCost("x", 0, 0)], cores=1)
    with pytest.raises(LoomError, match="moved no items"):
        costs_from_run([], 0)


def test_a_run_is_modelled_from_its_threads_cpu_time():
    n = 2000
    g = Graph("busy")
    a = g.channel(np.int64, depth=16, name="a")
    b = g.channel(np.int64, depth=16, name="b")

    def spin(x):  # a little pure-Python work per item: this node holds the GIL while it runs
        s = 0
        for k in range(200):
            s += k * x
        return s

    g.node(Process(lambda out: out.push_many(np.arange(n, dtype=np.int64))), outputs=[a], name="source")
    g.node(spin, inputs=[a], outputs=[b], name="spin")
    g.output(b, "out")
    outputs, result = run(g, timeout=60)
    assert outputs["out"] == [sum(k * x for k in range(200)) for x in range(n)]
    report = model_run(result, "b")
    assert report.items == n
    spin_stats = result.node("spin")
    assert spin_stats.firings == n and spin_stats.native == 0 and spin_stats.gil == spin_stats.cpu > 0
    # all work is Python: the model cannot promise more than the GIL allows, and the run cannot beat the model
    # (the measured rate also pays for start-up and drain)
    assert report.prediction.bottleneck == "GIL (Python work)"
    assert report.measured <= 1.2 * report.prediction.items_per_second


def test_kernel_nodes_account_their_time_in_c():
    """A pipeline of two C kernels: the items equal numpy's, every block is a firing, the sampled time in
    kernel calls is scaled to all calls and never exceeds the thread's CPU time."""
    blocks = [np.arange(k, k + 256, dtype=np.int32) for k in range(100)]
    g = Graph("cpipe")
    a, b, c = (g.channel(np.int32, depth=4, shape=(256,), name=x) for x in "abc")
    g.node(Process(lambda out: out.push_many(blocks)), outputs=[a], name="feed")
    g.node(affine3, inputs=[a], outputs=[b], name="first")
    g.node(affine3, inputs=[b], outputs=[c], name="second")
    g.output(c, "out")
    outputs, result = run(g, timeout=60)
    for got, x in zip(outputs["out"], blocks, strict=True):
        np.testing.assert_array_equal(got, (x * 3 + 1) * 3 + 1)
    for name in ("first", "second"):
        s = result.node(name)
        assert s.firings == 100
        assert 0 < s.native <= s.cpu and s.gil == pytest.approx(s.cpu - s.native)
    assert result.node("feed").native == 0  # a Python node: all its work holds the GIL
    report = model_run(result, "c")
    assert report.items == 100 and report.prediction.items_per_second > 0
