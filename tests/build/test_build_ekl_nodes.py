"""``loom build`` of a dataflow graph with a node bound to an EKL kernel: the graph runs (its softmax checked
against numpy here) and the EKL node is built as its own unit (IR, C, HLS C++), as @loom.kernel nodes are.
Before, an EKL node failed at run time and was not built."""

from __future__ import annotations

import importlib.util

import numpy as np

from loom.build import build
from loom.dataflow import run

GRAPH = '''
import numpy as np
import loom
from loom import F64, MemRef, kernel
from loom.dataflow import Graph, Process

SM = loom.ekl.load("""
kernel softmax(X : f64[4, 5], Y : out& f64[4, 5]) {
    let m[r] = <max c< X[r, c];
    let e[r, c] = exp(X[r, c] - m[r]);
    let s[r] = <+ c< e[r, c];
    out Y[r, c] = e[r, c] / s[r];
}""").kernel()


@kernel
def double(A: MemRef[(4, 5), F64], B: MemRef[(4, 5), F64]):
    for i in range(4):
        for j in range(5):
            B[i, j] = A[i, j] * 2.0


ITEMS = [np.random.default_rng(i).standard_normal((4, 5)) for i in range(3)]


def graph():
    g = Graph("eklg")
    a, b, c = (g.channel("memref<4x5xf64>", name=n) for n in "abc")
    g.node(Process(lambda p: [p.push(x) for x in ITEMS]), outputs=[a], name="feed")
    g.node(SM, inputs=[a], outputs=[b])
    g.node(double, inputs=[b], outputs=[c])
    g.output(c, "r")
    return g
'''


def test_a_graph_with_an_ekl_node_builds_the_node_as_a_unit(tmp_path):
    source = tmp_path / "eklg.py"
    source.write_text(GRAPH)
    spec = importlib.util.spec_from_file_location("eklg_user_graph", source)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results, _ = run(mod.graph(), timeout=60)
    for got, x in zip(results["r"], mod.ITEMS):
        e = np.exp(x - x.max(1, keepdims=True))
        np.testing.assert_allclose(got, 2 * e / e.sum(1, keepdims=True), rtol=1e-14)

    index = build(source, tmp_path / "out", target="all").index
    units = {u["name"]: u for u in index["units"]}
    assert units["eklg.softmax"]["kind"] == "ekl"
    assert "graph ran: 4 nodes, outputs r 3 items" in units["eklg"]["checks"]
    paths = {a["path"] for a in index["artifacts"]}
    assert {"eklg.softmax/hls/softmax.cpp", "eklg.softmax/c/softmax.c", "eklg.softmax/ir/01-esn.mlir"} <= paths
