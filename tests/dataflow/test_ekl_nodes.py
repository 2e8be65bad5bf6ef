"""An EKL kernel bound to a dataflow node runs like a @loom.kernel node: the parameters it reads come from
the input channels, the ones it writes go to the output channels. Before, it fell through to a plain Map
and was called with the input items only (`kernel sm: missing argument(s) Y`). Values against numpy;
mismatched channels are refused before the run, naming the node."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.dataflow import Graph, Map, Process, run
from loom.errors import LoomError
from loom.jit.ekl_formats import in_format

SOFTMAX = """
kernel sm(X : f64[4, 5], Y : out& f64[4, 5]) {
    let m[r] = <max c< X[r, c];
    let e[r, c] = exp(X[r, c] - m[r]);
    let s[r] = <+ c< e[r, c];
    out Y[r, c] = e[r, c] / s[r];
}"""

ACCUMULATE = """
kernel acc(x : f64[3], s : inout& f64[3], n : out& index[3]) {
    out s[i] = s[i] + x[i] * 2.0;
    out n[i] = index(x[i]);
}"""


def softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def frames(n):
    return [np.random.default_rng(k).standard_normal((4, 5)) * 3 for k in range(n)]


def pipeline(impl, items, elem="memref<4x5xf64>"):
    g = Graph("ekl_pipe")
    a, b = (g.channel(elem, depth=2, name=n) for n in "ab")
    c = g.channel("memref<4xf64>", depth=2, name="c")
    g.node(Process(lambda port: [port.push(x) for x in items]), outputs=[a], name="feed")
    g.node(impl, inputs=[a], outputs=[b], name="softmax")
    g.node(Map(lambda y: y.sum(axis=1)), inputs=[b], outputs=[c], name="rowsum")
    g.output(c, "sums")
    return g


def test_an_ekl_softmax_node_between_host_nodes():
    items = frames(5)
    g = Graph("ekl_sm")
    a, b = g.channel("memref<4x5xf64>", depth=2, name="a"), g.channel("memref<4x5xf64>", depth=2, name="b")
    g.node(Process(lambda port: [port.push(x) for x in items]), outputs=[a], name="feed")
    g.node(loom.ekl.load(SOFTMAX).kernel(), inputs=[a], outputs=[b])
    g.output(b, "y")
    results, _ = run(g, timeout=60)
    assert len(results["y"]) == 5
    for got, x in zip(results["y"], items):
        np.testing.assert_allclose(got, softmax(x), rtol=1e-14)
    results, _ = run(pipeline(loom.ekl.load(SOFTMAX).kernel(), items), timeout=60)
    np.testing.assert_allclose(np.array(results["sums"]), np.ones((5, 4)), rtol=1e-14)


def test_inout_and_index_outputs():
    xs = [np.array([1.5, -2.25, 3.75]) + k for k in range(3)]
    g = Graph("ekl_acc")
    x, s, s2, n = (g.channel(t, depth=1, name=nm) for t, nm in
                   (("memref<3xf64>", "x"), ("memref<3xf64>", "s"), ("memref<3xf64>", "s2"), ("memref<3xindex>", "n")))
    state = np.array([10.0, 20.0, 30.0])

    def feed(px, ps):
        for item in xs:
            px.push(item)
            ps.push(state)

    g.node(Process(feed), outputs=[x, s], name="feed")
    g.node(loom.ekl.load(ACCUMULATE).kernel(), inputs=[x, s], outputs=[s2, n])
    g.output(s2, "s")
    g.output(n, "n")
    results, _ = run(g, timeout=60)
    for got_s, got_n, item in zip(results["s"], results["n"], xs):
        np.testing.assert_array_equal(got_s, state + item * 2)
        np.testing.assert_array_equal(got_n, np.trunc(item).astype(np.int64))
    np.testing.assert_array_equal(state, [10.0, 20.0, 30.0])  # the pushed item is not written in place


def test_an_ekl_kernel_in_a_number_format_as_a_node():
    src = "kernel sq(x : f64[6], y : out& f64[6]) { out y[i] = x[i] * x[i] + 0.1; }"
    item = np.array([0.3, -1.7, 2.2, 0.05, -0.5, 1.0])
    g = Graph("ekl_fixed")
    a, b = g.channel("memref<6xf64>", name="a"), g.channel("memref<6xf64>", name="b")
    g.node(Process(lambda port: port.push(item)), outputs=[a], name="feed")
    g.node(in_format(loom.ekl.load(src).kernel(), "fixed<8, 4>"), inputs=[a], outputs=[b], name="sq")
    g.output(b, "y")
    results, _ = run(g, timeout=60)
    q = lambda v: np.round(v * 16) / 16  # noqa: E731 - half to even on a 1/16 grid, no overflow here
    np.testing.assert_array_equal(results["y"][0], q(q(q(item) * q(item)) + q(0.1)))


@pytest.mark.parametrize("elem,inputs,outputs,match", [
    ("memref<4x5xf32>", 1, 1, "input channel 0 carries memref<4x5xf32> but EKL kernel sm parameter 'X' is"),
    ("memref<4x5xf64>", 2, 1, "1 read parameter"),
    ("memref<4x5xf64>", 1, 2, "1 written parameter"),
    ("memref<4x?xf64>", 1, 1, "needs a static shape"),
])
def test_channels_that_do_not_fit_are_refused_naming_the_node(elem, inputs, outputs, match):
    g = Graph("bad")
    ins = [g.channel(elem, name=f"i{k}") for k in range(inputs)]
    outs = [g.channel(elem, name=f"o{k}") for k in range(outputs)]
    g.node(Process(lambda *ports: None), outputs=ins, name="feed")
    g.node(loom.ekl.load(SOFTMAX).kernel(), inputs=ins, outputs=outs, name="sm")
    for k, c in enumerate(outs):
        g.output(c, f"r{k}")
    with pytest.raises(LoomError, match=match) as info:
        run(g, timeout=30)
    assert "node @sm" in str(info.value)


def _matmul_graph(kernel, offloaded: bool, items):
    g = Graph("product")
    a, b, c = (g.channel(t, name=n) for n, t in (("a", "memref<4x6xf32>"), ("b", "memref<6x5xf32>"),
                                               ("c", "memref<4x5xf32>")))

    def feed(ao, bo):
        for A, B in items:
            ao.push(A)
            bo.push(B)
    g.node(Process(feed), outputs=[a, b], name="feed")
    g.node(kernel, inputs=[a, b], outputs=[c], name="mm", offloaded=offloaded)
    g.output(c, "C")
    return g


def test_an_ekl_kernel_loaded_with_accelerators_is_an_offloaded_node(tmp_path):
    """`offloaded=True` refused every binding but Accelerator(...), though an EKL kernel loaded with
    accelerators=[...] runs its contractions on them; one whose steps all stay on the CPU is refused."""
    from tests.ekl.test_ekl_offload import f32_copy

    src = "kernel mm(A : f32[4, 6], B : f32[6, 5], C : out& f32[4, 5]) { out C[i, j] = <+ k< A[i, k] * B[k, j]; }"
    rng = np.random.default_rng(0)
    items = [(rng.integers(-3, 3, (4, 6)).astype(np.float32), rng.integers(-3, 3, (6, 5)).astype(np.float32))
             for _ in range(3)]
    k = loom.ekl.load(src, accelerators=[f32_copy(tmp_path, "matmul_v4.json")]).mm
    outputs, _ = run(_matmul_graph(k, True, items), timeout=60)
    assert [c.tolist() for c in outputs["C"]] == [(A @ B).tolist() for A, B in items]
    on_cpu = loom.ekl.load(src, accelerators=[f32_copy(tmp_path, "conv2d.json")]).mm
    with pytest.raises(LoomError, match=r"node @mm: the node is offloaded but no step of EKL kernel 'mm' runs on an "
                                        r"accelerator: C: cpu"):
        run(_matmul_graph(on_cpu, True, items), timeout=60)
