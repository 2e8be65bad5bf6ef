"""Integers a Python node pushes must fit the channel's type; the graph's own IR arithmetic wraps (MLIR)."""

from __future__ import annotations

import numpy as np
import pytest

from loom.dataflow import Graph, NodeError, Process, run


def _scaled(elem: str, values, factor: int) -> Graph:
    g = Graph("scale")
    a, b = g.channel(elem, depth=4, name="a"), g.channel(elem, depth=4, name="b")

    def source(out):
        for v in values:
            out.push(v)
    g.node(Process(source), outputs=[a], name="src")
    g.node(lambda x: x * factor, inputs=[a], outputs=[b], name="gain")
    g.output(b, "y")
    return g


@pytest.mark.parametrize("elem,lo,hi", [("i8", -128, 127), ("si16", -32768, 32767), ("ui16", 0, 65535)])
def test_values_at_the_ends_of_the_range_pass(elem, lo, hi):
    outputs, _ = run(_scaled(elem, [lo, np.int64(hi), 0], 1), timeout=10)
    assert outputs["y"] == [lo, hi, 0]


def test_a_map_result_beyond_the_channel_type_names_node_channel_value_and_type():
    # 13 * 10 = 130 > 127: before this check it arrived as -126
    with pytest.raises(NodeError, match=r"node @gain.*channel %b: integer 130 does not fit i8 \(-128..127\)"):
        run(_scaled("i8", [3, 12, 13], 10), timeout=10)
    with pytest.raises(NodeError, match=r"node @src.*channel %a: integer -1 does not fit ui16 \(0..65535\)"):
        run(_scaled("ui16", [5, -1], 1), timeout=10)


def test_index_and_i1_channels_are_checked_too():
    with pytest.raises(NodeError, match=r"channel %a: integer 2\*\*70|channel %a: integer 1180591620717411303424 "
                                        r"does not fit index"):
        run(_scaled("index", [1, 2**70], 1), timeout=10)
    outputs, _ = run(_scaled("i1", [True, 0, np.bool_(True)], 1), timeout=10)
    assert outputs["y"] == [True, False, True]
    with pytest.raises(NodeError, match=r"channel %a: expected a bool item \(i1: True/False, 1/0\), got int 2"):
        run(_scaled("i1", [1, 2], 1), timeout=10)


def test_an_f32_channel_carries_f32_values_and_refuses_what_f32_cannot_hold():
    vals = [0.1, 1.0 / 3.0, -2.5e-40, float("inf")]
    outputs, _ = run(_scaled("f32", vals, 1.0), timeout=10)
    assert outputs["y"] == [float(np.float32(v)) for v in vals]  # rounded as a store into f32 would
    g = Graph("batch")
    a = g.channel("f32", depth=8, name="a")
    g.node(Process(lambda out: out.push_many(np.array([0.1, 1e39]))), outputs=[a], name="p")
    g.output(a, "y")
    with pytest.raises(NodeError, match=r"node @p.*channel %a: float 1e\+39 is beyond the range of f32"):
        run(g, timeout=10)


SQUARE_F32 = """
dfg.operator @sq inputs(%x: f32) outputs(%y: f32) {
  dfg.loop inputs(%x: f32) outputs(%y: f32) {
    %v = dfg.pull %x : f32
    %w = arith.mulf %v, %v : f32
    dfg.push(%w) %y : f32
  }
}
func.func @main(%x: f32) -> f32 {
  %a_in, %a_out = dfg.channel() : f32
  %b_in, %b_out = dfg.channel() : f32
  dfg.push(%x) %a_out : f32
  dfg.instantiate @sq inputs(%a_in) outputs(%b_out)
  %r = dfg.pull %b_in : f32
  return %r : f32
}
"""


@pytest.mark.parametrize("x", [0.1, 1e30])
def test_f32_values_the_graphs_ir_computes_are_f32_ones(x):
    """The interpreter multiplies doubles: its push rounds into f32, an overflow is f32's infinity."""
    from xdsl.parser import Parser

    from loom.dataflow import run_graph
    from loom.dialects import context

    module = Parser(context(), SQUARE_F32, "sq.mlir").parse_module()
    x32 = np.float32(x)
    with np.errstate(over="ignore"):
        want = float(x32 * x32)
    assert run_graph(module, args=(x,), timeout=30).values == (want,)


CALLS_PY = """
func.func private @gain(i8) -> i8
dfg.operator @amp inputs(%x: i8) outputs(%y: i8) {
  dfg.loop inputs(%x: i8) outputs(%y: i8) {
    %v = dfg.pull %x : i8
    %w = func.call @gain(%v) : (i8) -> i8
    dfg.push(%w) %y : i8
  }
}
func.func @main(%x: i8) -> i8 {
  %a_in, %a_out = dfg.channel() : i8
  %b_in, %b_out = dfg.channel() : i8
  dfg.push(%x) %a_out : i8
  dfg.instantiate @amp inputs(%a_in) outputs(%b_out)
  %r = dfg.pull %b_in : i8
  return %r : i8
}
"""


def test_a_python_function_bound_to_func_call_is_range_checked_too():
    """Its result is a Python value, as a Python node's push is: 13 * 10 into i8 was wrapped to -126."""
    from xdsl.parser import Parser

    from loom.dataflow import run_graph
    from loom.dialects import context

    module = Parser(context(), CALLS_PY, "amp.mlir").parse_module()
    assert run_graph(module, args=(12,), bindings={"gain": lambda v: v * 10}, timeout=30).values == (120,)
    with pytest.raises(NodeError, match=r"node @amp.*func.call @gain result 0: integer 130 does not fit i8"):
        run_graph(module, args=(13,), bindings={"gain": lambda v: v * 10}, timeout=30)
