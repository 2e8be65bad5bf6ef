"""Fuzz the opcode grammar (opcode maps, flows, init_opcodes): hypothesis builds texts from the
grammar's tokens and stray characters. Every text parses (and then prints back to the same AST)
or is a LoomError whose column points inside the text."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.accel.opcodes import (
    parse_opcode_flow,
    parse_opcode_map,
    print_opcode_flow,
    print_opcode_map,
)
from loom.errors import LoomError
from tests.fuzz.accel_mutator import FUZZ_SCALE

MAP_TOKENS = ["opcode_map", "<", ">", "=", "[", "]", "(", ")", ",", " ", "send", "send_literal", "send_dim",
              "send_idx", "recv", "accumulate", "replace", "sA", "r", '"s A"', '"', "0", "1", "2", "-1", "007",
              "0x1F", "0X", "4294967295", "4294967296", "-2147483649", "9" * 30, "\n", "\t", "\u00e9", "_", "$",
              "x=", "s=[send(0)]"]
FLOW_TOKENS = ["opcode_flow", "init_opcodes", "<", ">", "(", ")", " ", "sA", "sB", "c", '"a b"', '"', "\n",
               "0", "-", "((", "))", "(((((((((((((((((((((((((((((((((((", "\u2603"]
SETTINGS = settings(max_examples=120 * FUZZ_SCALE, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _check(parse, printer, text: str, **kw):
    try:
        tree = parse(text, where="fuzz", **kw)
    except LoomError as err:
        line = text.split("\n")[text.count("\n", 0, 0)] if "\n" not in text else None
        assert err.column is not None and err.column >= 1, f"{text!r}: {err}"
        assert line is None or err.column <= len(line) + 1, f"{text!r}: column {err.column} is past the text"
        assert err.where == "fuzz", f"{text!r}: {err}"
        return None
    assert parse(printer(tree), where="fuzz", **kw) == tree, f"round trip of {text!r}"
    return tree


@SETTINGS
@given(st.lists(st.sampled_from(MAP_TOKENS), max_size=30).map("".join))
def test_opcode_map_texts_parse_or_point_at_a_column(text):
    _check(parse_opcode_map, print_opcode_map, text)


@SETTINGS
@given(st.lists(st.sampled_from(FLOW_TOKENS), max_size=30).map("".join), st.sampled_from(["opcode_flow",
                                                                                           "init_opcodes"]))
def test_flow_texts_parse_or_point_at_a_column(text, keyword):
    _check(parse_opcode_flow, print_opcode_flow, text, keyword=keyword)


@SETTINGS
@given(st.text(max_size=40))
def test_any_unicode_text_is_parsed_or_located(text):
    _check(parse_opcode_map, print_opcode_map, text)
    _check(parse_opcode_flow, print_opcode_flow, text)


MAP_TEXT_TOKENS = ["(", ")", "->", ",", " ", "m", "n", "k", "oh", "fh", "+", "-", "*", "2", "0", "99999999999",
                   "9" * 30, "affine_map", "<", ">", "\u00e9", "_", "(m, n, k)", "-> (", "m + k"]


@SETTINGS
@given(st.lists(st.sampled_from(MAP_TEXT_TOKENS), max_size=24).map("".join))
def test_indexing_maps_and_permutations_parse_or_point_at_a_column(text):
    """The affine grammar of ``indexing_maps``, operand dims and permutations."""
    from loom.accel.kernels import parse_indexing_map, parse_permutation

    for parse in (lambda t: parse_indexing_map(t, where="fuzz"),
                  lambda t: parse_permutation(t, ("m", "n", "k"), where="fuzz")):
        try:
            parse(text)
        except LoomError as err:
            assert err.column is not None and err.column >= 1 and err.where == "fuzz", f"{text!r}: {err}"
