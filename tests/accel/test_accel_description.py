"""Descriptions: the shipped examples, the schema, and located errors for malformed input."""

from __future__ import annotations

import copy
import glob
import json
import os
import re

import pytest

from loom.accel.description import load_description
from loom.accel.validate import check_tile_sizes, place_flow
from loom.errors import LoomError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "loom", "examples", "accelerators", "*.json")))
SCHEMA = os.path.join(ROOT, "loom", "accel", "schema.json")


def base() -> dict:
    """A small valid v3-style description written out by hand."""
    return {
        "cpu": {"name": "board", "caches": [{"name": "L1", "size": "32KiB", "line_size": 32, "associativity": 4},
                                            {"name": "L2", "size": 524288, "kind": "shared"}]},
        "accelerators": [{
            "name": "v3_4", "version": 3, "description": "test accelerator",
            "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 1024,
                    "output_address": 373293056, "output_size": 1024},
            "kernel": "matmul", "data_type": "int32", "dims": ["m", "n", "k"],
            "tile_sizes": {"m": 4, "n": 4, "k": 4},
            "buffers": {"A": 16, "B": 16, "C": 16},
            "opcode_map": "opcode_map<s=[send_literal(15), send(0), send(1)], r=[recv(2)], "
                          "sA=[send_literal(1), send(0)], sBcCrC=[send_literal(14), send(1), recv(2)], "
                          "c=[send_literal(7), send(0), send(1)], rc=[send_literal(8), recv(2)], reset=[send_literal(255)]>",
            "opcode_flows": {"Ns": {"flow": "(s r)", "accumulate_on_cpu": True},
                             "As": {"flow": "(sA (sBcCrC))", "permutation": "(m, n, k) -> (m, k, n)",
                                    "accumulate_on_cpu": True},
                             "Cs": "((c) rc)"},
            "selected_flow": "Cs",
            "init_opcodes": "(reset)",
        }],
    }


# ------------------------------------------------------------------- good input
def test_base_description_parses_to_expected_objects():
    system = load_description(base())
    assert [c.size for c in system.host.caches] == [32 * 1024, 512 * 1024]
    assert system.host.cache("L2").kind == "shared" and system.host.cache("L1").associativity == 4
    acc = system.accelerator("v3_4")
    assert acc.version == "3" and acc.data_type == "i32"
    assert acc.dma.dma_address == 0x40400000 and acc.dma.output_address == 0x16400000
    assert acc.dma.input_words == 256
    assert [o.name for o in acc.operands] == ["A", "B", "C"] and acc.operand(2).is_output
    assert [str(s) for s in acc.operand("B").subscripts] == ["k", "n"]
    assert acc.kernel.reduction_dims == ("k",)
    assert acc.flow().name == "Cs" and acc.flow("As").loop_order == ("m", "k", "n")
    assert acc.flow("Ns").accumulate_on_cpu and not acc.flow("Cs").accumulate_on_cpu
    assert acc.buffer_capacity("A") == 16


def test_every_example_loads_and_every_flow_places():
    assert len(EXAMPLES) >= 6
    names = []
    for path in EXAMPLES:
        system = load_description(path)
        assert system.host is not None and system.host.name == "pynq-z2"
        for acc in system.accelerators:
            names.append(acc.name)
            for flow in acc.flows:
                assert place_flow(acc, flow.name).opcodes
    for expected in ["v1_4", "v1_8", "v1_16", "v2_4", "v2_8", "v2_16", "v3_4", "v3_8", "v3_16",
                     "v4_16", "v4_16_m32n16k64", "conv_os"]:
        assert expected in names


def test_pynq_host_caches():
    host = load_description(os.path.join(ROOT, "loom", "examples", "accelerators", "pynq-z2.json")).host
    assert host.cache("L1").size == 32768 and host.cache("L2").size == 524288


