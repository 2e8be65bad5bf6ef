"""A dfg module written by hand (a diamond: dup -> square / negate -> add) runs with run_graph and gives
x*x - x with i32 wrap-around; a module that does not verify (a channel type that does not fit the operator,
a push of the wrong type, an unknown operator, an end held twice or never) is a LoomError naming the op,
not xDSL's VerifyException with the whole module printed."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from loom.dataflow import run_graph
from loom.dialects import context
from loom.errors import LoomError

DIAMOND = """
dfg.operator @dup inputs(%x: i32) outputs(%a: i32, %b: i32) {
  dfg.loop inputs(%x: i32) outputs(%a: i32, %b: i32) {
    %v = dfg.pull %x : i32
    dfg.push(%v) %a : i32
    dfg.push(%v) %b : i32
  }
}
dfg.operator @sq inputs(%x: i32) outputs(%y: i32) {
  dfg.loop inputs(%x: i32) outputs(%y: i32) {
    %v = dfg.pull %x : i32
    %w = arith.muli %v, %v : i32
    dfg.push(%w) %y : i32
  }
}
dfg.operator @neg inputs(%x: i32) outputs(%y: i32) {
  dfg.loop inputs(%x: i32) outputs(%y: i32) {
    %v = dfg.pull %x : i32
    %z = arith.constant 0 : i32
    %w = arith.subi %z, %v : i32
    dfg.push(%w) %y : i32
  }
}
dfg.operator @add inputs(%a: i32, %b: i32) outputs(%y: i32) {
  dfg.loop inputs(%a: i32, %b: i32) outputs(%y: i32) {
    %u = dfg.pull %a : i32
    %v = dfg.pull %b : i32
    %w = arith.addi %u, %v : i32
    dfg.push(%w) %y : i32
  }
}
func.func @main(%x: i32) -> i32 {
  %x_in, %x_out = dfg.channel() : i32
  %a_in, %a_out = dfg.channel() : i32
  %b_in, %b_out = dfg.channel() : i32
  %c_in, %c_out = dfg.channel() : i32
  %d_in, %d_out = dfg.channel() : i32
  %r_in, %r_out = dfg.channel() : i32
  dfg.push(%x) %x_out : i32
  dfg.instantiate @dup inputs(%x_in) outputs(%a_out, %b_out)
  dfg.instantiate @sq inputs(%a_in) outputs(%c_out)
  dfg.instantiate @neg inputs(%b_in) outputs(%d_out)
  dfg.instantiate @add inputs(%c_in, %d_in) outputs(%r_out)
  %r = dfg.pull %r_in : i32
  return %r : i32
}
"""


def parse(text: str):
    return Parser(context(), text, "user.mlir").parse_module()


def wrap_i32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("x", [7, -3, 0, -50000, 2**31 - 1])
def test_a_hand_written_diamond_computes_x_squared_minus_x(x):
    assert run_graph(parse(DIAMOND), args=(x,), timeout=30).values == (wrap_i32(x * x - x),)


BAD = {
    "channel type": (("%c_in, %c_out = dfg.channel() : i32", "%c_in, %c_out = dfg.channel() : f32"),
                     r"dfg.instantiate @sq: channels \(i32\) -> \(f32\) do not match"),
    "unknown operator": (("dfg.instantiate @neg", "dfg.instantiate @negate"), "no dfg.operator named @negate"),
    "end held twice": (("dfg.instantiate @sq inputs(%a_in)", "dfg.instantiate @sq inputs(%a_in, %c_in)"),
                       "held by 2 users"),
    "end never held": (("  dfg.instantiate @neg inputs(%b_in) outputs(%d_out)\n", ""), "never used"),
    "push type": (("%w = arith.subi %z, %v : i32\n    dfg.push(%w) %y : i32",
                   "%w = arith.subi %z, %v : i32\n    %f = arith.sitofp %w : i32 to f32\n    dfg.push(%f) %y : f32"),
                  "pushing f32 into a channel of i32"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_module_that_does_not_verify_is_a_located_loom_error(case):
    (old, new), match = BAD[case]
    assert old in DIAMOND
    with pytest.raises(LoomError, match=match) as info:
        run_graph(parse(DIAMOND.replace(old, new)), args=(7,), timeout=30)
    assert str(info.value).startswith("run_graph: invalid dfg module")
    assert "\n" not in str(info.value)  # one line, not the printed module
