"""A looping node that drains the last item of one input finishes that round: the matching items of its
other inputs are consumed and the result pushed (Kahn semantics: n items on every input give n outputs)."""

import time

import numpy as np
from xdsl.parser import Parser

from loom.dataflow import Graph, Map, Process, run, run_graph
from loom.dialects import context

N = 12


def _feed(xs, ys):
    def body(a, b):
        for y in ys:   # every item of %b is queued before the last item of %a: when the looping node pulls
            b.push(y)  # the last %a, %a is already closed and empty but the matching %b item is waiting
        for x in xs:
            a.push(x)

    return Process(body)


def _slow_first(fn):
    state = {"first": True}

    def call(*items):
        if state["first"]:  # let the feeder finish and close both channels before the rounds go on
            state["first"] = False
            time.sleep(0.3)
        return fn(*items)

    return call


def test_a_map_node_finishes_the_round_in_which_an_input_ran_dry():
    xs, ys = list(range(N)), [10 * k + 1 for k in range(N)]
    g = Graph("rounds")
    a, b, c = g.channel("i32", depth=N, name="a"), g.channel("i32", depth=N, name="b"), g.channel("i32", depth=N,
                                                                                                   name="c")
    g.node(_feed(xs, ys), outputs=[a, b], name="feed")
    g.node(Map(_slow_first(lambda x, y: x - y)), inputs=[a, b], outputs=[c], name="sub")
    g.output(c, "out")
    outputs, result = run(g, timeout=10)
    assert outputs["out"] == (np.array(xs) - np.array(ys)).tolist()
    assert result.channel("b").left == 0


def test_a_dfg_loop_finishes_the_round_in_which_an_input_ran_dry():
    text = """
dfg.operator @sub inputs(%a: i32, %b: i32) outputs(%c: i32) {
  dfg.loop inputs(%a: i32, %b: i32) outputs(%c: i32) {
    %x = dfg.pull %a : i32
    %y = dfg.pull %b : i32
    %s = arith.subi %x, %y : i32
    dfg.push(%s) %c : i32
  }
}
dfg.operator @feed outputs(%a: i32, %b: i32)
dfg.operator @sink inputs(%i: i32)
func.func @g() {
  %a_in, %a_out = dfg.channel(12) : i32
  %b_in, %b_out = dfg.channel(12) : i32
  %c_in, %c_out = dfg.channel(12) : i32
  dfg.instantiate @feed outputs(%a_out, %b_out)
  dfg.instantiate @sub inputs(%a_in, %b_in) outputs(%c_out)
  dfg.instantiate @sink inputs(%c_in)
  return
}"""
    xs, ys = list(range(N)), [7 * k for k in range(N)]
    got = []

    def sink(inp):
        time.sleep(0.3)  # @sub fills %c; by the time its last round runs, @feed has closed %a and %b
        got.extend(inp)

    m = Parser(context(), text).parse_module()
    result = run_graph(m, bindings={"feed": _feed(xs, ys), "sink": Process(sink)}, timeout=10)
    assert got == (np.array(xs) - np.array(ys)).tolist()
    assert result.channel("b").left == 0
