"""An accelerator description loom never shipped (a matrix-vector unit) compiles to a driver through the
same passes; its description names no "model", so running it is a LoomError naming the kernel and what to add,
before any C runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.parser import Parser

from loom.dialects import context
from loom.driver.compile import compile_driver
from loom.errors import LoomError

MATVEC = {
    "cpu": {"name": "host", "core": "any", "caches": [{"name": "L1", "size": 32768}]},
    "accelerators": [{
        "name": "mv_8", "version": "1.0", "kernel": "matvec", "data_type": "i32", "dims": ["m", "k"],
        "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 65536,
                "output_address": "0x16400000", "output_size": 65536},
        "operands": [{"name": "A", "dims": ["m", "k"]}, {"name": "x", "dims": ["k"]}, {"name": "y", "dims": ["m"]}],
        "tile_sizes": {"m": 8, "k": 8},
        "buffers": {"A": 64, "x": 8, "y": 8},
        "opcode_map": "opcode_map<sAx=[send_literal(3), send(0), send(1)], ry=[send_literal(8), recv(2)]>",
        "opcode_flows": {"Ns": {"flow": "(sAx ry)", "permutation": "(m, k) -> (m, k)", "accumulate_on_cpu": True}},
        "selected_flow": "Ns",
    }],
}

KERNEL = """builtin.module {
  func.func @mv(%A: memref<?x?xi32>, %x: memref<?xi32>, %y: memref<?xi32>) {
    linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>,
                                     affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]}
        ins(%A, %x : memref<?x?xi32>, memref<?xi32>) outs(%y : memref<?xi32>) {
    ^bb0(%a: i32, %b: i32, %c: i32):
      %p = arith.muli %a, %b : i32
      %s = arith.addi %c, %p : i32
      linalg.yield %s : i32
    }
    func.return
  }
}"""


def test_a_matvec_accelerator_compiles_and_running_it_names_the_missing_model(tmp_path):
    path = tmp_path / "matvec.json"
    path.write_text(json.dumps(MATVEC))
    drv = compile_driver(Parser(context(), KERNEL).parse_module(), path, "mv_8")
    assert drv.summary.tile_sizes == {"m": 8, "k": 8} and drv.summary.operand_names == ("A", "x", "y")
    assert [p.id for p in drv.summary.placement.opcodes] == ["sAx", "ry"]
    assert "arith.constant 3 : i32" in drv.stage("placed") and "arith.constant 8 : i32" in drv.stage("placed")
    assert drv.summary.expected_transfers({"m": 16, "k": 24}).sends == 2 * 3 * 2  # (m/8)(k/8) tiles, 2 opcodes
    y = np.zeros(16, np.int32)
    with pytest.raises(LoomError, match="no simulator model for accelerator mv_8 \\(kernel matvec\\): its description "
                                        "has no \"model\"; add \"model\""):
        drv(np.ones((16, 24), np.int32), np.ones(24, np.int32), y)
    with pytest.raises(LoomError, match="operand x dim 0 has size 23"):  # shapes are checked first
        drv(np.ones((16, 24), np.int32), np.ones(23, np.int32), y)
    assert not y.any()
