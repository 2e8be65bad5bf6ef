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