def test_example_flows_match_the_notes_table():
    v2 = load_description(os.path.join(ROOT, "loom", "examples", "accelerators", "matmul_v2.json")).accelerator("v2_8")
    assert v2.flow("As").loop_order == ("m", "k", "n") and v2.flow("Bs").loop_order == ("n", "k", "m")
    assert [a.value for a in v2.opcode_map["sBcC"].actions[:1]] == [6]
    v4 = load_description(os.path.join(ROOT, "loom", "examples", "accelerators", "matmul_v4.json")).accelerator("v4_16")
    ext = v4.opcode_map["sA"].actions[1].value
    assert (ext & 1023, (ext >> 10) & 1023, (ext >> 20) & 1023) == (32, 32, 32)
    v4n = load_description(os.path.join(ROOT, "loom", "examples", "accelerators", "matmul_v4.json")).accelerator(
        "v4_16_m32n16k64")
    ext = v4n.opcode_map["sA"].actions[1].value
    assert (ext & 1023, (ext >> 10) & 1023, (ext >> 20) & 1023) == tuple(
        v4n.tiles[d].default for d in ("m", "n", "k"))


# --------------------------------------------------------------- schema check
def _schema_errors(value, schema, root, path="$"):
    """A small independent JSON Schema (2020-12 subset) checker, enough for schema.json."""
    if "$ref" in schema:
        ref = schema["$ref"].removeprefix("#/")
        target = root
        for part in ref.split("/"):
            target = target[part]
        return _schema_errors(value, {**target, **{k: v for k, v in schema.items() if k != "$ref"}}, root, path)
    errors = []
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        py = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
        ok = any((t == "integer" and isinstance(value, int) and not isinstance(value, bool))
                 or (t == "number" and isinstance(value, (int, float)) and not isinstance(value, bool))
                 or (t in py and isinstance(value, py[t])) for t in types)
        if not ok:
            return [f"{path}: type {types}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: enum")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: const")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        errors.append(f"{path}: pattern")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errors.append(f"{path}: minimum")
    if "maximum" in schema and isinstance(value, (int, float)) and value > schema["maximum"]:
        errors.append(f"{path}: maximum")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: required {key}")
        if len(value) < schema.get("minProperties", 0):
            errors.append(f"{path}: minProperties")
        for key, item in value.items():
            if key in props:
                errors += _schema_errors(item, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: additional {key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += _schema_errors(item, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: minItems")
        if "items" in schema:
            for i, item in enumerate(value):
                errors += _schema_errors(item, schema["items"], root, f"{path}[{i}]")
    if "oneOf" in schema:
        matches = sum(not _schema_errors(value, s, root, path) for s in schema["oneOf"])
        if matches != 1:
            errors.append(f"{path}: oneOf matched {matches}")
    if "anyOf" in schema and not any(not _schema_errors(value, s, root, path) for s in schema["anyOf"]):
        errors.append(f"{path}: anyOf")
    return errors


def test_schema_is_draft_2020_12_and_examples_validate():
    with open(SCHEMA) as fh:
        schema = json.load(fh)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for path in EXAMPLES:
        with open(path) as fh:
            assert _schema_errors(json.load(fh), schema, schema) == [], path
    assert _schema_errors(base(), schema, schema) == []
    # the schema rejects what loom rejects structurally
    bad = base()
    bad["accelerators"][0]["tile_size"] = {}
    assert _schema_errors(bad, schema, schema)
    bad = base()
    bad["accelerators"][0]["tile_sizes"]["m"] = "4"
    assert _schema_errors(bad, schema, schema)
    try:  # the real validator too, when available (not a dependency)
        import jsonschema
    except ImportError:
        return
    for path in EXAMPLES:
        with open(path) as fh:
            jsonschema.validate(json.load(fh), schema)


# --------------------------------------------------------------- bad input
def _acc(d):
    return d["accelerators"][0]


def _set(path_fn):
    def mutate():
        d = base()
        path_fn(d)
        return d
    return mutate


BAD = [
    # (id, mutation, where, fragment, column or None)
    ("unknown key", lambda d: _acc(d).update(tile_size=_acc(d)["tile_sizes"]),
     "accelerators[0].tile_size", "did you mean 'tile_sizes'", None),
    ("wrong JSON type", lambda d: _acc(d)["dma"].update(input_size=[1024]),
     "accelerators[0].dma.input_size", "found an array", None),
    ("missing required", lambda d: _acc(d).pop("kernel"),
     "accelerators[0]", "missing required key 'kernel'", None),
    ("bad permutation", lambda d: _acc(d)["opcode_flows"]["As"].update(permutation="(m, n, k) -> (m, k, k)"),
     "accelerators[0].opcode_flows.As.permutation", "appears twice", 21),
    ("permutation missing dim", lambda d: _acc(d).update(permutation="(m, n, k) -> (m, n)"),
     "accelerators[0].permutation", "missing k", None),
    ("duplicate opcode id", lambda d: _acc(d).update(opcode_map="s=[send(0)], r=[recv(2)], s=[send(1)]"),
     "accelerators[0].opcode_map", "duplicate opcode id 's'", 27),
    ("grammar error", lambda d: _acc(d).update(opcode_map="s=[send(0), recv(2]"),
     "accelerators[0].opcode_map", "')' to close recv(", 19),
    ("flow grammar error", lambda d: _acc(d)["opcode_flows"].update(Cs="((c) rc"),
     "accelerators[0].opcode_flows.Cs", "missing ')'", 8),
    ("unknown flow id", lambda d: _acc(d)["opcode_flows"].update(Cs="((c) rC)"),
     "accelerators[0].opcode_flows.Cs", "unknown opcode 'rC'", 6),
    ("unknown init id", lambda d: _acc(d).update(init_opcodes="(rest)"),
     "accelerators[0].init_opcodes", "did you mean 'reset'", 2),
    ("operand out of range", lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace("send(1)]", "send(3)]", 1)),
     "accelerators[0].opcode_map", "has 3 operands", 42),
    ("bad send_dim dim", lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace("send_literal(255)", "send_dim(0, 2)")),
     "accelerators[0].opcode_map", "which has 2 dims", None),
    ("recv of an input", lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace("r=[recv(2)]", "r=[recv(1)]")),
     "accelerators[0].opcode_map", "is an input", None),
    ("flexible default violates constraint", lambda d: _acc(d)["tile_sizes"].update(m={"multiple_of": 16, "max": 1008, "default": 40}),
     "accelerators[0].tile_sizes.m.default", "multiple of 16", None),
    ("flow impossible under permutation", lambda d: _acc(d)["opcode_flows"]["As"].update(permutation="(m, n, k) -> (m, n, k)"),
     "accelerators[0].opcode_flows.As.flow", "inner loop k changes it", 2),
    ("recv of incomplete output", lambda d: _acc(d)["opcode_flows"]["Ns"].pop("accumulate_on_cpu"),
     "accelerators[0].opcode_flows.Ns.flow", "not complete", 4),
    ("dma buffer too small", lambda d: _acc(d)["dma"].update(input_size=64),
     "accelerators[0].opcode_flows.Ns.flow", "DMA input buffer holds 16 words", 2),
    ("accelerator buffer too small", lambda d: _acc(d)["buffers"].update(B=8),
     "accelerators[0].tile_sizes", "does not fit the accelerator's B buffer (8 elements)", None),
    ("unsupported data type", lambda d: _acc(d).update(data_type="f64"),
     "accelerators[0].data_type", "unsupported data type 'f64'", None),
    ("unknown data type", lambda d: _acc(d).update(data_type="int33"),
     "accelerators[0].data_type", "unknown data type 'int33'", None),
    ("unknown tile dim", lambda d: _acc(d)["tile_sizes"].update(q=4),
     "accelerators[0].tile_sizes.q", "unknown dim 'q'", None),
    ("missing tile dim", lambda d: _acc(d)["tile_sizes"].pop("k"),
     "accelerators[0].tile_sizes", "missing tile size for dim 'k'", None),
    ("selected flow unknown", lambda d: _acc(d).update(selected_flow="Bs"),
     "accelerators[0].selected_flow", "unknown flow 'Bs'", None),
    ("unknown kernel", lambda d: _acc(d).update(kernel="matmull"),
     "accelerators[0].kernel", "did you mean 'matmul'", None),
    ("too deep flow", lambda d: _acc(d)["opcode_flows"].update(Cs="((((c))) rc)"),
     "accelerators[0].opcode_flows.Cs", "nests 4 scopes", 1),
    ("sibling scopes", lambda d: _acc(d)["opcode_flows"].update(Cs="((c) (c) rc)"),
     "accelerators[0].opcode_flows.Cs", "only one nested scope", 6),
    ("negative tile", lambda d: _acc(d)["tile_sizes"].update(n=0),
     "accelerators[0].tile_sizes.n", ">= 1", None),
    ("dma size not words", lambda d: _acc(d)["dma"].update(output_size=1022),
     "accelerators[0].dma.output_size", "multiple of 4", None),
    ("bad address", lambda d: _acc(d)["dma"].update(dma_address="0xZZ"),
     "accelerators[0].dma.dma_address", "hex string", None),
    ("operand dims disagree with kernel", lambda d: _acc(d).update(operands=[{"name": "A", "dims": ["k", "m"]},
                                                                             {"name": "B"}, {"name": "C"}]),
     "accelerators[0].operands[0].dims", "indexed by [m, k]", None),
    ("replace inside reduction", lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace("r=[recv(2)]", "r=[recv(2, replace)]")),
     "accelerators[0].opcode_flows.Ns.flow", "overwrite the partial sums", None),
    ("replace without sending C", lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace(
        "rc=[send_literal(8), recv(2)]", "rc=[send_literal(8), recv(2, replace)]")),
     "accelerators[0].opcode_flows.Cs", "flow 'Cs', opcode 'rc': recv(2, replace) replaces C's tiles", 6),
    ("bad cache size", lambda d: d["cpu"]["caches"][0].update(size="32 bananas"),
     "cpu.caches[0].size", "32KiB", None),
    ("duplicate accelerator", lambda d: d["accelerators"].append(copy.deepcopy(_acc(d))),
     "accelerators[1].name", "duplicate accelerator name 'v3_4'", None),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_malformed_descriptions_give_located_errors(case, tmp_path):
    _, mutate, where, fragment, column = case
    data = base()
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LoomError) as info:
        load_description(str(path))
    err = info.value
    assert err.where == where, str(err)
    assert fragment in err.message, err.message
    assert err.filename == str(path)
    if column is not None:
        assert err.column == column, err.message
    # never a traceback-looking message: the rendered error starts with the location
    assert str(err).startswith(f"{path} {where}: ")


