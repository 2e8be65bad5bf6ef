"""An exception inside a node's Python code is reported at the line of the user's code that raised
(file:line), with the node's name, and the node's name is said once."""

import inspect

import pytest

from loom.dataflow import Graph, NodeError, Process, run


def _feed(values):
    def feed(out):
        for v in values:
            out.push(v)  # PUSH-LINE

    return Process(feed)


def _line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


def invert(x):
    return 12 // x  # DIV-LINE


def test_an_exception_in_a_node_names_the_file_and_line_that_raised():
    g = Graph("loc")
    a, b = g.channel("i32", name="a"), g.channel("i32", name="b")
    g.node(_feed([3, 2, 0]), outputs=[a], name="feed")
    g.node(invert, inputs=[a], outputs=[b])
    g.output(b, "out")
    with pytest.raises(NodeError) as info:
        run(g, timeout=10)
    e = info.value
    assert (e.node, e.filename, e.line) == ("invert", __file__, _line_of(invert, "DIV-LINE"))
    assert str(e) == f"{__file__}:{e.line} node @invert: node failed: ZeroDivisionError: integer division or modulo by zero"


def test_a_wrong_item_names_the_line_that_pushed_it():
    g = Graph("item")
    a = g.channel("i32", name="a")
    g.node(_feed([1, 2.5]), outputs=[a], name="feed")
    g.output(a, "out")
    with pytest.raises(NodeError) as info:
        run(g, timeout=10)
    e = info.value
    assert (e.filename, e.line) == (__file__, _line_of(_feed, "PUSH-LINE"))
    assert "node @feed: node failed: channel %a: expected an integer item (i32), got float 2.5" in str(e)


def test_the_node_is_named_once_for_its_own_checks():
    g = Graph("twice")
    a, b, c = (g.channel("i32", name=n) for n in "abc")
    g.node(_feed([1]), outputs=[a], name="feed")
    g.node(lambda x: x, inputs=[a], outputs=[b, c], name="split")
    g.output(b, "b")
    g.output(c, "c")
    with pytest.raises(NodeError) as info:
        run(g, timeout=10)
    assert str(info.value).count("@split") == 1
    assert "node @split: node failed: expected 2 results (one per output channel), got int" in str(info.value)
