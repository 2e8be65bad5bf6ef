"""The seed's runtime rules (D4.5 §4.3), each a test, plus errors that name the node and deadlocks that name the cycle."""

import threading
import time

import numpy as np
import pytest
from xdsl.parser import Parser

from loom.dataflow import DeadlockError, Graph, NodeError, Process, run, run_graph
from loom.dialects import context
from loom.errors import LoomError


def src(values):
    def body(out):
        for v in values:
            out.push(v)
    return Process(body)


def test_all_nodes_start_and_run_in_parallel():
    """Rule 1: every node is started with its channels in place; they run at the same time."""
    n = 4
    barrier = threading.Barrier(n, timeout=5)  # passes only if all n nodes are alive together
    g = Graph("par")
    chans = [g.channel("i32", name=f"c{k}") for k in range(n)]

    def meet(out):
        barrier.wait()
        out.push(1)

    for k in range(n):
        g.node(Process(meet), outputs=[chans[k]], name=f"n{k}")
        g.output(chans[k], f"o{k}")
    outputs, result = run(g, timeout=10)
    assert all(outputs[f"o{k}"] == [1] for k in range(n))
    assert len(result.nodes) == 2 * n


def test_an_ending_operator_closes_its_channels():
    """Rule 2: a consumer that stops reading closes its input: the producer's next push ends it."""
    g = Graph("close")
    a = g.channel("i32", name="a")
    pushed = []

    def endless(out):
        k = 0
        while True:          # only the closed channel can stop this node
            out.push(k)
            pushed.append(k)
            k += 1

    def take_three(inp):
        for _ in range(3):
            inp.pull()

    g.node(Process(endless), outputs=[a])
    g.node(Process(take_three), inputs=[a])
    _, result = run(g, timeout=10)
    stats = result.channel("a")
    assert stats.pulls == 3 and stats.pushes == stats.pulls + stats.left
    assert len(pushed) == stats.pushes


def test_a_looping_node_stops_on_a_broken_channel_and_the_graph_shuts_down():
    """Rule 3: @sum loops; once @ones (3 items) ends, @sum stops although @counter still offers input,
    and @counter (an endless looping source) stops because its reader is gone."""
    text = """
dfg.operator @sum inputs(%a: i32, %b: i32) outputs(%c: i32) {
  dfg.loop inputs(%a: i32, %b: i32) outputs(%c: i32) {
    %x = dfg.pull %a : i32
    %y = dfg.pull %b : i32
    %s = arith.addi %x, %y : i32
    dfg.push(%s) %c : i32
  }
}
dfg.operator @counter outputs(%o: i32)
dfg.operator @ones outputs(%o: i32)
dfg.operator @sink inputs(%i: i32)
func.func @g() {
  %a_in, %a_out = dfg.channel(2) : i32
  %b_in, %b_out = dfg.channel(2) : i32
  %c_in, %c_out = dfg.channel(2) : i32
  dfg.instantiate @counter outputs(%a_out)
  dfg.instantiate @ones outputs(%b_out)
  dfg.instantiate @sum inputs(%a_in, %b_in) outputs(%c_out)
  dfg.instantiate @sink inputs(%c_in)
  return
}"""
    got = []
    counter = iter(range(10**9))
    bindings = {"counter": lambda: next(counter), "ones": src([1, 1, 1]),
                "sink": Process(lambda inp: got.extend(inp))}
    m = Parser(context(), text).parse_module()
    result = run_graph(m, bindings=bindings, timeout=10)
    assert got == [1, 2, 3]  # counter 0, 1, 2 plus one each
    a = result.channel("a")
    assert a.pushes == a.pulls + a.left and a.pulls in (3, 4)  # at most the pull under way when @ones ended


def test_a_non_looping_source_feeds_initial_values_and_the_pipeline_drains():
    """Rule 4 (and Listing 1's shape): the entry function pushes inputs; every node ends by itself."""
    g = Graph("drain")
    a, b, c = (g.channel("f64", depth=3, name=n) for n in "abc")
    g.node(src([1.0, 2.0, 3.0, 4.0]), outputs=[a], name="feed")
    g.node(lambda x: x * 10, inputs=[a], outputs=[b], name="scale")
    g.node(lambda x: x + 1, inputs=[b], outputs=[c], name="shift")
    g.output(c, "out")
    outputs, result = run(g, timeout=10)
    assert outputs["out"] == [11.0, 21.0, 31.0, 41.0]
    assert all(s.pushes == s.pulls == 4 and s.left == 0 for s in result.channels)


def test_listing1_runs_with_pow2_offloaded_to_the_matmul_accelerator():
    from loom.examples.dataflow import listing1 as L

    for a, b in [(5, 3), (0, 7), (40000, 1)]:
        result = run_graph(L.module(), "run_dfg", (a,), L.bindings(b), timeout=60)
        assert result.values == (((a + b) ** 2) % 2**32,)


