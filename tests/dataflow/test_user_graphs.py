"""A researcher's own graphs, each checked against plain Python / numpy computed here: fan-out and fan-in,
a feedback cycle with an initial token (and one without, which deadlocks), nodes of different rates, an EKL
node with scalar parameters on scalar channels, and nodes whose shapes do not match their channels."""

from __future__ import annotations

import numpy as np
import pytest

import loom.ekl
from loom import I32, MemRef, kernel, linalg
from loom.dataflow import Accelerator, DeadlockError, Graph, NodeError, Process, run
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR


def _source(values):
    def source(*ports):
        for v in values:
            for port in ports:
                port.push(v)
    return Process(source)


def test_fan_out_and_fan_in():
    g = Graph("fan")
    a, b1, b2, c1, c2, out = (g.channel("f64", name=n) for n in ("a", "b1", "b2", "c1", "c2", "out"))
    g.node(_source([float(x) for x in range(10)]), outputs=[a], name="src")
    g.node(lambda x: (x, x), inputs=[a], outputs=[b1, b2], name="split")
    g.node(lambda x: 2.0 * x, inputs=[b1], outputs=[c1], name="scale")
    g.node(lambda x: x * x, inputs=[b2], outputs=[c2], name="square")
    g.node(lambda p, q: p + q, inputs=[c1, c2], outputs=[out], name="combine")
    g.output(out, "y")
    outputs, _ = run(g, timeout=30)
    assert outputs["y"] == [2.0 * x + x * x for x in range(10)]


def _running_sum(initial_token: bool) -> Graph:
    g = Graph("cycle")
    x, fb, s, o, d = (g.channel("f64", name=n) for n in ("x", "fb", "s", "o", "d"))
    g.node(_source([1.0, 2.0, 3.0, 4.0]), outputs=[x], name="src")
    g.node(lambda a, b: a + b, inputs=[x, fb], outputs=[s], name="add")
    g.node(lambda v: (v, v), inputs=[s], outputs=[o, d], name="split")

    def delay(inp, out):
        if initial_token:
            out.push(0.0)
        for v in inp:
            out.push(v)
    g.node(Process(delay), inputs=[d], outputs=[fb], name="delay")
    g.output(o, "sums")
    return g


