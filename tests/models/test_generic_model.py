"""The generic model ("model": "generic" + "opcode_semantics"): the described kernel computed with numpy
on the tiles each opcode loads. The shipped v3 MatMul and the matrix-vector unit, re-described with
the generic model, run every flow equal to numpy with the analytic transfer counts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from loom.accel import load_description
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from tests.models.kernels import MATMUL, MATVEC, REFERENCES, arrays, module

V3_SEMANTICS = {
    "sABcCrC": "load 0, load 1, compute, store 2, clear 2", "rC": "", "sA": "load 0",
    "sBcCrC": "load 1, compute, store 2, clear 2", "sB": "load 1", "sAcCrC": "load 0, compute, store 2, clear 2",
    "sABcC": "load 0, load 1, compute", "sendC": "store 2, clear 2",
}
MV_SEMANTICS = {"sAxcry": "load 0, load 1, compute, store 2, clear 2", "sAxc": "load 0, load 1, compute",
                "ry": "store 2, clear 2", "rY": "", "sx": "load 1", "sAcry": "load 0, compute, store 2, clear 2"}


def generic_description(tmp_path, source: str, index: int, semantics: dict, **changes) -> str:
    desc = json.loads((ACCELERATORS_DIR / source).read_text())
    desc["cpu"] = str(ACCELERATORS_DIR / desc["cpu"])
    entry = desc["accelerators"][index]
    entry.update(model="generic", opcode_semantics=semantics, **changes)
    desc["accelerators"] = [entry]
    path = tmp_path / f"generic_{source}"
    path.write_text(json.dumps(desc))
    return str(path)


@pytest.mark.parametrize("dtype", ["i32", "f32"])
def test_v3_described_with_the_generic_model_runs_every_flow(tmp_path, dtype):
    path = generic_description(tmp_path, "matmul_v3.json", 0, V3_SEMANTICS, data_type=dtype)
    np_type = np.int32 if dtype == "i32" else np.float32
    for flow in ("Ns", "As", "Bs", "Cs"):
        drv = compile_driver(module(MATMUL, dtype), path, "v3_4", flow)
        data = arrays([(9, 7), (7, 11), (9, 11)], seed=3, dtype=np_type)
        expected = REFERENCES["matmul"](*data)
        stats = drv(*data)
        np.testing.assert_allclose(data[-1], expected, rtol=1e-6, err_msg=flow)
        assert stats.transfers == drv.summary.expected_transfers(drv.problem_dims(data)), flow


def test_the_generic_model_and_the_builtin_model_predict_the_same_compute_time(tmp_path):
    path = generic_description(tmp_path, "matmul_v3.json", 0, V3_SEMANTICS)
    times = []
    for desc in (path, ACCELERATORS_DIR / "matmul_v3.json"):
        drv = compile_driver(module(MATMUL), desc, "v3_4", "Cs")
        times.append(drv(*arrays([(8, 8), (8, 12), (8, 12)])).timing.compute_s)
    assert times[0] == times[1] > 0


def test_matvec_with_the_generic_model(tmp_path):
    path = generic_description(tmp_path, "matvec.json", 0, MV_SEMANTICS)
    for flow in ("Ns", "Ys", "Xs"):
        drv = compile_driver(module(MATVEC), path, "mv_8", flow)
        data = arrays([(13, 21), (21,), (13,)], seed=5)
        expected = REFERENCES["matvec"](*data)
        assert drv(*data).transfers == drv.summary.expected_transfers(drv.problem_dims(data))
        np.testing.assert_array_equal(data[-1], expected)


@pytest.mark.parametrize("change, where, fragment", [
    ({"sA": "load 1"}, "opcode_semantics.sA", "sends operand tiles [0] but its steps load [1]"),
    ({"sA": "load 0, jump"}, "opcode_semantics.sA", "unknown step 'jump'"),
    ({"sA": "load 7"}, "opcode_semantics.sA", "operand 7 is out of range"),
    ({"sA": "load 0, store 0"}, "opcode_semantics.sA", "'store 0' needs an output operand"),
    ({"rC": "store 2"}, "opcode_semantics.rC", "sends nothing to the accelerator"),
    ({"sAB": "load 0"}, "opcode_semantics.sAB", "unknown opcode 'sAB'"),
    ({"sA": None}, "opcode_semantics", "missing the steps of opcode 'sA'"),
])
def test_bad_semantics_are_located(tmp_path, change, where, fragment):
    semantics = {k: v for k, v in {**V3_SEMANTICS, **change}.items() if v is not None}
    path = generic_description(tmp_path, "matmul_v3.json", 0, semantics)
    with pytest.raises(LoomError) as err:
        load_description(path)
    assert err.value.where == f"accelerators[0].{where}" and fragment in err.value.message


def test_generic_needs_semantics_and_fixed_tiles(tmp_path):
    desc = json.loads((ACCELERATORS_DIR / "matmul_v3.json").read_text())
    desc["cpu"] = str(ACCELERATORS_DIR / desc["cpu"])
    desc["accelerators"][0]["model"] = "generic"
    (tmp_path / "g.json").write_text(json.dumps(desc))
    with pytest.raises(LoomError, match="needs \"opcode_semantics\"") as err:
        load_description(tmp_path / "g.json")
    assert err.value.where == "accelerators[0].model"
    path = generic_description(tmp_path, "matmul_v4.json", 0, {"s": "load 0"})
    with pytest.raises(LoomError) as err:
        load_description(path)
    assert "opcode_semantics" in err.value.where


def test_negative_literal_opcodes_are_32_bit_words(tmp_path):
    # send_literal(-1) reaches the model as the word 0xFFFFFFFF: it must still name the opcode
    desc = json.loads((ACCELERATORS_DIR / "matmul_v3.json").read_text())
    opcodes = desc["accelerators"][0]["opcode_map"]
    for old, new in (("(15)", "(-15)"), ("(1)", "(-1)"), ("(14)", "(-14)"), ("(2)", "(-2)"), ("(13)", "(-13)"),
                     ("(7)", "(-7)"), ("(8)", "(-8)")):
        opcodes = opcodes.replace("send_literal" + old, "send_literal" + new)
    path = generic_description(tmp_path, "matmul_v3.json", 0, V3_SEMANTICS, opcode_map=opcodes)
    for flow in ("Ns", "Cs"):
        drv = compile_driver(module(MATMUL), path, "v3_4", flow)
        data = arrays([(9, 7), (7, 11), (9, 11)], seed=5)
        expected = REFERENCES["matmul"](*data)
        drv(*data)
        np.testing.assert_array_equal(data[-1], expected, err_msg=flow)
    clash = generic_description(tmp_path, "matmul_v3.json", 0, V3_SEMANTICS,
                                opcode_map=opcodes.replace("send_literal(-1)", "send_literal(0xFFFFFFF1)"))
    with pytest.raises(LoomError, match="opcodes 'sABcCrC' and 'sA' both start with literal 4294967281"):
        compile_driver(module(MATMUL), clash, "v3_4", "Ns")(*arrays([(9, 7), (7, 11), (9, 11)]))
