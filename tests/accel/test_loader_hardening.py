"""The input classes that used to crash the description loader or pass silently, one test each:
every one now loads correctly or is a LoomError naming the place (JSON path, or line:column)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from loom.accel.description import load_description
from loom.core.json_text import MAX_DEPTH
from loom.accel.opcodes import MAX_FLOW_DEPTH, parse_opcode_map
from loom.errors import LoomError
from tests.accel.test_accel_description import base


def _acc(d: dict) -> dict:
    return d["accelerators"][0]


def _write(tmp_path, content: str | bytes, name: str = "d.json"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _error(source) -> LoomError:
    with pytest.raises(LoomError) as e:
        load_description(source)
    return e.value


# ------------------------------------------------------------------ numbers in unusual forms
@pytest.mark.parametrize("literal", ["4.0", "4e0", "0.4e1", "4E+0"])
def test_integral_numbers_in_any_spelling_are_integers(tmp_path, literal):
    text = json.dumps(base()).replace('"m": 4', f'"m": {literal}', 1)
    acc = load_description(_write(tmp_path, text)).accelerator("v3_4")
    assert acc.tiles["m"].size == 4 and type(acc.tiles["m"].size) is int


@pytest.mark.parametrize("literal,fragment", [
    ("-0", "expected a tile size >= 1, found 0"),
    ("-0.0", "expected a tile size >= 1, found 0"),
    ("4.5", "found a number 4.5"),
    ("1e3", "does not fit the accelerator's A buffer"),  # 1000 is a valid integer, and too big
    ("2147483648", "<= 2147483647"),
    ("1e300", "<= 2147483647, found 10000000...(301 digits)"),
])
def test_odd_tile_numbers_are_located(tmp_path, literal, fragment):
    err = _error(_write(tmp_path, json.dumps(base()).replace('"m": 4', f'"m": {literal}', 1)))
    assert fragment in err.message and err.where.startswith("accelerators[0].tile_sizes")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_non_finite_numbers_are_json_errors_at_their_column(tmp_path, literal):
    text = '{"cpu": {"caches": [{"name": "L1",\n "size": ' + literal + "}]}}"
    err = _error(_write(tmp_path, text))
    assert (err.line, err.column) == (2, 10) and "finite" in err.message


def test_non_finite_numbers_in_a_decoded_dict_are_located():
    d = base()
    _acc(d)["timing"] = {"clock_mhz": float("inf")}
    assert _error(d).where == "accelerators[0].timing.clock_mhz"
    _acc(d)["timing"] = {"ops_per_cycle": 1e-300}
    assert ">= 0.001" in _error(d).message


def test_huge_integer_literals_are_refused_before_python_converts_them(tmp_path):
    text = '{"notes": "' + "9" * 50 + '",\n "cpu": {"caches": [{"name": "L1", "size": ' + "9" * 5000 + "}]}}"
    err = _error(_write(tmp_path, text))
    line2 = text.splitlines()[1]
    assert (err.line, err.column) == (2, line2.index("9") + 1) and "5000 digits" in err.message
    with pytest.raises(LoomError, match="fits in 32 bits") as e:  # in the opcode grammar too
        parse_opcode_map("s=[send_literal(" + "9" * 5000 + ")]", where="opcode_map")
    assert e.value.column == 17


def test_opcode_integers_with_leading_zeros_are_decimal():
    (entry,) = parse_opcode_map("s=[send_literal(007), send_literal(-010), send(00)]").entries
    assert [a.value for a in entry.actions[:2]] == [7, -10] and entry.actions[2].operand == 0


# ------------------------------------------------------------------ nesting
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000, 200_000])
def test_deep_json_is_a_located_error_not_a_recursion_error(tmp_path, depth):
    text = '{"notes":\n  ' + "[" * depth + "]" * depth + "}"
    err = _error(_write(tmp_path, text))
    assert f"deeper than {MAX_DEPTH}" in err.message and (err.line, err.column) == (2, 3 + MAX_DEPTH - 1)


def test_deep_decoded_dicts_are_located():
    d = base()
    deep: list = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    d["notes"] = deep
    assert f"deeper than {MAX_DEPTH}" in _error(d).message


@pytest.mark.parametrize("depth", [MAX_FLOW_DEPTH + 1, 100_000])
def test_deep_flows_are_located_at_the_scope_too_deep(depth):
    d = base()
    _acc(d)["opcode_flows"]["Cs"] = "(" * depth + "c" + ")" * depth
    err = _error(d)
    assert err.where == "accelerators[0].opcode_flows.Cs" and err.column == MAX_FLOW_DEPTH + 1
    assert f"more than {MAX_FLOW_DEPTH} scopes" in err.message


# ------------------------------------------------------------------ encodings
def test_non_utf8_bytes_are_located(tmp_path):
    err = _error(_write(tmp_path, b'{"cpu": {"name": "caf\xe9",\n "caches": []}}'))
    assert "not UTF-8" in err.message and "0xe9" in err.message and (err.line, err.column) == (1, 22)
    err = _error(_write(tmp_path, '{\n "notes": "ok é",\n "x": "'.encode() + b"\xff\"}"))
    assert (err.line, err.column) == (3, 8)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = _write(tmp_path, b"\xef\xbb\xbf" + json.dumps(base()).encode())
    assert load_description(path).accelerator("v3_4").name == "v3_4"


def test_a_nul_byte_in_the_path_is_a_loom_error():
    assert "cannot read" in _error("a\0b.json").message


def test_endless_and_unreadable_paths_are_loom_errors(tmp_path):
    assert "larger than 64 MiB" in _error("/dev/zero").message  # read up to the limit, not forever
    assert "cannot read" in _error(tmp_path).message  # a folder
    assert "cannot read" in _error(tmp_path / "missing.json").message


# ------------------------------------------------------------------ host files including themselves
def test_host_files_that_include_themselves_or_each_other_are_cycles(tmp_path):
    (tmp_path / "sub").mkdir()
    _write(tmp_path, json.dumps({"cpu": "./self.json"}), "self.json")
    _write(tmp_path, json.dumps({"cpu": "sub/b.json"}), "a.json")
    _write(tmp_path, json.dumps({"cpu": "../a.json"}), "sub/b.json")
    for name in ("self.json", "a.json"):
        err = _error(tmp_path / name)
        assert "form a cycle" in err.message and err.where == "cpu"
    d = base()
    d["cpu"] = "a.json"
    main = _write(tmp_path, json.dumps(d), "main.json")
    assert "a.json -> " in _error(main).message


# ------------------------------------------------------------------ duplicate keys
@pytest.mark.parametrize("old,new,where", [
    ('"data_type": "int32"', '"data_type": "int32", "data_type": "f32"', "accelerators[0].data_type"),
    ('"m": 4', '"m": 4, "m": 8', "accelerators[0].tile_sizes.m"),
    ('"cpu": {', '"notes": "a", "notes": "b", "cpu": {', "notes"),
    ('"line_size": 32', '"line_size": 32, "line_size": 64', "cpu.caches[0].line_size"),
])
def test_duplicate_keys_name_the_key_and_its_path(tmp_path, old, new, where):
    text = json.dumps(base())
    assert old in text
    err = _error(_write(tmp_path, text.replace(old, new, 1)))
    assert err.where == where and f"duplicate key {where.rsplit('.', 1)[-1]!r}" in err.message


# ------------------------------------------------------------------ flows that cannot compute the kernel
@pytest.mark.parametrize("flow,missing", [
    ("(s)", "never receives output C (operand 2)"),
    ("(c)", "never receives output C (operand 2)"),
    ("(sBcCrC)", "never sends input A (operand 0)"),
    ("(rc)", "never sends input A (operand 0)"),
])
def test_flows_must_send_every_input_and_receive_every_output(flow, missing):
    d = base()
    _acc(d)["opcode_flows"]["Ns"] = {"flow": flow, "accumulate_on_cpu": True}
    err = _error(d)
    assert missing in err.message and err.where == "accelerators[0].opcode_flows.Ns.flow" and err.column == 1


# ------------------------------------------------------------------ DMA windows
@pytest.mark.parametrize("dma,where,fragment", [
    ({"output_address": "0x16000200"}, "output_address", "overlaps the input staging buffer [0x16000000, 0x16000400)"),
    ({"input_address": "0x40400000"}, "input_address", "overlaps the DMA registers [0x40400000, 0x40410000)"),
    ({"output_address": "0x4040FFFC"}, "output_address", "overlaps the DMA registers"),
    ({"dma_address": "0x15FFF000"}, "input_address", "overlaps the DMA registers [0x15fff000, 0x1600f000)"),
    ({"input_address": "0xFFFFFF00"}, "input_address", "runs past the 32-bit address space"),
    ({"dma_address": "0xFFFF0004"}, "dma_address", "runs past the 32-bit address space"),
    ({"input_size": 2**32}, "input_size", "<= 2147483648 bytes"),
    ({"output_size": "8G"}, "output_size", "<= 2147483648 bytes, found 8589934592"),
    ({"output_address": "0x1_0000"}, "output_address", "an address"),
    ({"dma_address": 1e40}, "dma_address", "32-bit address, found 10000000...(41 digits)"),
])
def test_dma_windows_fit_32_bits_and_do_not_overlap(dma, where, fragment):
    d = base()
    _acc(d)["dma"].update(dma)
    err = _error(d)
    assert err.where == f"accelerators[0].dma.{where}" and fragment in err.message, err


def test_adjacent_dma_windows_are_fine():
    d = base()
    _acc(d)["dma"].update({"dma_address": "0x16000800", "input_address": "0x16000000", "input_size": 1024,
                           "output_address": "0x16000400", "output_size": 1024})
    assert load_description(d).accelerator("v3_4").dma.output_address == 0x16000400


# ------------------------------------------------------------------ sizes past 32 bits
@pytest.mark.parametrize("key,value", [("buffers", {"A": 2**31}), ("tile_sizes", {"m": 2**40, "n": 4, "k": 4}),
                                       ("timing", {"dma_latency_cycles": 2**40})])
def test_counts_past_32_bits_are_refused(key, value):
    d = base()
    _acc(d)[key] = value
    err = _error(d)
    assert err.where.startswith(f"accelerators[0].{key}") and "<=" in err.message


# ------------------------------------------------------------------ init opcodes and tiled dims
@pytest.mark.parametrize("action,what", [
    ("send_dim(0, 0)", "sends the size of dim 0 of A"),
    ("send_idx(1, 1)", "sends the index of dim 1 of B"),
    ("send(1)", "sends B(k, n)"),
    ("recv(2)", "receives C(m, n)"),
])
def test_init_opcodes_cannot_use_tiled_dims(action, what):
    d = base()
    _acc(d)["opcode_map"] = _acc(d)["opcode_map"].replace("send_literal(255)", f"send_literal(255), {action}")
    err = _error(d)
    assert err.where == "accelerators[0].init_opcodes" and err.column == 2
    assert what in err.message and "init_opcodes run once, outside all tile loops" in err.message


def test_init_opcodes_may_send_sizes_of_full_dims():
    d = base()
    _acc(d)["tile_sizes"]["k"] = "full"
    _acc(d)["buffers"] = {}
    _acc(d)["opcode_map"] = _acc(d)["opcode_map"].replace("send_literal(255)", "send_literal(255), send_dim(0, 1)")
    _acc(d)["opcode_flows"] = {"Cs": "((c rc))"}  # k has no loop: two scopes for the m, n loops
    acc = load_description(d).accelerator("v3_4")
    from loom.accel.validate import place_flow

    (reset,) = place_flow(acc, "Cs").init
    assert reset.level == 0 and reset.words_sent == 2  # the literal and K, the whole extent


# ------------------------------------------------------------------ paths with quotes reach the C driver
@pytest.mark.parametrize("folder", ['q"uote', "back\\slash", "new\nline", "brace}{,=x", "tab\there é"])
def test_description_paths_with_quotes_and_escapes_compile_and_run(tmp_path, folder):
    from loom.driver.compile import compile_driver, stage_files
    from loom.passes import Pipeline
    from tests.accel_flow.accel_flow_helpers import matmul_arrays, matmul_module

    path = tmp_path / folder / 'v3 "4".json'
    path.parent.mkdir()
    d = base()
    del _acc(d)["init_opcodes"]  # the simulated v3 model knows no reset opcode
    _acc(d)["model"] = "builtin:matmul_v3"
    path.write_text(json.dumps(d))
    drv = compile_driver(matmul_module(), path, "v3_4", "Cs")
    (_, pipeline, _) = [s for s in drv.stages if s[0] == "annotated"][0]
    assert Pipeline.parse(pipeline).passes[0].accel_file == str(path)  # the option reads back exactly
    assert all(text.count("\n") >= 1 for text in stage_files(drv).values())
    assert all(line.startswith("// stage") for line in
               (t.splitlines()[0] for t in stage_files(drv).values()))  # the header is one line
    A, B, C = matmul_arrays(5, 6, 7)
    want = C + A @ B
    drv(A, B, C)
    assert np.array_equal(C, want)


def test_a_path_with_a_carriage_return_is_refused_by_name(tmp_path):
    from loom.driver.compile import compile_driver
    from tests.accel_flow.accel_flow_helpers import matmul_module

    path = tmp_path / "a\rb.json"
    path.write_text(json.dumps(base()))
    with pytest.raises(LoomError, match="the description path .* contains the control character"):
        compile_driver(matmul_module(), path, build=False)


def test_names_with_quotes_escapes_and_unicode_survive_every_stage(tmp_path):
    """Accelerator, operand, flow, opcode and host names are free text: they reach the IR attributes
    (printed, parsed back from every stage file) and never break the C driver."""
    from xdsl.parser import Parser

    from loom.dialects import context
    from loom.driver.compile import compile_driver, stage_files
    from tests.accel_flow.accel_flow_helpers import matmul_arrays, matmul_module
    from tests.fuzz.accel_mutator import example

    weird = 'a"b\\c\nd\te}{,= \u00e9\u2603*/ /*'
    d = example("matmul_v3.json")
    a = _acc(d)
    a["name"], a["description"], d["cpu"]["name"] = "v3" + weird, weird, weird
    a["operands"][0]["name"] = "A" + weird
    a["buffers"] = {"A" + weird: 16, "B": 16, "C": 16}
    a["opcode_flows"] = {"C" + weird: {"flow": '(("sAB c}{*/ \u00e9") "send\\\\C")'}}
    a["selected_flow"] = "C" + weird
    a["opcode_map"] = a["opcode_map"].replace("sABcC=", '"sAB c}{*/ \u00e9"=').replace("sendC=", '"send\\\\C"=')
    path = tmp_path / "weird.json"
    path.write_text(json.dumps(d))
    drv = compile_driver(matmul_module(), path)
    assert drv.summary.flow == "C" + weird and drv.summary.operand_names[0] == "A" + weird
    for name, text in stage_files(drv).items():
        Parser(context(), text).parse_module()  # each stage reads back
    A, B, C = matmul_arrays(5, 6, 7)
    want = C + A @ B
    drv(A, B, C)
    assert np.array_equal(C, want)


# ------------------------------------------------------------------ accelerator names
@pytest.mark.parametrize("name", ["", "  ", "-", "*", "cost"])
def test_a_name_that_cannot_be_selected_or_assigned_is_refused(name):
    """`--name ''` selects nothing and `assign=` reserves '-', '*' and 'cost': such a
    name was accepted and could not be named afterwards."""
    d = base()
    _acc(d)["name"] = name
    e = _error(d)
    assert e.where == "accelerators[0].name" and "expected an accelerator name" in str(e)


def test_a_null_accelerator_is_described_once():
    d = base()
    d["accelerators"].append(None)
    assert str(_error(d)).endswith("expected an accelerator (a JSON object), found null")


def test_a_flow_deeper_than_the_tile_loops_points_at_init_opcodes():
    """`((((s r))))` on three tile loops: the outermost scope is a loop, so 'once before the loops' is
    init_opcodes, which the message now says."""
    d = base()
    _acc(d)["opcode_flows"]["Ns"]["flow"] = "((((s r))))"
    e = _error(d)
    assert "nests 4 scopes but the loop order (m, n, k) has only 3 tile loops" in str(e)
    assert "opcodes sent once, before every loop, go in init_opcodes" in str(e)
