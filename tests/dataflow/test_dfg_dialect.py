"""The dfg dialect: textual form round-trips, verifiers reject malformed graphs with named causes."""

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from loom.dialects import context
from loom.dialects.dfg import ChannelOp, InstantiateOp, LoopOp, OperatorOp

LISTING1 = Path(__file__).resolve().parents[2] / "loom" / "examples" / "dataflow" / "listing1.mlir"


def parse(text: str):
    m = Parser(context(), text).parse_module()
    m.verify()
    return m


def test_listing1_parses_verifies_and_round_trips():
    m = parse(LISTING1.read_text())
    ops = list(m.walk())
    assert sum(isinstance(o, OperatorOp) for o in ops) == 3
    assert sum(isinstance(o, ChannelOp) for o in ops) == 4
    inst = [o for o in ops if isinstance(o, InstantiateOp)]
    assert [(i.callee.root_reference.data, i.is_offloaded) for i in inst] == [
        ("get_op", False), ("sum", False), ("pow2", True)]
    assert sum(isinstance(o, LoopOp) for o in ops) == 1
    text = str(m)
    assert "dfg.instantiate offloaded @pow2 inputs(%op_c_in) outputs(%res_out)" in text
    assert "%op_a_in, %op_a_out = dfg.channel() : ui32" in text
    assert str(parse(text)) == text


GRAPH = """
dfg.operator @inc inputs(%a: i32) outputs(%b: i32) {{
  dfg.loop inputs(%a: i32) outputs(%b: i32) {{
    %x = dfg.pull %a : i32
    {body}
  }}
}}
func.func @g(%v: i32) -> i32 {{
  %x_in, %x_out = dfg.channel({depth}) : i32
  %y_in, %y_out = dfg.channel() : i32
  dfg.push(%v) %x_out : i32
  {inst}
  %r = dfg.pull %y_in : i32
  return %r : i32
}}
"""
GOOD = dict(body="dfg.push(%x) %b : i32", depth=4, inst="dfg.instantiate @inc inputs(%x_in) outputs(%y_out)")


def variant(**kw):
    return GRAPH.format(**{**GOOD, **kw})


def test_good_variant_verifies():
    parse(variant())


@pytest.mark.parametrize("kw, message", [
    (dict(depth=0), "depth must be >= 1"),
    (dict(inst="dfg.instantiate @nope inputs(%x_in) outputs(%y_out)"), "no dfg.operator named @nope"),
    (dict(inst="dfg.instantiate @inc inputs(%x_in) outputs(%y_out)\n  dfg.instantiate @inc inputs(%x_in) "
               "outputs(%y_out)"), "held by 2 users"),
    (dict(inst=""), "never used"),
])
def test_verifier_names_the_problem(kw, message):
    with pytest.raises(VerifyException, match=message):
        parse(variant(**kw))


def test_a_node_cannot_read_its_own_output_without_a_channel():
    with pytest.raises(ParseError, match="a node cannot read its own output without a channel"):
        parse(variant(body="%y = dfg.pull %b : i32"))


def test_push_into_an_input_end_is_rejected():
    with pytest.raises((VerifyException, ParseError), match="!dfg.output|input end"):
        parse(variant(body="dfg.push(%x) %a : i32"))


def test_instantiate_signature_must_match():
    text = variant().replace("%y_in, %y_out = dfg.channel() : i32", "%y_in, %y_out = dfg.channel() : i64") \
        .replace("%r = dfg.pull %y_in : i32\n  return %r : i32", "%r = dfg.pull %y_in : i64\n  %t = arith.trunci %r : i64 to i32\n  return %t : i32")
    with pytest.raises(VerifyException, match="do not match the operator's signature"):
        parse(text)


def test_loop_only_inside_an_operator():
    text = """func.func @f() {
  %a_in, %a_out = dfg.channel() : i32
  dfg.loop inputs(%a_in: i32) { }
  dfg.push(%a_in) %a_out : i32
  return
}"""
    with pytest.raises((VerifyException, ParseError)):
        parse(text)


def test_mismatched_push_type_is_rejected():
    with pytest.raises((VerifyException, ParseError), match="i64|pushing"):
        parse(variant(body="%w = arith.extsi %x : i32 to i64\n    dfg.push(%w) %b : i64"))