def test_invalid_json_reports_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "cpu": {"caches": []},\n  "accelerators": [,]\n}')
    with pytest.raises(LoomError) as info:
        load_description(str(path))
    assert info.value.line == 3 and info.value.column == 20 and "invalid JSON" in info.value.message


def test_missing_file_and_host_reference(tmp_path):
    with pytest.raises(LoomError, match="cannot read"):
        load_description(str(tmp_path / "nope.json"))
    d = base()
    d["cpu"] = "no-such-host.json"
    path = tmp_path / "x.json"
    path.write_text(json.dumps(d))
    with pytest.raises(LoomError) as info:
        load_description(str(path))
    assert info.value.where == "cpu" and "no such file" in info.value.message


def test_host_reference_is_relative_to_the_file(tmp_path):
    (tmp_path / "host.json").write_text(json.dumps({"cpu": base()["cpu"]}))
    d = base()
    d["cpu"] = "host.json"
    (tmp_path / "a.json").write_text(json.dumps(d))
    assert load_description(str(tmp_path / "a.json")).host.cache("L1").line_size == 32


def test_host_references_that_form_a_cycle_are_a_loom_error(tmp_path):
    # a.json -> b.json -> a.json used to recurse until RecursionError
    (tmp_path / "a.json").write_text(json.dumps({"cpu": "b.json"}))
    (tmp_path / "b.json").write_text(json.dumps({"cpu": "a.json"}))
    d = base()
    d["cpu"] = "a.json"
    (tmp_path / "x.json").write_text(json.dumps(d))
    with pytest.raises(LoomError) as info:
        load_description(str(tmp_path / "x.json"))
    assert "cycle" in info.value.message and info.value.where == "cpu"
    assert info.value.message.endswith(f"{tmp_path / 'a.json'} -> {tmp_path / 'b.json'} -> {tmp_path / 'a.json'}")


