"""Mistakes while declaring a Graph are LoomErrors naming the graph, node or channel, not silent merges or
Python tracebacks from inside the builder."""

import numpy as np
import pytest

from loom import F32, MemRef, kernel
from loom.dataflow import Graph, Process, run
from loom.errors import LoomError


@kernel
def _square(A: MemRef[(8,), F32], B: MemRef[(8,), F32]):
    for i in range(8):
        B[i] = A[i] * A[i]


@kernel
def _total(A: MemRef[(8,), F32]) -> F32:
    s = 0.0
    for i in range(8):
        s = s + A[i]
    return s


def _src(values):
    def body(out):
        for v in values:
            out.push(v)

    return Process(body)


def test_two_outputs_with_one_name_are_refused():
    g = Graph("outs")
    a, b = g.channel("i32", name="a"), g.channel("i32", name="b")
    g.node(_src([1, 2]), outputs=[a], name="fa")
    g.node(_src([30]), outputs=[b], name="fb")
    g.output(a, "x")
    with pytest.raises(LoomError, match=r"graph outs: output name 'x' is already used"):
        g.output(b, "x")
    g.output(b, "y")  # distinct names: each output keeps its own items
    outputs, _ = run(g, timeout=10)
    assert outputs == {"x": [1, 2], "y": [30]}


def test_a_generator_process_is_an_error_not_an_empty_output():
    g = Graph("gen")
    a = g.channel("i32", name="a")

    def numbers(out):
        for k in range(3):
            yield k  # a Process must push: out.push(k)

    g.node(Process(numbers), outputs=[a], name="numbers")
    g.output(a, "out")
    with pytest.raises(LoomError, match=r"node @numbers: .*'numbers' returned a generator.*out\.push"):
        run(g, timeout=10)


@pytest.mark.parametrize("bad", [True, False, 2.0, 0])
def test_a_channel_depth_must_be_a_positive_int(bad):
    with pytest.raises(LoomError, match=r"channel %c: depth must be an integer >= 1"):
        Graph("d").channel("i32", depth=bad, name="c")


@pytest.mark.parametrize("role", ["inputs", "outputs"])
def test_a_bare_channel_for_the_port_list_names_the_node(role):
    g = Graph("bare")
    a = g.channel("i32", name="a")
    with pytest.raises(LoomError, match=rf"node @f: {role} must be a list of channels, got <channel %a"):
        g.node(lambda x: x, name="f", **{role: a})
    g.node(_src([4, 5]), outputs=(c for c in [a]), name="feed")  # any iterable of channels still works
    g.output(a, "out")
    assert run(g, timeout=10)[0] == {"out": [4, 5]}


@pytest.mark.parametrize("bad", [0, -1, True])
def test_a_timeout_must_be_positive(bad):
    g = Graph("t")
    a = g.channel("i32", name="a")
    g.node(_src([1]), outputs=[a], name="feed")
    g.output(a)
    with pytest.raises(LoomError, match=r"timeout must be a number of seconds > 0"):
        run(g, timeout=bad)


def _arity_graph(impl):
    started = []

    def feed(out):
        started.append(True)
        out.push(1)

    g = Graph("arity")
    a, b = g.channel("i32", name="a"), g.channel("i32", name="b")
    g.node(Process(feed), outputs=[a], name="feed")
    g.node(impl, inputs=[a], outputs=[b], name="f")
    g.output(b, "out")
    return g, started


@pytest.mark.parametrize("impl, expected", [
    (Process(lambda inp: None), r"node @f: .*<lambda>\(inp\) cannot take the node's 2 ports \(1 input, 1 output\)"),
    (lambda x, y: x + y, r"node @f: .*<lambda>\(x, y\) cannot take 1 item, one per input channel"),
])
def test_a_node_function_with_the_wrong_number_of_parameters_is_refused_before_running(impl, expected):
    g, started = _arity_graph(impl)
    with pytest.raises(LoomError, match=expected):
        run(g, timeout=10)
    assert started == []  # refused while binding, before any node ran


def test_functions_with_defaults_or_varargs_still_bind():
    g, _ = _arity_graph(lambda x, scale=3: x * scale)
    assert run(g, timeout=10)[0] == {"out": [3]}
    g, _ = _arity_graph(Process(lambda *ports: ports[1].push(ports[0].pull() + 1)))
    assert run(g, timeout=10)[0] == {"out": [2]}


@pytest.mark.parametrize("tin, tout, kernel_name, match", [
    ("memref<8xf64>", "memref<8xf64>", "square", r"input channel 0 carries memref<8xf64> but kernel '_square' "
                                                 r"parameter 'A' is memref<8xf32>"),
    ("memref<4xf32>", "memref<4xf32>", "square", r"input channel 0 carries memref<4xf32>"),
    ("f32", "memref<8xf32>", "square", r"input channel 0 carries f32"),
    ("memref<8xf32>", "memref<?xf32>", "square", r"output channel 0 carries memref<\?xf32>: .*static shape"),
    ("memref<8xf32>", "i32", "total", r"kernel '_total' returns f32 but output channel 0 carries i32"),
])
def test_a_kernel_node_whose_channels_do_not_fit_it_is_refused_before_the_run(tin, tout, kernel_name, match):
    """The channel types against the kernel's parameters (and returned value), checked before any node starts
    (the source below has pushed nothing); it was found when the first item reached the kernel."""
    pushed = []

    def source(out):
        pushed.append(1)
        out.push(np.arange(8, dtype=np.float32))

    g = Graph("fit")
    a, b = g.channel(tin, name="a"), g.channel(tout, name="b")
    g.node(Process(source), outputs=[a], name="src")
    g.node({"square": _square, "total": _total}[kernel_name], inputs=[a], outputs=[b], name="k")
    g.output(b, "o")
    with pytest.raises(LoomError, match=rf"node @k(_[0-9]+)?: {match}"):
        run(g, timeout=10)
    assert pushed == []