def test_toggling_offloaded_switches_to_the_cpu_kernel():
    from loom.examples.dataflow import listing1 as L

    text = L.MLIR.read_text().replace("dfg.instantiate offloaded @pow2", "dfg.instantiate @pow2")
    m = Parser(context(), text).parse_module()
    assert run_graph(m, "run_dfg", (6,), L.bindings(1), timeout=60).values == (49,)


def test_an_exception_in_a_node_reaches_the_caller_naming_the_node():
    g = Graph("err")
    a, b = g.channel("i32", name="a"), g.channel("i32", name="b")
    g.node(src(range(100)), outputs=[a], name="feed")

    def fragile(x):
        if x == 7:
            raise ValueError("seven")
        return x

    g.node(fragile, inputs=[a], outputs=[b], name="fragile")
    g.output(b)
    with pytest.raises(NodeError, match=r"node @fragile: node failed: ValueError: seven") as info:
        run(g, timeout=10)
    assert info.value.node == "fragile"


def test_a_cycle_of_full_channels_is_reported_with_the_cycle():
    """Two nodes each push twice before pulling, over depth-1 channels: both block on a full channel."""
    g = Graph("dead")
    ab, ba = g.channel("i32", name="ab"), g.channel("i32", name="ba")

    def chatty(inp, out):
        out.push(1)
        out.push(2)
        inp.pull()

    g.node(Process(chatty), inputs=[ba], outputs=[ab], name="left")
    g.node(Process(chatty), inputs=[ab], outputs=[ba], name="right")
    t = time.perf_counter()
    with pytest.raises(DeadlockError) as info:
        run(g)  # no timeout: the detection must not depend on one
    assert time.perf_counter() - t < 5
    assert sorted(info.value.nodes) == ["left", "right"]
    assert "waits to push into full channel %ab (depth 1)" in str(info.value)
    assert "waits to push into full channel %ba (depth 1)" in str(info.value)


def test_the_entry_function_waiting_on_a_node_that_waits_on_it_is_a_deadlock():
    text = """
dfg.operator @echo inputs(%i: i32) outputs(%o: i32)
func.func @g(%v: i32) -> i32 {
  %a_in, %a_out = dfg.channel() : i32
  %b_in, %b_out = dfg.channel() : i32
  dfg.instantiate @echo inputs(%a_in) outputs(%b_out)
  %r = dfg.pull %b_in : i32
  dfg.push(%v) %a_out : i32
  return %r : i32
}"""
    m = Parser(context(), text).parse_module()
    with pytest.raises(DeadlockError, match=r"@g waits to pull from empty channel %b"):
        run_graph(m, args=(1,), bindings={"echo": lambda x: x})


def test_bad_items_and_bindings_are_named_errors():
    g = Graph("bad")
    a = g.channel("memref<4xf32>", name="a")
    g.node(src([np.zeros(5, np.float32)]), outputs=[a], name="feed")
    g.output(a)
    with pytest.raises(NodeError, match=r"node @feed.*channel %a: expected shape \(4,\)"):
        run(g, timeout=10)
    text = "dfg.operator @x outputs(%o: i32)\ndfg.operator @y inputs(%i: i32)\nfunc.func @g() {\n" \
           "  %a_in, %a_out = dfg.channel() : i32\n  dfg.instantiate @x outputs(%a_out)\n" \
           "  dfg.instantiate @y inputs(%a_in)\n  return\n}"
    m = Parser(context(), text).parse_module()
    with pytest.raises(LoomError, match=r"node @y: dfg.operator @y has no body and nothing is bound"):
        run_graph(m, bindings={"x": src([1])})
    with pytest.raises(LoomError, match=r"node @x: the node is offloaded"):
        run_graph(Parser(context(), text.replace("instantiate @x", "instantiate offloaded @x")).parse_module(),
                  bindings={"x": src([1]), "y": Process(lambda i: None)})


def test_graph_builder_errors():
    g = Graph("b")
    a = g.channel("i32", name="a")
    g.node(src([1]), outputs=[a], name="p")
    with pytest.raises(LoomError, match=r"node @q: the output end of %a is already held by @p"):
        g.node(src([1]), outputs=[a], name="q")
    with pytest.raises(LoomError, match=r"graph b: nobody reads channel %a"):
        g.module()
    with pytest.raises(LoomError, match=r"channel %c: depth must be an integer >= 1"):
        g.channel("i32", depth=0, name="c")
    with pytest.raises(LoomError, match=r"channel %d: cannot read the element type"):
        g.channel("nonsense<", name="d")