def test_a_feedback_cycle_with_an_initial_token_and_without():
    outputs, _ = run(_running_sum(True), timeout=30)
    assert outputs["sums"] == list(np.cumsum([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(DeadlockError, match="a cycle of blocked nodes"):
        run(_running_sum(False), timeout=30)


def test_nodes_of_different_rates():
    g = Graph("rates")
    a, b, c = g.channel("memref<4xi32>", name="a"), g.channel("i32", depth=4, name="b"), g.channel("i32", name="c")
    blocks = [np.arange(4, dtype=np.int32) * k for k in range(3)]
    g.node(_source(blocks), outputs=[a], name="src")

    def explode(inp, out):  # one item in, four out
        for block in inp:
            for v in block:
                out.push(int(v))

    def pairs(inp, out):    # two in, one out
        held = []
        for v in inp:
            held.append(v)
            if len(held) == 2:
                out.push(held[0] - held[1])
                held = []
    g.node(Process(explode), inputs=[a], outputs=[b], name="explode")
    g.node(Process(pairs), inputs=[b], outputs=[c], name="pairs")
    g.output(c, "d")
    outputs, result = run(g, timeout=30)
    assert outputs["d"] == [int(x[i] - x[i + 1]) for x in blocks for i in (0, 2)]
    assert result.channel("b").pushes == 12 and result.channel("c").pushes == 6


SCALE = """kernel scale(s : f64, n : index, u : f64[4], v : out& f64[4], t : out& f64) {
    out v[i] = u[i] * s + (n !> f64);
    out t = <+ i< u[i];
}"""


def test_an_ekl_node_takes_and_gives_scalars_on_scalar_channels():
    """A scalar parameter needed a memref<f64> channel: an f64 channel was refused ('carries f64 but ...
    parameter 's' is memref<f64>')."""
    g = Graph("scalars")
    s, n, u = g.channel("f64", name="s"), g.channel("index", name="n"), g.channel("memref<4xf64>", name="u")
    v, t = g.channel("memref<4xf64>", name="v"), g.channel("f64", name="t")
    rounds = [(0.5 * j, j, np.arange(4.0) + j) for j in range(3)]

    def src(ps, pn, pu):
        for a, b, c in rounds:
            ps.push(a)
            pn.push(b)
            pu.push(c)
    g.node(Process(src), outputs=[s, n, u], name="src")
    g.node(loom.ekl.load(SCALE).scale, inputs=[s, n, u], outputs=[v, t], name="scale")
    g.output(v, "v")
    g.output(t, "t")
    outputs, _ = run(g, timeout=30)
    for (a, b, c), got_v, got_t in zip(rounds, outputs["v"], outputs["t"]):
        np.testing.assert_array_equal(got_v, c * a + b)
        assert got_t == c.sum()


@pytest.mark.parametrize("channel, message", [
    ("memref<8xf64>", "input channel 0 carries memref<8xf64> but EKL kernel sm parameter 'u' is memref<4xf64>"),
    ("memref<4xf32>", "input channel 0 carries memref<4xf32> but EKL kernel sm parameter 'u' is memref<4xf64>"),
    ("f64", "input channel 0 carries f64 but EKL kernel sm parameter 'u' is memref<4xf64>"),
])
def test_an_ekl_node_whose_shapes_do_not_match_its_channels_is_refused_by_name(channel, message):
    g = Graph("mismatch")
    a, b = g.channel(channel, name="a"), g.channel("memref<4xf64>", name="b")
    g.node(_source([]), outputs=[a], name="src")
    g.node(loom.ekl.load("kernel sm(u : f64[4], v : out& f64[4]) { out v = u * 2.0; }").sm, inputs=[a],
           outputs=[b], name="sm")
    g.output(b, "b")
    with pytest.raises(LoomError, match=message) as info:
        run(g, timeout=30)
    assert info.value.where == "node @sm"


def test_a_python_node_pushing_the_wrong_shape_is_a_node_error():
    g = Graph("shapes")
    a, b = g.channel("memref<4xf64>", name="a"), g.channel("memref<4xf64>", name="b")
    g.node(_source([np.zeros(4)]), outputs=[a], name="src")
    g.node(lambda v: v[:3], inputs=[a], outputs=[b], name="trim")
    g.output(b, "b")
    with pytest.raises(NodeError, match=r"node @trim: .*channel %b: expected shape \(4,\) for memref<4xf64>, got \(3,\)"):
        run(g, timeout=30)


@pytest.mark.parametrize("taken, holder", [("trim", "graph trim"), ("src", "node @src")])
def test_a_chosen_node_name_that_is_taken_is_refused(taken, holder):
    """A node named like its graph (or like another node) was renamed to 'trim_1' silently, so errors and
    run.node('trim') spoke of a node the user never named."""
    g = Graph("trim")
    a = g.channel("f64", name="a")
    g.node(_source([1.0]), outputs=[a], name="src")
    with pytest.raises(LoomError, match=f"the name '{taken}' is already taken by {holder}"):
        g.node(lambda v: v, inputs=[a], outputs=[], name=taken)


@kernel
def mv(A: MemRef[(16, 24), I32], x: MemRef[(24,), I32], y: MemRef[(16,), I32]):
    linalg.einsum("mk,k->m", A, x, out=y)


def _matvec_node(inputs: list[str], outputs: list[str], adapter=None):
    g = Graph("mv")
    ins = [g.channel(t, name=f"i{k}") for k, t in enumerate(inputs)]
    outs = [g.channel(t, name=f"o{k}") for k, t in enumerate(outputs)]
    g.node(Process(lambda *ports: None), outputs=ins, name="src")
    g.node(Accelerator(mv, str(ACCELERATORS_DIR / "matvec.json"), "mv_8", "Ys", adapter=adapter), inputs=ins,
           outputs=outs, name="project", offloaded=True)
    for k, c in enumerate(outs):
        g.output(c, f"y{k}")
    return g


@pytest.mark.parametrize("inputs,outputs,adapter,message", [
    (["memref<24xi32>"], ["memref<16xi32>"], None, "kernel 'mv' has 2 output parameters after the 1 inputs"),
    (["memref<16x24xf32>", "memref<24xi32>"], ["memref<16xi32>"], None,
     "input channel 0 carries memref<16x24xf32> but kernel 'mv' parameter 'A' is memref<16x24xi32>"),
    (["memref<24xi32>"], ["memref<16xi32>"], lambda run: None, r"cannot take the driver's run function and 1 item"),
])
def test_an_accelerator_node_is_checked_against_its_channels_before_the_run(inputs, outputs, adapter, message):
    """Before, a mismatch surfaced at the first item, from the driver ('takes 3 arrays, got 2')."""
    with pytest.raises(LoomError, match=message) as info:
        run(_matvec_node(inputs, outputs, adapter), timeout=30)
    assert "node @project" in str(info.value)
