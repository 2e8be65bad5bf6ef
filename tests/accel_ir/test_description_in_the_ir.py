"""The description travels in the IR, not by path: editing the JSON between two ``compile_driver`` calls in
one process changes the second driver, and a stage file carries its accelerator to another place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from xdsl.parser import Parser

from loom.dialects import context
from loom.driver.compile import compile_driver, stage_files
from loom.examples import ACCELERATORS_DIR
from loom.passes import Pipeline

HERE = Path(__file__).parent


def kernel():
    return Parser(context(), (HERE / "matmul_12x8x20.mlir").read_text()).parse_module()


def test_editing_the_json_between_two_drivers_in_one_process_is_seen(tmp_path):
    path = tmp_path / "mm.json"
    data = json.loads((ACCELERATORS_DIR / "matmul_v4.json").read_text())
    data["cpu"] = json.loads((ACCELERATORS_DIR / "pynq-z2.json").read_text())["cpu"]
    path.write_text(json.dumps(data))
    acc = data["accelerators"][0]["name"]
    first = compile_driver(kernel(), path, acc, build=False)
    assert first.summary.tile_sizes["m"] == data["accelerators"][0]["tile_sizes"]["m"]["default"] == 32
    data["accelerators"][0]["tile_sizes"]["m"]["default"] = 48  # same file, same path, new content
    path.write_text(json.dumps(data))
    second = compile_driver(kernel(), path, acc, build=False)
    assert second.summary.tile_sizes["m"] == 48
    assert "tiles [48," in second.stage("annotated") and "tiles [32," in first.stage("annotated")
    assert second.accelerator.tiles["m"].nominal == 48


def test_editing_the_opcodes_changes_the_words_the_driver_sends(tmp_path):
    path = tmp_path / "v3.json"
    data = json.loads((ACCELERATORS_DIR / "matmul_v3.json").read_text())
    shutil.copy(ACCELERATORS_DIR / "pynq-z2.json", tmp_path / "pynq-z2.json")  # the "cpu" reference
    path.write_text(json.dumps(data))
    first = compile_driver(kernel(), path, "v3_4", "Cs", build=False)
    v34 = data["accelerators"][0]
    v34["opcode_map"] = v34["opcode_map"].replace("send_literal(7)", "send_literal(39)")
    path.write_text(json.dumps(data))
    second = compile_driver(kernel(), path, "v3_4", "Cs", build=False)
    assert "arith.constant 7 : i32" in first.stage("placed") and "arith.constant 39 : i32" not in first.stage("placed")
    assert "arith.constant 39 : i32" in second.stage("placed") and "arith.constant 7 : i32" not in second.stage("placed")


def test_a_stage_file_carries_its_accelerator_when_the_json_is_gone(tmp_path):
    path = tmp_path / "v3.json"
    shutil.copy(ACCELERATORS_DIR / "matmul_v3.json", path)
    shutil.copy(ACCELERATORS_DIR / "pynq-z2.json", tmp_path / "pynq-z2.json")
    drv = compile_driver(kernel(), path, "v3_4", "Cs", build=False)
    annotated = stage_files(drv)["02-annotated.mlir"]
    path.unlink()
    (tmp_path / "pynq-z2.json").unlink()  # nothing on disk any more
    module = Parser(context(), annotated).parse_module()
    Pipeline.parse("accel-tile,accel-place-flow,dce,convert-accel-to-runtime,dce,dma-inline-copies").run(module)
    assert str(module) == drv.stages[-1][2]
