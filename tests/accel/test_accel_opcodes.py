"""Opcode map / flow grammar: round trips, ASTs against hand-written trees, located errors."""

from __future__ import annotations

import pytest

from loom.accel.opcodes import (
    FlowId,
    FlowScope,
    OpcodeEntry,
    OpcodeMap,
    Recv,
    Send,
    SendDim,
    SendIdx,
    SendLiteral,
    parse_opcode_flow,
    parse_opcode_map,
    print_opcode_flow,
    print_opcode_map,
)
from loom.errors import LoomError

# canonical texts: print(parse(t)) must give t back character for character
CANONICAL_MAPS = [
    "opcode_map<s=[send_literal(15), send(0), send(1)], r=[recv(2)]>",
    "opcode_map<sA=[send_literal(0x22), send(0)], sBcCrC=[send_literal(0x25), send(1), recv(2)], reset=[send_literal(0xff)]>",
    "opcode_map<cfg=[send_literal(32), send_dim(1, 3), send_literal(16), send_dim(0, 1)], i=[send_idx(2, 0)]>",
    'opcode_map<"s A"=[send(0)], r=[recv(2, accumulate)], w=[recv(2, replace)], neg=[send_literal(-1)]>',
]
CANONICAL_FLOWS = ["(s r)", "(sA (sBcCrC))", "((s) r)", "(s0 (s1 s2) r2)", "((sF ((sIcS)) rO))", '("s A" r)']


@pytest.mark.parametrize("text", CANONICAL_MAPS)
def test_map_round_trip_is_exact(text):
    ast = parse_opcode_map(text)
    assert print_opcode_map(ast) == text
    assert parse_opcode_map(print_opcode_map(ast)) == ast


@pytest.mark.parametrize("text", CANONICAL_FLOWS)
def test_flow_round_trip_is_exact(text):
    ast = parse_opcode_flow(text)
    assert print_opcode_flow(ast) == text
    assert parse_opcode_flow(print_opcode_flow(ast, wrapped=True)) == ast


def test_map_ast_matches_hand_tree_and_accepts_paper_spacing():
    # spelling of paper Fig. 6a: wrapper with spaces, hex literals
    ast = parse_opcode_map("opcode_map < sA = [send_literal(0x22), send(0)],\n  rC = [send_literal(0x24), recv(2)] >")
    assert ast == OpcodeMap((
        OpcodeEntry("sA", (SendLiteral(34), Send(0))),
        OpcodeEntry("rC", (SendLiteral(36), Recv(2))),
    ))
    assert ast.ids == ("sA", "rC") and "rC" in ast and ast["sA"].actions[0].value == 0x22
    # unwrapped form parses to the same tree
    assert parse_opcode_map("sA=[send_literal(34), send(0)], rC=[send_literal(36), recv(2)]") == ast
    conv = parse_opcode_map("c=[send_dim(1, 3), send_idx(0,2), recv(2, accumulate)]")
    assert conv["c"].actions == (SendDim(1, 3), SendIdx(0, 2), Recv(2, "accumulate"))


def test_v4_extension_literal_survives_round_trip():
    # 32 + (32 << 10) + (32 << 20): the packed tile word of the notes
    ast = parse_opcode_map("s=[send_literal(7), send_literal(33587232)]")
    assert ast["s"].actions[1].value == 32 + (32 << 10) + (32 << 20)


def test_flow_ast_and_depth():
    ast = parse_opcode_flow("opcode_flow<(s0 (s1 s2) r2)>")
    assert ast == FlowScope((FlowId("s0"), FlowScope((FlowId("s1"), FlowId("s2"))), FlowId("r2")))
    assert ast.depth == 2
    assert [i.name for i in ast.ids()] == ["s0", "s1", "s2", "r2"]
    assert parse_opcode_flow("((sF ((sIcS)) rO))").depth == 4


def _error(parse, text):
    with pytest.raises(LoomError) as info:
        parse(text, where="accelerators[0].opcode_map")
    err = info.value
    assert err.where == "accelerators[0].opcode_map"
    # the caret line sits under the reported column
    lines = err.message.split("\n")
    assert lines[-1].index("^") - 4 == err.column - 1
    return err


@pytest.mark.parametrize(
    "text, column, fragment",
    [
        ("s=[send(0) recv(2)]", 12, "expected ',' or ']'"),
        ("s=[sendd(0)]", 4, "did you mean 'send'"),
        ("s=[send_dim(1)]", 14, "dimension index"),
        ("s=[recv(2, acc)]", 12, "recv mode"),
        ("s=[send_literal(0x1ffffffff)]", 17, "32-bit word"),
        ("s=[send(-1)]", 9, ">= 0"),
        ("s=[send(0)], s=[recv(2)]", 14, "duplicate opcode id 's'"),
        ("s=[]", 4, "expected an action"),
        ("s [send(0)]", 3, "'=' after opcode id"),
        ("opcode_map<s=[send(0)]", 23, "'>'"),
        ("s=[send(x)]", 9, "operand index"),
    ],
)
def test_map_errors_point_at_the_offending_character(text, column, fragment):
    err = _error(parse_opcode_map, text)
    assert err.column == column, err.message
    assert fragment in err.message


@pytest.mark.parametrize(
    "text, column, fragment",
    [
        ("(s r", 5, "missing ')'"),
        ("(s ())", 5, "empty flow scope"),
        ("(s) x", 5, "end of the flow"),
        ("s r", 1, "'('"),
        ("(s, r)", 3, "opcode id"),
        ("opcode_flow<(s)", 16, "'>'"),
    ],
)
def test_flow_errors_point_at_the_offending_character(text, column, fragment):
    err = _error(parse_opcode_flow, text)
    assert err.column == column, err.message
    assert fragment in err.message


def test_multiline_map_error_reports_column_in_its_line():
    text = "s=[send(0)],\n  r=[recv(2) x]"
    err = _error(parse_opcode_map, text)
    assert err.column == 14 and "line 2" in err.message


@pytest.mark.parametrize("text", ["-2147483649", "0x100000000", "0x1FFFFFFFF", "4294967296"])
def test_literals_are_one_32_bit_word_negatives_in_twos_complement(text):
    assert parse_opcode_map("s=[send_literal(-1)]").entries[0].actions[0].value & 0xFFFFFFFF == \
        parse_opcode_map("s=[send_literal(0xFFFFFFFF)]").entries[0].actions[0].value
    parse_opcode_map("s=[send_literal(-2147483648)]")
    with pytest.raises(LoomError) as info:
        parse_opcode_map(f"s=[send_literal({text})]")
    assert info.value.column == 17  # the literal, after "s=[send_literal("
    assert "does not fit in a 32-bit word" in info.value.message and "two's complement" in info.value.message