def test_a_chain_of_host_references_is_followed_and_embedded(tmp_path):
    from loom.passes.accel_ir import embed_description, read_description_file

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "real.json").write_text(json.dumps({"cpu": base()["cpu"]}))
    (tmp_path / "alias.json").write_text(json.dumps({"cpu": "sub/real.json"}))  # relative to alias.json
    d = base()
    d["cpu"] = "alias.json"
    (tmp_path / "x.json").write_text(json.dumps(d))
    system, raw = read_description_file(str(tmp_path / "x.json"))
    assert system.host.cache("L1").line_size == 32
    attr = embed_description(raw, str(tmp_path / "x.json"), system.accelerators[0].name)
    assert attr.content["cpu"] == base()["cpu"]


def test_explicit_kernel_signature_equals_named_matmul():
    d = base()
    _acc(d)["kernel"] = {"indexing_maps": ["(i, j, l) -> (i, l)", "(i, j, l) -> (l, j)", "(i, j, l) -> (i, j)"],
                         "iterator_types": ["parallel", "parallel", "reduction"], "body": "mul-add"}
    explicit = load_description(d).accelerators[0]
    named = load_description(base()).accelerators[0]
    assert explicit.kernel.indexing_maps == named.kernel.indexing_maps  # renamed by "dims"
    assert explicit.kernel.iterator_types == named.kernel.iterator_types
    # operands instead of maps
    d = base()
    _acc(d)["kernel"] = {"iterator_types": ["parallel", "parallel", "reduction"], "body": "mul-add"}
    _acc(d)["operands"] = [{"name": "A", "dims": ["m", "k"]}, {"name": "B", "dims": ["k", "n"]},
                           {"name": "C", "dims": ["m", "n"]}]
    from_operands = load_description(d).accelerators[0]
    assert from_operands.kernel.indexing_maps == named.kernel.indexing_maps
    assert from_operands.kernel.output_indices == (2,)


def test_chosen_flexible_tiles_are_checked():
    v4 = load_description(os.path.join(ROOT, "loom", "examples", "accelerators", "matmul_v4.json")).accelerator("v4_16")
    check_tile_sizes(v4, {"m": 32, "n": 16, "k": 64})  # the paper's non-square example fits
    with pytest.raises(LoomError) as info:
        check_tile_sizes(v4, {"m": 24})
    assert info.value.where == "accelerators[0].tile_sizes.m" and "multiple of 16" in info.value.message
    with pytest.raises(LoomError) as info:
        check_tile_sizes(v4, {"m": 1024})
    assert "at most 1008" in info.value.message
    with pytest.raises(LoomError) as info:  # 128 x 64 = 8192 elements of A > 4096
        check_tile_sizes(v4, {"m": 128, "k": 64})
    assert "A buffer (4096 elements)" in info.value.message


def _leaf_paths(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_paths(v, path + (i,))
    yield path


def test_any_wrong_value_anywhere_is_a_loom_error_never_a_crash():
    # replace every node of the description (leaves and containers) with values of the wrong
    # kind; loading must either succeed or raise LoomError with a JSON path
    replacements = [None, [], {}, "x", -1, 0, True, 1.5, [1], {"a": 1}, "(m, n, k) -> (m)", "s=[send(9)]"]
    checked = 0
    for path in list(_leaf_paths(base())):
        if not path:
            continue
        for bad in replacements:
            data = base()
            target = data
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = copy.deepcopy(bad)
            try:
                load_description(data)
            except LoomError as err:
                assert err.where, (path, bad, str(err))
            checked += 1
    assert checked > 500


def test_top_level_must_be_an_object_and_objects_are_frozen():
    with pytest.raises(LoomError, match="expected an accelerator description file"):
        load_description([])
    acc = load_description(base()).accelerators[0]
    hash(acc)  # frozen all the way down: usable as a cache key by later passes
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        acc.name = "other"
